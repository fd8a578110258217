"""Epsilon in, noise out: the noise and penalty of a DP release from public quantities.

Everything here depends on the hyperparameters, the number of rows (total and largest
sample weight), the number of released parameters and the declared bounds
(``data_norm``, ``target_bound``) -- never on the values of a row -- so the noise of a
release is fixed before the rows are read.

**Noise.** For a target ``epsilon`` and the total sensitivity ``Delta`` (the minimiser's
sensitivity plus twice the certified distance, see :mod:`._output_perturbation` and ``_base``):

* ``delta > 0``: Gaussian noise with the smallest ``sigma`` of the analytic Gaussian
  mechanism (Balle & Wang 2018) at ``(epsilon, delta)``;
* ``delta = 0``: Laplace-norm noise of scale ``s = Delta / epsilon`` (density ``∝
  exp(-||b|| / s)``, :mod:`sklearn_privacy.mechanisms._laplace_norm`), pure epsilon-DP.

**The ``alpha="auto"`` rule.** Output perturbation of ``G(theta) = (1/n) sum l +
(alpha/2) ||theta||^2`` trades the bias of the penalty against the noise, whose scale is
``c Delta`` per coordinate with ``Delta = 2 L R / (n alpha)`` (``c = sigma / Delta`` for
Gaussian noise, ``sqrt(p + 1) / epsilon`` for Laplace-norm noise in ``p`` dimensions). A
noise vector ``b`` raises the expected loss at a row ``x`` (``||x|| <= R``) by about
``l''_max E[(b^T x)^2] / 2 <= l''_max c^2 Delta^2 R^2 / 2`` (``l''_max``: 1/4 logistic,
1/2 multinomial, 1 squared); the penalty costs ``alpha ||theta_0||^2 / 2`` at a model of
norm ``||theta_0|| = B / R`` (``B``: the scale of the linear predictor, ``AUTO_SIGNAL =
4`` for the classifiers and ``AUTO_SIGNAL_SQUARED * target_bound = target_bound / 2``
for least squares). The sum is
smallest at

.. math::

    \\alpha = \\Big(\\frac{8\\, l''_{\\max}\\, c^2 L^2 R^6}{B^2 n^2}\\Big)^{1/3},

solved as a fixed point because ``L`` (the derivative bound of :mod:`._output_perturbation`)
depends on
``alpha`` (six iterations; the map contracts with exponent 1/3). ``n`` is ``W / max(w)``
(the number of rows for unit weights). The two constants were chosen on the benchmark
tables (``benchmarks/bench_dp_peer.py --alpha-sweep``, ``benchmarks/RESULTS.md``): on
five classification tables at epsilon 0.5, 2 and 8 the best multiple of the rule's
alpha lies between 0.5 and 4; the rule is a
default for a user without a validation budget, not an optimum: with one, select alpha
(and the mechanism) privately with
:class:`sklearn_privacy.model_selection.RandomStoppingSearch`.

**When the noise swamps the signal.** The penalty bounds every minimiser's norm
(``sqrt(2 log K / alpha)`` for a logistic model over ``K`` classes, ``c_ridge
target_bound`` for least squares, see :mod:`._output_perturbation`); the noise's expected norm is
``sigma sqrt(p)`` (Gaussian, up to a factor below 1) or ``p s`` (Laplace-norm). When the
noise is a sizeable share of the largest coefficient vector the penalty allows, the
released direction is mostly noise: :func:`swamp_ratio` is that quotient and the
estimators warn above ``SWAMP_THRESHOLD = 0.35``. Calibration (``bench_dp_peer.py``, five
classification tables, epsilon 0.1 to 2, both deltas, 20 draws each, ``alpha="auto"``):
every one of the 23 settings below 0.35 beat the majority class in at least 90 % of its
draws; of the 17 settings above it, 13 did not (the other four beat it in 90 to 100 % of
their draws: the warning says "may").
"""

from __future__ import annotations

import numpy as np

from ._gaussian import analytic_gaussian_sigma
from ._output_perturbation import minimiser_sensitivity, ridge_norm_factor

#: Scale ``B`` of the linear predictor assumed by ``alpha="auto"`` for the classifiers
#: (the logit) and, in units of ``target_bound``, for least squares; see the module
#: docstring. Calibrated on the benchmark tables (``bench_dp_peer.py --alpha-sweep``).
AUTO_SIGNAL = 4.0
AUTO_SIGNAL_SQUARED = 0.5

#: :func:`swamp_ratio` above which the estimators warn (see the module docstring)
SWAMP_THRESHOLD = 0.35

_CURVATURE = {"logistic": 0.25, "multinomial": 0.5, "squared": 1.0}


def noise_per_sensitivity(epsilon: float, delta: float, n_params: int) -> float:
    """``c``: the per-coordinate standard deviation of the noise per unit of sensitivity."""
    if delta == 0:
        return float(np.sqrt(n_params + 1.0)) / float(epsilon)
    return analytic_gaussian_sigma(float(epsilon), float(delta), 1.0)


def auto_alpha(*, loss: str, n_eff: float, epsilon: float, delta: float, n_params: int,
               data_norm: float, target_bound=None) -> float:
    """The documented ``alpha="auto"`` rule (see the module docstring)."""
    R = float(data_norm)
    c = noise_per_sensitivity(epsilon, delta, n_params)
    scale = AUTO_SIGNAL if loss != "squared" else AUTO_SIGNAL_SQUARED * float(target_bound)
    curv = _CURVATURE[loss]
    alpha = (8.0 * curv * c**2 * R**6 / (scale**2 * n_eff**2)) ** (1.0 / 3.0)
    for _ in range(6):
        L = lipschitz_bound(loss, alpha, R, target_bound)
        alpha = (8.0 * curv * c**2 * L**2 * R**6 / (scale**2 * n_eff**2)) ** (1.0 / 3.0)
    return float(alpha)


def lipschitz_bound(loss: str, alpha: float, data_norm: float, target_bound=None) -> float:
    """``L`` of :func:`._dp.minimiser_sensitivity` (``Delta = 2 L R max(w) / (W alpha)``)."""
    sens, _ = minimiser_sensitivity(loss=loss, alpha=alpha, data_norm=data_norm,
                                    fit_intercept=False, sample_weight=np.ones(1),
                                    target_bound=target_bound)
    return float(sens * alpha / (2.0 * float(data_norm)))


def allowed_norm(loss: str, alpha: float, data_norm: float, target_bound=None,
                 n_classes: int = 2) -> float:
    """The largest norm any minimiser can have under the penalty (:mod:`._output_perturbation`)."""
    if loss == "squared":
        return ridge_norm_factor(alpha, float(data_norm)) * float(target_bound)
    return float(np.sqrt(2.0 * np.log(max(n_classes, 2)) / alpha))


def expected_noise_norm(kind: str, scale: float, n_params: int) -> float:
    """``E||b||`` bound: ``sigma sqrt(p)`` (Gaussian, Jensen) or ``p s`` (Laplace-norm)."""
    if kind == "laplace-norm":
        return float(n_params) * float(scale)
    return float(scale) * float(np.sqrt(n_params))


def swamp_ratio(*, kind, scale, n_params, loss, alpha, data_norm, target_bound=None,
                n_classes=2) -> float:
    """Expected noise norm over the largest coefficient norm the penalty allows."""
    return expected_noise_norm(kind, scale, n_params) / allowed_norm(
        loss, alpha, data_norm, target_bound, n_classes)
