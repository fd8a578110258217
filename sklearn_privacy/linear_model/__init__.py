"""Linear models released by objective perturbation (pure or (epsilon, delta)-DP)."""

from ._estimators import DPLinearRegression, DPLogisticRegression
from ._noise_plan import auto_alpha
from ._recipe import with_declared_bounds

__all__ = ["DPLinearRegression", "DPLogisticRegression", "auto_alpha", "with_declared_bounds"]
