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
from sklearn_privacy.multicalibration import MulticalibrationDisplay, PrivateMulticalibrator
from sklearn_privacy.werm import WERMClassifier

__version__ = "0.2.0"

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
    "WERMClassifier",
    "__version__",
]
