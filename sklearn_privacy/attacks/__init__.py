"""Privacy attacks: membership inference and attribute inversion, and their scorers."""

from ._display import MembershipROCDisplay
from ._inversion import (
    AttributeInversionResult,
    candidate_minimisers,
    fredrikson_inversion,
    prior_baseline,
    whitebox_inversion,
)
from ._lira import LiRAResult, lira
from ._membership import (
    MembershipInferenceResult,
    evaluate_scores,
    membership_inference,
    membership_scores,
)
from ._scorers import (
    make_attribute_inversion_scorer,
    make_membership_scorer,
    make_werm_membership_scorer,
)

__all__ = [
    "LiRAResult",
    "MembershipROCDisplay",
    "lira",
    "AttributeInversionResult",
    "candidate_minimisers",
    "fredrikson_inversion",
    "prior_baseline",
    "whitebox_inversion",
    "MembershipInferenceResult",
    "evaluate_scores",
    "make_attribute_inversion_scorer",
    "make_membership_scorer",
    "make_werm_membership_scorer",
    "membership_inference",
    "membership_scores",
]
