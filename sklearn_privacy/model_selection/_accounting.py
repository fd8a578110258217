"""Privacy accounting of hyperparameter selection with a random number of runs.

The selection runs one randomised, differentially private *candidate* mechanism ``Q``
``K`` times on the same data and releases only the run with the highest (noisy) score;
``K`` and the other runs stay secret. ``K`` is drawn independently of the data, with mean
``mean_runs``, from one of two members of Papernot & Steinke's truncated negative
binomial family ``D_{nu, gamma}`` on ``{1, 2, ...}`` (their eta, called nu here because
eta is the Fisher information loss everywhere else in the package):

* ``"geometric"`` (``nu = 1``): ``P[K = k] = gamma (1 - gamma)^(k - 1)``, i.e. stop
  with probability ``gamma = 1 / mean_runs`` after every run (Liu & Talwar's random
  stopping);
* ``"logarithmic"`` (``nu = 0``): ``P[K = k] = (1 - gamma)^k / (k log(1/gamma))``, with
  ``E[K] = (1/gamma - 1) / log(1/gamma)`` solved for ``gamma``.

Two theorems bound the privacy of the released winner; this module evaluates both and
reports the smaller epsilon (each is a valid bound, so their minimum is):

* **pure DP**: if ``Q`` is ``(epsilon, 0)``-DP, the selection is
  ``((2 + nu) epsilon, 0)``-DP whatever ``mean_runs``: ``3 epsilon`` for the geometric
  law (Liu & Talwar, "Private selection from private candidates", STOC 2019, random
  stopping without a cap on the number of runs), ``2 epsilon`` for the logarithmic law
  (Papernot & Steinke 2022, Theorem 2 in the limit of infinite orders);
* **Renyi DP** (Papernot & Steinke, "Hyperparameter tuning with Renyi differential
  privacy", ICLR 2022, Theorem 2): if ``Q`` is ``(lambda, rho(lambda))``-RDP and
  ``(lambda_hat, rho(lambda_hat))``-RDP, the selection is ``(lambda, rho_A(lambda))``-RDP
  with

  .. math::

      \\rho_A(\\lambda) = \\rho(\\lambda)
          + (1 + \\nu) \\Big(1 - \\frac{1}{\\hat\\lambda}\\Big) \\rho(\\hat\\lambda)
          + \\frac{(1 + \\nu) \\log(1/\\gamma)}{\\hat\\lambda}
          + \\frac{\\log \\mathbb{E}[K]}{\\lambda - 1},

  for every ``lambda > 1`` and ``lambda_hat >= 1``; the conversion to
  ``(epsilon, delta)`` is Balle, Barthe, Gaboardi, Hsu & Sato (AISTATS 2020, Theorem 21):
  ``epsilon = rho_A(lambda) + log((lambda - 1) / lambda) - (log(delta) + log(lambda)) /
  (lambda - 1)`` (never larger than Mironov's ``rho_A + log(1/delta) / (lambda - 1)``),
  minimised over both orders on a grid (every grid point gives a valid bound; the grid
  only decides how tight).

The candidate ``Q`` used by :class:`RandomStoppingSearch` draws one hyperparameter
setting uniformly from a finite grid (independently of the data), trains the model on the
training part of a fixed, data-independent split and scores it on the validation part
with the Laplace mechanism. One row lies in exactly one part, so for a neighbouring pair
(one row's values replaced) either the model changes (the score is post-processing of the
model, given the untouched validation rows) or only the score does. Hence, for every
order, ``rho(lambda)`` is the largest of the training mechanisms' RDP over the grid and
the score's RDP (parallel composition); the released setting itself adds nothing, since
for a data-independent mixture ``exp((lambda - 1) D_lambda)`` is an average of the
components' and is at most their maximum.

RDP curves used:

* Gaussian mechanism with ``mu = sensitivity / sigma``: ``lambda mu^2 / 2`` (exact);
* Laplace mechanism of budget ``epsilon`` (scale ``sensitivity / epsilon``), Mironov
  (2017), Proposition 6: ``log(lambda/(2 lambda - 1) e^{(lambda-1) epsilon} +
  (lambda-1)/(2 lambda - 1) e^{-lambda epsilon}) / (lambda - 1)``, and at ``lambda = 1``
  its limit, the Kullback-Leibler divergence ``epsilon + e^{-epsilon} - 1``;
* any other ``(epsilon, 0)``-DP mechanism: ``min(epsilon, lambda epsilon^2 / 2)`` (Bun &
  Steinke 2016, Proposition 3.3, and the trivial bound ``D_lambda <= epsilon``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.optimize import brentq

from ..utils.fixes import NumberInterval, StrOptions, validate_params

__all__ = ["gaussian_rdp", "laplace_rdp", "pure_dp_rdp", "random_stopping_epsilon"]

#: Orders ``lambda > 1`` at which the (epsilon, delta) conversion is evaluated.
_ORDERS = 1.0 + np.geomspace(1e-4, 1e6, 4001)
#: Orders ``lambda_hat >= 1`` of the second RDP term (1 included: the term vanishes there).
_HAT_ORDERS = np.r_[1.0, _ORDERS]

_NON_NEGATIVE = NumberInterval(Real, 0, np.inf, closed="left")
#: Renyi orders: an array-like, or one order.
_ORDERS_CONSTRAINT = ["array-like", NumberInterval(Real, 1, None, closed="left")]


def _as_orders(orders) -> np.ndarray:
    """``orders`` as floats, each a Renyi order in [1, inf] (an array is checked entrywise)."""
    a = np.asarray(orders)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"orders must hold real numbers (Renyi orders >= 1); got dtype "
                        f"{a.dtype}.")
    a = a.astype(float)
    bad = np.isnan(a) | (a < 1.0)
    if np.any(bad):
        raise ValueError(f"orders must be Renyi orders >= 1 (inf allowed); got "
                         f"{a[bad][:5].tolist()}.")
    return a


@validate_params({"orders": _ORDERS_CONSTRAINT, "mu": [_NON_NEGATIVE]},
                 prefer_skip_nested_validation=True)
def gaussian_rdp(orders, mu: float) -> np.ndarray:
    """RDP of the Gaussian mechanism, ``lambda mu^2 / 2`` (``mu`` = sensitivity / sigma).

    Parameters
    ----------
    orders : array-like of float in [1, inf]
        Renyi orders ``lambda``.
    mu : float >= 0
        Sensitivity divided by the noise's standard deviation.

    Returns
    -------
    rdp : ndarray
        ``D_lambda`` of ``N(0, 1)`` and ``N(mu, 1)`` at every order (exact).

    Examples
    --------
    >>> from sklearn_privacy.model_selection import gaussian_rdp
    >>> gaussian_rdp([2.0, 10.0], 0.5)
    array([0.25, 1.25])
    """
    a = _as_orders(orders)
    if float(mu) == 0.0:
        return np.zeros_like(a)
    return a * float(mu) ** 2 / 2.0


@validate_params({"orders": _ORDERS_CONSTRAINT, "epsilon": [_NON_NEGATIVE]},
                 prefer_skip_nested_validation=True)
def laplace_rdp(orders, epsilon: float) -> np.ndarray:
    """RDP of the Laplace mechanism of budget ``epsilon`` (Mironov 2017, Proposition 6).

    Parameters
    ----------
    orders : array-like of float in [1, inf]
        Renyi orders; 1 gives the Kullback-Leibler divergence (the formula's limit).
    epsilon : float >= 0
        Sensitivity divided by the Laplace scale (the mechanism is ``(epsilon, 0)``-DP).

    Returns
    -------
    rdp : ndarray
        ``D_lambda`` of ``Lap(0, 1/epsilon)`` and ``Lap(1, 1/epsilon)`` at every order
        (exact, at most ``epsilon``).

    Examples
    --------
    >>> from sklearn_privacy.model_selection import laplace_rdp
    >>> laplace_rdp([1.0, 2.0, 1e6], 1.0).round(4)
    array([0.3679, 0.6191, 1.    ])
    """
    a = _as_orders(orders)
    eps = float(epsilon)
    if eps == 0.0:
        return np.zeros_like(a)
    out = np.empty_like(a)
    one = a == 1.0
    out[one] = eps + np.expm1(-eps)
    out[np.isinf(a)] = eps  # the max-divergence of Laplace noise
    rest = ~one & np.isfinite(a)
    b = a[rest]
    log_terms = np.logaddexp(np.log(b) - np.log(2 * b - 1) + (b - 1) * eps,
                             np.log(b - 1) - np.log(2 * b - 1) - b * eps)
    out[rest] = log_terms / (b - 1)
    # rounding can push the value a hair above the pure-DP bound epsilon
    return np.minimum(out, eps)


@validate_params({"orders": _ORDERS_CONSTRAINT, "epsilon": [_NON_NEGATIVE]},
                 prefer_skip_nested_validation=True)
def pure_dp_rdp(orders, epsilon: float) -> np.ndarray:
    """RDP implied by ``(epsilon, 0)``-DP: ``min(epsilon, lambda epsilon^2 / 2)``.

    Parameters
    ----------
    orders : array-like of float in [1, inf]
        Renyi orders.
    epsilon : float >= 0
        The pure-DP budget.

    Returns
    -------
    rdp : ndarray
        An upper bound on ``D_lambda`` for any ``(epsilon, 0)``-DP mechanism (Bun &
        Steinke 2016, Proposition 3.3, and ``D_lambda <= epsilon``).

    Examples
    --------
    >>> from sklearn_privacy.model_selection import pure_dp_rdp
    >>> pure_dp_rdp([2.0, 100.0], 0.1)
    array([0.01, 0.1 ])
    """
    a = _as_orders(orders)
    if float(epsilon) == 0.0:
        return np.zeros_like(a)
    return np.minimum(float(epsilon), a * float(epsilon) ** 2 / 2.0)


def _candidate_rdp(orders, gaussian_mu, pure_epsilon, score_epsilon, extra_rdp=None):
    curves = [gaussian_rdp(orders, gaussian_mu), pure_dp_rdp(orders, pure_epsilon),
              laplace_rdp(orders, score_epsilon)]
    curves.extend(curve(orders) for curve in (extra_rdp or ()))
    return np.maximum.reduce(curves)


def _check_nonneg(value, name):
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value) \
            or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    return float(value)


DISTRIBUTIONS = {"geometric": 1.0, "logarithmic": 0.0}   # name -> nu


def runs_gamma(mean_runs: float, distribution: str) -> float:
    """The ``gamma`` of ``D_{nu, gamma}`` whose mean is ``mean_runs`` (> 1)."""
    if distribution == "geometric":
        return 1.0 / mean_runs
    # logarithmic: E[K] = (1/gamma - 1) / log(1/gamma), decreasing in gamma on (0, 1)
    def gap(log_inv_gamma):
        return np.expm1(log_inv_gamma) / log_inv_gamma - mean_runs

    return float(np.exp(-brentq(gap, 1e-12, 700.0, xtol=1e-14, rtol=1e-14)))


@validate_params(
    {
        "mean_runs": [NumberInterval(Real, 1, np.inf, closed="left")],
        "score_epsilon": [_NON_NEGATIVE],
        "gaussian_mu": [_NON_NEGATIVE],
        "pure_epsilon": [_NON_NEGATIVE],
        "delta": [NumberInterval(Real, 0, 1, closed="neither")],
        "distribution": [StrOptions({"geometric", "logarithmic"})],
    },
    prefer_skip_nested_validation=True,
)
def random_stopping_epsilon(mean_runs: float, *, score_epsilon: float,
                            gaussian_mu: float = 0.0, pure_epsilon: float = 0.0,
                            delta: float = 1e-5, distribution: str = "geometric") -> float:
    """Total epsilon of private selection with a random number of runs.

    The candidate run is the largest of three mechanisms on disjoint rows (see the module
    notes): a Gaussian training mechanism with ``gaussian_mu`` (the largest
    ``sensitivity / sigma`` over the grid), an ``(pure_epsilon, 0)``-DP training mechanism
    (the largest over the grid) and the Laplace score of budget ``score_epsilon``. The
    winner of ``K`` runs is released; ``K`` is not.

    Parameters
    ----------
    mean_runs : float >= 1
        Expected number of runs ``E[K]``; ``1`` means exactly one run.
    score_epsilon : float >= 0
        Budget of the Laplace-noised validation score of each run.
    gaussian_mu : float >= 0, default=0.0
        Largest ``sensitivity / sigma`` of a Gaussian training mechanism in the grid.
    pure_epsilon : float >= 0, default=0.0
        Largest epsilon of an ``(epsilon, 0)``-DP training mechanism in the grid.
    delta : float in (0, 1), default=1e-5
        Target delta. With no Gaussian component the result is a pure-DP epsilon
        (``delta = 0`` would do) when that is the smaller bound.
    distribution : {"geometric", "logarithmic"}, default="geometric"
        Law of ``K``: geometric (``nu = 1``, Liu & Talwar's random stopping) or
        logarithmic (``nu = 0``), see the module notes.

    Returns
    -------
    epsilon : float
        The smaller of the pure-DP bound ``(2 + nu) epsilon_Q`` (pure candidates only)
        and the Renyi-DP bound of Papernot & Steinke (2022, Theorem 2) converted at
        ``delta``; the pure bound (which holds with ``delta = 0``) is kept unless it is
        more than 1 % above the other.

    Raises
    ------
    ValueError
        If ``mean_runs < 1``, a budget is negative or not finite, ``delta`` is outside
        ``(0, 1)`` or ``distribution`` is unknown.

    Examples
    --------
    >>> from sklearn_privacy.model_selection import random_stopping_epsilon
    >>> random_stopping_epsilon(10, score_epsilon=0.1, pure_epsilon=0.1)   # 3 * 0.1
    0.3...
    >>> random_stopping_epsilon(10, score_epsilon=0.1, pure_epsilon=0.1,
    ...                         distribution="logarithmic")                # 2 * 0.1
    0.2
    >>> round(random_stopping_epsilon(10, score_epsilon=0.1, gaussian_mu=0.2), 3)
    1.718
    """
    return selection_bound(mean_runs, score_epsilon, gaussian_mu, pure_epsilon, delta,
                           distribution)[0]


def selection_bound(mean_runs, score_epsilon, gaussian_mu, pure_epsilon, delta,
                    distribution="geometric", extra_rdp=None):
    """``(epsilon, is_pure)``: :func:`random_stopping_epsilon` and whether the pure-DP
    theorem gave it (then ``delta = 0``).

    ``extra_rdp``: RDP curves (callables of an array of orders) of further training
    mechanisms of the grid that are neither Gaussian nor pure (e.g. Gaussian objective
    perturbation); with any, the pure-DP theorem does not apply.

    The checks below guard the internal callers (``RandomStoppingSearch`` passes a
    noise ratio it computed); the public function validates its parameters first.
    """
    if isinstance(mean_runs, bool) or not isinstance(mean_runs, Real) \
            or not np.isfinite(mean_runs) or mean_runs < 1:
        raise ValueError(f"mean_runs must be a finite number >= 1; got {mean_runs!r}.")
    score_epsilon = _check_nonneg(score_epsilon, "score_epsilon")
    gaussian_mu = _check_nonneg(gaussian_mu, "gaussian_mu")
    pure_epsilon = _check_nonneg(pure_epsilon, "pure_epsilon")
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be a number in (0, 1); got {delta!r}.")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {sorted(DISTRIBUTIONS)}; got "
                         f"{distribution!r}.")
    rdp, pure = _selection_rdp(mean_runs, score_epsilon, gaussian_mu, pure_epsilon,
                               distribution, extra_rdp)
    conversion = (np.log((_ORDERS - 1.0) / _ORDERS)
                  - (np.log(delta) + np.log(_ORDERS)) / (_ORDERS - 1.0))
    eps = float(np.min(rdp + conversion))
    if pure <= 1.01 * eps:  # a pure claim is preferred unless clearly looser
        return float(pure), True
    return eps, False


def _selection_rdp(mean_runs, score_epsilon, gaussian_mu, pure_epsilon, distribution,
                   extra_rdp):
    """``(rdp, pure)``: the selection's RDP bound at every order of ``_ORDERS`` and its
    pure-DP epsilon (``inf`` when the pure theorem does not apply)."""
    mean_runs = float(mean_runs)
    extra_rdp = list(extra_rdp or ())
    pure_only = gaussian_mu == 0.0 and not extra_rdp
    rho = _candidate_rdp(_ORDERS, gaussian_mu, pure_epsilon, score_epsilon, extra_rdp)
    if mean_runs == 1.0:  # K = 1: the selection is the candidate itself
        return rho, (max(pure_epsilon, score_epsilon) if pure_only else np.inf)
    nu = DISTRIBUTIONS[distribution]
    best = np.inf
    if pure_only:
        # pure candidates: ((2 + nu) eps_Q, 0), Liu & Talwar for the geometric law
        best = (2.0 + nu) * max(pure_epsilon, score_epsilon)
    log_inv_gamma = -np.log(runs_gamma(mean_runs, distribution))
    rho_hat = _candidate_rdp(_HAT_ORDERS, gaussian_mu, pure_epsilon, score_epsilon,
                             extra_rdp)
    # the lambda_hat part does not depend on lambda: minimise it once
    second = np.min((1.0 + nu) * ((1.0 - 1.0 / _HAT_ORDERS) * rho_hat
                                   + log_inv_gamma / _HAT_ORDERS))
    return rho + second + np.log(mean_runs) / (_ORDERS - 1.0), best


def selection_profile(mean_runs, score_epsilon, gaussian_mu, pure_epsilon,
                      distribution="geometric", extra_rdp=None, n_points=256):
    """``(epsilons, deltas)``: the selection's privacy profile, (epsilon_i, delta_i)-DP
    for every ``i``.

    The Renyi-DP bound of :func:`selection_bound` holds at every order at once, so each
    ``epsilon`` has the delta of Balle et al. (2020, Theorem 21) minimised over the
    orders: ``log delta = min_lambda (lambda - 1) (rho_A(lambda) + log((lambda - 1) /
    lambda) - epsilon) - log lambda`` (the same conversion as the reported epsilon,
    solved for delta). With the pure-DP theorem, ``(pure, 0)`` is added. The grid of
    epsilons runs from 0 to where delta falls below ``1e-15``; every pair is a valid
    guarantee, the grid only decides how tight the curve built from them is.
    """
    rdp, pure = _selection_rdp(mean_runs, score_epsilon, gaussian_mu, pure_epsilon,
                               distribution, extra_rdp)
    lam = _ORDERS
    base = rdp + np.log((lam - 1.0) / lam)
    # epsilon at delta = 1e-15: the top of the grid
    top = float(np.min(base - (np.log(1e-15) + np.log(lam)) / (lam - 1.0)))
    top = min(top, pure) if np.isfinite(pure) else top
    eps = np.linspace(0.0, max(top, 1e-6), n_points)
    # chunks keep the (eps x orders) matrix small
    log_delta = np.empty_like(eps)
    for i in range(0, eps.size, 64):
        e = eps[i:i + 64, None]
        log_delta[i:i + 64] = np.min((lam - 1.0) * (base - e) - np.log(lam), axis=1)
    deltas = np.exp(np.minimum(log_delta, 0.0))
    if np.isfinite(pure):
        eps, deltas = np.r_[eps, pure], np.r_[deltas, 0.0]
    return eps, deltas
