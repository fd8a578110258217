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
:mod:`sklearn_privacy.fil._glm` by the total weight :math:`W = \\sum_i \\omega_i` gives

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
:math:`|\\partial l / \\partial z|` at the minimisers:

* logistic loss: :math:`|\\sigma(z) - y| \\le 1`, so :math:`L = 1`;
* squared loss with :math:`|y| \\le B` (``target_bound``): :math:`G(\\theta^*) \\le
  G(0) \\le B^2/2` and :math:`G(\\theta^*) \\ge \\alpha \\lVert\\theta^*\\rVert^2 / 2` give
  :math:`\\lVert\\theta^*\\rVert \\le B/\\sqrt\\alpha` for *both* data sets, so
  :math:`|z - y| \\le R B / \\sqrt\\alpha + B` and :math:`L = B (1 + R/\\sqrt\\alpha)`.

Over all rows, the sensitivity is :math:`\\Delta = 2 L R \\max_j \\omega_j / (W\\alpha)`
(``2 L R / (n alpha)`` with unit weights).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma",
           "minimiser_sensitivity"]

_RTOL = 4 * np.finfo(float).eps


def _check_positive(value, name, *, upper=None):
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value) \
            or value <= 0 or (upper is not None and value >= upper):
        bound = f" and < {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be a finite number > 0{bound}; got {value!r}.")
    return float(value)


def _log_delta(epsilon: float, ratio: float) -> float:
    """``log delta(epsilon)`` of Theorem 8 at ``ratio = sigma / Delta`` (log space)."""
    a = 0.5 / ratio
    b = epsilon * ratio
    l1 = log_ndtr(a - b)
    if l1 == -np.inf:
        return -np.inf
    l2 = epsilon + log_ndtr(-a - b)
    diff = l2 - l1
    if not diff < 0.0:  # rounding: delta(epsilon) is positive but below what float64 resolves
        return -np.inf
    return float(l1 + np.log(-np.expm1(diff)))


def analytic_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """Smallest delta for which the Gaussian mechanism is (epsilon, delta)-DP.

    Balle & Wang (2018), Theorem 8: ``Phi(Delta/(2 sigma) - epsilon sigma/Delta) -
    exp(epsilon) Phi(-Delta/(2 sigma) - epsilon sigma/Delta)``, evaluated in log space.

    Parameters
    ----------
    epsilon : float >= 0
        Privacy loss at which delta is evaluated (finite).
    sigma : float > 0
        Standard deviation of the noise added to every coordinate.
    sensitivity : float > 0
        L2 sensitivity ``Delta`` of the released vector.

    Returns
    -------
    delta : float
        The exact delta at ``epsilon`` (in [0, 1]).

    Examples
    --------
    >>> from sklearn_privacy.fil import analytic_gaussian_delta
    >>> float(analytic_gaussian_delta(1.0, sigma=3.73, sensitivity=1.0))
    1.002...e-05
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) \
            or not 0 <= epsilon < np.inf:
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}.")
    sigma = _check_positive(sigma, "sigma")
    sensitivity = _check_positive(sensitivity, "sensitivity")
    return float(np.exp(_log_delta(float(epsilon), sigma / sensitivity)))


def analytic_gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """Exact (smallest) epsilon of the Gaussian mechanism at ``delta``.

    Parameters
    ----------
    sigma : float > 0
        Standard deviation of the noise added to every coordinate.
    sensitivity : float >= 0
        L2 sensitivity of the released vector (``0``: epsilon is 0).
    delta : float in (0, 1)
        Target delta.

    Returns
    -------
    epsilon : float
        The smallest ``epsilon >= 0`` with ``analytic_gaussian_delta(epsilon) <= delta``
        (Balle & Wang 2018, Theorem 8; the root is found to a relative accuracy of a
        few machine epsilons). ``inf`` when ``sigma / sensitivity`` is so small (below
        about 1e-6) that no epsilon up to 1e12 holds.

    Examples
    --------
    >>> from sklearn_privacy.fil import analytic_gaussian_epsilon
    >>> round(analytic_gaussian_epsilon(sigma=1.0, sensitivity=1.0, delta=1e-5), 4)
    4.3772
    """
    sigma = _check_positive(sigma, "sigma")
    delta = _check_positive(delta, "delta", upper=1.0)
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, Real) \
            or not 0 <= sensitivity < np.inf:
        raise ValueError(f"sensitivity must be a finite number >= 0; got {sensitivity!r}.")
    if sensitivity == 0:
        return 0.0
    ratio = sigma / float(sensitivity)
    target = np.log(delta)
    if _log_delta(0.0, ratio) <= target:
        return 0.0

    def f(eps):
        return _log_delta(eps, ratio) - target

    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e12:  # sigma / Delta below ~1e-12: no meaningful guarantee
            return np.inf
    lo = 0.0 if hi == 1.0 else hi / 2.0
    return float(brentq(f, lo, hi, xtol=1e-300, rtol=_RTOL, maxiter=1000))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest noise scale making the Gaussian mechanism (epsilon, delta)-DP.

    The inverse of :func:`analytic_gaussian_epsilon` (Balle & Wang 2018, Algorithm 1).

    Parameters
    ----------
    epsilon : float > 0
        Target epsilon.
    delta : float in (0, 1)
        Target delta.
    sensitivity : float > 0
        L2 sensitivity of the released vector.

    Returns
    -------
    sigma : float
        The smallest standard deviation (per coordinate) meeting Theorem 8's condition.

    Examples
    --------
    >>> from sklearn_privacy.fil import analytic_gaussian_sigma
    >>> round(analytic_gaussian_sigma(1.0, 1e-5, sensitivity=1.0), 4)
    3.7306
    """
    epsilon = _check_positive(epsilon, "epsilon")
    delta = _check_positive(delta, "delta", upper=1.0)
    sensitivity = _check_positive(sensitivity, "sensitivity")
    target = np.log(delta)

    def f(log_ratio):  # decreasing in log(sigma / Delta)
        return _log_delta(epsilon, np.exp(log_ratio)) - target

    lo, hi = -1.0, 1.0
    while f(lo) <= 0 and lo > -700:
        lo -= 2.0
    while f(hi) > 0 and hi < 700:
        hi += 2.0
    if not (f(lo) > 0 >= f(hi)):
        raise ValueError(
            f"epsilon={epsilon!r}, delta={delta!r}: no float64 noise scale is calibrated "
            "to them; use a moderate epsilon (e.g. 1e-6 to 1e6).")
    log_ratio = brentq(f, lo, hi, xtol=1e-15, rtol=_RTOL, maxiter=1000)
    ratio = np.exp(log_ratio)
    # the root is accurate to rounding; step up to the side where the condition holds
    while _log_delta(epsilon, ratio) > target:
        ratio = np.nextafter(ratio, np.inf)
    return float(ratio * sensitivity)


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
            "strongly convex in it and one row can move it without bound. Use "
            "fit_intercept=False and add a constant column to X (its value counts "
            "towards data_norm).")
    if alpha <= 0:
        return np.inf, "no DP guarantee: alpha=0 (the bound needs a positive L2 penalty)."
    if loss == "squared":
        if target_bound is None:
            return np.inf, ("no DP guarantee: least squares needs bounded targets (set "
                            "target_bound to a bound on |y|).")
        lipschitz = float(target_bound) * (1.0 + float(data_norm) / np.sqrt(alpha))
        what = (f"|y| <= target_bound = {target_bound!r}, so |l'| <= target_bound (1 + "
                "data_norm / sqrt(alpha)) at both minimisers")
    elif loss == "multinomial":
        # grad_Theta l = (p - e_y) x^T, ||p - e_y||^2 = (1 - p_y)^2 + sum_{k!=y} p_k^2
        # <= 2 (1 - p_y)^2 <= 2
        lipschitz = float(np.sqrt(2.0))
        what = ("||grad l||_F = ||softmax(z) - e_y||_2 ||x|| <= sqrt(2) ||x||, every "
                "coefficient of every class penalised")
    else:
        lipschitz = 1.0
        what = "|l'| = |sigmoid(z) - y| <= 1"
    total = float(np.sum(sample_weight))
    share = float(np.max(sample_weight)) / total
    with np.errstate(over="ignore"):
        sensitivity = 2.0 * lipschitz * float(data_norm) * share / alpha
    reason = (
        "(epsilon, delta)-DP of the released parameters for replacing the values of any "
        f"one row (weights fixed and public), rows with ||x|| <= data_norm = "
        f"{data_norm!r}, {what}: L2 sensitivity 2 L data_norm max(w) / (sum(w) alpha) = "
        f"{sensitivity!r}.")
    return sensitivity, reason
