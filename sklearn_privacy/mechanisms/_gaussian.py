"""The analytic Gaussian mechanism (Balle & Wang, ICML 2018): exact (epsilon, delta).

Releasing ``f(D) + N(0, sigma^2 I)`` with L2 sensitivity ``Delta`` is (epsilon, delta)-DP
if and only if ``Phi(Delta/(2 sigma) - epsilon sigma/Delta) - exp(epsilon)
Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta`` (their Theorem 8). The functions
are public as :func:`sklearn_privacy.fil.analytic_gaussian_epsilon`, ``..._sigma`` and
``..._delta``; they live here, below every component that accounts with them (the FIL
estimators, the DP preprocessing, the composition of claims).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ..utils.fixes import NumberInterval, validate_params

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma"]

_RTOL = 4 * np.finfo(float).eps

_POSITIVE = NumberInterval(Real, 0, np.inf, closed="neither")
_NON_NEGATIVE = NumberInterval(Real, 0, np.inf, closed="left")
_DELTA = NumberInterval(Real, 0, 1, closed="neither")


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


@validate_params(
    {"epsilon": [_NON_NEGATIVE], "sigma": [_POSITIVE], "sensitivity": [_POSITIVE]},
    prefer_skip_nested_validation=True,
)
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
    sigma, sensitivity = float(sigma), float(sensitivity)
    return float(np.exp(_log_delta(float(epsilon), sigma / sensitivity)))


@validate_params(
    {"delta": [_DELTA], "sigma": [_POSITIVE], "sensitivity": [_NON_NEGATIVE]},
    prefer_skip_nested_validation=True,
)
def analytic_gaussian_epsilon(*, delta: float, sigma: float, sensitivity: float) -> float:
    """Exact (smallest) epsilon of the Gaussian mechanism at ``delta``.

    The three ``analytic_gaussian_*`` functions take their arguments in one order,
    ``(epsilon, delta, sigma, sensitivity)`` without the one they compute; this one
    takes them by keyword only, so that no call written for another order is read
    silently.

    Parameters
    ----------
    delta : float in (0, 1)
        Target delta.
    sigma : float > 0
        Standard deviation of the noise added to every coordinate.
    sensitivity : float >= 0
        L2 sensitivity of the released vector (``0``: epsilon is 0).

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
    >>> round(analytic_gaussian_epsilon(delta=1e-5, sigma=1.0, sensitivity=1.0), 4)
    4.3772
    """
    sigma, delta = float(sigma), float(delta)
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


@validate_params(
    {"epsilon": [_POSITIVE], "delta": [_DELTA], "sensitivity": [_POSITIVE]},
    prefer_skip_nested_validation=True,
)
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
    epsilon, delta, sensitivity = float(epsilon), float(delta), float(sensitivity)
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
    sigma = float(ratio * sensitivity)
    # the noise scale of a release is never 0 or nan, also when parameter validation is
    # skipped (inside a fit, or under scikit-learn's skip_parameter_validation)
    if not 0.0 < sigma < np.inf:
        raise ValueError(f"sensitivity={sensitivity!r} gives the noise scale {sigma!r}; "
                         "pass a finite sensitivity > 0.")
    return sigma
