"""Multicalibration post-processing with differential privacy."""

from ..utils._groups import ColumnPredicate, Group, conjunction_groups, membership_matrix
from ._display import MulticalibrationDisplay
from ._multicalibrator import PrivateMulticalibrator

__all__ = [
    "ColumnPredicate",
    "MulticalibrationDisplay",
    "Group",
    "PrivateMulticalibrator",
    "conjunction_groups",
    "membership_matrix",
]
