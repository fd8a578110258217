"""FIL estimators on dask arrays: data that does not fit in memory.

**Fit.** ``fit`` reads ``X`` (a :class:`dask.array.Array`, chunked along rows) only
through tree reductions over its row chunks: each pass maps every chunk to its partial
objective and gradient, or to its partial Hessian ``X~_b^T diag(c_b) X~_b`` (the same
syrk builder as the in-memory path, :func:`~sklearn_privacy._glm._core.weighted_gram`),
and sums them with ``split_every``, so no worker ever holds more than a few chunks and a
p x p matrix. Least squares needs one pass; logistic regression one gradient pass per
Newton step and a Hessian pass only where the step needs one (the same two-phase Newton
driver and stopping rules as in memory: single-precision Hessians, reused while they
converge fast, then usually one exact Hessian at the minimiser; both paths stop at the
same minimiser up to the summation order). The released model is that minimiser plus the
same noise draw as in memory.

``data_norm`` / ``target_bound`` scale rows and clip targets lazily, chunk by chunk,
after one counting pass that emits the in-memory path's PrivacyWarning; ``epsilon_`` is
then accounted exactly as in memory (it reads only the total and largest weight).

IRFIL runs its in-memory reweighting loop unchanged: every weighted fit is the tree
reduction above (warm-started), every per-example eta a chunk-wise ``map_blocks``; the
``n`` weights and etas of an iteration are numpy vectors (8 bytes per row each: the loop
holds about ten such vectors, while ``X`` stays lazy).

**Audit.** :class:`DaskFILEngine` keeps ``X`` lazy and evaluates the in-memory engine's
own formulas (:class:`~sklearn_privacy.fil._eta._engine.FILEngine`) on row chunks, with the
whole data set's factorised Hessian:

* per-example eta of every row (any columns, ``constrained`` too): one task per chunk
  (:func:`lazy_eta` returns the dask array itself);
* per-example eta of selected rows: one task per chunk holding selected rows;
* the eta of a set of values (``eta(rows, columns)``, ``per_example=False``): the p x p
  matrix ``J_S J_S^T`` is a sum over rows, computed per chunk and tree-summed, so any
  set works, the whole data set included;
* Fisher information matrices and Jacobians of a set of rows: those rows are gathered into
  memory (at most :data:`GATHER_MAX_BYTES` of training values) and evaluated there;
* ``dense_columns`` (a column of every row, read by the attribute-inversion attacks and
  ``EtaDisplay.from_estimator(sensitive_features=<column>)``): one pass, at most
  :data:`GATHER_MAX_BYTES` of values.

dask is optional: nothing here imports it before a dask collection is passed in.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .._glm._bounds import dense_row_norms, record_bounding, row_scale_factors
from .._glm._core import (
    _SINGLE_MIN_P,
    SingularHessianError,
    approximate_hessian_factor,
    coarse_stride,
    linear_predictor,
    newton_minimise,
    penalty_diagonal,
    transpose_dot,
    weighted_gram,
)
from ._eta._engine import FILEngine

#: Fan-in of the tree reductions (partial Hessians summed per node).
SPLIT_EVERY = 8

#: Largest amount of training values (bytes of float64 ``X`` rows) that a query gathers
#: into the calling process: Fisher information matrices and Jacobians of a set of rows.
#: Larger sets are refused with a message; raise it when the client has the memory.
GATHER_MAX_BYTES = 256 * 2**20


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

    ``what``: "ls" -> [H, X~^T w y, sum w]; "gradient" -> [gradient part, objective
    part]; "hessian" / "hessian32" -> [H] (accumulated in double / single precision);
    "margins" -> [number of positive-weight rows not strictly separated].
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
    if what == "gradient":
        g = transpose_dot(Xb, wb * l1, fit_intercept)
        return np.concatenate([g, [wb @ loss.value(z, yb)]])[None, :]
    dtype = np.float32 if what == "hessian32" else np.float64
    return weighted_gram(Xb, wb * l2, fit_intercept, dtype=dtype).ravel()[None, :]


def _reduce(X, y, w, *, theta, loss, fit_intercept, what):
    import dask.array as da

    p = X.shape[1] + int(fit_intercept)
    k = {"margins": 1, "gradient": p + 1, "ls": p * p + p + 1}.get(what, p * p)
    parts = da.map_blocks(
        _block_stats, X, y, w, theta=theta, loss=loss, fit_intercept=fit_intercept,
        what=what, dtype=np.float64, chunks=((1,) * X.numblocks[0], (k,)),
    )
    total = parts.sum(axis=0, split_every=SPLIT_EVERY).compute()
    if what == "margins":
        return total[0]
    if what == "gradient":
        return total[:p], total[p]
    if what == "ls":
        return total[: p * p].reshape(p, p), total[p * p: p * p + p], total[-1]
    return total.reshape(p, p)


# ---------------------------------------------------------------------- input
def _check_weights(w):
    """Validate a dask weight column; return ``(total, largest)``."""
    import dask

    wmin, finite, total, largest, positive = dask.compute(
        w.min(), np.isfinite(w).all(), w.sum(), w.max(), (w > 0).sum())
    if not finite:
        raise ValueError("sample_weight contains NaN or infinity; pass finite weights.")
    if wmin < 0:
        raise ValueError("sample_weight must be non-negative; got negative weights.")
    if positive == 0:
        raise ValueError("sample_weight: all weights are zero; at least one must be > 0.")
    return float(total), float(largest)


class WeightSummary:
    """Total and largest sample weight, standing in for the weight vector in
    :meth:`BaseFILEstimator._account` (the sensitivity reads only ``np.sum`` and
    ``np.max`` of the weights), so that the n weights of a dask fit are not gathered.
    """

    def __init__(self, total, largest):
        self.total, self.largest = float(total), float(largest)

    def sum(self, *args, **kwargs):
        return self.total

    def max(self, *args, **kwargs):
        return self.largest


def prepare(est, X, y, sample_weight=None):
    """Validated dask input of a FIL fit: ``(X, y, sample_weight, account_weights)``.

    ``X`` becomes a float64 dask array with one chunk along the columns, ``y`` a float64
    dask column aligned with its row chunks (0/1 for the classifiers, whose ``classes_``
    are set here). ``sample_weight`` is returned validated: ``None``, a numpy vector or a
    dask column; ``account_weights`` is what :meth:`BaseFILEstimator._account` reads (the
    numpy vector itself, else a :class:`WeightSummary`). Sets ``n_features_in_`` and
    drops ``feature_names_in_``.
    """
    import dask.array as da

    X = _as_matrix(X)
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"X must have at least one row and one column; got shape {X.shape}.")
    yd = _column_like(y, X, "y")
    if sample_weight is None:
        wd = None
        account = WeightSummary(n, 1.0)
    elif is_dask_collection(sample_weight):
        wd = _column_like(sample_weight, X, "sample_weight").astype(np.float64)
        account = WeightSummary(*_check_weights(wd))
        sample_weight = wd
    else:
        wd = _column_like(sample_weight, X, "sample_weight")  # checks the length
        sample_weight = est._validated_sample_weight(np.asarray(sample_weight),
                                                     np.empty((n, 0)))
        account = sample_weight
    # declared classes with a DP view: every label value is mapped (NaN too), none refused
    voids = est._loss.name == "logistic" and getattr(
        est, "_voids_outside_labels", lambda: False)()
    if not voids and yd.dtype.kind in "fc" and not bool(da.isfinite(yd).all().compute()):
        # (checked before any clipping: target_bound must not turn an inf into a bound)
        raise ValueError("y contains NaN or infinity; pass finite targets.")
    if voids:
        X, yd = _declared_binary(est, X, yd)
    elif est._loss.name == "logistic":
        classes = np.unique(da.unique(yd[:, 0]).compute())
        if classes.size != 2:
            raise ValueError(
                "Only binary classification is supported. "
                f"{type(est).__name__} needs y with exactly 2 classes, got "
                f"{classes.size} class(es)."
                + (" Multiclass (multinomial) fits need the data in memory: pass X and "
                   "y as numpy arrays (e.g. X.compute())." if classes.size > 2 else "")
            )
        yd = (yd == classes[1]).astype(np.float64)
        if wd is not None and da.unique(yd[(wd > 0)]).compute().size < 2:
            raise ValueError(
                "Only one class has positive sample_weight; the logistic minimiser does "
                "not exist. Give both classes positive weight."
            )
        est.classes_ = classes
    else:
        yd = yd.astype(np.float64)
    est.__dict__.pop("feature_names_in_", None)
    est.n_features_in_ = d
    return X, yd, sample_weight, account


def _declared_binary(est, X, yd):
    """``(X, y01)`` of a classifier with declared classes under the in-memory path's rule
    (``void_outside_labels``): a row whose label is outside ``classes`` keeps its place
    with all-zero features (a constant loss); the count goes to the private channel."""
    from ..utils._validation import OUTSIDE_LABELS_STATE, _declared_classes

    classes = _declared_classes(est.classes)
    if classes.size != 2:
        raise ValueError(
            f"{type(est).__name__} on dask input supports two declared classes; got "
            f"{classes.size}. Multiclass (multinomial) fits need the data in memory: pass "
            "X and y as numpy arrays (e.g. X.compute()).")
    first, second = yd == classes[0], yd == classes[1]
    known = first | second
    est.__dict__[OUTSIDE_LABELS_STATE] = int((~known).sum().compute())
    est.classes_ = classes
    return X * known.astype(np.float64), second.astype(np.float64)


def weights_in_memory(sample_weight, n):
    """The n weights as a numpy vector (IRFIL updates every one of them per iteration)."""
    if sample_weight is None:
        return np.ones(n)
    if is_dask_collection(sample_weight):
        return np.asarray(sample_weight.compute(), dtype=np.float64).reshape(n)
    return sample_weight


def _row_norms(Xb):

    return dense_row_norms(Xb)


def _bound_rows(Xb, data_norm):

    return Xb * row_scale_factors(dense_row_norms(Xb), data_norm)[:, None]


def bounded(est, X, y):
    """``data_norm`` / ``target_bound`` applied chunk by chunk (as ``_bounded`` in memory).

    Rows of norm above ``data_norm`` are scaled to it and targets clipped to
    ``[-target_bound, target_bound]`` lazily (``map_blocks``, the in-memory formulas row by
    row); one counting pass records the in-memory path's counts in the estimator's
    private channel (``_bounding_counts``, never pickled), without a warning.
    """
    import dask
    import dask.array as da

    record_bounding(est, rows_scaled=0)
    if est.data_norm is not None:
        R = float(est.data_norm)
        norms = X.map_blocks(_row_norms, drop_axis=1, dtype=np.float64)
        over, beyond = dask.compute((norms > R).sum(), (norms > R * (1.0 + 1e-12)).sum())
        record_bounding(est, rows_scaled=int(beyond))
        if over:
            X = X.map_blocks(_bound_rows, R, dtype=np.float64)
    bound = getattr(est, "target_bound", None)
    if bound is not None:
        a = abs(y)
        count = int((a > bound).sum().compute())
        record_bounding(est, targets_clipped=count)
        if count:
            y = da.clip(y, -bound, bound)
    return X, y


# ---------------------------------------------------------------------- fit
def fit_exact(est, X, y, sample_weight=None, *, theta_init=None):
    """Exact minimiser and audit engine of a prepared dask fit: ``(theta, n_iter, engine)``.

    The dask counterpart of ``BaseFILEstimator._fit_exact``. ``X``, ``y`` as returned by
    :func:`prepare` / :func:`bounded`; ``sample_weight`` ``None``, a numpy vector of length
    n (IRFIL's current weights) or a dask column. Least squares: one pass; logistic
    regression: the in-memory damped Newton driver (from ``theta_init``, else 0), one pass
    per iteration.
    """
    import dask
    import dask.array as da

    n, d = X.shape
    if sample_weight is None:
        wd = da.ones((n, 1), chunks=(X.chunks[0], 1))
        total, positive = float(n), n
    elif is_dask_collection(sample_weight):
        wd = sample_weight
        total, positive = dask.compute(wd.sum(), (wd > 0).sum())
        total, positive = float(total), int(positive)
    else:
        sw = np.asarray(sample_weight, dtype=np.float64)
        total, positive = sw.sum(), np.count_nonzero(sw)  # as fit_minimiser
        wd = da.from_array(sw[:, None], chunks=(X.chunks[0], 1), name=False)
    loss = est._loss
    fi = bool(est.fit_intercept)
    reg_diag = total * est._alpha_value() * penalty_diagonal(d, fi)
    kw = dict(loss=loss, fit_intercept=fi)
    if loss.name == "squared":
        G, rhs, _ = _reduce(X, y, wd, theta=None, what="ls", **kw)
        G[np.diag_indices_from(G)] += reg_diag
        H, factor = G, _factor(G)
        theta = factor.solve(rhs)
        n_iter = 0
    else:
        # the same two-phase Newton as in memory (newton_minimise): one pass over X for
        # the objective and gradient at every iterate, a pass for a Hessian only when
        # the iteration needs one (single precision before the last step)
        precision = {"single": d + int(fi) >= _SINGLE_MIN_P}

        def hessian(t, dtype, stride=1):
            Xs, ys, ws = (X, y, wd) if stride == 1 else (X[::stride], y[::stride],
                                                          wd[::stride])
            return _reduce(Xs, ys, ws, theta=t,
                           what="hessian32" if dtype == np.float32 else "hessian", **kw)

        # the in-memory path's coarse Hessians: every k-th row, weights rescaled
        stride = coarse_stride(n, d + int(fi)) if precision["single"] else 1
        weight_ratio = (total / float(wd[::stride].sum().compute())) if stride > 1 else 1.0

        def evaluate(t):
            g, f = _reduce(X, y, wd, theta=t, what="gradient", **kw)
            f += 0.5 * np.sum(reg_diag * t * t)
            grad = g + reg_diag * t

            def derivatives(kind="exact"):
                if kind == "gradient":
                    return grad, None, None
                if kind == "coarse" and stride > 1:
                    return grad, None, approximate_hessian_factor(
                        lambda dtype: weight_ratio * hessian(t, dtype, stride), reg_diag,
                        precision)
                if kind in ("approx", "coarse"):
                    return grad, None, approximate_hessian_factor(
                        lambda dtype: hessian(t, dtype), reg_diag, precision)
                G = hessian(t, np.float64)
                G[np.diag_indices_from(G)] += reg_diag
                return grad, G, _factor(G)

            def separable():
                if not np.any(reg_diag > 0) and _reduce(
                        X, y, wd, theta=t, what="margins", **kw) == 0:
                    raise SingularHessianError(
                        "The classes are linearly separable, so the unpenalised logistic "
                        "minimiser does not exist (the loss decreases forever as the "
                        "coefficients grow). Use a positive L2 penalty (alpha > 0).")

            return f, derivatives, separable

        theta0 = (np.zeros(d + int(fi)) if theta_init is None
                  else np.array(theta_init, dtype=np.float64))
        theta, n_iter, H, factor = newton_minimise(
            evaluate, theta0, reg_diag=reg_diag, unit=float(total / max(positive, 1)),
            tol=est._newton_tol(), max_iter=getattr(est, "max_iter", 100),
            approximate=True)
        if H is None:  # not converged: the Hessian at the final theta
            H = hessian(theta, np.float64)
            H[np.diag_indices_from(H)] += reg_diag
            factor = None
    engine = DaskFILEngine(X, y, wd, theta, H, factor, loss=loss, alpha=est._alpha_value(),
                           fit_intercept=fi)
    return theta, n_iter, engine


def _weight_column(X, sample_weight):
    """``(w, W)``: the weights as a dask column aligned with ``X``'s row chunks, and
    their total."""
    import dask.array as da

    n = X.shape[0]
    if sample_weight is None:
        return da.ones((n, 1), chunks=(X.chunks[0], 1)), float(n)
    if is_dask_collection(sample_weight):
        return sample_weight, float(sample_weight.sum().compute())
    sw = np.asarray(sample_weight, dtype=np.float64)
    return da.from_array(sw[:, None], chunks=(X.chunks[0], 1), name=False), float(sw.sum())


def objective_gradient(est, X, y, sample_weight, theta):
    """``(X^T (w l'), W)`` at ``theta`` in one pass over the row chunks (no intercept)."""
    wd, total = _weight_column(X, sample_weight)
    g, _ = _reduce(X, y, wd, theta=theta, loss=est._loss, fit_intercept=False,
                   what="gradient")
    return g, float(total)


def normalised_objective(est, X, y, sample_weight):
    """``(value, grad)`` of ``G(t) = (1/W) sum_i w_i l_i + (alpha/2) ||t||^2`` (no
    intercept), each one pass over the row chunks: what
    ``BaseFILEstimator._finish_to_certificate`` iterates on, for a dask fit."""
    wd, total = _weight_column(X, sample_weight)
    alpha = est._alpha_value()
    kw = dict(loss=est._loss, fit_intercept=False, what="gradient")

    def value(t):
        return float(_reduce(X, y, wd, theta=t, **kw)[1]) / total \
            + 0.5 * alpha * float(t @ t)

    def grad(t):
        return _reduce(X, y, wd, theta=t, **kw)[0] / total + alpha * t

    return value, grad


def engine_at(est, X, y, sample_weight, theta):
    """The audit engine of a dask fit at ``theta`` (no intercept): one Hessian pass."""
    wd, total = _weight_column(X, sample_weight)
    H = _reduce(X, y, wd, theta=theta, loss=est._loss, fit_intercept=False, what="hessian")
    H[np.diag_indices_from(H)] += total * est._alpha_value()
    return DaskFILEngine(X, y, wd, theta, H, None, loss=est._loss, alpha=est._alpha_value(),
                         fit_intercept=False)


def _factor(H):
    from .._glm._core import cholesky

    return cholesky(H)


# ---------------------------------------------------------------------- audit
class _RowEngine(FILEngine):
    """The in-memory engine on some training rows, with the whole data set's Hessian.

    ``state`` is the Hessian part of a :class:`DaskFILEngine` (:meth:`DaskFILEngine.
    _row_state`): the factor, ``H^-1`` and the cached column structures are reused, never
    recomputed (and the ill-conditioning warning, given at fit, is not repeated).
    """

    def __init__(self, X, y, omega, state):
        self._state = state
        super().__init__(X, y, state["theta"], loss=state["loss"], alpha=state["alpha"],
                         fit_intercept=state["fit_intercept"], sample_weight=omega,
                         copy=False, hessian=(state["H"], state["_factor"]))

    def _set_hessian(self, H, factor=None):
        for key, value in self._state.items():  # what the rows do not define
            self.__dict__.setdefault(key, value)
        self._cache = OrderedDict(self._state.get("_cache", ()))


def _rows_of(Xb, yb, wb, local):
    if local is None:
        return Xb, yb[:, 0], wb[:, 0]
    return Xb[local], yb[local, 0], wb[local, 0]


def _block_sq_norms(Xb, yb, wb, *, state, columns, constrained, local=None):
    engine = _RowEngine(*_rows_of(Xb, yb, wb, local), state)
    return engine.per_example_sq_norms(columns, constrained=constrained)


def _block_gram(Xb, yb, wb, *, state, columns, constrained, local=None):
    engine = _RowEngine(*_rows_of(Xb, yb, wb, local), state)
    return engine.group_gram(None, columns, constrained=constrained).ravel()


#: Attributes of a DaskFILEngine that hold data of all n rows (never shipped to tasks).
_DATA_ATTRIBUTES = frozenset({"X", "_yd", "_wd", "_y_memory", "_omega_memory"})


class DaskFILEngine(FILEngine):
    """Audit state of a FIL estimator fitted on a dask array (``X`` stays lazy).

    Evaluates the in-memory engine's formulas chunk by chunk with the whole data set's
    factorised Hessian (see the module docstring): per-example norms of every row or of
    selected rows, the Gram matrix ``J_S J_S^T`` (and eta) of any set of rows, Fisher
    information matrices and Jacobians of sets of rows gathered into memory (at most
    :data:`GATHER_MAX_BYTES`), and columns of every row (``dense_columns``, same limit).
    ``y`` and ``omega`` (read by
    the displays and attacks) are computed into memory on first access (n floats each);
    ``X`` stays a dask array.
    """

    def __init__(self, X, y, omega, theta, H, factor, *, loss, alpha, fit_intercept):
        self.X, self._yd, self._wd = X, y, omega  # dask: X (n, d), y and omega (n, 1)
        self.theta = np.array(theta, dtype=np.float64)
        self.loss = loss
        self.alpha = float(alpha)
        self.fit_intercept = bool(fit_intercept)
        self.n, self.d = X.shape
        self.p = self.d + int(self.fit_intercept)
        self.w = self.theta[: self.d]
        self._set_hessian(H, factor)
        self._cache = OrderedDict()

    @property
    def y(self) -> np.ndarray:
        """The (encoded) training targets, computed into memory on first access (n floats)."""
        if "_y_memory" not in self.__dict__:
            self._y_memory = np.asarray(self._yd[:, 0].compute(), dtype=np.float64)
        return self._y_memory

    @property
    def omega(self) -> np.ndarray:
        """The sample weights, computed into memory on first access (n floats)."""
        if "_omega_memory" not in self.__dict__:
            self._omega_memory = np.asarray(self._wd[:, 0].compute(), dtype=np.float64)
        return self._omega_memory

    def _row_state(self, columns=None, *, structure=True):
        """What a chunk task needs besides its rows: the Hessian part of this engine,
        with the structure of ``columns`` (eigenbasis and skeleton poles included)
        computed once, here."""
        if structure:
            feats, has_label, _ = self._columns(columns)
            self._skeleton(self._eig_structure(feats, has_label))
        return {k: v for k, v in self.__dict__.items() if k not in _DATA_ATTRIBUTES}

    def _check_constrained(self, columns, constrained):
        """Validate ``columns`` (and a constrained attribute) before any task runs."""
        feats, has_label, _ = self._columns(columns)
        if constrained:
            self._helmert(feats.size + int(has_label))

    def _blocks(self, idx):
        """``[(block, local positions)]`` of sorted row indices ``idx`` (None: all rows)."""
        if idx is None:
            return [(b, None) for b in range(self.X.numblocks[0])]
        bounds = np.cumsum((0,) + tuple(self.X.chunks[0]))
        blk = np.searchsorted(bounds, idx, side="right") - 1
        cuts = np.flatnonzero(np.diff(blk)) + 1
        return [(int(blk[part[0]]), idx[part] - bounds[blk[part[0]]])
                for part in np.split(np.arange(idx.size), cuts) if part.size]

    def _tasks(self, func, idx, **kwargs):
        """One delayed ``func(X_b, y_b, omega_b, local=..., **kwargs)`` per block of ``idx``."""
        import dask

        return [dask.delayed(func)(
                    self.X.blocks[b], self._yd.blocks[b], self._wd.blocks[b], local=local,
                    **kwargs)
                for b, local in self._blocks(idx)]

    def lazy_sq_norms(self, columns=None, *, constrained=False):
        """``||J_i[:, C]||_2^2`` of every row as a lazy dask array (chunks of X's rows).

        Each chunk is evaluated by the in-memory engine's
        :meth:`~FILEngine.per_example_sq_norms` (same routes, same numbers per row).
        """
        import dask.array as da

        self._check_constrained(columns, constrained)
        return da.map_blocks(
            _block_sq_norms, self.X, self._yd, self._wd, state=self._row_state(columns),
            columns=columns, constrained=constrained, dtype=np.float64, drop_axis=1,
            chunks=(self.X.chunks[0],),
        )

    def per_example_sq_norms(self, columns=None, *, constrained=False, rows=None):
        """As :meth:`FILEngine.per_example_sq_norms`, chunk by chunk.

        ``rows=None``: every row (one task per chunk). Selected rows: one task per chunk
        holding some of them; the result follows ``rows`` (order kept, duplicates allowed).
        """
        if rows is None:
            return np.asarray(self.lazy_sq_norms(columns, constrained=constrained).compute())
        import dask

        idx = self._rows(rows)
        self._check_constrained(columns, constrained)
        if idx.size == 0:
            return np.empty(0)
        uniq, inverse = np.unique(idx, return_inverse=True)
        parts = dask.compute(*self._tasks(_block_sq_norms, uniq, state=self._row_state(columns),
                                          columns=columns, constrained=constrained))
        return np.concatenate(parts)[inverse.ravel()]

    def group_gram(self, rows=None, columns=None, *, constrained=False):
        """As :meth:`FILEngine.group_gram`: the per-chunk sums of ``J_i J_i^T``, tree-summed.

        Works for any set of rows (the whole data set included) without gathering rows.
        """
        import dask.array as da

        self._check_constrained(columns, constrained)
        idx = None if rows is None else np.sort(self._rows(rows, unique=True))
        p2 = self.p * self.p
        parts = [da.from_delayed(t, shape=(p2,), dtype=np.float64)
                 for t in self._tasks(_block_gram, idx, state=self._row_state(columns),
                                      columns=columns, constrained=constrained)]
        G = da.stack(parts).sum(axis=0, split_every=SPLIT_EVERY).compute().reshape(
            self.p, self.p)
        return 0.5 * (G + G.T)

    def _check_gather(self, m, what):
        """Refuse to gather ``m`` rows into memory above :data:`GATHER_MAX_BYTES`."""
        size = m * self.d * 8
        if size > GATHER_MAX_BYTES:
            raise ValueError(
                f"{what} of {m} rows needs those rows in memory: {m} x "
                f"{self.d} float64 values ({size / 2**20:.3g} MiB) exceed the limit of "
                f"{GATHER_MAX_BYTES / 2**20:.0f} MiB for a model fitted on a dask array "
                "(sklearn_privacy.fil._dask.GATHER_MAX_BYTES). Pass fewer rows, or use "
                "eta(rows, columns) (per_example=False), which handles any set chunk by "
                "chunk."
            )

    def _gathered(self, idx, what):
        """An in-memory engine on the sorted unique rows ``idx`` (refused above the budget)."""
        import dask

        self._check_gather(idx.size, what)
        parts = dask.compute(*self._tasks(_rows_of, idx))
        Xg, yg, wg = (np.concatenate([p[j] for p in parts]) for j in range(3))
        return _RowEngine(np.ascontiguousarray(Xg), yg, wg, self._row_state(structure=False))

    def jacobian_columns(self, rows, feats, has_label, *, label_position=None):
        """As :meth:`FILEngine.jacobian_columns`, on the rows gathered into memory."""
        idx = np.arange(self.n)[rows] if isinstance(rows, slice) else np.asarray(rows)
        uniq, inverse = np.unique(idx, return_inverse=True)
        engine = self._gathered(uniq, "jacobian_columns")
        return engine.jacobian_columns(inverse.ravel(), feats, has_label,
                                       label_position=label_position)

    def fim(self, rows=None, columns=None, *, sigma, dense=None):
        """As :meth:`FILEngine.fim`, on the rows gathered into memory.

        The set's rows (at most :data:`GATHER_MAX_BYTES` of values) are read once; the
        dense matrix or the ``LinearOperator`` is then the in-memory one.
        """
        self._columns(columns)
        idx = self._rows(rows, unique=True)
        uniq = np.sort(idx)
        engine = self._gathered(uniq, "fisher_information")
        return engine.fim(np.searchsorted(uniq, idx), columns, sigma=sigma, dense=dense)

    def dense_rows(self, idx) -> np.ndarray:
        """As :meth:`FILEngine.dense_rows` (at most :data:`GATHER_MAX_BYTES` of rows)."""
        rows = self._rows(idx)
        self._check_gather(rows.size, "dense_rows")
        order = np.argsort(rows, kind="stable")
        got = np.asarray(self.X[rows[order]].compute(), dtype=np.float64)
        out = np.empty_like(got)
        out[order] = got
        return out

    def dense_columns(self, cols) -> np.ndarray:
        """As :meth:`FILEngine.dense_columns`: columns ``cols`` of every training row.

        One pass over ``X``; the result holds ``n * len(cols)`` values, refused above
        :data:`GATHER_MAX_BYTES` (a single column of ten million rows is 80 MB).
        """
        cols = np.atleast_1d(np.asarray(cols))
        if cols.ndim != 1 or not (cols.size == 0 or np.issubdtype(cols.dtype, np.integer)):
            raise ValueError(f"cols must be a 1-D sequence of feature indices; got {cols!r}.")
        if cols.size and (cols.min() < 0 or cols.max() >= self.d):
            raise ValueError(f"cols: index out of range 0..{self.d - 1}; got {cols.tolist()}.")
        size = self.n * cols.size * 8
        if size > GATHER_MAX_BYTES:
            raise ValueError(
                f"dense_columns of {cols.size} column(s) needs them for all {self.n} "
                f"training rows in memory ({size / 2**20:.3g} MiB), above the limit of "
                f"{GATHER_MAX_BYTES / 2**20:.0f} MiB for a model fitted on a dask array "
                "(sklearn_privacy.fil._dask.GATHER_MAX_BYTES). Read fewer columns at a "
                "time, or raise the limit if the memory is there."
            )
        return np.asarray(self.X[:, cols].compute(), dtype=np.float64).reshape(self.n,
                                                                                cols.size)


def lazy_eta(estimator, columns=None, *, constrained=False):
    """Per-example eta of a FIL estimator fitted on a dask array, as a lazy dask array.

    ``eta_[i] = ||J_i||_2 / sigma`` (``columns`` and ``constrained`` as in
    ``estimator.eta``), one task per row chunk of the training ``X`` using the factorised
    Hessian; nothing is computed until the caller does.

    Parameters
    ----------
    estimator : FIL estimator
        Fitted on a :class:`dask.array.Array`.
    columns : None, int, str, array-like of int or str, or array-like of bool, \
            default=None
        Attributes of each example (as in ``estimator.eta``); ``None``: all features and
        the label.
    constrained : bool, default=False
        For a one-hot attribute given as ``columns``: the constrained eta.

    Returns
    -------
    eta : dask.array.Array of shape (n_samples,)
        Chunked like the rows of the training ``X``.
    """
    engine = estimator._audit_engine()
    if not isinstance(engine, DaskFILEngine):
        raise TypeError("lazy_eta needs an estimator fitted on a dask array; use eta_.")
    columns = estimator._resolve_columns(columns)
    import dask.array as da

    return (da.sqrt(engine.lazy_sq_norms(columns, constrained=constrained))
            / estimator._audit_sigma())


class DaskBackend:
    """The one interface through which ``BaseFILEstimator`` runs a fit on dask collections.

    The estimator module imports this backend (never the reverse: the backend reads the
    shared helpers from ``_bounds``), and calls it only after ``is_dask_collection(X)``.
    """

    is_dask_collection = staticmethod(is_dask_collection)
    prepare = staticmethod(prepare)
    bounded = staticmethod(bounded)
    weights_in_memory = staticmethod(weights_in_memory)
    objective_gradient = staticmethod(objective_gradient)
    normalised_objective = staticmethod(normalised_objective)
    engine_at = staticmethod(engine_at)
    fit_exact = staticmethod(fit_exact)


#: The backend instance ``_base`` calls.
BACKEND = DaskBackend()
