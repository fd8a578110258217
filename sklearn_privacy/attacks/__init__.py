"""Privacy attacks: membership inference and attribute inversion, and their scorers."""

from ._membership import (
    MembershipInferenceResult,
    evaluate_scores,
    membership_inference,
    membership_scores,
)

__all__ = [
    "MembershipInferenceResult",
    "evaluate_scores",
    "membership_inference",
    "membership_scores",
]
