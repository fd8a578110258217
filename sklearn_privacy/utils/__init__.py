"""Utilities shared by the components: randomness, column arguments, pipelines."""

from ._columns import resolve_columns
from ._pipeline import feature_columns
from ._random import child_seeds, noise_generator

__all__ = ["child_seeds", "feature_columns", "noise_generator", "resolve_columns"]
