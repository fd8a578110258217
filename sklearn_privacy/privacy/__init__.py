"""The privacy claim of a published object, composed over every fitted step."""

from ._claim import PrivacyClaim, StepClaim
from ._compose import privacy_claim

__all__ = ["PrivacyClaim", "StepClaim", "privacy_claim"]
