"""Metrics: multicalibration error."""

from ._multicalibration import multicalibration_error

__all__ = ["multicalibration_error"]
