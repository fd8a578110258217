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

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning


@dataclass(frozen=True)
class GLMLoss:
    """A convex loss ``l(z, y)`` of a generalised linear model and its derivatives."""

    name: str

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.name == "squared":
            return 0.5 * (z - y) ** 2
        return np.logaddexp(0.0, z) - y * z

    def derivatives(self, z: np.ndarray, y: np.ndarray):
        """Return ``(l', l'', dl'/dy)`` at every ``(z_i, y_i)``."""
        if self.name == "squared":
            return z - y, np.ones_like(z), -np.ones_like(z)
        s = expit(z)
        return s - y, s * (1.0 - s), -np.ones_like(z)


SQUARED = GLMLoss("squared")
LOGISTIC = GLMLoss("logistic")


class SingularHessianError(ValueError):
    """The Hessian of the objective is (numerically) singular."""


def augment(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """Return ``X~``: ``X`` with a trailing column of ones when ``fit_intercept``."""
    if not fit_intercept:
        return X
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


def penalty_diagonal(n_features: int, fit_intercept: bool) -> np.ndarray:
    """Diagonal of ``R``: 1 on the coefficients, 0 on the intercept."""
    r = np.ones(n_features + int(fit_intercept))
    if fit_intercept:
        r[-1] = 0.0
    return r


def hessian(Xt, theta, y, loss, reg_diag, sample_weight):
    """Hessian ``X~^T diag(omega l'') X~ + n alpha R`` of the objective at ``theta``."""
    _, l2, _ = loss.derivatives(Xt @ theta, y)
    H = (Xt * (sample_weight * l2)[:, None]).T @ Xt
    H[np.diag_indices_from(H)] += reg_diag
    return H


def cholesky(H: np.ndarray, *, what: str = "Hessian"):
    """Cholesky factor of ``H`` with a clear error when ``H`` is (nearly) singular."""
    msg = (
        f"The {what} of the training objective is singular or too ill-conditioned to "
        "invert (for example fewer informative rows than parameters, duplicated or "
        "constant columns, or linearly separable classes). Use a positive L2 penalty "
        "(alpha > 0) or remove redundant columns."
    )
    try:
        c, lower = linalg.cho_factor(H, lower=True, check_finite=False)
    except linalg.LinAlgError as exc:
        raise SingularHessianError(msg) from exc
    anorm = np.abs(H).sum(axis=0).max()
    rcond, info = linalg.lapack.dpocon(c, anorm, uplo="L")
    if info != 0 or not np.isfinite(rcond) or rcond < 1e-13:
        raise SingularHessianError(msg)
    return c, lower


def _check_not_separable(Xt, y, theta, sample_weight, reg_diag):
    """Without a penalty, a strictly separating theta means no logistic minimiser."""
    if np.any(reg_diag > 0):
        return
    margins = (2.0 * y - 1.0) * (Xt @ theta)
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
):
    """Exact minimiser of the penalised, weighted objective.

    Least squares is solved in closed form (one Cholesky solve of the normal
    equations). Logistic regression uses damped Newton steps with a backtracking line
    search until the Newton step is below ``tol`` relative to the parameters -- at that
    point the gradient is at rounding level, which the Jacobian formulas assume.

    Returns
    -------
    theta : ndarray of shape (n_features + fit_intercept,)
    n_iter : int
        Newton iterations (0 for least squares).
    """
    Xt = augment(X, fit_intercept)
    reg_diag = sample_weight.sum() * alpha * penalty_diagonal(X.shape[1], fit_intercept)
    if loss.name == "squared":
        H = (Xt * sample_weight[:, None]).T @ Xt
        H[np.diag_indices_from(H)] += reg_diag
        factor = cholesky(H)
        return linalg.cho_solve(factor, Xt.T @ (sample_weight * y)), 0

    theta = np.zeros(Xt.shape[1]) if theta_init is None else np.array(theta_init, float)

    def objective(t):
        z = Xt @ t
        return sample_weight @ loss.value(z, y) + 0.5 * np.sum(reg_diag * t * t)

    f = objective(theta)
    prev_step = np.inf
    for it in range(1, max_iter + 1):
        z = Xt @ theta
        l1, l2, _ = loss.derivatives(z, y)
        grad = Xt.T @ (sample_weight * l1) + reg_diag * theta
        H = (Xt * (sample_weight * l2)[:, None]).T @ Xt
        H[np.diag_indices_from(H)] += reg_diag
        step = linalg.cho_solve(cholesky(H), grad)
        decrement = grad @ step
        t = 1.0
        # Close to the minimiser the predicted decrease is below what the objective
        # can resolve in floating point: take full Newton steps (quadratic region).
        while decrement > 1e-10 * max(1.0, abs(f)):
            candidate = theta - t * step
            f_new = objective(candidate)
            if f_new <= f - 1e-4 * t * decrement or t < 1e-10:
                break
            t *= 0.5
        else:
            candidate = theta - step
            f_new = objective(candidate)
        theta, f = candidate, f_new
        # judge convergence on the full Newton step, not the damped one; in the
        # quadratic region a step that stops shrinking has hit the rounding floor
        step_norm = np.max(np.abs(step))
        if step_norm <= tol * max(1.0, np.max(np.abs(theta))) or (
            t == 1.0 and decrement <= 1e-10 * max(1.0, abs(f)) and step_norm >= 0.5 * prev_step
        ):
            _check_not_separable(Xt, y, theta, sample_weight, reg_diag)
            return theta, it
        prev_step = step_norm
    _check_not_separable(Xt, y, theta, sample_weight, reg_diag)
    if not np.any(reg_diag > 0):
        raise SingularHessianError(
            f"Newton's method did not converge in {max_iter} iterations without a "
            "penalty: the classes are (nearly) linearly separable, so the unpenalised "
            "logistic minimiser does not exist. Use a positive L2 penalty (alpha > 0)."
        )
    warnings.warn(
        f"Newton's method did not reach tol={tol} in {max_iter} iterations; the "
        "Jacobians and etas assume an exact minimiser. Increase max_iter or alpha.",
        ConvergenceWarning,
        stacklevel=3,
    )
    return theta, max_iter
