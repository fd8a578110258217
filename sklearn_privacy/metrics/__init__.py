"""Metrics: multicalibration error."""

from ._multicalibration import make_multicalibration_scorer, multicalibration_error

__all__ = ["make_multicalibration_scorer", "multicalibration_error"]
