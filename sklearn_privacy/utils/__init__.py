"""Utilities shared by the components: randomness, column arguments, pipelines, releases."""

from ._columns import resolve_columns
from ._pipeline import feature_columns
from ._random import child_seeds, noise_generator
from ._release import strip_for_release

__all__ = ["child_seeds", "feature_columns", "noise_generator", "resolve_columns",
           "strip_for_release"]
