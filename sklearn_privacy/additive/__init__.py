"""Differentially private additive models: cyclic boosting of per-feature shape functions
on noisy histogram statistics (pure or (epsilon, delta)-DP, two or more classes, and
regression)."""

from ._boosting import DPBoostingClassifier, DPBoostingRegressor

__all__ = ["DPBoostingClassifier", "DPBoostingRegressor"]
