"""The (epsilon, delta)-differential-privacy view of the FIL releases.

Two pieces:

* the **analytic Gaussian mechanism** (Balle & Wang, "Improving the Gaussian Mechanism
  for Differential Privacy: Analytical Calibration and Optimal Denoising", ICML 2018):
  releasing ``f(D) + N(0, sigma^2 I)`` with L2 sensitivity ``Delta`` is
  (epsilon, delta)-DP **if and only if** (their Theorem 8)

  .. math::

      \\Phi\\Big(\\frac{\\Delta}{2\\sigma} - \\frac{\\varepsilon\\sigma}{\\Delta}\\Big)
      - e^{\\varepsilon}\\,
      \\Phi\\Big(-\\frac{\\Delta}{2\\sigma} - \\frac{\\varepsilon\\sigma}{\\Delta}\\Big)
      \\le \\delta .

  The left side, ``delta(epsilon)``, decreases in epsilon and depends on ``sigma`` and
  ``Delta`` only through ``sigma / Delta``; :func:`analytic_gaussian_epsilon` returns the
  smallest epsilon meeting it and :func:`analytic_gaussian_sigma` the smallest sigma (the
  calibration of their Algorithm 1, solved here by a bracketed root finder on the
  log-space condition, so it stays accurate from epsilon = 1e-3 to 100 and beyond);

* the **L2 sensitivity of the exact minimiser** of this package's objective under the
  replacement of one training row (:func:`minimiser_sensitivity`), after Chaudhuri,
  Monteleoni & Sarwate (JMLR 2011).

Derivation for this package's objective. Dividing the objective of
:mod:`sklearn_privacy._glm._core` by the total weight :math:`W = \\sum_i \\omega_i` gives

.. math::

    G_D(\\theta) = \\sum_i \\frac{\\omega_i}{W}\\, l(\\theta^\\top x_i, y_i)
                 + \\frac{\\alpha}{2} \\lVert\\theta\\rVert^2 ,

which is alpha-strongly convex when **every** coordinate is penalised (no unpenalised
intercept). Let ``D'`` replace the values ``(x_j, y_j)`` of one row ``j`` (its weight
:math:`\\omega_j`, like every weight, is a fixed public constant), and let
:math:`\\theta, \\theta'` be the two minimisers. With
:math:`g = G_{D'} - G_D = \\frac{\\omega_j}{W}(l(\\cdot; x_j', y_j') - l(\\cdot; x_j, y_j))`,
strong convexity of :math:`G_D` and :math:`\\nabla G_D(\\theta) = 0 =
\\nabla G_D(\\theta') + \\nabla g(\\theta')` give
:math:`\\alpha \\lVert\\theta' - \\theta\\rVert^2 \\le \\langle \\nabla g(\\theta'),
\\theta - \\theta' \\rangle`, hence

.. math::

    \\lVert\\theta' - \\theta\\rVert \\le \\frac{\\lVert\\nabla g(\\theta')\\rVert}{\\alpha}
    \\le \\frac{2\\, \\omega_j\\, L\\, R}{W \\alpha},

where :math:`R` bounds every row norm (``data_norm``) and :math:`L` bounds
:math:`|\\partial l / \\partial z|` at the minimiser :math:`\\theta'` of *any* data set
(the bound is applied at :math:`\\theta'`, and both rows' gradients are evaluated there):

* logistic loss: :math:`G(\\theta^*) \\le G(0) = \\log 2` and
  :math:`G(\\theta^*) \\ge \\alpha \\lVert\\theta^*\\rVert^2 / 2` give
  :math:`\\lVert\\theta^*\\rVert \\le \\sqrt{2 \\log 2 / \\alpha}`, so
  :math:`|z| \\le R \\sqrt{2\\log 2/\\alpha}` and
  :math:`|\\sigma(z) - y| \\le \\sigma(|z|)`: :math:`L = \\sigma(R\\sqrt{2\\log 2/\\alpha})`
  (below 1; it approaches 1/2 for strong penalties, halving the classical :math:`L = 1`);
* squared loss with :math:`|y| \\le B` (``target_bound``): the minimiser is
  :math:`\\theta^* = (A^\\top A + \\alpha I)^{-1} A^\\top b` with the rows of
  :math:`A` the :math:`\\sqrt{\\omega_i / W}\\, x_i` and :math:`b_i = \\sqrt{\\omega_i / W}\\, y_i`,
  so :math:`\\lVert b\\rVert \\le B`, every singular value :math:`s` of :math:`A` is at most
  :math:`R`, and :math:`\\lVert\\theta^*\\rVert \\le c B` with
  :math:`c = \\max_{0 \\le s \\le R} s / (s^2 + \\alpha)` (:math:`1/(2\\sqrt\\alpha)` when
  :math:`\\sqrt\\alpha \\le R`, else :math:`R/(R^2 + \\alpha)`); hence
  :math:`|z - y| \\le B (1 + R c)` and :math:`L = B (1 + R c)` (at most half the
  :math:`R/\\sqrt\\alpha` term of the cruder :math:`\\lVert\\theta^*\\rVert \\le B/\\sqrt\\alpha`).

Both bounds hold for every data set with rows of norm at most :math:`R`, so they are
data-independent; they are tested by exact refits of random and adversarial
neighbouring pairs (``tests/test_fil_dp.py``) and by the worst-case search of
:func:`sklearn_privacy.attacks.worst_case_neighbours`.

Over all rows, the sensitivity is :math:`\\Delta = 2 L R \\max_j \\omega_j / (W\\alpha)`
(``2 L R / (n alpha)`` with unit weights).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ._gaussian import (
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
)

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma",
           "minimiser_sensitivity"]


def ridge_norm_factor(alpha: float, data_norm: float) -> float:
    """``max over 0 <= s <= data_norm of s / (s^2 + alpha)``: ``||theta*|| <= factor * B``.

    The largest gain of a ridge solution ``(A^T A + alpha I)^-1 A^T b`` when every singular
    value of ``A`` is at most ``data_norm`` (see the module docstring).
    """
    root = np.sqrt(alpha)
    return float(1.0 / (2.0 * root) if root <= data_norm else data_norm / (data_norm**2 + alpha))


def minimiser_sensitivity(*, loss: str, alpha: float, data_norm, fit_intercept: bool,
                          sample_weight: np.ndarray, target_bound=None,
                          data_dependent_weights: bool = False):
    """L2 sensitivity of the exact minimiser to replacing one row, and why.

    See the module docstring for the derivation.

    Parameters
    ----------
    loss : {"logistic", "multinomial", "squared"}
        The loss of the model.
    alpha : float
        The L2 penalty of the objective (``(W alpha / 2) ||theta||^2``).
    data_norm : float or None
        Bound on every row's L2 norm (rows above it must have been scaled to it).
    fit_intercept : bool
        An unpenalised intercept voids the bound.
    sample_weight : ndarray of shape (n_samples,)
        Fixed, public, non-negative weights.
    target_bound : float or None
        Bound on ``|y|`` (least squares only; targets above it must have been clipped).
    data_dependent_weights : bool, default=False
        True when the weights are computed from the data (IRFIL): no bound.

    Returns
    -------
    sensitivity : float
        ``inf`` when no bound holds.
    reason : str
        What the bound covers, or why there is none.
    """
    if data_dependent_weights:
        return np.inf, (
            "no DP guarantee: the weights are recomputed from the data (IRFIL), so one "
            "row changes every weight and the strong-convexity bound on the minimiser's "
            "movement does not apply; the release's epsilon is unbounded as far as this "
            "package can certify.")
    if data_norm is None:
        return np.inf, ("no DP guarantee: data_norm is None (set data_norm to a bound "
                        "on the rows' L2 norm).")
    if fit_intercept:
        return np.inf, (
            "no DP guarantee: the intercept is not penalised, so the objective is not "
            "strongly convex in it and one row can move it without bound. Set "
            "intercept_scaling (a constant column whose coefficient is penalised, its "
            "value counted in data_norm), or use fit_intercept=False.")
    if alpha <= 0:
        return np.inf, "no DP guarantee: alpha=0 (the bound needs a positive L2 penalty)."
    if loss == "squared":
        if target_bound is None:
            return np.inf, ("no DP guarantee: least squares needs bounded targets (set "
                            "target_bound to a bound on |y|).")
        lipschitz = float(target_bound) * (1.0 + float(data_norm)
                                           * ridge_norm_factor(alpha, float(data_norm)))
        what = (f"|y| <= target_bound = {float(target_bound)!r}, so |l'| <= target_bound (1 + "
                "data_norm c) with c = max_(s <= data_norm) s / (s^2 + alpha) at any "
                "minimiser")
    elif loss == "multinomial":
        # grad_Theta l = (p - e_y) x^T, ||p - e_y||^2 = (1 - p_y)^2 + sum_{k!=y} p_k^2
        # <= 2 (1 - p_y)^2 <= 2
        lipschitz = float(np.sqrt(2.0))
        what = ("||grad l||_F = ||softmax(z) - e_y||_2 ||x|| <= sqrt(2) ||x||, every "
                "coefficient of every class penalised")
    else:
        lipschitz = float(expit(float(data_norm) * np.sqrt(2.0 * np.log(2.0) / alpha)))
        what = ("|l'| = |sigmoid(z) - y| <= sigmoid(data_norm sqrt(2 log 2 / alpha)) = "
                f"{lipschitz:.6g} at any minimiser (||theta*||^2 <= 2 log 2 / alpha)")
    total = float(np.sum(sample_weight))
    share = float(np.max(sample_weight)) / total
    with np.errstate(over="ignore"):
        sensitivity = 2.0 * lipschitz * float(data_norm) * share / alpha
    reason = (
        "(epsilon, delta)-DP of the released parameters for replacing the values of any "
        f"one row (weights fixed and public), rows with ||x|| <= data_norm = "
        f"{float(data_norm)!r}, {what}: L2 sensitivity 2 L data_norm max(w) / (sum(w) alpha) = "
        f"{float(sensitivity)!r}.")
    return sensitivity, reason
