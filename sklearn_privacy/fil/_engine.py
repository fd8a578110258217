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
equation (:mod:`._secular`). Column subsets replace ``w, B`` by their restriction. Work
is done in row chunks so memory stays O(chunk * p + p^2).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator

from ._glm import augment, cholesky, penalty_diagonal
from ._secular import largest_eigenvalue_rank2

#: Subsets of at most this many columns use the per-example Gram matrix route.
_GRAM_MAX_COLUMNS = 16
#: Dense FIM up to this many data values, a LinearOperator beyond.
DENSE_FIM_MAX = 2048
#: Row-chunk size (bytes per chunk array) of the secular route: small enough that the
#: iterated arrays of a chunk stay in cache between Newton iterations.
_SECULAR_CHUNK_BYTES = 1_000_000


def _chunk_rows(n, p, budget_bytes=32_000_000):
    size = max(16, int(budget_bytes // (8 * max(p, 1))))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


class FILEngine:
    """Fisher information loss of every subset of a training set (audit state).

    Holds the training data, the exact minimiser and the factorised Hessian; it is the
    part of a fitted FIL estimator that must never be released.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Regression target, or 0/1 labels for the logistic loss.
    theta : ndarray of shape (p,)
        Exact minimiser (coefficients, then the intercept when ``fit_intercept``).
    loss : GLMLoss
    alpha : float
        L2 penalty (the FIL paper's lambda); the penalty is ``n alpha / 2 ||w||^2`` with
        ``n`` the total sample weight.
    fit_intercept : bool
    sample_weight : ndarray of shape (n,)
    """

    def __init__(self, X, y, theta, *, loss, alpha, fit_intercept, sample_weight):
        self.X = X
        self.y = y
        self.theta = np.asarray(theta, float)
        self.loss = loss
        self.alpha = float(alpha)
        self.fit_intercept = bool(fit_intercept)
        self.omega = np.asarray(sample_weight, float)
        self.n, self.d = X.shape
        self.p = self.d + int(self.fit_intercept)
        self.w = self.theta[: self.d]
        z = X @ self.w + (self.theta[-1] if self.fit_intercept else 0.0)
        self.l1, self.l2, self.l3 = loss.derivatives(z, y)
        reg = self.omega.sum() * self.alpha * penalty_diagonal(self.d, self.fit_intercept)
        # H = sum_i omega_i l''_i x~_i x~_i^T with omega, l'' >= 0: rows scaled by the square
        # root make every chunk a symmetric rank-k update A^T A (numpy calls BLAS syrk,
        # half the flops of a general product)
        root = np.sqrt(self.omega * self.l2)
        H = np.zeros((self.p, self.p))
        for sl in _chunk_rows(self.n, self.p):
            Xt = augment(X[sl], self.fit_intercept) * root[sl][:, None]  # never a view of X
            H += Xt.T @ Xt
        H[np.diag_indices_from(H)] += reg
        self.H = H
        self._factor = cholesky(H)
        self.H_inv = linalg.cho_solve(self._factor, np.eye(self.p))
        self.H_inv = 0.5 * (self.H_inv + self.H_inv.T)
        self._cache = {}

    # ------------------------------------------------------------------ data access
    def dense_rows(self, idx) -> np.ndarray:
        """Training rows ``idx`` as a dense float array of shape (len(idx), d) (a copy).

        The one way for code outside the engine (the attacks) to read training rows:
        it works whatever the engine stores internally.
        """
        return np.array(self.X[np.asarray(idx)], dtype=np.float64)

    def dense_columns(self, cols) -> np.ndarray:
        """Training columns ``cols`` (feature indices) as a dense array (n, len(cols))."""
        return np.array(self.X[:, np.asarray(cols)], dtype=np.float64)

    # ------------------------------------------------------------------ helpers
    def _columns(self, columns):
        """Validate ``columns`` -> (feature indices, has_label)."""
        if columns is None:
            return np.arange(self.d), True
        cols = np.atleast_1d(np.asarray(columns))
        if cols.dtype == bool:
            if cols.shape != (self.d + 1,):
                raise ValueError(
                    f"columns: a boolean mask must have length n_features + 1 = "
                    f"{self.d + 1} (the last entry is the label); got {cols.shape[0]}."
                )
            cols = np.flatnonzero(cols)
        if cols.size == 0 or not np.issubdtype(cols.dtype, np.integer):
            raise ValueError(
                "columns must be a non-empty sequence of integer column indices in "
                f"[0, {self.d}] (index {self.d} is the label) or a boolean mask."
            )
        if cols.min() < 0 or cols.max() > self.d:
            raise ValueError(
                f"columns: index out of range; valid indices are 0..{self.d - 1} for the "
                f"features and {self.d} for the label, got {cols.tolist()}."
            )
        if np.unique(cols).size != cols.size:
            raise ValueError(f"columns contains duplicates: {cols.tolist()}.")
        feats = np.sort(cols[cols < self.d])
        return feats, bool(np.any(cols == self.d))

    def _rows(self, rows):
        """Validate ``rows`` -> integer index array."""
        if rows is None:
            return np.arange(self.n)
        r = np.asarray(rows)
        if r.dtype == bool:
            if r.shape != (self.n,):
                raise ValueError(
                    f"rows: a boolean mask must have length n_samples = {self.n}; got "
                    f"shape {r.shape}."
                )
            return np.flatnonzero(r)
        r = np.atleast_1d(r)
        if not np.issubdtype(r.dtype, np.integer) or r.ndim != 1:
            raise ValueError(
                "rows must be None, an integer index, a 1-D sequence of integer indices "
                "or a boolean mask over the training rows."
            )
        if r.size and (r.min() < -self.n or r.max() >= self.n):
            raise ValueError(
                f"rows: index out of range for {self.n} training rows (valid: "
                f"{-self.n}..{self.n - 1}); got min {r.min()}, max {r.max()}."
            )
        return np.unique(np.where(r < 0, r + self.n, r))

    def _subset_structure(self, feats, has_label):
        key = (feats.tobytes(), has_label)
        if key not in self._cache:
            B = self.H_inv[:, feats]  # H^{-1} E restricted to the columns
            w = self.w[feats]
            v = B @ w
            self._cache[key] = {"B": B, "w": w, "v": v, "w2": float(w @ w)}
        return self._cache[key]

    def _eig_structure(self, feats, has_label):
        st = self._subset_structure(feats, has_label)
        if "U" not in st:
            B = st["B"]
            dvals, U = linalg.eigh(B @ B.T, driver="evd")
            st["d"] = np.maximum(dvals, 0.0)
            st["U"] = U
            st["K"] = self.H_inv @ U  # rotated a_i = x~_i^T H^{-1} U
            st["vt"] = U.T @ st["v"]
        return st

    @staticmethod
    def _helmert(k):
        """Orthonormal basis (k x (k-1)) of the vectors summing to zero."""
        if k < 2:
            raise ValueError(
                "constrained=True needs an attribute of at least two one-hot columns "
                "(changes that keep the one-hot columns summing to a constant)."
            )
        Q = np.zeros((k, k - 1))
        for j in range(k - 1):
            Q[: j + 1, j] = 1.0
            Q[j + 1, j] = -(j + 1)
            Q[:, j] /= np.linalg.norm(Q[:, j])
        return Q

    # ------------------------------------------------------------------ per example
    def per_example_sq_norms(self, columns=None, *, constrained=False, rows=None):
        """``||J_i[:, C]||_2^2`` for the rows (unscaled by sigma)."""
        feats, has_label = self._columns(columns)
        idx = self._rows(rows)
        k = feats.size + int(has_label)
        if constrained or k <= min(_GRAM_MAX_COLUMNS, self.p - 1):
            return self._gram_route(idx, feats, has_label, constrained)
        return self._secular_route(idx, feats, has_label)

    def _secular_route(self, idx, feats, has_label):
        st = self._eig_structure(feats, has_label)
        out = np.empty(idx.size)
        l1, l2, l3, om = self.l1[idx], self.l2[idx], self.l3[idx], self.omega[idx]
        for sl in _chunk_rows(idx.size, self.p, _SECULAR_CHUNK_BYTES):
            rows = idx[sl]
            At = augment(self.X[rows], self.fit_intercept) @ st["K"]
            s = l1[sl] ** 2
            a = l2[sl] ** 2 * st["w2"] + (l3[sl] ** 2 if has_label else 0.0)
            b = l2[sl] * l1[sl]
            lam = largest_eigenvalue_rank2(s, st["d"], At, st["vt"], a, b, overwrite_a=True)
            out[sl] = om[sl] ** 2 * np.maximum(lam, 0.0)
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
            Xt = augment(self.X[rows], self.fit_intercept)
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
        """``J_S J_S^T = sum_{i in rows} J_i[:, C] J_i[:, C]^T`` (p x p), structured."""
        feats, has_label = self._columns(columns)
        idx = self._rows(rows)
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
            A = augment(self.X[rows], self.fit_intercept) @ self.H_inv
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
        """``||J_S||_2^2`` of the data values ``rows x columns``."""
        G = self.group_gram(rows, columns, constrained=constrained)
        return float(max(linalg.eigvalsh(G, subset_by_index=[self.p - 1, self.p - 1])[0], 0.0))

    # ------------------------------------------------------------------ Jacobians
    def jacobian_columns(self, rows, feats, has_label):
        """Dense ``J_i[:, C]`` for the given rows: ndarray (m, p, |C|)."""
        A = augment(self.X[rows], self.fit_intercept) @ self.H_inv
        B = self.H_inv[:, feats]
        w = self.w[feats]
        om, l1, l2, l3 = (self.omega[rows], self.l1[rows], self.l2[rows], self.l3[rows])
        J = -(
            (om * l2)[:, None, None] * A[:, :, None] * w[None, None, :]
            + (om * l1)[:, None, None] * B[None]
        )
        if has_label:
            J = np.concatenate([J, -(om * l3)[:, None, None] * A[:, :, None]], axis=2)
        return J

    def fim(self, rows=None, columns=None, *, sigma, dense=None):
        """FIM ``J_S^T J_S / sigma^2`` of the data values ``rows x columns``.

        Ordering of the data values: row-major (all columns of the first row, then
        the next row). Dense ndarray when small, else a symmetric ``LinearOperator``.
        """
        feats, has_label = self._columns(columns)
        idx = self._rows(rows)
        k = feats.size + int(has_label)
        size = idx.size * k
        if dense is None:
            dense = size <= DENSE_FIM_MAX
        if dense:
            if size > 20_000:
                raise ValueError(
                    f"fisher_information: the dense FIM would be {size} x {size}; "
                    "use dense=False (a LinearOperator) for large subsets."
                )
            J = self.jacobian_columns(idx, feats, has_label)  # (m, p, k)
            JS = J.transpose(1, 0, 2).reshape(self.p, size)
            return JS.T @ JS / sigma**2

        B = self.H_inv[:, feats]
        w = self.w[feats]
        om, l1, l2, l3 = (self.omega[idx], self.l1[idx], self.l2[idx], self.l3[idx])
        f = feats.size

        def js(u):  # J_S u  -> (p,)
            U = np.asarray(u, float).reshape(idx.size, k)
            coeff = om * (l2 * (U[:, :f] @ w))
            if has_label:
                coeff = coeff + om * l3 * U[:, f]
            out = np.zeros(self.p)
            for sl in _chunk_rows(idx.size, self.p):
                out += augment(self.X[idx[sl]], self.fit_intercept).T @ coeff[sl]
            out = self.H_inv @ out + B @ (U[:, :f].T @ (om * l1))
            return -out

        def jst(g):  # J_S^T g -> (size,)
            g = np.asarray(g, float).ravel()
            hg = self.H_inv @ g
            ag = np.empty(idx.size)
            for sl in _chunk_rows(idx.size, self.p):
                ag[sl] = augment(self.X[idx[sl]], self.fit_intercept) @ hg
            U = np.empty((idx.size, k))
            U[:, :f] = -(om * l2 * ag)[:, None] * w[None, :] - (om * l1)[:, None] * (B.T @ g)[None]
            if has_label:
                U[:, f] = -om * l3 * ag
            return U.ravel()

        def matvec(u):
            return jst(js(u)) / sigma**2

        return LinearOperator(
            (size, size), matvec=matvec, rmatvec=matvec, dtype=float
        )
