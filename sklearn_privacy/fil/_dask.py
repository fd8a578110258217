"""FIL estimators on dask arrays: data that does not fit in memory.

``fit`` reads ``X`` (a :class:`dask.array.Array`, chunked along rows) only through tree
reductions over its row chunks: each pass maps every chunk to its partial objective,
gradient and Hessian ``X~_b^T diag(c_b) X~_b`` (the same syrk builder as the in-memory
path, :func:`~sklearn_privacy.fil._glm.weighted_gram`) and sums them with
``split_every``, so no worker ever holds more than a few chunks and a p x p matrix.
Least squares needs one pass; logistic regression one pass per Newton iteration (the
same damped Newton driver and stopping rules as in memory, so both paths stop at the same
minimiser, up to the summation order). The released model is that minimiser plus the
same noise draw as in memory.

The audit state keeps ``X`` lazy: per-example etas are a ``map_blocks`` over the row
chunks with the factorised Hessian (``eta_`` computes them chunk by chunk and holds only
the n results; :func:`lazy_eta` returns the dask array itself). Queries that need
arbitrary rows or sets of rows (group eta, Fisher information matrices, Jacobians)
raise :class:`NotImplementedError`: load the rows you audit into memory and refit, or
use numpy input.

dask is optional: nothing here imports it before a dask collection is passed in.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ._engine import FILEngine, _chunk_rows, secular_sq_norms
from ._glm import (
    SingularHessianError,
    linear_predictor,
    newton_minimise,
    penalty_diagonal,
    transpose_dot,
    weighted_gram,
)

#: Fan-in of the tree reductions (partial Hessians summed per node).
SPLIT_EVERY = 8


def is_dask_collection(x) -> bool:
    """True for a dask collection (array, dataframe, ...), without importing dask."""
    return type(x).__module__.partition(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def _as_matrix(X):
    import dask.array as da

    if not isinstance(X, da.Array):
        raise TypeError(
            f"X is a {type(X).__name__} dask collection; the FIL estimators accept "
            "dask.array.Array input (for a dask DataFrame use "
            "df.to_dask_array(lengths=True) after encoding the columns as numbers)."
        )
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got {X.ndim} dimension(s).")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "X has unknown row-chunk sizes (nan); call X.compute_chunk_sizes() (or "
            "to_dask_array(lengths=True)) before fitting."
        )
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
        raise TypeError(f"X must have a numeric dtype; got {X.dtype}.")
    # one chunk along the columns: every task sees whole rows
    return X.astype(np.float64).rechunk({1: -1})


def _column_like(v, X, name):
    """``v`` (numpy or dask, length n) as a dask column aligned with X's row chunks."""
    import dask.array as da

    if not is_dask_collection(v):
        v = np.asarray(v)
        if v.dtype == object:
            raise TypeError(f"{name} must be numeric; got dtype object.")
    v = da.asarray(v)
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1 or v.shape[0] != X.shape[0]:
        raise ValueError(
            f"{name} must be 1-D with one entry per row of X ({X.shape[0]}); got shape "
            f"{v.shape}."
        )
    return v.rechunk((X.chunks[0],))[:, None]


def _block_stats(Xb, yb, wb, *, theta, loss, fit_intercept, what):
    """Partial sums of one row chunk, as a (1, k) array (summed by the tree reduction).

    ``what``: "ls" -> [H, X~^T w y, sum w]; "newton" -> [H, gradient part, objective
    part]; "margins" -> [number of positive-weight rows not strictly separated].
    """
    yb = yb[:, 0]
    wb = wb[:, 0]
    if not np.all(np.isfinite(Xb)):
        raise ValueError("X contains NaN or infinity; pass finite values.")
    if what == "ls":
        H = weighted_gram(Xb, wb, fit_intercept)
        g = transpose_dot(Xb, wb * yb, fit_intercept)
        return np.concatenate([H.ravel(), g, [wb.sum()]])[None, :]
    z = linear_predictor(Xb, theta, fit_intercept)
    if what == "margins":
        bad = ((2.0 * yb - 1.0) * z <= 0) & (wb > 0)
        return np.array([[float(np.count_nonzero(bad))]])
    l1, l2, _ = loss.derivatives(z, yb)
    H = weighted_gram(Xb, wb * l2, fit_intercept)
    g = transpose_dot(Xb, wb * l1, fit_intercept)
    f = wb @ loss.value(z, yb)
    return np.concatenate([H.ravel(), g, [f]])[None, :]


def _reduce(X, y, w, *, theta, loss, fit_intercept, what):
    import dask.array as da

    p = X.shape[1] + int(fit_intercept)
    k = 1 if what == "margins" else p * p + p + 1
    parts = da.map_blocks(
        _block_stats, X, y, w, theta=theta, loss=loss, fit_intercept=fit_intercept,
        what=what, dtype=np.float64, chunks=((1,) * X.numblocks[0], (k,)),
    )
    total = parts.sum(axis=0, split_every=SPLIT_EVERY).compute()
    if what == "margins":
        return total[0]
    return total[: p * p].reshape(p, p), total[p * p: p * p + p], total[-1]


def _check_weights(w):
    import dask

    wmin, finite, total, positive = dask.compute(
        w.min(), np.isfinite(w).all(), w.sum(), (w > 0).sum())
    if not finite:
        raise ValueError("sample_weight contains NaN or infinity; pass finite weights.")
    if wmin < 0:
        raise ValueError("sample_weight must be non-negative; got negative weights.")
    if positive == 0:
        raise ValueError("sample_weight: all weights are zero; at least one must be > 0.")
    return float(total), int(positive)


def fit(est, X, y, sample_weight=None):
    """Fit ``est`` (FILLinearRegression or FILLogisticRegression) on a dask array ``X``.

    The released parameters equal those of the in-memory fit on ``X.compute()`` (same
    minimiser up to the summation order, same noise for the same ``random_state``).
    """
    import dask.array as da

    if hasattr(est, "_irfil_fit"):
        raise NotImplementedError(
            f"{type(est).__name__}.fit does not accept dask arrays yet (each IRFIL "
            "iteration needs every per-example eta); fit FILLinearRegression / "
            "FILLogisticRegression on dask input, or pass X.compute()."
        )
    X = _as_matrix(X)
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"X must have at least one row and one column; got shape {X.shape}.")
    yd = _column_like(y, X, "y")
    if sample_weight is None:
        wd = da.ones((n, 1), chunks=(X.chunks[0], 1))
        total, positive = float(n), n
    else:
        wd = _column_like(sample_weight, X, "sample_weight").astype(np.float64)
        total, positive = _check_weights(wd)
    loss = est._loss
    classifier = loss.name == "logistic"
    if classifier:
        classes = np.unique(da.unique(yd[:, 0]).compute())
        if classes.size != 2:
            raise ValueError(
                "Only binary classification is supported. "
                f"{type(est).__name__} needs y with exactly 2 classes, got "
                f"{classes.size} class(es)."
            )
        yd = (yd == classes[1]).astype(np.float64)
        both = da.unique(yd[(wd > 0)]).compute()
        if both.size < 2:
            raise ValueError(
                "Only one class has positive sample_weight; the logistic minimiser does "
                "not exist. Give both classes positive weight."
            )
    else:
        yd = yd.astype(np.float64)
    fi = bool(est.fit_intercept)
    reg_diag = total * est.alpha * penalty_diagonal(d, fi)
    kw = dict(loss=loss, fit_intercept=fi)
    if not classifier:
        G, rhs, _ = _reduce(X, yd, wd, theta=None, what="ls", **kw)
        G[np.diag_indices_from(G)] += reg_diag
        H, factor = G, _factor(G)
        theta = factor.solve(rhs)
        n_iter = 0
    else:
        def evaluate(t):
            G, g, f = _reduce(X, yd, wd, theta=t, what="newton", **kw)
            G[np.diag_indices_from(G)] += reg_diag
            f += 0.5 * np.sum(reg_diag * t * t)

            def derivatives():
                return g + reg_diag * t, G, _factor(G)

            def separable():
                if not np.any(reg_diag > 0) and _reduce(
                        X, yd, wd, theta=t, what="margins", **kw) == 0:
                    raise SingularHessianError(
                        "The classes are linearly separable, so the unpenalised logistic "
                        "minimiser does not exist (the loss decreases forever as the "
                        "coefficients grow). Use a positive L2 penalty (alpha > 0).")

            return f, derivatives, separable

        theta, n_iter, H, factor = newton_minimise(
            evaluate, np.zeros(d + int(fi)), reg_diag=reg_diag, unit=total / positive,
            tol=est.tol, max_iter=est.max_iter)
        if H is None:  # not converged: the Hessian at the final theta
            G, _, _ = _reduce(X, yd, wd, theta=theta, what="newton", **kw)
            G[np.diag_indices_from(G)] += reg_diag
            H, factor = G, None
    est.__dict__.pop("_eta_cache", None)
    for attr in ("feature_names_in_",):
        est.__dict__.pop(attr, None)
    est.n_features_in_ = d
    if classifier:
        est.classes_ = classes
        est.n_iter_ = n_iter
    est._audit = DaskFILEngine(X, yd, wd, theta, H, factor, loss=loss, alpha=est.alpha,
                               fit_intercept=fi)
    est._release(theta)
    return est


def _factor(H):
    from ._glm import cholesky

    return cholesky(H)


def _block_sq_norms(Xb, yb, wb, *, theta, loss, fit_intercept, st, has_label):
    yb = yb[:, 0]
    wb = wb[:, 0]
    z = linear_predictor(Xb, theta, fit_intercept)
    l1, l2, l3 = loss.derivatives(z, yb)
    d = Xb.shape[1]
    K = st["K"]
    out = np.empty(Xb.shape[0])
    for sl in _chunk_rows(Xb.shape[0], K.shape[0]):
        At = Xb[sl] @ K[:d]
        if fit_intercept:
            At += K[d]
        out[sl] = secular_sq_norms(At, l1[sl], l2[sl], l3[sl], wb[sl], st, has_label)
    return out


class DaskFILEngine(FILEngine):
    """Audit state of a FIL estimator fitted on a dask array (``X`` stays lazy).

    Supports the per-example eta of every row (all columns or a subset of columns) and
    reading a few rows (:meth:`dense_rows`); set-valued queries raise
    :class:`NotImplementedError`.
    """

    def __init__(self, X, y, omega, theta, H, factor, *, loss, alpha, fit_intercept):
        self.X, self.y, self.omega = X, y, omega  # dask: X (n, d), y and omega (n, 1)
        self.theta = np.array(theta, dtype=np.float64)
        self.loss = loss
        self.alpha = float(alpha)
        self.fit_intercept = bool(fit_intercept)
        self.n, self.d = X.shape
        self.p = self.d + int(self.fit_intercept)
        self.w = self.theta[: self.d]
        self._set_hessian(H, factor)
        self._cache = OrderedDict()

    def lazy_sq_norms(self, columns=None):
        """``||J_i[:, C]||_2^2`` of every row as a lazy dask array (chunks of X's rows)."""
        import dask.array as da

        feats, has_label, _ = self._columns(columns)
        st = dict(self._eig_structure(feats, has_label))
        st = {k: st[k] for k in ("K", "d", "vt", "w2")}
        return da.map_blocks(
            _block_sq_norms, self.X, self.y, self.omega, theta=self.theta, loss=self.loss,
            fit_intercept=self.fit_intercept, st=st, has_label=has_label,
            dtype=np.float64, drop_axis=1, chunks=(self.X.chunks[0],),
        )

    def per_example_sq_norms(self, columns=None, *, constrained=False, rows=None):
        """As :meth:`FILEngine.per_example_sq_norms` for every row (computed chunk-wise)."""
        if constrained or rows is not None:
            raise NotImplementedError(
                "per-example eta of selected rows or of a constrained one-hot attribute "
                "is not supported on dask input; compute eta_ for every row, or fit on "
                "the rows you audit in memory.")
        return np.asarray(self.lazy_sq_norms(columns).compute())

    def dense_rows(self, idx) -> np.ndarray:
        rows = self._rows(idx)
        order = np.argsort(rows, kind="stable")
        got = np.asarray(self.X[rows[order]].compute(), dtype=np.float64)
        out = np.empty_like(got)
        out[order] = got
        return out

    def _unsupported(self, what):
        raise NotImplementedError(
            f"{what} is not supported for a model fitted on a dask array: it needs "
            "arbitrary training rows in memory. Fit the estimator on numpy data (e.g. "
            "X.compute() of the rows you audit) for set-valued FIL queries; per-example "
            "eta_ / eta(per_example=True) of every row is supported.")

    def dense_columns(self, cols):
        self._unsupported("dense_columns")

    def group_gram(self, rows=None, columns=None, *, constrained=False):
        self._unsupported("eta of a set of values (per_example=False)")

    def group_sq_norm(self, rows=None, columns=None, *, constrained=False):
        self._unsupported("eta of a set of values (per_example=False)")

    def jacobian_columns(self, rows, feats, has_label, *, label_position=None):
        self._unsupported("jacobian_columns")

    def fim(self, rows=None, columns=None, *, sigma, dense=None):
        self._unsupported("fisher_information")


def lazy_eta(estimator, columns=None):
    """Per-example eta of a FIL estimator fitted on a dask array, as a lazy dask array.

    ``eta_[i] = ||J_i||_2 / sigma`` (``columns`` as in ``estimator.eta``), one task per
    row chunk of the training ``X`` using the factorised Hessian; nothing is computed
    until the caller does.
    """
    engine = estimator._audit_engine()
    if not isinstance(engine, DaskFILEngine):
        raise TypeError("lazy_eta needs an estimator fitted on a dask array; use eta_.")
    columns = estimator._resolve_columns(columns)
    import dask.array as da

    return da.sqrt(engine.lazy_sq_norms(columns)) / estimator._audit_sigma()
