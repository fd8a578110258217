"""Privacy attacks: membership inference and attribute inversion, and their scorers."""

from ._audit import (
    CanaryAuditResult,
    EpsilonLowerBoundResult,
    canary_audit,
    epsilon_lower_bound,
)
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
from ._rmia import RMIAResult, rmia
from ._scorers import (
    make_attribute_inversion_scorer,
    make_membership_scorer,
    make_werm_membership_scorer,
    refit_under_leakage_bound,
)

__all__ = [
    "CanaryAuditResult",
    "EpsilonLowerBoundResult",
    "canary_audit",
    "epsilon_lower_bound",
    "LiRAResult",
    "MembershipROCDisplay",
    "lira",
    "RMIAResult",
    "rmia",
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
    "refit_under_leakage_bound",
]
