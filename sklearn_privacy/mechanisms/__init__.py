"""Differential-privacy mechanisms used by the estimators."""

from ._numeric_sparse import NumericSparse

__all__ = ["NumericSparse"]
