"""Weighted empirical risk minimisation over training and reference data (WERM)."""

from ._theory import (
    effective_sample_size,
    epsilon_ratio,
    generalization_bound,
    weight_for_setting,
)
from ._werm import WERMClassifier

__all__ = [
    "WERMClassifier",
    "effective_sample_size",
    "epsilon_ratio",
    "generalization_bound",
    "weight_for_setting",
]
