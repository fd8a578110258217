"""The privacy claim of a published object, composed over every fitted step.

- :func:`privacy_claim` -- the (epsilon, delta) of the object as published: the DP steps
  composed, and ``inf`` as soon as one fitted attribute of one object depends on the
  rows without a guarantee (see ``sklearn_privacy.privacy._attributes`` for how a class
  declares its attributes).
- :func:`~sklearn_privacy.privacy.neighbour_invariance` -- refit an object on neighbouring
  raw data sets and list every non-noise attribute that differs.
"""

from ._claim import PrivacyClaim, StepClaim
from ._compose import privacy_claim
from ._invariance import Difference, InvarianceReport, neighbour_invariance

__all__ = ["Difference", "InvarianceReport", "PrivacyClaim", "StepClaim",
           "neighbour_invariance", "privacy_claim"]
