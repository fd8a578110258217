"""Multicalibration post-processing with differential privacy."""

from ..utils._groups import ColumnPredicate, Group, conjunction_groups, membership_matrix
from ._display import MulticalibrationDisplay
from ._multicalibrator import PrivateMulticalibrator
from ._weak_base import GradientDescentLogisticRegression

__all__ = [
    "ColumnPredicate",
    "GradientDescentLogisticRegression",
    "MulticalibrationDisplay",
    "Group",
    "PrivateMulticalibrator",
    "conjunction_groups",
    "membership_matrix",
]
