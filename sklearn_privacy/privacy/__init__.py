"""The privacy claim of a published object, composed over every fitted step.

- :func:`privacy_claim` -- the (epsilon, delta) of the object as published: the DP steps
  composed, and ``inf`` as soon as one fitted attribute of one object depends on the
  rows without a guarantee (see ``sklearn_privacy.privacy._attributes`` for how a class
  declares its attributes).
- :func:`~sklearn_privacy.privacy.tradeoff_curve` -- the claim as an f-DP trade-off
  curve: the largest TPR any membership attack reaches at each FPR
  (:class:`~sklearn_privacy.privacy.TradeoffCurve`);
  :class:`~sklearn_privacy.privacy.RiskTarget` sets noise from an accepted risk;
  :class:`~sklearn_privacy.privacy.PrivacyLedger` composes every release about one data
  set and refuses one that exceeds the accepted risk.
- :func:`~sklearn_privacy.privacy.neighbour_invariance` -- refit an object on neighbouring
  raw data sets and list every non-noise attribute that differs.
"""

from ._claim import PrivacyClaim, StepClaim
from ._compose import privacy_claim, tradeoff_curve
from ._invariance import Difference, InvarianceReport, neighbour_invariance
from ._ledger import BudgetExceededError, PrivacyLedger
from ._tradeoff import RiskTarget, TradeoffCurve

__all__ = ["BudgetExceededError", "Difference", "InvarianceReport", "PrivacyClaim",
           "PrivacyLedger", "RiskTarget", "StepClaim", "TradeoffCurve",
           "neighbour_invariance", "privacy_claim", "tradeoff_curve"]
