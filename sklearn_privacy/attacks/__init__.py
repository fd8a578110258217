"""Privacy attacks: membership inference and attribute inversion, and their scorers."""

from ._attribute import AttributeInversionResult
from ._audit import (
    CanaryAuditResult,
    EpsilonLowerBoundResult,
    canary_audit,
    epsilon_lower_bound,
)
from ._blackbox_inversion import fredrikson_inversion, prior_baseline
from ._display import MembershipROCDisplay
from ._inversion import candidate_minimisers, whitebox_inversion
from ._lira import LiRAResult, lira
from ._membership import (
    MembershipInferenceResult,
    evaluate_scores,
    membership_inference,
    membership_scores,
)
from ._numeric_inversion import NumericInversionResult, regression_inversion
from ._one_run import (
    OneRunAuditResult,
    one_run_audit,
    one_run_audit_scores,
    one_run_epsilon_bound,
    one_run_p_value,
)
from ._rmia import RMIAResult, rmia
from ._scorers import (
    make_attribute_inversion_scorer,
    make_membership_scorer,
    make_werm_membership_scorer,
    refit_under_leakage_bound,
)
from ._worst_case import WorstCasePair, worst_case_neighbours

__all__ = [
    "CanaryAuditResult",
    "EpsilonLowerBoundResult",
    "canary_audit",
    "epsilon_lower_bound",
    "LiRAResult",
    "OneRunAuditResult",
    "one_run_audit",
    "one_run_audit_scores",
    "one_run_epsilon_bound",
    "one_run_p_value",
    "MembershipROCDisplay",
    "lira",
    "RMIAResult",
    "rmia",
    "WorstCasePair",
    "worst_case_neighbours",
    "AttributeInversionResult",
    "candidate_minimisers",
    "fredrikson_inversion",
    "prior_baseline",
    "regression_inversion",
    "NumericInversionResult",
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
