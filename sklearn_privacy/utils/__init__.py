"""Utilities shared by the components: randomness, column arguments."""

from ._columns import resolve_columns
from ._random import child_seeds, noise_generator

__all__ = ["child_seeds", "noise_generator", "resolve_columns"]
