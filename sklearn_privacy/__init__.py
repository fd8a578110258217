"""sklearn_privacy: measure, equalise and defend the privacy of scikit-learn models.

Components
----------
- :class:`FILLinearRegression`, :class:`FILLogisticRegression`,
  :class:`FILPoissonRegressor` -- output-perturbed GLMs that report the Fisher
  information loss (FIL) of every training value; :func:`sklearn_privacy.fil.audit`
  does the same for a linear model trained with scikit-learn.
- :class:`IRFILLinearRegression`, :class:`IRFILLogisticRegression`,
  :class:`IRFILPoissonRegressor` -- iteratively
  reweighted FIL: equal leakage across individuals.
- :class:`DPLogisticRegression`, :class:`DPLinearRegression` -- objective perturbation:
  pure epsilon-DP or (epsilon, delta)-DP linear models, the noise set from the declared
  bounds before the rows are read (:mod:`sklearn_privacy.linear_model`).
- :class:`DPBoostingClassifier`, :class:`DPBoostingRegressor` -- private additive models:
  cyclic boosting of per-feature shape functions on noisy histograms
  (:mod:`sklearn_privacy.additive`).
- :class:`WERMClassifier` -- weighted ERM over training and reference data.
- :class:`PrivateMulticalibrator` -- multicalibration post-processing, optionally
  differentially private.
- :class:`RandomStoppingSearch` -- differentially private hyperparameter selection
  (random stopping over DP candidates with DP scores).
- :mod:`sklearn_privacy.attacks` -- membership inference and attribute inversion,
  as functions and as scorers for model selection.
- :class:`EtaDisplay`, :class:`MembershipROCDisplay`, :class:`MulticalibrationDisplay`,
  :class:`PrivacyUtilityDisplay` -- figures of an audit (matplotlib, optional).
- :func:`privacy_claim` -- the (epsilon, delta) of a whole published object (pipeline,
  meta-estimator, search), composed over its steps; :mod:`sklearn_privacy.preprocessing`
  has data-independent and DP preprocessing that keeps it finite.
- :mod:`sklearn_privacy.datasets` -- bundled real data (UCI Adult, IWPC, MNIST 0/1).
"""

import importlib
from typing import TYPE_CHECKING

from sklearn_privacy._version import __version__

if TYPE_CHECKING:  # static analysers and IDEs see the names; nothing is imported at run time
    from sklearn_privacy.additive import DPBoostingClassifier, DPBoostingRegressor
    from sklearn_privacy.attacks import MembershipROCDisplay
    from sklearn_privacy.fil import (
        EtaDisplay,
        FILLinearRegression,
        FILLogisticRegression,
        FILPoissonRegressor,
        IRFILLinearRegression,
        IRFILLogisticRegression,
        IRFILPoissonRegressor,
    )
    from sklearn_privacy.linear_model import DPLinearRegression, DPLogisticRegression
    from sklearn_privacy.metrics import PrivacyUtilityDisplay
    from sklearn_privacy.model_selection import RandomStoppingSearch
    from sklearn_privacy.multicalibration import MulticalibrationDisplay, PrivateMulticalibrator
    from sklearn_privacy.privacy import privacy_claim
    from sklearn_privacy.report import PrivacyReport
    from sklearn_privacy.werm import WERMClassifier

# Public name -> the subpackage that defines it. ``import sklearn_privacy`` imports none of
# them: each subpackage is imported on first access (PEP 562), so the import costs little
# beyond ``import sklearn`` and a user of one component does not pay for the others.
_LAZY = {
    "DPBoostingClassifier": "additive",
    "DPBoostingRegressor": "additive",
    "DPLinearRegression": "linear_model",
    "DPLogisticRegression": "linear_model",
    "EtaDisplay": "fil",
    "FILLinearRegression": "fil",
    "FILLogisticRegression": "fil",
    "FILPoissonRegressor": "fil",
    "IRFILLinearRegression": "fil",
    "IRFILLogisticRegression": "fil",
    "IRFILPoissonRegressor": "fil",
    "MembershipROCDisplay": "attacks",
    "MulticalibrationDisplay": "multicalibration",
    "PrivacyReport": "report",
    "PrivacyUtilityDisplay": "metrics",
    "PrivateMulticalibrator": "multicalibration",
    "RandomStoppingSearch": "model_selection",
    "WERMClassifier": "werm",
    "privacy_claim": "privacy",
}

# subpackages reachable as attributes after ``import sklearn_privacy`` (``sp.attacks.lira``)
_SUBPACKAGES = frozenset({
    "additive", "attacks", "datasets", "dummy", "exceptions", "fil", "linear_model",
    "mechanisms", "metrics", "model_selection", "multicalibration", "preprocessing",
    "privacy", "report", "utils", "werm",
})


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value  # later look-ups skip this hook
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBPACKAGES)


__all__ = [
    "DPBoostingClassifier",
    "DPBoostingRegressor",
    "DPLinearRegression",
    "DPLogisticRegression",
    "EtaDisplay",
    "FILLinearRegression",
    "FILLogisticRegression",
    "FILPoissonRegressor",
    "IRFILLinearRegression",
    "IRFILLogisticRegression",
    "IRFILPoissonRegressor",
    "MembershipROCDisplay",
    "MulticalibrationDisplay",
    "PrivacyReport",
    "PrivacyUtilityDisplay",
    "PrivateMulticalibrator",
    "RandomStoppingSearch",
    "WERMClassifier",
    "__version__",
    "privacy_claim",
]
