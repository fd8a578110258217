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

from sklearn_privacy._version import __version__
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
