"""The noise plan of the objective-perturbation estimators read from public quantities:
the ``alpha="auto"`` penalty and the noise-to-signal ratio behind the
``NoiseDominatesWarning``."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..mechanisms import _objective_perturbation as obj
from ..utils.fixes import NumberInterval, StrOptions, validate_params

#: ``alpha="auto"``: ``alpha = AUTO_CONSTANT * E||b|| * data_norm / n`` (see ``auto_alpha``)
AUTO_CONSTANT = 0.05
#: ... for least squares (``data_norm / target_bound`` for ``data_norm``)
AUTO_CONSTANT_LSQ = 15.0


@validate_params(
    {
        "loss": [StrOptions({"logistic", "multinomial", "huber"})],
        "epsilon": [NumberInterval(Real, 0, None, closed="neither")],
        "delta": [NumberInterval(Real, 0, 1, closed="left")],
        "n": [NumberInterval(Integral, 1, None, closed="left")],
        "n_params": [NumberInterval(Integral, 1, None, closed="left")],
        "data_norm": [NumberInterval(Real, 0, None, closed="neither")],
        "n_classes": [NumberInterval(Integral, 2, None, closed="left")],
        "target_bound": [NumberInterval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def auto_alpha(*, loss, epsilon, delta, n, n_params, data_norm, n_classes=2,
               target_bound=None):
    """The data-independent penalty of ``alpha="auto"``.

    ``alpha = C * E||b|| * R / n`` (least squares: ``R / B`` for ``R``), with
    ``E||b||`` the expected norm of the objective noise at the penalty ``alpha`` itself
    (a fixed point, found by iteration: the Jacobian term and the extra penalty depend on
    ``alpha``), ``R`` = ``data_norm``, ``B`` = ``target_bound`` and ``n`` the number of
    rows. The penalty's bias ``alpha ||w*||^2 / 2`` and the noise's cost ``E||b||^2 / (2
    n^2 alpha)`` balance at ``alpha = E||b|| / (n ||w*||)``; the rule takes a reference
    coefficient norm ``||w*|| = 1 / (C R)``. ``C = 0.05`` for the logistic losses, chosen
    on a grid on Adult (best 0.075 to 0.25 depending on epsilon) and breast cancer (best
    0.025); ``C = 15`` for least squares, chosen on IWPC and diabetes (the best of a grid
    with steps of about 3 at epsilon 0.5, 1 and 4; the Huber threshold, hence the noise,
    grows as ``1 / sqrt(alpha)``, which favours larger penalties). See the user guide
    (objective perturbation) for the accuracies.

    **Why n may be used.** Under the replace-one neighbouring relation both data sets
    have the same number of rows, so ``n`` is public by the threat model (as in
    Chaudhuri et al. and Kifer et al., whose noise and penalty depend on ``n``); the
    number of parameters, ``epsilon``, ``delta`` and the declared bounds are parameters.
    No row is read.

    Parameters
    ----------
    loss : {"logistic", "multinomial", "huber"}
        The loss (``"huber"``: :class:`~sklearn_privacy.DPLinearRegression`).
    epsilon : float > 0
    delta : float in [0, 1)
    n : int
        Number of training rows.
    n_params : int
        Number of released parameters (features, plus one for the intercept, times the
        number of classes for the multinomial loss).
    data_norm : float > 0
    n_classes : int, default=2
    target_bound : float or None, default=None
        Required for ``loss="huber"``.

    Returns
    -------
    alpha : float

    Examples
    --------
    >>> from sklearn_privacy.linear_model import auto_alpha
    >>> a = auto_alpha(loss="logistic", epsilon=1.0, delta=0.0, n=10_000, n_params=11,
    ...                data_norm=1.0)
    >>> bool(0 < a < auto_alpha(loss="logistic", epsilon=1.0, delta=0.0, n=1_000,
    ...                         n_params=11, data_norm=1.0))
    True
    """
    alpha = 1e-3
    for _ in range(50):
        the_plan = obj.plan(loss=loss, epsilon=epsilon, delta=delta, alpha=alpha, n=n,
                            data_norm=data_norm, n_classes=n_classes,
                            target_bound=target_bound)
        scale = data_norm if loss != "huber" else data_norm / max(float(target_bound), 1e-300)
        const = AUTO_CONSTANT_LSQ if loss == "huber" else AUTO_CONSTANT
        new = const * obj.expected_noise_norm(the_plan, n_params) * scale / n
        if abs(new - alpha) <= 1e-6 * alpha:
            alpha = new
            break
        alpha = new
    return float(alpha)


#: ``noise_to_signal_ratio`` above which a release is expected to lose to a constant
#: (calibrated on the tables of ``benchmarks/bench_dp_linear_recipes.py``: no release
#: below it lost, two releases above it beat the constant by under a point)
LOSE_TO_CONSTANT_RATIO = 0.2
#: ... and the Gram-noise ratio of sufficient-statistics perturbation (same tables: it
#: separates the regression releases that lose from those that win)
LOSE_TO_CONSTANT_GRAM_RATIO = 2.0


def noise_to_signal_ratio(expected_noise_norm, *, n, zeta, n_params):
    """Public noise-to-signal ratio of a release: ``E||b|| / (n zeta sqrt(p))``.

    ``b`` is the noise added to a sum of per-row statistics whose norm is at most
    ``zeta`` per row (objective perturbation: the loss gradients; sufficient statistics:
    ``X^T y``), so ``n zeta`` bounds the statistic and ``n zeta / sqrt(p)`` its typical
    coordinate; the penalty scales signal and noise alike, so it cancels. Only ``n``,
    the number of parameters, ``epsilon``, ``delta`` and the declared bounds enter: the
    warning it triggers is a function of public quantities and reveals nothing about the
    rows. Where the ratio exceeds the per-parameter signal of a typical table the release
    is expected to lose to a constant prediction; the threshold
    ``LOSE_TO_CONSTANT_RATIO`` and its false-positive and false-negative rates on
    benchmark tables are in the user guide (publishing page).
    """
    return float(expected_noise_norm) / (float(n) * float(zeta) * np.sqrt(float(n_params)))
