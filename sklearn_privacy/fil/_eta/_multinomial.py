"""Multinomial (softmax) logistic regression: the structured FIL engine.

The parameters, the objective and the exact minimiser are in
:mod:`sklearn_privacy._glm._multinomial`.

Jacobian of the minimiser
-------------------------
With ``p_i = softmax(Theta x~_i)``, ``S_i = diag(p_i) - p_i p_i^T``, ``r_i = p_i - y_i``
and ``E = [I_d; 0]`` (``q x d``), the gradient of example ``i``'s loss is
``omega_i r_i (x) x~_i`` and its derivative with respect to the data values is::

    B_i = omega_i [ (S_i W) (x) x~_i + r_i (x) E ,  -Q (x) x~_i ]      (p x (d + K - 1))

The label is the one-hot vector ``y_i``; the only changes that keep it a distribution
are those summing to zero, so -- as the binary model treats its 0/1 label as a real
number -- the label's coordinates are the ``K - 1`` coordinates of ``y_i`` in the
orthonormal (Helmert) basis ``Q`` of the vectors summing to zero. (An unconstrained
``R^K`` label would add the direction ``1_K``, which changes no distribution and moves
only the penalised class sum; it would dominate every eta with a non-physical change.)
The minimiser's Jacobian is ``J_i = -H^{-1} B_i``, and everything is in the symmetric
subspace, so ``c`` above does not enter.

Structured computation (never forming ``J_i``): with ``M = H^{-2}`` and
``U_i = omega_i [S_i W, -Q]`` (``K x m``), ``m = d + K - 1``::

    J_i^T J_i = U_i^T A_i U_i + U_i^T C_i + C_i^T U_i + D_i,
    A_i[k, l] = x~^T M_kl x~,   C_i[k, j] = omega_i sum_l r_l (x~^T M_kl)_j,
    D_i[j, j'] = omega_i^2 sum_kl r_k r_l (M_kl)_jj'                 (features j, j' < d)

where ``M_kl`` is the ``q x q`` block ``(k, l)`` of ``M``. For a chunk of rows,
``x~^T M_kl`` for all ``(k, l)`` is one GEMM ``(rows x q) @ (q x K^2 q)`` and ``D`` one
GEMM ``(rows x K(K+1)/2) @ (K(K+1)/2 x d^2)`` over the class pairs (``M_lk = M_kl^T``);
the top eigenvalue of each per-row ``m x m`` Gram comes from a batched Lanczos iteration
whose Rayleigh quotient is certified to ``LANCZOS_RTOL`` (relative), for most rows by a
bound costing one matrix-vector product (the Frobenius norm of the rest of the
spectrum), for the others by a Cholesky factorisation after a few more steps
(:func:`top_eigenvalues`; LAPACK's ``eigvalsh`` for the rows it cannot certify).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.linalg.lapack import dpotrf, dpotri
from scipy.special import softmax

from ..._glm._core import SingularHessianError
from ..._glm._multinomial import (
    _CHUNK_BYTES,
    _chunks,
    _dense_aug,
    _hessian,
    _predictor,
    _regulariser,
    helmert_basis,
    one_hot,
)
from ...exceptions import NumericalPrecisionWarning
from ...utils import resolve_columns
from ...utils._warnings import warn_user
from ._engine import (
    _ERROR_FACTOR,
    COND_WARN,
    check_dense_fim_size,
    dense_fim,
    fim_operator,
)

__all__ = ["MultinomialFILEngine", "top_eigenvalues"]

MIN_CHUNK_ROWS = 16
DENSE_FIM_MAX = 2048


def _mirror_lower(a, block=512):
    """Copy the lower triangle of the square ``a`` onto its upper one, in place."""
    n = a.shape[0]
    for s in range(0, n, block):
        e = min(n, s + block)
        diag = a[s:e, s:e]
        diag[...] = np.tril(diag) + np.tril(diag, -1).T
        a[s:e, e:] = a[e:, s:e].T
    return a


# Lanczos steps for every row, and further steps for the rows the cheap certificate
# leaves (their spectrum beyond the top is heavy; the Cholesky test then needs the
# Rayleigh quotient within LANCZOS_RTOL of the top eigenvalue)
LANCZOS_STEPS = 9
LANCZOS_MORE = 3
LANCZOS_BLOCK = 32
LANCZOS_RTOL = 1e-12


def _tridiagonal_top(a, b):
    """Largest eigenvalue and its eigenvector of each symmetric tridiagonal matrix.

    ``a`` (r, k) diagonals, ``b`` (r, k - 1) off-diagonals. The eigenvalue by bisection on
    Sturm counts (vectorised over the rows), the eigenvector by inverse iteration
    (Thomas algorithm on the positive definite ``sigma I - T``); rows where it breaks
    down return non-finite vectors (the caller then falls back).
    """
    r, k = a.shape
    radius = np.zeros((r, k))
    radius[:, 1:] += np.abs(b)
    radius[:, :-1] += np.abs(b)
    lo = a.max(axis=1)
    hi = (a + radius).max(axis=1)
    b2 = b**2
    tiny = np.finfo(float).tiny
    # 24 halvings of the Gershgorin bracket: the shift of the inverse iteration only
    # needs to lie just above the top eigenvalue (the caller's eigenvalue is the
    # Rayleigh quotient of the Ritz vector, certified separately)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(24):
            mid = 0.5 * (lo + hi)
            qv = a[:, 0] - mid
            # eigenvalues >= mid exist iff some pivot of T - mid I is >= 0 (after a zero
            # pivot the row's later pivots are +-inf or nan: it is already decided)
            above = qv >= 0
            for i in range(1, k):
                qv = (a[:, i] - mid) - b2[:, i - 1] / qv
                above |= qv >= 0
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
    theta = lo
    # eigenvector by two steps of inverse iteration with a shift just above the top
    # eigenvalue: sigma I - T is positive definite, so the Thomas algorithm is stable
    sigma = hi + 1e-12 * np.abs(hi) + tiny
    v = np.ones((r, k))
    with np.errstate(all="ignore"):
        for _ in range(2):
            d = sigma[:, None] - a  # diagonal of sigma I - T (off-diagonal: -b)
            c = np.zeros((r, k))
            rhs = v.copy()
            piv = d[:, 0].copy()
            rhs[:, 0] /= piv
            for i in range(1, k):
                c[:, i - 1] = -b[:, i - 1] / piv
                piv = d[:, i] + b[:, i - 1] * c[:, i - 1]
                rhs[:, i] = (rhs[:, i] + b[:, i - 1] * rhs[:, i - 1]) / piv
            for i in range(k - 2, -1, -1):
                rhs[:, i] -= c[:, i] * rhs[:, i + 1]
            v = rhs / np.linalg.norm(rhs, axis=1, keepdims=True)
    return theta, v


def top_eigenvalues(G, *, steps=LANCZOS_STEPS, more=LANCZOS_MORE, rtol=LANCZOS_RTOL):
    """Largest eigenvalue of every symmetric PSD matrix of ``G`` (r, m, m), certified.

    ``steps`` batched Lanczos steps (started from each matrix's column of largest
    diagonal, slightly perturbed; run on blocks of ``LANCZOS_BLOCK`` matrices, which stay
    in cache over the steps) give a Ritz vector ``y``; its Rayleigh quotient ``theta =
    y^T G y`` is a lower bound of ``lambda_max`` whatever the rounding in the iteration
    (and accurate to the *square* of the vector's error). The upper bound is *proved*
    row by row, first by a cheap bound: in an orthonormal basis ``[y, Y]``, ``G =
    [[theta, g^T], [g, C]]`` with ``||g|| = rho = ||G y - theta y||`` and ``lambda_max(C)
    <= ||C||_F = mu``, ``||C||_F^2 = ||G||_F^2 - 2 ||G y||^2 + theta^2``; so
    ``lambda_max(G) <= lambda_max([[theta, rho], [rho, mu]]) <= theta + rho^2 / (theta -
    mu)`` when ``mu < theta`` (both inflated by a rounding margin). The rows it does not
    certify (the rest of the spectrum too heavy, or extreme scales) take ``more``
    further Lanczos steps, then a Cholesky factorisation of ``theta (1 + rtol) I - G``,
    which succeeds only if every eigenvalue lies below ``theta (1 + rtol)``. Rows with a
    non-finite Ritz vector or a failed factorisation go to LAPACK's ``eigvalsh``. Every
    returned value is therefore within ``rtol`` (relative, plus rounding) below the top
    eigenvalue; small matrices (``m <= steps + more + 4``) go to ``eigvalsh`` directly.
    """
    r, m, _ = G.shape
    total = steps + more
    if m <= total + 4 or r == 0:
        return np.linalg.eigvalsh(G)[:, -1] if m > 1 else G[:, 0, 0].copy()
    diag = np.einsum("imm->im", G)
    start = G[np.arange(r), diag.argmax(axis=1)]  # the row (= column) of largest diagonal
    norms = np.sqrt(np.einsum("im,im->i", start, start))[:, None]
    start += (1e-3 * norms) * _perturbation(m)  # a fixed pseudo-random direction
    norms = np.sqrt(np.einsum("im,im->i", start, start))[:, None]
    # step-major basis: every V[j] (r, m) is contiguous
    V = np.empty((total, r, m))
    V[0] = start / np.where(norms > 0, norms, 1.0)
    a = np.zeros((total, r))
    b = np.zeros((total - 1, r))
    floor = 1e-14 * (diag.sum(axis=1) + 1e-300)
    fro2 = np.empty(r)
    for s in range(0, r, LANCZOS_BLOCK):
        blk = slice(s, s + LANCZOS_BLOCK)
        _lanczos(G[blk], V[:, blk], a[:, blk], b[:, blk], 0, steps, floor[blk])
        fro2[blk] = np.einsum("imn,imn->i", G[blk], G[blk])  # while in cache
    theta, done = _certified_rayleigh(G, _ritz(V, a, b, steps), rtol, fro2=fro2,
                                      fallback=False)
    rest = np.flatnonzero(~done)
    if rest.size:
        Gr, Vr, ar, br = G[rest], V[:, rest], a[:, rest], b[:, rest]
        _lanczos(Gr, Vr, ar, br, steps, total, floor[rest])
        theta[rest] = _certified_rayleigh(Gr, _ritz(Vr, ar, br, total), rtol,
                                          fro2=fro2[rest])
    return theta


@functools.lru_cache(maxsize=8)
def _perturbation(m):
    """A fixed standard normal vector of length ``m`` (read-only)."""
    out = np.random.default_rng(0).standard_normal(m)
    out.flags.writeable = False
    return out


def _lanczos(G, V, a, b, j0, j1, floor):
    """Lanczos steps ``j0 .. j1 - 1`` with full reorthogonalisation, in place.

    ``V`` (k, r, m) holds the basis (``V[j0]`` set), ``a`` (k, r) and ``b`` (k - 1, r)
    the tridiagonal; the next basis vector is prepared while ``V`` has room.
    """
    k = V.shape[0]
    for j in range(j0, j1):
        w = np.matmul(G, V[j][:, :, None])[:, :, 0]
        if j == k - 1:
            a[j] = np.einsum("im,im->i", w, V[j])
            break
        Vj = V[: j + 1]
        coef = np.einsum("jim,im->ji", Vj, w)  # full reorthogonalisation
        a[j] = coef[j]  # v_j^T G v_j
        w -= np.einsum("ji,jim->im", coef, Vj)
        bj = np.sqrt(np.einsum("im,im->i", w, w))
        live = bj > floor
        b[j] = np.where(live, bj, 0.0)
        np.multiply(w, (live / np.where(live, bj, 1.0))[:, None], out=V[j + 1])


def _ritz(V, a, b, k):
    """The top Ritz vector (r, m) of ``k`` Lanczos steps (``V`` (k', r, m), ``a``, ``b``)."""
    r = a.shape[1]
    if r >= 256:  # bisection: Python steps per call, vectorised over the rows
        _, s = _tridiagonal_top(a[:k].T, b[: k - 1].T)
    else:  # few rows: LAPACK's eigh on the (k, k) tridiagonal matrices
        T = np.zeros((r, k, k))
        i = np.arange(k)
        T[:, i, i] = a[:k].T
        T[:, i[1:], i[:-1]] = b[: k - 1].T
        s = np.full((r, k), np.nan)
        with np.errstate(all="ignore"):
            good = np.all(np.isfinite(T), axis=(1, 2))
        s[good] = np.linalg.eigh(T[good])[1][:, :, -1]
    with np.errstate(all="ignore"):
        return np.einsum("ij,jim->im", s, V[:k])


def _certified_rayleigh(G, y, rtol=LANCZOS_RTOL, *, fro2=None, fallback=True):
    """Rayleigh quotients of the vectors ``y`` (r, m), certified as top eigenvalues.

    Each returned value is ``theta = y^T G y`` when it is proved to lie within ``rtol``
    of ``lambda_max(G)`` (by the Frobenius / 2 x 2 bound, else by a Cholesky
    factorisation of ``theta (1 + rtol) I - G``), and LAPACK's ``eigvalsh`` otherwise
    (non-finite or non-positive ``theta`` included). ``fro2``: the squared Frobenius
    norms of ``G`` when already known. ``fallback=False`` returns ``(theta,
    certified)`` after the cheap bound only.
    """
    r, m, _ = G.shape
    eps = np.finfo(float).eps
    top = np.einsum("imm->im", G).max(axis=1)
    with np.errstate(all="ignore"):
        y = y / np.linalg.norm(y, axis=1, keepdims=True)
        Gy = np.matmul(G, y[:, :, None])[:, :, 0]
        theta = np.einsum("im,im->i", y, Gy)
        ok = np.isfinite(theta) & (theta > 0)
        # the cheap certificate (scales where the squares neither overflow nor underflow)
        cheap = ok & (top > 1e-100) & (top < 1e100)
        if fro2 is None:
            fro2 = np.einsum("imn,imn->i", G, G)
        gy2 = np.einsum("im,im->i", Gy, Gy)
        res = Gy - theta[:, None] * y
        rho2 = np.einsum("im,im->i", res, res)
        margin = 16 * m * eps * np.sqrt(fro2)  # rounding in G y, theta and the norms
        mu = np.sqrt(np.maximum(fro2 - 2 * gy2 + theta**2, 0.0) + 8 * m * eps * fro2)
        rho = np.sqrt(rho2) + margin
        gap = theta - mu - margin
        bound = theta + margin + rho**2 / gap
        cheap &= (gap > 0) & (bound <= theta * (1.0 + rtol))
    if not fallback:
        return theta, cheap
    upper = theta * (1.0 + rtol)
    eye = np.eye(m)
    for i in np.flatnonzero(ok & ~cheap):
        if dpotrf(upper[i] * eye - G[i], lower=1, clean=0, overwrite_a=1)[1] != 0:
            ok[i] = False
    bad = ~ok
    if np.any(bad):
        theta[bad] = np.linalg.eigvalsh(G[bad])[:, -1]
    return theta


class MultinomialFILEngine:
    """Fisher information loss of the multinomial minimiser (audit state).

    The same interface as :class:`~sklearn_privacy.fil.FILEngine`: columns ``0..d-1``
    are the features and column ``d`` the label, whose ``K - 1`` coordinates are those
    of the one-hot label in the Helmert basis ``Q`` of the sum-zero vectors (see the
    module docstring). ``eta`` values are unscaled (divide by ``sigma``).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    y : ndarray of shape (n,)
        Class indices ``0..K-1``.
    theta : ndarray of shape (K q,)
        Symmetric exact minimiser (row-major ``[W | b]``).
    n_classes : int
    alpha, fit_intercept, sample_weight
        As the fit.
    hessian : ndarray of shape (K q, K q) or None
        The regularised Hessian at ``theta`` (built here when None).
    factor : tuple or None
        The Cholesky factor of ``hessian`` (``scipy.linalg.cho_factor`` form, lower) when
        already computed (``fit_multinomial(return_factor=True)``); only with an exactly
        symmetric ``hessian``.
    """

    def __init__(self, X, y, theta, *, n_classes, alpha, fit_intercept, sample_weight,
                 hessian=None, factor=None):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
        else:
            X = np.asarray(X, dtype=np.float64, order="C")
        self.X = X
        self.y = np.asarray(y, dtype=np.float64)
        self.n, self.d = X.shape
        self.K = int(n_classes)
        self.fit_intercept = bool(fit_intercept)
        self.q = self.d + int(self.fit_intercept)
        self.p = self.K * self.q
        self.m = self.d + self.K - 1
        self.alpha = float(alpha)
        self.omega = np.array(sample_weight, dtype=np.float64)
        self.theta = np.array(theta, dtype=np.float64)
        self.Theta = self.theta.reshape(self.K, self.q)
        self.W = self.Theta[:, : self.d]
        self.loss = None  # no scalar GLM loss: the white-box inversion refuses it
        Y = one_hot(self.y.astype(np.intp), self.K)
        self.P = softmax(_predictor(X, self.Theta, self.fit_intercept), axis=1)
        self.R = self.P - Y
        if hessian is None:
            H_loss = _hessian(X, self.P, self.omega, self.fit_intercept, self.K, self.q)
            hessian = H_loss + _regulariser(self.K, self.q, self.d, self.omega.sum(),
                                            self.alpha, H_loss)[0]
        self.H = 0.5 * (hessian + hessian.T)
        if factor is not None and factor[1] and np.array_equal(self.H, hessian):
            cf = factor  # the fit's factorisation of this (exactly symmetric) Hessian
        else:
            try:
                cf = linalg.cho_factor(self.H, lower=True, check_finite=False)
            except linalg.LinAlgError as exc:
                raise SingularHessianError("The multinomial Hessian is singular; "
                                           "increase alpha.") from exc
        # the inverse from the Cholesky factor (LAPACK dpotri: a third of the flops of
        # solving against the identity), lower triangle mirrored: exactly symmetric
        inv, info = dpotri(cf[0], lower=1)
        if info != 0:  # pragma: no cover - the factorisation above succeeded
            raise SingularHessianError("The multinomial Hessian is singular; increase "
                                       "alpha.")
        self.H_inv = _mirror_lower(inv)
        # 1-norm condition estimate from the Cholesky factor (LAPACK dpocon, O(p^2))
        rcond, _ = linalg.lapack.dpocon(cf[0], np.abs(self.H).sum(axis=0).max(),
                                        uplo="L")
        self.cond = float(1.0 / rcond) if rcond > 0 else np.inf
        self.eta_error_bound = _ERROR_FACTOR * self.cond * np.finfo(float).eps
        if self.cond > COND_WARN:
            warn_user(
                f"The Hessian of the multinomial objective is ill-conditioned (estimated "
                f"condition number {self.cond:.1e}): eta_, eta() and fisher_information "
                f"may have relative errors up to about {self.eta_error_bound:.0e}. "
                "Increase alpha or remove nearly collinear columns.",
                NumericalPrecisionWarning, stacklevel=5,
            )
        self.Q = helmert_basis(self.K)
        self._M4 = None

    # ------------------------------------------------------------------ data access
    def dense_rows(self, idx) -> np.ndarray:
        """Training rows ``idx`` as a dense float array (a copy)."""
        Xr = self.X[np.asarray(idx)]
        return Xr.toarray() if sp.issparse(Xr) else np.array(Xr, dtype=np.float64)

    def dense_columns(self, cols) -> np.ndarray:
        """Training columns ``cols`` as a dense (n, len(cols)) array (a copy)."""
        Xc = self.X[:, np.asarray(cols)]
        return Xc.toarray() if sp.issparse(Xc) else np.array(Xc, dtype=np.float64)

    # ------------------------------------------------------------------ validation
    def _columns(self, columns):
        if columns is None:
            return np.arange(self.d + 1)
        return resolve_columns(columns, self.d, None, label=True, param="columns")

    def _rows(self, rows, *, unique=False, param="rows"):
        from ._engine import FILEngine
        return FILEngine._rows(self, rows, unique=unique, param=param)

    def _selector(self, order, constrained):
        """``P`` (m x m') mapping the full Jacobian columns to the selected ones.

        ``order``: column indices (features ``< d``, ``d`` = the label, expanding to its
        ``K - 1`` coordinates in place).
        """
        blocks = []
        for c in order:
            if c < self.d:
                e = np.zeros((self.m, 1))
                e[c, 0] = 1.0
                blocks.append(e)
            else:
                e = np.zeros((self.m, self.K - 1))
                e[self.d:, :] = np.eye(self.K - 1)
                blocks.append(e)
        P = np.hstack(blocks)
        if constrained:
            if np.any(np.asarray(order) == self.d):
                raise ValueError(
                    "constrained=True applies to the one-hot columns of an input "
                    "attribute; the multinomial label is already constrained (its "
                    "coordinates keep the one-hot summing to one). Leave the label out of "
                    "columns."
                )
            k = len(order)
            if k < 2:
                raise ValueError("constrained=True needs at least two columns (the "
                                 "one-hot columns of one attribute).")
            P = P @ helmert_basis(k)
        return P

    # ------------------------------------------------------------------ structure
    def _m4(self):
        """``M = H^{-2}`` in the sum-zero class basis, as ``(q, K-1, K-1, q)``.

        ``[i, a, b, j] = sum_kl Q_ka Q_lb M[(k, i), (l, j)]``: every class-indexed vector
        that enters the per-row Grams (the columns of ``U_i`` and the residual ``r_i``)
        sums to zero over the classes, so it is ``Q`` times its ``K - 1`` Helmert
        coordinates, and only this block of ``M`` is needed.
        """
        if self._M4 is None:
            M = self.H_inv.T @ self.H_inv  # H^-1 is symmetric: one dsyrk, symmetric
            M4 = M.reshape(self.K, self.q, self.K, self.q)
            self._M4 = np.ascontiguousarray(
                np.einsum("ka,kilj,lb->iabj", self.Q, M4, self.Q, optimize=True))
        return self._M4

    def _u(self, rows):
        """``U_i = omega_i [S_i W, -Q]`` for the rows: (r, K, m)."""
        Pr, om = self.P[rows], self.omega[rows]
        PW = Pr @ self.W  # (r, d)
        SW = Pr[:, :, None] * self.W[None] - Pr[:, :, None] * PW[:, None, :]
        U = np.empty((Pr.shape[0], self.K, self.m))
        U[:, :, : self.d] = SW
        U[:, :, self.d:] = -self.Q[None]
        return U * om[:, None, None]

    def _u_helmert(self, rows, out=None):
        """``Q^T U_i = omega_i [Q^T S_i W, -I]`` for the rows: (r, K-1, m).

        ``out``: a (r, K-1, m) array (view) to write into, zero in the label columns.
        """
        Pr, om = self.P[rows], self.omega[rows]
        r, Kt, d = Pr.shape[0], self.K - 1, self.d
        if getattr(self, "_QW", None) is None:
            # (Q^T diag(p) W)[a, j] = sum_k p_k Q_ka W_kj: one GEMM against Q_ka W_kj
            self._QW = (self.Q[:, :, None] * self.W[:, None, :]).reshape(self.K, Kt * d)
        U = np.zeros((r, Kt, self.m)) if out is None else out
        Pw = Pr * om[:, None]
        feat = U[:, :, :d]
        feat[...] = (Pw @ self._QW).reshape(r, Kt, d)
        # omega Q^T (diag(p) - p p^T) W = Q^T diag(omega p) W - (Q^T omega p)(p^T W)
        feat -= (Pw @ self.Q)[:, :, None] * (Pr @ self.W)[:, None, :]
        U[:, np.arange(Kt), d + np.arange(Kt)] = -om[:, None]
        return U

    def row_grams(self, rows):
        """Per-row ``J_i^T J_i`` (r, m, m) in the full column space (structured).

        In the Helmert coordinates of the classes (``U_i = Q U~_i``, ``r_i = Q rho_i``):
        ``G = U~^T (A U~ + [C, 0]) + [C^T U~ + [D, 0]; 0]`` with ``A_ab = x~^T M~_ab x~``,
        ``C_a = sum_b rho_b x~^T M~_ab[:, :d]`` and ``D = sum_ab rho_a rho_b
        M~_ab[:d, :d]`` (``M~`` as in :meth:`_m4`). With ``C' = [C, 0]`` (``(K-1) x m``)
        the first three terms are one batched product ``[U~; C']^T [A U~ + C'; U~]`` of
        depth ``2 (K - 1)``; ``D_i`` is one GEMM over the ``K (K - 1) / 2`` Helmert pairs
        (``M~_ba = M~_ab^T``), added into the feature block.
        """
        Kt, q, d = self.K - 1, self.q, self.d
        M4 = self._m4()
        Xt = _dense_aug(self.X, rows, self.fit_intercept)
        r = Xt.shape[0]
        om = self.omega[rows]
        rho = (self.R[rows] * om[:, None]) @ self.Q  # (r, K-1)
        T = (Xt @ M4.reshape(q, Kt * Kt * q)).reshape(r, Kt, Kt, q)  # x~^T M~_ab
        A = np.matmul(T.reshape(r, Kt * Kt, q), Xt[:, :, None]).reshape(r, Kt, Kt)
        # G = [U; C']^T [A U + C'; U] + [D, 0; 0, 0] with C' = [C, 0]: one batched
        # product of depth 2 (K - 1)
        left = np.empty((r, 2 * Kt, self.m))
        left[:, :, d:] = 0.0  # the label columns (U's -I is set below); the rest is written
        U = self._u_helmert(rows, out=left[:, :Kt])
        right = np.empty((r, 2 * Kt, self.m))
        np.matmul(rho[:, None, None, :], T[:, :, :, :d], out=left[:, Kt:, None, :d])
        np.matmul(A, U, out=right[:, :Kt])
        right[:, :Kt, :d] += left[:, Kt:, :d]
        right[:, Kt:] = U
        G = np.matmul(left.transpose(0, 2, 1), right)
        ku, lu = np.triu_indices(Kt)
        G[:, :d, :d] += ((rho[:, ku] * rho[:, lu]) @ self._md()).reshape(r, d, d)
        return G

    def _md(self):
        """``M~_aa`` and ``M~_ab + M~_ab^T`` (``a < b``), features only: (K(K-1)/2, d^2)."""
        if getattr(self, "_Md", None) is None:
            Kt, d = self.K - 1, self.d
            Md = self._m4()[:d, :, :, :d].transpose(1, 2, 0, 3)  # (K-1, K-1, d, d)
            ku, lu = np.triu_indices(Kt)
            pairs = Md[ku, lu] + Md[lu, ku]  # M~_ba[:d, :d] = M~_ab[:d, :d]^T
            pairs[ku == lu] *= 0.5
            self._Md = np.ascontiguousarray(pairs.reshape(-1, d * d))
        return self._Md

    def _per_row_bytes(self):
        return 8 * (self.K * self.K * self.q + 4 * self.m * self.m + self.d * self.d)

    def per_example_sq_norms(self, columns=None, *, constrained=False, rows=None):
        """``||J_i[:, C]||_2^2`` of every requested row (unscaled)."""
        order = self._columns(columns)
        idx = self._rows(rows)
        Psel = None
        if not (columns is None and not constrained):
            Psel = self._selector(order, constrained)
        out = np.empty(idx.size)
        # at least MIN_CHUNK_ROWS rows per chunk: with fewer, the GEMMs against M (p^2
        # numbers, beyond the cache for large d) are limited by memory bandwidth
        per_row = self._per_row_bytes()
        for sl in _chunks(idx.size, per_row, max(_CHUNK_BYTES, MIN_CHUNK_ROWS * per_row)):
            G = self.row_grams(idx[sl])
            if Psel is not None:
                G = np.einsum("am,iab,bn->imn", Psel, G, Psel, optimize=True)
            out[sl] = top_eigenvalues(G)
        return np.maximum(out, 0.0)

    # ------------------------------------------------------------------ sets
    def jacobian_columns(self, rows, order, constrained=False):
        """Dense ``J_i P`` for the given rows: (r, p, m') (the dense FIM of small sets)."""
        B = self.dense_b(rows)
        J = -np.einsum("pq,iqm->ipm", self.H_inv, B)
        return J @ self._selector(order, constrained)

    def dense_b(self, rows):
        """Dense ``B_i`` (r, p, m): the derivative of the weighted loss gradient."""
        rows = np.asarray(rows)
        Xt = _dense_aug(self.X, rows, self.fit_intercept)
        U = self._u(rows)
        r = Xt.shape[0]
        B = np.einsum("ikm,ia->ikam", U, Xt)
        R = self.R[rows] * self.omega[rows][:, None]
        for j in range(self.d):
            B[:, :, j, j] += R
        return B.reshape(r, self.p, self.m)

    def group_gram(self, rows=None, columns=None, *, constrained=False):
        """``J_S J_S^T`` (p x p) of the set ``rows x columns``."""
        order = self._columns(columns)
        idx = self._rows(rows, unique=True)
        Psel = self._selector(order, constrained)
        S = np.zeros((self.p, self.p))
        for sl in _chunks(idx.size, 8 * self.p * Psel.shape[1] * 2):
            Bs = self.dense_b(idx[sl]) @ Psel
            S += np.einsum("ipm,iqm->pq", Bs, Bs, optimize=True)
        G = self.H_inv @ S @ self.H_inv
        return 0.5 * (G + G.T)

    def group_sq_norm(self, rows=None, columns=None, *, constrained=False):
        """``||J_S||_2^2`` of the set ``rows x columns`` (unscaled)."""
        G = self.group_gram(rows, columns, constrained=constrained)
        return float(max(linalg.eigvalsh(G, subset_by_index=[self.p - 1, self.p - 1])[0],
                         0.0))

    def fim(self, rows=None, columns=None, *, sigma, dense=None):
        """FIM ``J_S^T J_S / sigma^2``; values row-major, the label as ``K - 1`` values."""
        order = self._columns(columns)
        idx = self._rows(rows, unique=True)
        Psel = self._selector(order, False)
        k = Psel.shape[1]
        size = idx.size * k
        sigma = float(sigma)
        if dense is None:
            dense = size <= DENSE_FIM_MAX
        if dense:
            check_dense_fim_size(size)
            return dense_fim(self.jacobian_columns(idx, order), sigma)

        def js(u):
            U = np.asarray(u, float).reshape(idx.size, k)
            out = np.zeros(self.p)
            for sl in _chunks(idx.size, 8 * self.p * k * 2):
                out += np.einsum("ipm,im->p", self.dense_b(idx[sl]) @ Psel, U[sl])
            return -(self.H_inv @ out)

        def jst(g):
            hg = self.H_inv @ np.asarray(g, float).ravel()
            U = np.empty((idx.size, k))
            for sl in _chunks(idx.size, 8 * self.p * k * 2):
                U[sl] = -np.einsum("ipm,p->im", self.dense_b(idx[sl]) @ Psel, hg)
            return U.ravel()

        return fim_operator(js, jst, size, sigma)
