"""Linear models released by objective perturbation (pure or (epsilon, delta)-DP)."""

from ._estimators import DPLinearRegression, DPLogisticRegression, auto_alpha

__all__ = ["DPLinearRegression", "DPLogisticRegression", "auto_alpha"]
