"""Differential-privacy mechanisms used by the estimators.

Every mechanism of the package lives here, each with its noise, its sensitivity or
calibration from public quantities, and the privacy curve the claim
(:func:`sklearn_privacy.privacy_claim`) composes: the analytic Gaussian mechanism
(an exact ``(epsilon, delta)`` for a Gaussian ``mu``), Laplace-norm noise (pure
epsilon), :class:`NumericSparse` (pure epsilon), output perturbation of a strongly
convex minimiser (its sensitivity, certificate and noise plan), objective perturbation
(pure epsilon, or a Renyi-DP curve for Gaussian noise) and sufficient-statistics
perturbation (AdaSSP).
"""

from ._numeric_sparse import NumericSparse

__all__ = ["NumericSparse"]
