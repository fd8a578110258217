"""Structured Fisher-information-loss engine for output-perturbed GLMs.

Notation (see the user guide): ``theta`` in R^p is the exact minimiser (``p = d`` or
``d + 1`` with an unpenalised intercept), ``w`` its first ``d`` entries, ``x~_i`` the
augmented row, ``H`` the Hessian of the weighted, penalised objective. The Jacobian of the
minimiser with respect to the data values ``(x_i, y_i)`` of example ``i`` (p x (d+1)) is

    J_i = -omega_i H^{-1} [ l''_i x~_i w^T + l'_i E ,  (dl'/dy)_i x~_i ],   E = [I_d; 0].

Released parameters are ``theta + N(0, sigma^2 I)``; the Fisher information matrix of a set
``S`` of data values is ``J_S^T J_S / sigma^2`` and its Fisher information loss is
``eta_S = ||J_S||_2 / sigma``.

With ``a_i = H^{-1} x~_i``, ``B = H^{-1} E``, ``v = B w`` and ``M = B B^T``,

    J_i J_i^T = omega_i^2 [ l'_i^2 M + (l''_i^2 ||w||^2 + (dl'/dy)_i^2) a_i a_i^T
                            + l''_i l'_i (a_i v^T + v a_i^T) ],

a fixed matrix scaled per example plus a rank-2 update. ``M`` is diagonalised once, all
``a_i`` are rotated by one GEMM, and each example's top eigenvalue is a 2 x 2 secular
equation (:mod:`sklearn_privacy._linalg._secular`); with at least ``_COMPRESS_MIN_ROWS``
rows its sums over the
``p`` eigenvalues of ``M`` are reduced to sums over a few skeleton poles, computed once
per column subset and applied by extra columns of the same GEMM. Column subsets replace
``w, B`` by their restriction. Work is done in row chunks so memory stays
O(chunk * p + p^2).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.sparse.linalg import LinearOperator

from ..._glm._core import (
    augment,
    cholesky,
    linear_predictor,
    penalty_diagonal,
    scale_note,
    weighted_gram,
)
from ..._linalg._secular import (
    _COMPRESS_MIN_ROWS,
    compress_poles,
    largest_eigenvalue_rank2,
    largest_eigenvalue_rank2_compressed,
)
from ...exceptions import NumericalPrecisionWarning
from ...utils import resolve_columns
from ...utils._validation import positional_rows
from ...utils._warnings import warn_user

#: Subsets of at most this many columns use the per-example Gram matrix route.
_GRAM_MAX_COLUMNS = 16
#: Dense FIM up to this many data values, a LinearOperator beyond.
DENSE_FIM_MAX = 2048
#: Row-chunk size (bytes per chunk array) of the secular route: small enough that the
#: iterated arrays of a chunk stay in cache between Newton iterations.
_SECULAR_CHUNK_BYTES = 2_000_000
#: At most this many column subsets keep their structure (B, eigenbasis, ...) cached; the
#: least recently used is evicted first. Memory of the cache: O(_CACHE_MAX_SUBSETS * p^2).
_CACHE_MAX_SUBSETS = 8
#: Warn (NumericalPrecisionWarning) when the estimated 1-norm condition number of the
#: Jacobi-equilibrated Hessian exceeds this. Measured on collinear least-squares problems
#: (conditions 1e2..1e12, exact rational oracle): the per-example eta has relative error at
#: most ~35 cond eps (normwise ~3 cond eps), so at 1e8 it is still below ~1e-6.
COND_WARN = 1e8
#: Reported bound on the relative error of eta: this factor times cond * eps.
_ERROR_FACTOR = 100.0


def _chunk_rows(n, p, budget_bytes=32_000_000):
    size = max(16, int(budget_bytes // (8 * max(p, 1))))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


class FILEngine:
    """Fisher information loss of every subset of a training set (audit state).

    The internal audit engine of a fitted FIL estimator
    (:class:`~sklearn_privacy.FILLinearRegression`,
    :class:`~sklearn_privacy.FILLogisticRegression` and the IRFIL estimators), returned
    by ``est._audit_engine()``; the estimators' ``eta_``, ``eta``,
    ``fisher_information`` and ``sigma_for_eta`` are computed by it, and the attacks
    read the training rows through it. It holds a private copy of the training data,
    the exact minimiser and the factorised Hessian: it is the part of a fitted FIL
    estimator that must never be released, and it is never pickled (a loaded estimator
    has no engine and cannot be audited). The data are frozen at construction: changing
    the caller's arrays afterwards changes nothing here.

    Its methods work with the Jacobian ``J_i`` (``p x (d + 1)``) of the exact minimiser
    ``theta`` with respect to the data values ``(x_i, y_i)`` of example ``i``::

        J_i = -omega_i H^{-1} [ l''_i x~_i w^T + l'_i E ,  (dl'/dy)_i x~_i ],  E = [I_d; 0]

    where ``x~_i`` is row ``i`` augmented with a 1 when ``fit_intercept``, ``w`` the
    first ``d`` entries of ``theta``, ``H`` the Hessian of the weighted, penalised
    objective at ``theta``, ``omega_i`` the sample weight and ``l'``, ``l''``,
    ``dl'/dy`` the loss derivatives at ``(x~_i^T theta, y_i)``. ``J_i[:, C]`` keeps the
    columns ``C`` (features ``0..d-1``, ``d`` for the label) and ``J_S`` stacks the
    ``J_i[:, C]`` of the rows of a set side by side. The quantities returned are
    *unscaled*: with released parameters ``theta + N(0, sigma^2 I)`` the per-example
    Fisher information loss is ``eta_i = ||J_i||_2 / sigma``, the loss of a set is
    ``eta_S = ||J_S||_2 / sigma`` and its Fisher information matrix is
    ``J_S^T J_S / sigma^2``.

    Parameters
    ----------
    X : ndarray or sparse matrix (CSR/CSC) of shape (n, d)
        Stored as a float64 C-ordered array, or as CSR when sparse.
    y : ndarray of shape (n,)
        Regression target, or 0/1 labels for the logistic loss.
    theta : ndarray of shape (p,)
        Exact minimiser (coefficients, then the intercept when ``fit_intercept``).
    loss : GLMLoss
        Loss of the model (squared loss for the linear regressions, logistic loss for
        the logistic regressions); its derivatives ``l'``, ``l''`` and ``dl'/dy`` at
        ``theta`` enter every Jacobian.
    alpha : float
        L2 penalty (the FIL paper's lambda); the penalty is ``n alpha / 2 ||w||^2`` with
        ``n`` the total sample weight.
    fit_intercept : bool
        Whether ``theta`` ends with an unpenalised intercept (then ``p = d + 1`` and the
        rows are augmented with a column of ones; else ``p = d``).
    sample_weight : ndarray of shape (n,)
        Weight ``omega_i`` of each example in the objective; it scales ``J_i``.
    copy : bool, default=True
        Copy ``X``. Pass False only when ``X`` is already private to the engine (the
        estimators copy once, at fit, and only when validation did not copy already).
        ``y``, ``sample_weight`` and ``theta`` are always copied (O(n)).
    hessian : tuple (H, HessianFactor) or None, default=None
        The Hessian at ``theta`` and its factor when the caller has them (the fit builds
        them; :func:`~sklearn_privacy._glm._core.fit_minimiser` with
        ``return_hessian=True``); ``None`` builds them here.

    Attributes
    ----------
    n, d, p : int
        Number of training rows, of features and of parameters.
    theta : ndarray of shape (p,)
        The exact (noise-free) minimiser.
    H : ndarray of shape (p, p)
        Hessian of the weighted, penalised objective at ``theta``.
    H_inv : ndarray of shape (p, p)
        Its inverse.
    cond : float
        Estimated condition number of the (equilibrated) Hessian.
    eta_error_bound : float
        ``100 * cond * eps``: bound on the relative error of the per-example eta observed
        in the measurements behind ``COND_WARN``.

    See Also
    --------
    sklearn_privacy.fil.eta : Fisher information loss of a fitted estimator or pipeline.
    sklearn_privacy.fil.fisher_information : Its Fisher information matrix.
    sklearn_privacy.FILLinearRegression : A FIL estimator that builds this engine at fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(50, 3)); y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=50)
    >>> reg = FILLinearRegression(sigma=0.5, random_state=0).fit(X, y)
    >>> engine = reg._audit_engine()
    >>> engine.n, engine.d, engine.p
    (50, 3, 4)
    >>> bool(np.allclose(np.sqrt(engine.per_example_sq_norms()) / 0.5, reg.eta_))
    True
    >>> bool(np.isclose(np.sqrt(engine.group_sq_norm([0, 1])) / 0.5, reg.eta(rows=[0, 1])))
    True
    >>> engine.fim([0, 1], [0, 3], sigma=0.5).shape   # feature 0 and the label of 2 rows
    (4, 4)
    """

    def __init__(self, X, y, theta, *, loss, alpha, fit_intercept, sample_weight,
                 copy=True, hessian=None):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64, copy=copy)
            X.sort_indices()
        else:
            # np.asarray copies only when needed under numpy 1 and 2 alike
            X = (np.array if copy else np.asarray)(X, dtype=np.float64, order="C")
        self.X = X
        self.y = np.array(y, dtype=np.float64)
        self.theta = np.array(theta, dtype=np.float64)
        self.loss = loss
        self.alpha = float(alpha)
        self.fit_intercept = bool(fit_intercept)
        self.omega = np.array(sample_weight, dtype=np.float64)
        self.n, self.d = X.shape
        self.p = self.d + int(self.fit_intercept)
        self.w = self.theta[: self.d]
        z = linear_predictor(X, self.theta, self.fit_intercept)
        self.l1, self.l2, self.l3 = loss.derivatives(z, self.y)
        if hessian is not None and hessian[0] is not None:
            # built by the fit at (or within a rounding-level step of) theta
            H, factor = hessian
        else:
            reg = self.omega.sum() * self.alpha * penalty_diagonal(self.d, self.fit_intercept)
            H = weighted_gram(X, self.omega * self.l2, self.fit_intercept)
            H[np.diag_indices_from(H)] += reg
            factor = None
        self._set_hessian(H, factor)

    def _set_hessian(self, H, factor=None):
        """Store ``H``, its factor and inverse; warn when it is ill-conditioned."""
        self.H = H
        self._factor = cholesky(H) if factor is None else factor
        self.H_inv = self._factor.inverse()
        self.cond = self._factor.cond
        self.eta_error_bound = _ERROR_FACTOR * self.cond * np.finfo(float).eps
        if self.cond > COND_WARN:
            warn_user(
                f"The Hessian of the training objective is ill-conditioned (estimated "
                f"condition number {self.cond:.1e} after equilibration): eta_, eta() and "
                f"fisher_information may have relative errors up to about "
                f"{self.eta_error_bound:.0e}. Increase alpha or remove nearly collinear "
                "columns." + scale_note(self._factor.scale_ratio),
                NumericalPrecisionWarning,
                stacklevel=5,
            )
        self._cache = OrderedDict()

    # ------------------------------------------------------------------ data access
    def dense_rows(self, idx) -> np.ndarray:
        """Training rows ``idx`` as a dense float array of shape (len(idx), d) (a copy).

        The one way for code outside the engine (the attacks) to read training rows:
        it works whatever the engine stores internally (dense or CSR).

        Parameters
        ----------
        idx : None, int, array-like of int or array-like of bool
            Training rows: ``None`` for every row, integer indices (order kept,
            duplicates allowed, negative indices count from the end) or a boolean mask
            of length ``n``.

        Returns
        -------
        rows : ndarray of shape (n_rows, d)
            A float64 copy of the selected rows of ``X`` (without the intercept column).

        Raises
        ------
        ValueError
            An index out of range, a non-integer index or a mask of the wrong length.
        """
        rows = self._rows(idx)
        if sp.issparse(self.X):
            return np.asarray(self.X[rows].toarray(), dtype=np.float64)
        return np.array(self.X[rows], dtype=np.float64)

    def dense_columns(self, cols) -> np.ndarray:
        """Training columns ``cols`` (feature indices, order kept) as a dense (n, k) array.

        Parameters
        ----------
        cols : int or array-like of int
            Feature indices in ``0..d-1`` (order kept; no label, no negative indices).

        Returns
        -------
        columns : ndarray of shape (n, k)
            A float64 copy of the selected columns of ``X``, ``k = len(cols)``.

        Raises
        ------
        ValueError
            ``cols`` is not a 1-D sequence of integers, or an index is out of range.
        """
        cols = np.atleast_1d(np.asarray(cols))
        if cols.ndim != 1 or not (cols.size == 0 or np.issubdtype(cols.dtype, np.integer)):
            raise ValueError(f"cols must be a 1-D sequence of feature indices; got {cols!r}.")
        if cols.size and (cols.min() < 0 or cols.max() >= self.d):
            raise ValueError(f"cols: index out of range 0..{self.d - 1}; got {cols.tolist()}.")
        if sp.issparse(self.X):
            return np.asarray(self.X[:, cols].toarray(), dtype=np.float64)
        return np.array(self.X[:, cols], dtype=np.float64)

    def _aug_rows(self, rows) -> np.ndarray:
        """Dense ``X~`` of the given rows (one chunk)."""
        Xr = self.X[rows]
        if sp.issparse(Xr):
            Xr = Xr.toarray()
        return augment(Xr, self.fit_intercept)

    # ------------------------------------------------------------------ helpers
    def _columns(self, columns):
        """Validate ``columns`` -> (sorted feature indices, has_label, indices in order).

        ``columns``: None (every feature and the label), integer indices
        ``0..d`` (``d`` is the label; order kept, no duplicates, no negative indices) or
        a boolean mask of length ``d + 1``. Names are resolved by the estimators.
        """
        if columns is None:
            return np.arange(self.d), True, np.arange(self.d + 1)
        cols = resolve_columns(columns, self.d, None, label=True, param="columns")
        feats = np.sort(cols[cols < self.d])
        return feats, bool(np.any(cols == self.d)), cols

    def _rows(self, rows, *, unique=False, param="rows"):
        """Validate ``rows`` -> integer index array in the caller's order.

        ``None``: every row. An integer, a 1-D sequence of integers (order kept;
        negative indices count from the end, as in numpy; duplicates allowed unless
        ``unique``) or a boolean mask of length n. With ``unique=True`` (set-valued
        quantities: group eta, FIM) duplicates -- also ``i`` and ``i - n`` -- and an empty
        selection are refused.
        """
        if rows is None:
            return np.arange(self.n)
        r = np.asarray(positional_rows(rows, param))
        if r.dtype == bool:
            if r.shape != (self.n,):
                raise ValueError(
                    f"{param}: a boolean mask must have length n_samples = {self.n}; got "
                    f"shape {r.shape}."
                )
            idx = np.flatnonzero(r)
        else:
            r = np.atleast_1d(r)
            if r.ndim != 1 or not (r.size == 0 or np.issubdtype(r.dtype, np.integer)):
                raise ValueError(
                    f"{param} must be None, an integer index, a 1-D sequence of integer "
                    "indices or a boolean mask over the training rows; got an array of "
                    f"dtype {r.dtype} and shape {r.shape}."
                )
            if r.size and (r.min() < -self.n or r.max() >= self.n):
                raise ValueError(
                    f"{param}: index out of range for {self.n} training rows (valid: "
                    f"{-self.n}..{self.n - 1}); got min {r.min()}, max {r.max()}."
                )
            idx = np.where(r < 0, r + self.n, r).astype(np.intp)
        if unique:
            if idx.size == 0:
                raise ValueError(f"{param} selects no training row.")
            if np.unique(idx).size != idx.size:
                raise ValueError(
                    f"{param} contains duplicate rows (after wrapping negative indices); a "
                    "set of training values cannot hold a row twice. Pass each row once, "
                    "or use per_example=True for one value per entry."
                )
        return idx

    def _subset_structure(self, feats, has_label):
        key = (feats.tobytes(), has_label)
        st = self._cache.get(key)
        if st is None:
            B = self.H_inv[:, feats]  # H^{-1} E restricted to the columns
            w = self.w[feats]
            v = B @ w
            st = {"B": B, "w": w, "v": v, "w2": float(w @ w)}
            self._cache[key] = st
            while len(self._cache) > _CACHE_MAX_SUBSETS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return st

    def _eig_structure(self, feats, has_label):
        st = self._subset_structure(feats, has_label)
        if "U" not in st:
            B = st["B"]
            # numpy's LAPACK, like the GEMMs around it (see _glm.HessianFactor: the two
            # bundled OpenBLAS pools must not alternate in level-3 work)
            dvals, U = np.linalg.eigh(B @ B.T)
            st["d"] = np.maximum(dvals, 0.0)
            st["U"] = U
            st["K"] = self.H_inv @ U  # rotated a_i = x~_i^T H^{-1} U
            st["vt"] = U.T @ st["v"]
        return st

    @staticmethod
    def _skeleton(st):
        """Skeleton poles of the eigen structure ``st`` (None: they do not pay), computed
        once per column subset."""
        if "compression" not in st:
            st["compression"] = compress_poles(st["d"])
        return st["compression"]

    @staticmethod
    def _helmert(k):
        """Orthonormal basis (k x (k-1)) of the vectors summing to zero.

        The transposed Helmert matrix without its first row (:func:`scipy.linalg.helmert`);
        its columns are those the hand-written construction gave, bit for bit.
        """
        if k < 2:
            raise ValueError(
                "constrained=True needs an attribute of at least two one-hot columns "
                "(changes that keep the one-hot columns summing to a constant)."
            )
        return np.ascontiguousarray(linalg.helmert(k).T)

    # ------------------------------------------------------------------ per example
    def per_example_sq_norms(self, columns=None, *, constrained=False, rows=None):
        """``||J_i[:, C]||_2^2`` for the rows (unscaled by sigma).

        The squared spectral norm of each example's Jacobian restricted to the columns,
        i.e. the largest eigenvalue of ``J_i[:, C]^T J_i[:, C]``; the per-example eta is
        its square root divided by ``sigma``.

        Parameters
        ----------
        columns : None, int, array-like of int or array-like of bool, default=None
            Columns ``C`` of the data values: feature indices ``0..d-1`` and ``d`` for
            the label (no negative indices, no duplicates), or a boolean mask of length
            ``d + 1`` (last entry: the label). ``None``: every feature and the label.
            Feature names are resolved by the estimators, not here.
        constrained : bool, default=False
            For a one-hot attribute given as ``columns`` (at least two columns): keep
            only the changes of those values that leave their sum fixed, i.e. replace
            ``J_i[:, C]`` by ``J_i[:, C] Q`` with ``Q`` an orthonormal basis of the
            vectors summing to zero.
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows: ``None`` for every row, integer indices (order kept,
            duplicates allowed, negative indices count from the end) or a boolean mask
            of length ``n``.

        Returns
        -------
        sq_norms : ndarray of shape (n_rows,)
            ``||J_i[:, C]||_2^2`` (or ``||J_i[:, C] Q||_2^2`` when ``constrained``) for
            each entry of ``rows``, in that order.
        """
        feats, has_label, _ = self._columns(columns)
        idx = self._rows(rows)
        k = feats.size + int(has_label)
        if constrained or k <= min(_GRAM_MAX_COLUMNS, self.p - 1):
            return self._gram_route(idx, feats, has_label, constrained)
        return self._secular_route(idx, feats, has_label, contiguous=rows is None)

    def _secular_route(self, idx, feats, has_label, *, contiguous=False):
        """``contiguous``: ``idx`` is every row in order (chunks are slices of X)."""
        st = self._eig_structure(feats, has_label)
        out = np.empty(idx.size)
        om = self.omega[idx]
        l1, l2, l3 = self.l1[idx], self.l2[idx], self.l3[idx]
        comp = self._skeleton(st) if idx.size >= _COMPRESS_MIN_ROWS else None
        for sl in _chunk_rows(idx.size, self.p):
            # X[rows] @ K[:d]; the intercept row of K is added inside the solver, block by
            # block while the block is in cache
            Xr = self.X[sl if contiguous else idx[sl]]
            if comp is not None:
                out[sl] = secular_sq_norms_compressed(Xr, l1[sl], l2[sl], l3[sl], om[sl],
                                                      st, has_label, self.fit_intercept,
                                                      self.d)
                continue
            At = np.asarray(Xr @ st["K"][: self.d])
            out[sl] = secular_sq_norms(At, l1[sl], l2[sl], l3[sl], om[sl], st, has_label,
                                       offset=st["K"][self.d] if self.fit_intercept else None)
        return out

    def _gram_route(self, idx, feats, has_label, constrained):
        st = self._subset_structure(feats, has_label)
        B, w = st["B"], st["w"]
        BtB = B.T @ B
        C = self.H_inv @ B  # so that a_i . b_j = x~_i^T C_j
        k = feats.size + int(has_label)
        Q = self._helmert(k) if constrained else None
        out = np.empty(idx.size)
        for sl in _chunk_rows(idx.size, self.p):
            rows = idx[sl]
            Xt = self._aug_rows(rows)
            A = Xt @ self.H_inv
            na2 = np.einsum("ij,ij->i", A, A)
            ab = Xt @ C  # (m, |F|)
            l1, l2, l3 = self.l1[rows], self.l2[rows], self.l3[rows]
            m = rows.size
            G = np.empty((m, k, k))
            f = feats.size
            G[:, :f, :f] = (
                (l2**2 * na2)[:, None, None] * np.outer(w, w)[None]
                + (l2 * l1)[:, None, None] * (w[None, :, None] * ab[:, None, :]
                                              + w[None, None, :] * ab[:, :, None])
                + (l1**2)[:, None, None] * BtB[None]
            )
            if has_label:
                cross = l3[:, None] * (l2[:, None] * w[None, :] * na2[:, None] + l1[:, None] * ab)
                G[:, :f, f] = cross
                G[:, f, :f] = cross
                G[:, f, f] = l3**2 * na2
            if Q is not None:
                G = Q.T[None] @ G @ Q[None]
            if G.shape[1] == 1:
                top = G[:, 0, 0]
            else:
                top = np.linalg.eigvalsh(G)[:, -1]
            out[sl] = self.omega[rows] ** 2 * np.maximum(top, 0.0)
        return out

    # ------------------------------------------------------------------ groups
    def group_gram(self, rows=None, columns=None, *, constrained=False):
        """``J_S J_S^T = sum_{i in rows} J_i[:, C] J_i[:, C]^T`` (p x p), structured.

        Computed from the closed form of the Jacobians without forming them (one pass
        over the rows in chunks).

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the set ``S``: ``None`` for every row, integer indices
            (negative indices count from the end) or a boolean mask of length ``n``.
            Duplicates and an empty selection are refused.
        columns : None, int, array-like of int or array-like of bool, default=None
            Columns ``C`` of the data values: feature indices ``0..d-1`` and ``d`` for
            the label (no negative indices, no duplicates), or a boolean mask of length
            ``d + 1`` (last entry: the label). ``None``: every feature and the label.
            Feature names are resolved by the estimators, not here.
        constrained : bool, default=False
            For a one-hot attribute given as ``columns`` (at least two columns): keep
            only the changes of those values that leave their sum fixed, i.e. replace
            ``J_i[:, C]`` by ``J_i[:, C] Q`` with ``Q`` an orthonormal basis of the
            vectors summing to zero.
            Each term is then ``J_i[:, C] (I - 1 1^T / k) J_i[:, C]^T`` with ``k`` the
            number of columns.

        Returns
        -------
        gram : ndarray of shape (p, p)
            The symmetric positive semi-definite matrix ``J_S J_S^T`` (unscaled by
            sigma); its largest eigenvalue is ``||J_S||_2^2``.
        """
        feats, has_label, _ = self._columns(columns)
        idx = self._rows(rows, unique=True)
        st = self._subset_structure(feats, has_label)
        B, w, v = st["B"], st["w"], st["v"]
        G = np.zeros((self.p, self.p))
        u = np.zeros(self.p)
        s_tot = 0.0
        k = feats.size + int(has_label)
        if constrained:
            self._helmert(k)  # validates k >= 2
            b_sum = B.sum(axis=1)
            w_sum = w.sum()
        for sl in _chunk_rows(idx.size, self.p):
            rows = idx[sl]
            A = self._aug_rows(rows) @ self.H_inv
            om2 = self.omega[rows] ** 2
            l1, l2, l3 = self.l1[rows], self.l2[rows], self.l3[rows]
            coef_aa = om2 * (l2**2 * st["w2"] + (l3**2 if has_label else 0.0))
            G += (A * coef_aa[:, None]).T @ A
            u += A.T @ (om2 * l2 * l1)
            s_tot += np.sum(om2 * l1**2)
            if constrained:
                # subtract (J_i 1)(J_i 1)^T / k: J_i 1 = -omega (c_a a_i + l'_i B 1)
                ca = l2 * w_sum + (l3 if has_label else 0.0)
                g = A * (self.omega[rows] * ca)[:, None] + np.outer(
                    self.omega[rows] * l1, b_sum
                )
                G -= g.T @ g / k
        G += s_tot * (B @ B.T) + np.outer(u, v) + np.outer(v, u)
        return 0.5 * (G + G.T)

    def group_sq_norm(self, rows=None, columns=None, *, constrained=False):
        """``||J_S||_2^2`` of the data values ``rows x columns``.

        The largest eigenvalue of :meth:`group_gram`; the eta of the set is its square
        root divided by ``sigma``.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the set ``S``: ``None`` for every row, integer indices
            (negative indices count from the end) or a boolean mask of length ``n``.
            Duplicates and an empty selection are refused.
        columns : None, int, array-like of int or array-like of bool, default=None
            Columns ``C`` of the data values: feature indices ``0..d-1`` and ``d`` for
            the label (no negative indices, no duplicates), or a boolean mask of length
            ``d + 1`` (last entry: the label). ``None``: every feature and the label.
            Feature names are resolved by the estimators, not here.
        constrained : bool, default=False
            For a one-hot attribute given as ``columns`` (at least two columns): keep
            only the changes of those values that leave their sum fixed, i.e. replace
            ``J_i[:, C]`` by ``J_i[:, C] Q`` with ``Q`` an orthonormal basis of the
            vectors summing to zero.

        Returns
        -------
        sq_norm : float
            ``||J_S||_2^2`` (unscaled by sigma), non-negative.
        """
        G = self.group_gram(rows, columns, constrained=constrained)
        return float(max(linalg.eigvalsh(G, subset_by_index=[self.p - 1, self.p - 1])[0], 0.0))

    # ------------------------------------------------------------------ Jacobians
    def jacobian_columns(self, rows, feats, has_label, *, label_position=None):
        """Dense ``J_i[:, C]`` for the given rows: ndarray (m, p, |C|).

        Columns: ``feats`` in the order given, then the label (or the label at
        ``label_position`` among the columns). The inputs are not validated.

        Parameters
        ----------
        rows : ndarray of int or slice
            Training rows (non-negative indices in ``0..n-1``), ``m`` of them.
        feats : ndarray of int
            Feature indices in ``0..d-1``.
        has_label : bool
            Whether the label column ``-omega_i (dl'/dy)_i H^{-1} x~_i`` is included.
        label_position : int or None, default=None
            Position of the label column among the ``|C|`` columns (``None``: last).
            Used only when ``has_label``.

        Returns
        -------
        jacobians : ndarray of shape (m, p, |C|)
            ``J_i[:, C]`` of each row, ``|C| = len(feats) + has_label``; column ``j`` of
            a feature is ``-omega_i H^{-1} (l''_i w_j x~_i + l'_i e_j)``.
        """
        A = self._aug_rows(rows) @ self.H_inv
        B = self.H_inv[:, feats]
        w = self.w[feats]
        om, l1, l2, l3 = (self.omega[rows], self.l1[rows], self.l2[rows], self.l3[rows])
        J = -(
            (om * l2)[:, None, None] * A[:, :, None] * w[None, None, :]
            + (om * l1)[:, None, None] * B[None]
        )
        if has_label:
            Jl = -(om * l3)[:, None, None] * A[:, :, None]
            pos = feats.size if label_position is None else int(label_position)
            J = np.concatenate([J[:, :, :pos], Jl, J[:, :, pos:]], axis=2)
        return J

    def fim(self, rows=None, columns=None, *, sigma, dense=None):
        """FIM ``J_S^T J_S / sigma^2`` of the data values ``rows x columns``.

        Ordering of the data values: row-major (all columns of the first row, then the
        next row), rows and columns in the order given (duplicate rows are refused).
        Dense ndarray when small, else a symmetric ``LinearOperator``. ``J_S^T J_S`` is
        divided by ``sigma`` twice (never by ``sigma**2``), so a tiny or huge ``sigma``
        fails only when the FIM itself is not representable -- then a ValueError names
        sigma.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the set ``S``: ``None`` for every row, integer indices
            (negative indices count from the end) or a boolean mask of length ``n``.
            Duplicates and an empty selection are refused.
        columns : None, int, array-like of int or array-like of bool, default=None
            Columns ``C`` of the data values: feature indices ``0..d-1`` and ``d`` for
            the label (no negative indices, no duplicates), or a boolean mask of length
            ``d + 1`` (last entry: the label). ``None``: every feature and the label.
            Feature names are resolved by the estimators, not here.
            The order of ``columns`` is kept in the ordering of the data values.
        sigma : float
            Standard deviation of the Gaussian output perturbation.
        dense : bool or None, default=None
            ``True``: a dense array (refused above 20000 data values); ``False``: a
            matrix-free ``LinearOperator``; ``None``: dense up to 2048 data values.

        Returns
        -------
        fim : ndarray or LinearOperator of shape (n_values, n_values)
            ``J_S^T J_S / sigma^2``, symmetric positive semi-definite, with
            ``n_values = n_rows * n_columns``.

        Raises
        ------
        ValueError
            Invalid or duplicate rows, invalid columns, a dense FIM of more than 20000
            data values, or a ``sigma`` at which the FIM overflows or underflows
            float64.
        """
        _, _, order = self._columns(columns)
        idx = self._rows(rows, unique=True)
        feats = order[order < self.d]
        has_label = bool(np.any(order == self.d))
        label_pos = int(np.flatnonzero(order == self.d)[0]) if has_label else None
        k = order.size
        size = idx.size * k
        sigma = float(sigma)
        if dense is None:
            dense = size <= DENSE_FIM_MAX
        if dense:
            check_dense_fim_size(size)
            return dense_fim(self.jacobian_columns(idx, feats, has_label,
                                                   label_position=label_pos), sigma)

        B = self.H_inv[:, feats]
        w = self.w[feats]
        om, l1, l2, l3 = (self.omega[idx], self.l1[idx], self.l2[idx], self.l3[idx])
        f = feats.size
        # caller's column order -> internal order [features in order..., label]
        internal = np.r_[np.flatnonzero(order < self.d), [label_pos] if has_label else []]
        internal = internal.astype(np.intp)

        def js(u):  # J_S u  -> (p,)
            U = np.asarray(u, float).reshape(idx.size, k)[:, internal]
            coeff = om * (l2 * (U[:, :f] @ w))
            if has_label:
                coeff = coeff + om * l3 * U[:, f]
            out = np.zeros(self.p)
            for sl in _chunk_rows(idx.size, self.p):
                out += self._aug_rows(idx[sl]).T @ coeff[sl]
            out = self.H_inv @ out + B @ (U[:, :f].T @ (om * l1))
            return -out

        def jst(g):  # J_S^T g -> (size,)
            g = np.asarray(g, float).ravel()
            hg = self.H_inv @ g
            ag = np.empty(idx.size)
            for sl in _chunk_rows(idx.size, self.p):
                ag[sl] = self._aug_rows(idx[sl]) @ hg
            U = np.empty((idx.size, k))
            Ui = np.empty((idx.size, k))
            Ui[:, :f] = (-(om * l2 * ag)[:, None] * w[None, :]
                         - (om * l1)[:, None] * (B.T @ g)[None])
            if has_label:
                Ui[:, f] = -om * l3 * ag
            U[:, internal] = Ui
            return U.ravel()

        return fim_operator(js, jst, size, sigma)


def check_dense_fim_size(size: int) -> None:
    """Refuse a dense FIM too large to hold (the operator form handles any size)."""
    if size > 20_000:
        raise ValueError(
            f"fisher_information: the dense FIM would be {size} x {size}; "
            "use dense=False (a LinearOperator) for large subsets."
        )


def dense_fim(J, sigma: float) -> np.ndarray:
    """``J_S^T J_S / sigma^2`` from the per-row Jacobian columns ``J`` (rows, p, k)."""
    JS = J.transpose(1, 0, 2).reshape(J.shape[1], J.shape[0] * J.shape[2])
    F0 = JS.T @ JS
    with np.errstate(over="ignore", under="ignore"):
        F = F0 / sigma / sigma  # never sigma**2: that alone overflows
    return check_sigma_scaled(F, np.abs(F0).max(initial=0.0), sigma,
                              "the Fisher information matrix")


def fim_operator(js, jst, size: int, sigma: float) -> LinearOperator:
    """The FIM ``J_S^T J_S / sigma^2`` as a symmetric operator from ``J_S u``, ``J_S^T g``."""

    def matvec(u):
        raw = jst(js(u))
        with np.errstate(over="ignore", under="ignore"):
            out = raw / sigma / sigma
        return check_sigma_scaled(out, np.abs(raw).max(initial=0.0), sigma,
                                  "a Fisher information product")

    return LinearOperator((size, size), matvec=matvec, rmatvec=matvec, dtype=float)


def secular_sq_norms(At, l1, l2, l3, omega, st, has_label, *, offset=None):
    """``||J_i[:, C]||_2^2`` of a block of rows from their rotated ``a_i`` (``At``,
    overwritten) and the subset structure ``st`` of :meth:`FILEngine._eig_structure`.

    The rotation ``At`` comes from one GEMM per block of up to ~32 MB (large GEMMs run
    near peak), ``offset`` (the intercept row of the rotation, or None) still to be
    added to its rows; the solver then runs its first Newton steps on cache-sized
    sub-blocks of it and the last ones on the few rows left of all sub-blocks together.
    """
    s, a, b = _rank2_coefficients(l1, l2, l3, st, has_label)
    rows = max(16, _SECULAR_CHUNK_BYTES // (8 * max(At.shape[1], 1)))
    lam = largest_eigenvalue_rank2(s, st["d"], At, st["vt"], a, b, overwrite_a=True,
                                   block_rows=rows, offset=offset)
    return omega * omega * np.maximum(lam, 0.0)


def _rank2_coefficients(l1, l2, l3, st, has_label):
    """``s_i, alpha_i, beta_i`` of the rank-2 eigenproblem of every row (see the module
    docstring): ``J_i J_i^T / omega_i^2 = s_i M + alpha_i a_i a_i^T + beta_i (a_i v^T +
    v a_i^T)``."""
    return (l1 * l1, l2 * l2 * st["w2"] + (l3 * l3 if has_label else 0.0), l2 * l1)


def secular_sq_norms_compressed(Xr, l1, l2, l3, omega, st, has_label, fit_intercept, d):
    """As :func:`secular_sq_norms` from the rows ``Xr`` themselves, on the skeleton poles
    ``st["compression"]`` (the rotation is done inside, see
    :func:`~sklearn_privacy._linalg._secular.largest_eigenvalue_rank2_compressed`)."""
    s, a, b = _rank2_coefficients(l1, l2, l3, st, has_label)
    K = st["K"]
    rows = max(16, _SECULAR_CHUNK_BYTES // (8 * max(K.shape[1], 1)))
    lam = largest_eigenvalue_rank2_compressed(
        Xr, K[:d], K[d] if fit_intercept else None, s, st["d"], st["vt"], a, b,
        st["compression"], block_rows=rows)
    return omega * omega * np.maximum(lam, 0.0)


def check_sigma_scaled(value, raw_scale, sigma, what):
    """Refuse a ``sigma``-scaled result that overflowed or underflowed float64.

    ``raw_scale`` is a positive number when the unscaled quantity is nonzero (0 when it
    is exactly zero: then a zero result is right).
    """
    value = np.asarray(value, dtype=float) if not np.isscalar(value) else value
    if not np.all(np.isfinite(value)):
        raise ValueError(
            f"sigma={sigma!r} is so small that {what} overflows float64. Use a larger "
            "sigma (eta scales exactly as 1/sigma: compute at sigma=1 and divide)."
        )
    if raw_scale > 0 and np.max(np.abs(value), initial=0.0) < np.finfo(float).tiny:
        raise ValueError(
            f"sigma={sigma!r} is so large that {what} underflows float64 (it would be "
            "reported as 0). Use a smaller sigma (eta scales exactly as 1/sigma)."
        )
    return value
