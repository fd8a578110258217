"""Multinomial (softmax) logistic regression: the objective and its exact minimiser.

Parameters and objective
------------------------
With ``K`` classes, ``d`` features and ``q = d + 1`` (``q = d`` without intercept), the
parameters are a ``K x q`` matrix ``Theta = [W | b]`` (row ``k``: the coefficients and
intercept of class ``k``), flattened row-major into ``theta`` of length ``p = K q``.
The objective is scikit-learn's multinomial ``LogisticRegression`` objective (with
``C = 1 / (n alpha)``)::

    F(Theta) = sum_i omega_i [logsumexp(Theta x~_i) - y_i^T Theta x~_i] + (n alpha / 2) ||W||_F^2

with ``y_i`` the one-hot label, ``n`` the total sample weight and the intercepts ``b``
not penalised. ``F`` is invariant under ``Theta -> Theta + 1_K c^T`` in every unpenalised
direction (the intercepts, and all of ``Theta`` when ``alpha = 0``); as scikit-learn, we
release the *symmetric* minimiser, the one with ``sum_k Theta_k = 0`` (with ``alpha > 0``
the penalty already forces ``sum_k W_k = 0``; only the intercepts need the convention).
It is unique, and it is the minimiser of ``F + (c / 2K) ||sum_k Theta_k||^2`` for any
``c > 0`` -- the loss gradient always sums to zero over the classes -- so Newton's method
and the Hessian below include that term (with a ``c`` of the scale of the Hessian).

The structured FIL engine of this model is :mod:`sklearn_privacy.fil._eta._multinomial`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.special import logsumexp

from ..exceptions import ConvergenceWarning
from ..utils._warnings import warn_user
from ._core import SingularHessianError, augment

_CHUNK_BYTES = 48_000_000
# L-BFGS stops early (mean-objective gradient 1e-5): one exact Hessian there, chord steps
# to full precision, and the exact Hessian at the end cost less than more L-BFGS steps.
LBFGS_GTOL = 1e-5
CHORD_FROM = 1e-2


def helmert_basis(k: int) -> np.ndarray:
    """Orthonormal basis (k x (k-1)) of the vectors of R^k summing to zero (Helmert)."""
    Q = np.zeros((k, k - 1))
    for j in range(1, k):
        Q[:j, j - 1] = 1.0
        Q[j, j - 1] = -float(j)
        Q[:, j - 1] /= np.sqrt(j * (j + 1.0))
    return Q


def one_hot(y_idx, n_classes: int) -> np.ndarray:
    """One-hot matrix (n, K) of integer class indices."""
    y_idx = np.asarray(y_idx, dtype=np.intp)
    Y = np.zeros((y_idx.size, n_classes))
    Y[np.arange(y_idx.size), y_idx] = 1.0
    return Y


def _dense_aug(X, rows, fit_intercept):
    Xr = X[rows]
    if sp.issparse(Xr):
        Xr = Xr.toarray()
    return augment(np.asarray(Xr, dtype=np.float64), fit_intercept)


def _chunks(n, per_row_bytes, budget=_CHUNK_BYTES):
    size = max(1, int(budget // max(per_row_bytes, 1)))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def _predictor(X, Theta, fit_intercept):
    """``Z = X~ Theta^T`` (n x K)."""
    d = X.shape[1]
    Z = np.asarray(X @ Theta[:, :d].T)
    if fit_intercept:
        Z = Z + Theta[:, d]
    return Z


def _hessian(X, P, omega, fit_intercept, K, q, dtype=np.float64):
    """Loss Hessian ``sum_i omega_i S_i (x) x~_i x~_i^T`` (p x p, float64).

    Dense ``X``: ``blockdiag_k(X~^T diag(omega p_k) X~) - V^T V`` with ``V_i = sqrt(omega_i)
    p_i (x) x~_i``, one GEMM per row chunk, computed in ``dtype`` (float32: an
    approximate Hessian for chord steps). Sparse ``X``: block by block, in float64.
    """
    n = X.shape[0]
    if not sp.issparse(X):
        H = np.zeros((K * q, K * q), dtype=dtype)
        diag = np.zeros((K, q, q), dtype=dtype)
        for sl in _chunks(n, 8 * K * q * 2):
            Xt = _dense_aug(X, sl, fit_intercept).astype(dtype, copy=False)
            root = np.sqrt(omega[sl])
            Pw = (P[sl] * root[:, None]).astype(dtype, copy=False)
            V = (Pw[:, :, None] * Xt[:, None, :]).reshape(-1, K * q)
            H -= V.T @ V  # numpy takes A^T A to BLAS syrk
            # all K diagonal blocks X~^T diag(omega p_k) X~ by one GEMM against V
            Xw = Xt * root[:, None].astype(dtype, copy=False)
            diag += (Xw.T @ V).reshape(q, K, q).transpose(1, 0, 2)
        H4 = H.reshape(K, q, K, q)
        for k in range(K):
            H4[k, :, k, :] += diag[k]
        return H.astype(np.float64, copy=False)
    H = np.zeros((K, q, K, q))
    for sl in _chunks(n, 8 * (q + 2 * K) * 4):
        Xt = _dense_aug(X, sl, fit_intercept) if not sp.issparse(X) else None
        Pc, om = P[sl], omega[sl]
        if Xt is None:
            Xs = augment(X[sl], fit_intercept).tocsr()
        for k in range(K):
            for m in range(k, K):
                c = om * (Pc[:, k] * ((k == m) - Pc[:, m]))
                if Xt is not None:
                    blk = (Xt * c[:, None]).T @ Xt
                else:
                    blk = (Xs.T @ Xs.multiply(c[:, None]).tocsr()).toarray()
                H[k, :, m, :] += blk
                if m != k:
                    H[m, :, k, :] += blk.T
    return H.reshape(K * q, K * q)


def _regulariser(K, q, d, total, alpha, H_loss):
    """Penalty Hessian plus the symmetric-parametrisation term ``(c/K) 1 1^T (x) I_q``."""
    R = np.zeros((K, q, K, q))
    idx = np.arange(d)
    for k in range(K):
        R[k, idx, k, idx] = total * alpha
    c = max(np.trace(H_loss) / H_loss.shape[0], total * alpha, 1e-300)
    for a in range(q):
        R[:, a, :, a] += c / K
    return R.reshape(K * q, K * q), c


def _objective(X, Y, Theta, omega, alpha, total, d, c, fit_intercept):
    Z = _predictor(X, Theta, fit_intercept)
    loss = omega @ (logsumexp(Z, axis=1) - np.sum(Y * Z, axis=1))
    s = Theta.sum(axis=0)
    return float(loss + 0.5 * total * alpha * np.sum(Theta[:, :d] ** 2)
                 + 0.5 * c / Theta.shape[0] * (s @ s))


def _lbfgs_start(X, Y, Theta, omega, alpha, total, d, fit_intercept):
    """A cheap starting point for Newton: L-BFGS on the mean objective (gradient only).

    The loss gradient sums to zero over the classes, so the iterates stay symmetric;
    Newton's method then polishes to machine precision in a few exact steps.
    """
    from scipy.optimize import minimize

    K, q = Theta.shape

    # the label term sum_i omega_i y_i^T Theta x~_i is linear in Theta: <Theta, YX>
    Yw = Y * omega[:, None]
    YX = np.empty((K, q))
    YX[:, :d] = np.asarray(X.T @ Yw).T
    if fit_intercept:
        YX[:, d] = Yw.sum(axis=0)
    grad = np.empty((K, q))
    sparse = sp.issparse(X)
    # L-BFGS runs on Theta / s, s_j the inverse root mean square of feature j (the
    # intercepts unscaled): the same objective, better conditioned (fewer evaluations)
    sq = X.multiply(X).T @ omega if sparse else omega @ (X * X)
    rms = np.sqrt(np.asarray(sq, dtype=float).ravel() / total)
    scale = np.ones(q)
    scale[:d] = 1.0 / np.where(rms > 0, rms, 1.0)

    def fun(flat):
        # class-major (K x n) scores: the reductions over the classes then run along
        # contiguous rows of n numbers instead of over rows of K
        T = flat.reshape(K, q) * scale
        ZT = np.array((X @ T[:, :d].T).T) if sparse else T[:, :d] @ X.T
        if fit_intercept:
            ZT += T[:, d:]
        zmax = ZT.max(axis=0)
        ZT -= zmax
        np.exp(ZT, out=ZT)
        sums = ZT.sum(axis=0)
        lse = zmax + np.log(sums)
        ZT *= omega / sums  # omega_i p_i
        grad[:, :d] = (np.asarray(X.T @ ZT.T).T if sparse else ZT @ X)
        grad[:, :d] += total * alpha * T[:, :d] - YX[:, :d]
        if fit_intercept:
            grad[:, d] = ZT.sum(axis=1) - YX[:, d]
        value = (omega @ lse - np.sum(YX * T)
                 + 0.5 * total * alpha * np.sum(T[:, :d] ** 2))
        return value / total, (grad * scale).ravel() / total

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(fun, (Theta / scale).ravel(), jac=True, method="L-BFGS-B",
                       options={"maxiter": 500, "gtol": LBFGS_GTOL, "ftol": 1e-12})
    out = res.x.reshape(K, q) * scale
    if not np.all(np.isfinite(out)):
        return Theta
    return out - out.mean(axis=0)


def _gradient_at(X, Y, omega, total, alpha, fit_intercept):
    """``gradient(T) -> (P, grad)``: the class probabilities (n x K) and the gradient
    (K x q) of the penalised multinomial objective at ``Theta = T``."""
    d = X.shape[1]
    K = Y.shape[1]
    q = d + int(fit_intercept)
    sparse = sp.issparse(X)
    YwT = (Y * omega[:, None]).T

    def gradient(T):
        # class-major (K x n) probabilities: the softmax reductions run along rows of n
        PT = np.array((X @ T[:, :d].T).T) if sparse else T[:, :d] @ X.T
        if fit_intercept:
            PT += T[:, d:]
        PT -= PT.max(axis=0)
        np.exp(PT, out=PT)
        PT /= PT.sum(axis=0)
        GT = PT * omega - YwT
        grad = np.empty((K, q))
        grad[:, :d] = np.asarray(X.T @ GT.T).T if sparse else GT @ X
        grad[:, :d] += total * alpha * T[:, :d]
        if fit_intercept:
            grad[:, d] = GT.sum(axis=1)
        return PT.T, grad

    return gradient


def _hessian_at(X, omega, total, alpha, fit_intercept, K):
    """``exact(T, P, single=False) -> (H, c, factor)``: the regularised Hessian at the
    probabilities ``P``, exactly symmetric, its class-sum constant ``c`` and its
    Cholesky factor; with ``single=True`` formed in float32 and ``None`` when rounding
    makes it unusable (the float64 Hessian then decides)."""
    d = X.shape[1]
    q = d + int(fit_intercept)

    def exact(T, P, single=False):
        with np.errstate(over="ignore", invalid="ignore"):  # float32: checked below
            H_loss = _hessian(X, P, omega, fit_intercept, K, q,
                              dtype=np.float32 if single else np.float64)
        Rg, c = _regulariser(K, q, d, total, alpha, H_loss)
        H = H_loss + Rg
        H = 0.5 * (H + H.T)  # exactly symmetric: the audit engine reuses its factor
        if single and not np.all(np.isfinite(H)):  # beyond the float32 range
            return None
        try:
            return H, c, linalg.cho_factor(H, lower=True, check_finite=False)
        except linalg.LinAlgError as exc:
            if single:  # rounding in single precision: the float64 Hessian decides
                return None
            raise SingularHessianError(
                "The multinomial Hessian is singular; increase alpha (classes may be "
                "linearly separable)."
            ) from exc

    return exact


def _backtrack(X, Y, Theta, step, g, omega, alpha, total, c, fit_intercept):
    """Step length of a long Newton step: halved from 1 until the Armijo condition holds
    (at most down to 1e-10)."""
    d = X.shape[1]
    t = 1.0
    f0 = _objective(X, Y, Theta, omega, alpha, total, d, c, fit_intercept)
    slope = float(np.sum(g * step))
    while t > 1e-10:
        f1 = _objective(X, Y, Theta + t * step, omega, alpha, total, d, c,
                        fit_intercept)
        if f1 <= f0 + 1e-4 * t * slope:
            break
        t *= 0.5
    return t


def fit_multinomial(X, Y, *, alpha, fit_intercept, sample_weight=None, theta_init=None,
                    tol=1e-12, max_iter=100, return_factor=False):
    """Symmetric exact minimiser of the multinomial objective by damped Newton.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of shape (n, K)
        Label distributions (one-hot for ordinary labels; soft labels allowed, each row
        summing to one).
    alpha : float
        L2 penalty (``n alpha / 2 ||W||^2``, ``n`` the total weight).
    fit_intercept : bool
    sample_weight : ndarray of shape (n,) or None
    theta_init : ndarray of shape (K q,) or None
    tol : float
        Stop when the Newton step is at most ``tol`` relative to the parameters.
    max_iter : int
    return_factor : bool
        Also return the Cholesky factor of ``hessian`` (``scipy.linalg.cho_factor``
        form, lower), which :class:`MultinomialFILEngine` reuses.

    Returns
    -------
    theta : ndarray of shape (K q,)
        Row-major ``Theta = [W | b]``, with ``sum_k Theta_k = 0``.
    n_iter : int
    hessian : ndarray of shape (K q, K q)
        The (symmetrised, regularised) Hessian at the last iterate.
    factor : tuple
        Only with ``return_factor=True``.
    """
    n, d = X.shape
    K = Y.shape[1]
    q = d + int(fit_intercept)
    omega = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    total = float(omega.sum())
    Theta = (np.zeros((K, q)) if theta_init is None
             else np.array(theta_init, dtype=float).reshape(K, q))
    Theta = Theta - Theta.mean(axis=0)
    if theta_init is None:
        Theta = _lbfgs_start(X, Y, Theta, omega, alpha, total, d, fit_intercept)
    gradient = _gradient_at(X, Y, omega, total, alpha, fit_intercept)
    exact = _hessian_at(X, omega, total, alpha, fit_intercept, K)

    # Newton's method; once an exact step is below CHORD_FROM (relative), steps with
    # the last exact Hessian (chord steps, one gradient each; the L-BFGS start is close
    # enough that they contract by orders of magnitude) while they shrink at least
    # tenfold; the returned Hessian is always exact at the final iterate, whose exact
    # step is below tol. After the L-BFGS start the first Hessian is formed in single
    # precision (half the cost of the float64 one): its steps count as chord steps,
    # so a float64 Hessian always confirms the end.
    n_iter = 0
    converged = False
    H = cf = None
    c = 0.0
    need_exact = True
    single = theta_init is None and not sp.issparse(X)
    H_approx = False
    prev = np.inf
    while n_iter < max_iter:
        n_iter += 1
        P, grad = gradient(Theta)
        exact_here = need_exact or cf is None
        approx = False
        if exact_here:
            out = exact(Theta, P, single=True) if single else None
            approx = out is not None
            H, c, cf = out if approx else exact(Theta, P)
            single = False
            H_approx = approx
        s_sum = Theta.sum(axis=0)
        g = grad + (c / K) * s_sum[None, :]
        step = -linalg.cho_solve(cf, g.ravel(), check_finite=False).reshape(K, q)
        norm = float(np.linalg.norm(step))
        scale = max(1.0, float(np.linalg.norm(Theta)))
        t = 1.0
        if norm > 1e-4 * scale:
            t = _backtrack(X, Y, Theta, step, g, omega, alpha, total, c, fit_intercept)
        Theta = Theta + t * step
        Theta -= Theta.mean(axis=0)
        if not np.all(np.isfinite(Theta)):
            raise SingularHessianError(
                "Newton's method diverged on the multinomial objective; increase alpha "
                "(classes may be linearly separable)."
            )
        if norm <= tol * scale:
            if exact_here and not approx:  # the exact step at the final iterate is < tol
                converged = True
                break
            need_exact = True  # a chord step: confirm with the exact Hessian
        elif exact_here:
            need_exact = norm > CHORD_FROM * scale
        else:
            need_exact = norm > 0.1 * prev  # the chord steps stalled
        prev = norm
    if not converged:
        warn_user(
            f"Newton's method did not converge in max_iter={max_iter} steps on the "
            "multinomial objective; increase max_iter or alpha.",
            ConvergenceWarning, stacklevel=3,
        )
        if H_approx:  # never hand on the single-precision Hessian
            H, c, cf = exact(Theta, gradient(Theta)[0])
    if return_factor:
        return Theta.ravel(), n_iter, H, cf
    return Theta.ravel(), n_iter, H


def multinomial_minimiser(X, y_idx, theta, *, n_classes, alpha, fit_intercept,
                          sample_weight=None, tol=1e-12, max_iter=100):
    """Exact minimiser from given (e.g. a user's solver's) parameters, and the distance.

    Polishes ``theta`` (row-major ``K x q`` of ``[coef_ | intercept_]``, any intercept
    offset) with Newton's method on the multinomial objective at ``alpha``.

    Returns
    -------
    theta : ndarray of shape (K q,)
        The symmetric exact minimiser.
    distance : float
        L2 distance moved from the symmetric version of the given parameters.
    """
    K = int(n_classes)
    q = X.shape[1] + int(fit_intercept)
    start = np.asarray(theta, float).reshape(K, q)
    start = start - start.mean(axis=0)
    out, _, _ = fit_multinomial(X, one_hot(y_idx, K), alpha=alpha,
                                fit_intercept=fit_intercept, sample_weight=sample_weight,
                                theta_init=start.ravel(), tol=tol, max_iter=max_iter)
    return out, float(np.linalg.norm(out - start.ravel()))
