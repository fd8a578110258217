"""Losses of the generalised linear models and their exact minimisers.

The objective of every model in :mod:`sklearn_privacy.fil` is

.. math::

    F(\\theta) = \\sum_i \\omega_i\\, l(\\theta^\\top \\tilde x_i, y_i)
                + \\frac{n \\alpha}{2} \\lVert w \\rVert^2,

with :math:`\\tilde x_i = [x_i; 1]` when an intercept is fitted (the intercept is not
penalised), :math:`\\omega_i` the sample weights and :math:`n = \\sum_i \\omega_i` the total
sample weight (the number of rows when no weights are given), so that ``alpha`` is the
FIL paper's :math:`\\lambda` and an integer weight is the same as repeating a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.special import expit

from ..exceptions import ConvergenceWarning
from ..utils._warnings import warn_user


@dataclass(frozen=True)
class GLMLoss:
    """A convex loss ``l(z, y)`` of a generalised linear model and its derivatives."""

    name: str

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.name == "squared":
            return 0.5 * (z - y) ** 2
        if self.name == "poisson":  # half Poisson deviance up to a term free of z
            with np.errstate(over="ignore"):
                return np.exp(z) - y * z
        return np.logaddexp(0.0, z) - y * z

    def derivatives(self, z: np.ndarray, y: np.ndarray):
        """Return ``(l', l'', dl'/dy)`` at every ``(z_i, y_i)``."""
        if self.name == "squared":
            return z - y, np.ones_like(z), -np.ones_like(z)
        if self.name == "poisson":
            with np.errstate(over="ignore"):
                mu = np.exp(z)
            return mu - y, mu, -np.ones_like(z)
        s = expit(z)
        return s - y, s * (1.0 - s), -np.ones_like(z)


SQUARED = GLMLoss("squared")
LOGISTIC = GLMLoss("logistic")
#: Poisson regression with log link: l = exp(z) - y z, l' = exp(z) - y, l'' = exp(z).
POISSON = GLMLoss("poisson")


class SingularHessianError(ValueError):
    """The Hessian of the objective is (numerically) singular."""


def augment(X, fit_intercept: bool):
    """Return ``X~``: ``X`` with a trailing column of ones when ``fit_intercept``.

    A sparse ``X`` gives a sparse CSR ``X~`` (the column of ones is stored sparse too).
    """
    if not fit_intercept:
        return X
    if sp.issparse(X):
        return sp.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)], format="csr")
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


def weighted_gram(X, c, fit_intercept: bool = False, *,
                  chunk_bytes: int = 32_000_000, dtype=np.float64) -> np.ndarray:
    """Dense ``X~^T diag(c) X~`` (``c >= 0``), ``X~ = augment(X, fit_intercept)``.

    The one Hessian builder of the package (Newton steps, closed-form least squares and
    the audit engine). Dense ``X``: rows scaled by ``sqrt(c)`` one chunk at a time (memory
    O(chunk * p)), each chunk a symmetric rank-k update ``W^T W`` that numpy evaluates
    with BLAS syrk (half the flops of a general product, exactly symmetric); the column
    of ones is written into the chunk, never appended to ``X``. Sparse ``X``: one sparse
    product.

    ``dtype=np.float32`` (dense ``X`` only) forms the chunks and their products in single
    precision -- twice as fast, with entries accurate to about ``1e-7`` of
    ``sqrt(H_jj H_kk)`` -- for Newton *directions* that are corrected afterwards (see
    :func:`newton_minimise`); the result is always returned as float64.
    """
    if sp.issparse(X):
        Xt = augment(X, fit_intercept)
        return np.asarray((Xt.T @ (sp.diags(c) @ Xt)).toarray())
    n, d = X.shape
    p = d + int(fit_intercept)
    root = np.sqrt(c)
    dtype = np.dtype(dtype)
    size = max(16, int(chunk_bytes // (dtype.itemsize * max(p, 1))))
    W = np.empty((min(n, size), p), dtype=dtype)
    G = np.zeros((p, p))
    for start in range(0, n, size):
        m = min(n, start + size) - start
        Wm = W[:m]
        np.multiply(X[start:start + m], root[start:start + m, None], out=Wm[:, :d],
                    casting="same_kind")
        if fit_intercept:
            Wm[:, d] = root[start:start + m]
        G += Wm.T @ Wm
    return G


def penalty_diagonal(n_features: int, fit_intercept: bool) -> np.ndarray:
    """Diagonal of ``R``: 1 on the coefficients, 0 on the intercept."""
    r = np.ones(n_features + int(fit_intercept))
    if fit_intercept:
        r[-1] = 0.0
    return r


#: A condition number (1-norm, of the Jacobi-equilibrated Hessian) above this is refused.
COND_MAX = 1e13
#: Features whose Hessian diagonals differ by more than this factor (in square root) are
#: called badly scaled in the messages.
_SCALE_RATIO_NOTE = 1e4


class HessianFactor:
    """Cholesky factor of a Jacobi-equilibrated symmetric positive definite matrix.

    ``H = S^-1 (L L^T) S^-1`` with ``S = diag(2^k_j)`` chosen so that ``S H S`` has a
    unit-order diagonal (powers of two: the scaling is exact in floating point). Only the
    *solve* is rescaled; every solution is returned in the caller's parametrisation.

    Attributes
    ----------
    cond : float
        Estimated 1-norm condition number of the equilibrated matrix (LAPACK ``dpocon``);
        the relative error of a solve is about ``cond * machine epsilon``.
    scale_ratio : float
        Ratio of the largest to the smallest ``sqrt(H_jj)`` over the positive diagonal
        entries (how differently the features are scaled).
    """

    def __init__(self, c, scale, cond, scale_ratio, equilibrated):
        self.c = c  # upper Cholesky factor U (U^T U = S H S), Fortran-ordered
        self.scale = scale
        self.cond = cond
        self.scale_ratio = scale_ratio
        self.equilibrated = equilibrated  # S H S = c c^T (for the level-3 work below)

    # numpy and scipy each bundle their own OpenBLAS, whose worker threads busy-wait
    # after every multi-threaded call; alternating the two libraries' level-3 routines
    # makes the pools fight over the cores (a 785 x 785 Cholesky alternating with a numpy
    # syrk: 83-111 ms from scipy, 19-23 ms from numpy; benchmarks/bench_blas_pools.py).
    # So level-3 work (factorisation, inverse, many right-hand sides) goes through numpy,
    # like the Gram matrices and GEMMs, and scipy is used only for single-vector
    # (level-2, single-threaded) solves.
    def solve(self, b):
        """``H^-1 b`` (b of shape (p,) or (p, k))."""
        b = np.asarray(b, float)
        if b.ndim == 1:
            return self.scale * linalg.cho_solve((self.c, False), self.scale * b,
                                                 check_finite=False)
        s = self.scale[:, None]
        return s * np.linalg.solve(self.equilibrated, s * b)

    def inverse(self) -> np.ndarray:
        """``H^-1``, symmetrised."""
        inv = np.linalg.inv(self.equilibrated)
        inv = 0.5 * (inv + inv.T)
        return inv * self.scale[:, None] * self.scale[None, :]


def scale_note(scale_ratio: float) -> str:
    """Sentence diagnosing badly scaled features (empty when they are not)."""
    if not np.isfinite(scale_ratio) or scale_ratio < _SCALE_RATIO_NOTE:
        return ""
    k = int(np.floor(np.log10(scale_ratio)))
    return (f" The features differ in scale by ~1e{k}; standardise them (for example "
            "with sklearn.preprocessing.StandardScaler in a Pipeline).")


def cholesky(H: np.ndarray, *, what: str = "Hessian") -> HessianFactor:
    """Equilibrated Cholesky factor of ``H`` with a clear error when ``H`` is singular.

    The matrix is scaled by powers of two to a unit diagonal before factorising (Jacobi
    equilibration), so features on very different scales (an income in dollars next to
    0/1 columns) are not mistaken for collinear ones. ``H`` is refused when the estimated
    condition number of the equilibrated matrix exceeds ``COND_MAX`` (1e13).
    """
    H = np.asarray(H, float)
    diag = np.diag(H).copy()
    pos = diag > 0
    root = np.sqrt(np.where(pos, diag, 1.0))
    scale_ratio = float(root[pos].max() / root[pos].min()) if np.count_nonzero(pos) else 1.0
    scale = np.where(pos, np.exp2(-np.round(np.log2(root))), 1.0)
    Hs = H * scale[:, None] * scale[None, :]
    msg = (
        f"The {what} of the training objective is singular or too ill-conditioned to "
        "invert (for example fewer informative rows than parameters, duplicated or "
        "constant columns, or linearly separable classes). Use a positive L2 penalty "
        "(alpha > 0) or remove redundant columns." + scale_note(scale_ratio)
    )
    if not np.all(np.isfinite(Hs)):
        raise SingularHessianError(
            f"The {what} of the training objective is not finite (overflow): the "
            "features or weights are too large." + scale_note(scale_ratio))
    try:
        # numpy's LAPACK (see HessianFactor). The C-ordered lower factor L is, as a view,
        # the Fortran-ordered upper factor L^T that scipy's solves and dpocon take
        # without a copy (a transposing copy costs about two thirds of the
        # factorisation at p = 785: ~5 ms against ~7 ms)
        c = np.linalg.cholesky(Hs).T
    except np.linalg.LinAlgError as exc:
        raise SingularHessianError(msg) from exc
    anorm = np.abs(Hs).sum(axis=0).max()
    rcond, info = linalg.lapack.dpocon(c, anorm, uplo="U")
    if info != 0 or not np.isfinite(rcond) or rcond < 1.0 / COND_MAX:
        raise SingularHessianError(msg)
    return HessianFactor(c, scale, float(1.0 / rcond), scale_ratio, Hs)


def linear_predictor(X, theta, fit_intercept: bool) -> np.ndarray:
    """``X~ theta`` without forming ``X~`` (dense or sparse ``X``)."""
    d = X.shape[1]
    z = np.asarray(X @ theta[:d]).ravel()
    return z + theta[d] if fit_intercept else z


def transpose_dot(X, r, fit_intercept: bool) -> np.ndarray:
    """``X~^T r`` without forming ``X~``."""
    g = np.asarray(X.T @ r).ravel()
    return np.append(g, r.sum()) if fit_intercept else g


def _check_not_separable(z, y, sample_weight, reg_diag):
    """Without a penalty, a strictly separating theta means no logistic minimiser."""
    if np.any(reg_diag > 0):
        return
    margins = (2.0 * y - 1.0) * z
    if np.all(margins[sample_weight > 0] > 0):
        raise SingularHessianError(
            "The classes are linearly separable, so the unpenalised logistic minimiser "
            "does not exist (the loss decreases forever as the coefficients grow). Use "
            "a positive L2 penalty (alpha > 0)."
        )


def fit_minimiser(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: GLMLoss,
    alpha: float,
    fit_intercept: bool,
    sample_weight: np.ndarray,
    theta_init: np.ndarray | None = None,
    tol: float = 1e-12,
    max_iter: int = 100,
    return_hessian: bool = False,
    approximate: bool = True,
):
    """Exact minimiser of the penalised, weighted objective.

    Least squares is solved in closed form (one Cholesky solve of the normal
    equations). Logistic regression uses damped Newton steps with a backtracking line
    search until the Newton step is below ``tol`` relative to the parameters -- at that
    point the gradient is at rounding level, which the Jacobian formulas assume. With
    ``approximate=True`` (the default) the steps before the last one use approximate
    Hessians (single precision for dense problems with at least ``_SINGLE_MIN_P``
    parameters, reused while they converge fast; see :func:`newton_minimise`), so the
    exact Hessian is usually formed once, at the minimiser; ``approximate=False`` forms
    it at every iteration (same minimiser to rounding level).

    Returns
    -------
    theta : ndarray of shape (n_features + fit_intercept,)
    n_iter : int
        Newton iterations (0 for least squares).
    hessian : tuple (H, HessianFactor), only with ``return_hessian=True``
        The Hessian and its factor: at ``theta`` for least squares; for logistic
        regression at the last Newton iterate, which differs from ``theta`` by the final
        step (below ``tol`` relative, usually at rounding level), so the audit engine
        can use it instead of building the Hessian again.
    """
    reg_diag = sample_weight.sum() * alpha * penalty_diagonal(X.shape[1], fit_intercept)

    def hessian(c):
        H = weighted_gram(X, c, fit_intercept)
        H[np.diag_indices_from(H)] += reg_diag
        return H, cholesky(H)

    def done(theta, n_iter, H, factor):
        return (theta, n_iter, (H, factor)) if return_hessian else (theta, n_iter)

    if loss.name == "squared":
        H, factor = hessian(sample_weight)
        return done(factor.solve(transpose_dot(X, sample_weight * y, fit_intercept)), 0,
                    H, factor)
    unit = float(sample_weight.sum() / max(np.count_nonzero(sample_weight), 1))
    theta0 = (np.zeros(X.shape[1] + int(fit_intercept)) if theta_init is None
              else np.array(theta_init, float))
    # Directions before the last step may come from a single-precision Hessian (twice as
    # fast) when it is large enough to matter and dense; see newton_minimise.
    single = (not sp.issparse(X) and X.shape[1] + int(fit_intercept) >= _SINGLE_MIN_P)

    def evaluate(t):
        z = linear_predictor(X, t, fit_intercept)
        f = sample_weight @ loss.value(z, y) + 0.5 * np.sum(reg_diag * t * t)
        memo = {}

        def derivatives(kind="exact"):
            if not memo:
                l1, l2, _ = loss.derivatives(z, y)
                memo["grad"] = (transpose_dot(X, sample_weight * l1, fit_intercept)
                                + reg_diag * t)
                memo["c"] = sample_weight * l2
            grad, c = memo["grad"], memo["c"]
            if kind == "gradient":
                return grad, None, None
            if kind == "approx":
                return grad, None, approximate_factor(c)
            if kind == "coarse":
                return grad, None, coarse_factor(c)
            return (grad, *hessian(c))

        def separable():
            if loss.name == "logistic":
                _check_not_separable(z, y, sample_weight, reg_diag)

        return f, derivatives, separable

    precision = {"single": single}

    def approximate_factor(c):
        return approximate_hessian_factor(
            lambda dtype: weighted_gram(X, c, fit_intercept, dtype=dtype), reg_diag, precision)

    stride = coarse_stride(X.shape[0], X.shape[1] + int(fit_intercept)) if single else 1
    weight_ratio = (sample_weight.sum() / max(sample_weight[::stride].sum(), 1e-300)
                    if stride > 1 else 1.0)

    def coarse_factor(c):
        if stride == 1:
            return approximate_factor(c)
        return approximate_hessian_factor(
            lambda dtype: weight_ratio * weighted_gram(X[::stride], c[::stride], fit_intercept,
                                                       dtype=dtype),
            reg_diag, precision)

    theta, n_iter, H, factor = newton_minimise(evaluate, theta0, reg_diag=reg_diag,
                                               unit=unit, tol=tol, max_iter=max_iter,
                                               approximate=approximate)
    return done(theta, n_iter, H, factor)


#: Single-precision Hessians for the directions of the first Newton phase from this many
#: parameters on (below it a Hessian is cheap next to the rest of an iteration).
_SINGLE_MIN_P = 64
#: ... and only while the equilibrated Hessian's condition number is below this: the
#: relative error of a float32 direction is about ``cond * 1e-7``.
_SINGLE_MAX_COND = 1e4


def approximate_hessian_factor(gram, reg_diag, precision) -> HessianFactor:
    """Factor of the Hessian ``gram(dtype) + diag(reg_diag)`` for Newton *directions*.

    ``gram(dtype)`` returns ``X~^T diag(c) X~`` accumulated in ``dtype``. Single precision
    is used while ``precision["single"]`` is true and the equilibrated condition number
    stays below ``_SINGLE_MAX_COND``; the first time it does not, ``precision["single"]``
    is cleared (for the rest of the fit) and the Hessian is formed in double precision.
    Shared by the in-memory and the chunked (dask) fits.
    """
    if precision["single"]:
        H = gram(np.float32)
        H[np.diag_indices_from(H)] += reg_diag
        factor = cholesky(H)
        if factor.cond <= _SINGLE_MAX_COND:
            return factor
        precision["single"] = False  # too ill-conditioned for float32 directions
    H = gram(np.float64)
    H[np.diag_indices_from(H)] += reg_diag
    return cholesky(H)


#: Far from the minimiser, the approximate Hessian is formed from every k-th row only, k
#: chosen so that about this many rows per parameter remain (weights rescaled).
_COARSE_ROWS_PER_P = 4
#: ... "far": the last full step was at least this large relative to max(1, |theta|).
_COARSE_STEP = 0.1


def coarse_stride(n_rows: int, p: int) -> int:
    """Row stride of the coarse Hessians of the first Newton steps (1: no subsample)."""
    return max(1, n_rows // (_COARSE_ROWS_PER_P * max(p, 1)))


#: A reused (approximate) Hessian factor is kept while every step is at most this
#: fraction of the previous one (fast linear convergence); otherwise it is rebuilt.
_REUSE_RATIO = 0.1


def newton_minimise(evaluate, theta, *, reg_diag, unit, tol, max_iter, approximate=False):
    """Damped Newton iterations on a convex objective given by ``evaluate``.

    ``evaluate(theta)`` returns ``(f, derivatives, separable)``: the objective value, a
    callable giving ``(gradient, H, HessianFactor)`` at ``theta`` and a callable raising
    :class:`SingularHessianError` when ``theta`` strictly separates the classes. Shared
    by the in-memory fit and the chunked (dask) fit, so both stop at the same point.
    ``unit`` is the mean positive weight: the absolute floors of the stopping rules are
    in its units, so multiplying every weight by a constant changes neither the iterates
    nor the stopping point.

    With ``approximate=True``, ``derivatives(kind)`` also accepts ``kind="gradient"``
    (gradient only), ``kind="approx"`` (gradient and a factor of an approximation of
    the Hessian, e.g. one formed in single precision) and ``kind="coarse"`` (a cruder
    one, e.g. from a subsample of the rows, asked for while the steps are large), and
    the iterations run in two phases. First, steps ``-P^-1 g`` with ``P`` an approximate
    Hessian that is *reused* while each step is at most ``_REUSE_RATIO`` times the
    previous one (a chord method: one gradient per step) and rebuilt otherwise; the
    gradient is exact, so the fixed point is the exact minimiser and only the speed of
    convergence depends on ``P`` (the line search keeps every step a descent).
    Second, once a step is below ``tol``, exact Newton iterations with the same stopping
    rules as without ``approximate``: usually a single one, which also provides the exact
    Hessian at the minimiser. The expensive exact Hessian is thus built about once
    instead of at every iteration.

    Returns ``(theta, n_iter, H, factor)`` with the Hessian of the last (exact) Newton
    iterate; ``n_iter`` counts every step of both phases.
    """
    f, derivatives, separable = evaluate(theta)
    prev_step = np.inf
    exact = not approximate
    P = None  # approximate factor of the first phase
    fresh = False  # P was built at the current iterate
    reuse_ref = np.inf  # the last full step of the first phase (0 after a damped one)
    for it in range(1, max_iter + 1):
        if exact:
            grad, H, factor = derivatives()
            step = factor.solve(grad)
        else:
            grad = derivatives(kind="gradient")[0]
            step = None if P is None else P.solve(grad)
            fresh = False
            if step is None or not (grad @ step > 0) or (
                    np.max(np.abs(step)) > _REUSE_RATIO * reuse_ref):
                far = reuse_ref >= _COARSE_STEP * max(1.0, np.max(np.abs(theta)))
                try:
                    P = derivatives(kind="coarse" if far else "approx")[2]
                except SingularHessianError:  # let the exact phase decide (and report)
                    exact = True
                    grad, H, factor = derivatives()
                    step = factor.solve(grad)
                else:
                    step = P.solve(grad)
                    fresh = True
        decrement = grad @ step
        t = 1.0
        # Close to the minimiser the predicted decrease is below what the objective
        # can resolve in floating point: take full Newton steps (quadratic region).
        while decrement > 1e-10 * max(unit, abs(f)):
            candidate = theta - t * step
            evaluated = evaluate(candidate)
            if evaluated[0] <= f - 1e-4 * t * decrement or t < 1e-10:
                break
            t *= 0.5
        else:
            candidate = theta - step
            evaluated = evaluate(candidate)
        theta = candidate
        f, derivatives, separable = evaluated
        # judge convergence on the full Newton step, not the damped one; in the
        # quadratic region a step that stops shrinking has hit the rounding floor
        step_norm = np.max(np.abs(step))
        small = step_norm <= tol * max(1.0, np.max(np.abs(theta)))
        stalled = (t == 1.0 and decrement <= 1e-10 * max(unit, abs(f))
                   and step_norm >= 0.5 * prev_step)
        if exact and (small or stalled):
            separable()
            return theta, it, H, factor
        if not exact and (small or (stalled and fresh)):
            exact = True  # the approximate phase has done what it can
        # a damped step says nothing about the rate of convergence: rebuild P next time
        reuse_ref = step_norm if t == 1.0 else 0.0
        prev_step = step_norm
    separable()
    if not np.any(reg_diag > 0):
        raise SingularHessianError(
            f"Newton's method did not converge in {max_iter} iterations without a "
            "penalty: the classes are (nearly) linearly separable, so the unpenalised "
            "logistic minimiser does not exist. Use a positive L2 penalty (alpha > 0)."
        )
    warn_user(
        f"Newton's method did not reach tol={tol} in max_iter={max_iter} iterations; the "
        "Jacobians and etas assume an exact minimiser. Increase max_iter or alpha.",
        ConvergenceWarning,
        stacklevel=4,
    )
    return theta, max_iter, None, None
