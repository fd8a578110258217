"""The privacy claim of a published object, composed over every fitted step."""

from ._claim import PrivacyClaim, StepClaim

__all__ = ["PrivacyClaim", "StepClaim"]
