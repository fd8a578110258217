"""Linear models released by objective perturbation (pure or (epsilon, delta)-DP)."""

from ._estimators import (
    DPLinearRegression,
    DPLogisticRegression,
    NoiseDominatesWarning,
    auto_alpha,
)

__all__ = ["DPLinearRegression", "DPLogisticRegression", "NoiseDominatesWarning",
           "auto_alpha"]
