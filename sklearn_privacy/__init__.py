"""sklearn_privacy: measure, equalise and defend the privacy of scikit-learn models.

Components
----------
- :class:`FILLinearRegression`, :class:`FILLogisticRegression` -- output-perturbed
  GLMs that report the Fisher information loss (FIL) of every training value.
- :class:`IRFILLinearRegression`, :class:`IRFILLogisticRegression` -- iteratively
  reweighted FIL: equal leakage across individuals.
- :class:`WERMClassifier` -- weighted ERM over training and reference data.
- :class:`PrivateMulticalibrator` -- multicalibration post-processing, optionally
  differentially private.
- :class:`RandomStoppingSearch` -- differentially private hyperparameter selection
  (random stopping over DP candidates with DP scores).
- :mod:`sklearn_privacy.attacks` -- membership inference and attribute inversion,
  as functions and as scorers for model selection.
- :class:`EtaDisplay`, :class:`MembershipROCDisplay`, :class:`MulticalibrationDisplay`,
  :class:`PrivacyUtilityDisplay` -- figures of an audit (matplotlib, optional).
- :mod:`sklearn_privacy.datasets` -- bundled real data (UCI Adult, IWPC, MNIST 0/1).
"""

from sklearn_privacy.attacks import MembershipROCDisplay
from sklearn_privacy.fil import (
    EtaDisplay,
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)
from sklearn_privacy.metrics import PrivacyUtilityDisplay
from sklearn_privacy.model_selection import RandomStoppingSearch
from sklearn_privacy.multicalibration import MulticalibrationDisplay, PrivateMulticalibrator
from sklearn_privacy.werm import WERMClassifier

__version__ = "0.1.0"

__all__ = [
    "EtaDisplay",
    "FILLinearRegression",
    "FILLogisticRegression",
    "IRFILLinearRegression",
    "IRFILLogisticRegression",
    "MembershipROCDisplay",
    "MulticalibrationDisplay",
    "PrivacyUtilityDisplay",
    "PrivateMulticalibrator",
    "RandomStoppingSearch",
    "WERMClassifier",
    "__version__",
]
