"""Utilities shared by the components: randomness, column arguments, pipelines, releases."""

from ._columns import resolve_columns
from ._pipeline import feature_columns
from ._random import child_seeds, noise_generator
from ._release import strip_for_release
from ._weights import public_weights

__all__ = ["child_seeds", "feature_columns", "noise_generator", "public_weights",
           "resolve_columns", "strip_for_release"]
