"""Metrics: multicalibration error and the privacy-utility trade-off display."""

from ._display import PrivacyUtilityDisplay
from ._multicalibration import make_multicalibration_scorer, multicalibration_error

__all__ = ["PrivacyUtilityDisplay", "make_multicalibration_scorer", "multicalibration_error"]
