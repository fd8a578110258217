"""Privacy attacks: membership inference and attribute inversion, and their scorers."""

from ._inversion import (
    AttributeInversionResult,
    candidate_minimisers,
    fredrikson_inversion,
    prior_baseline,
    whitebox_inversion,
)
from ._membership import (
    MembershipInferenceResult,
    evaluate_scores,
    membership_inference,
    membership_scores,
)

__all__ = [
    "AttributeInversionResult",
    "candidate_minimisers",
    "fredrikson_inversion",
    "prior_baseline",
    "whitebox_inversion",
    "MembershipInferenceResult",
    "evaluate_scores",
    "membership_inference",
    "membership_scores",
]
