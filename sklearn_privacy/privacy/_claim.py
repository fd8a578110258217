"""The privacy claim of a published object: step claims and their composition."""

from __future__ import annotations

from dataclasses import dataclass, field

STEP_KINDS = ("data_independent", "dp", "non_private")


@dataclass(frozen=True)
class StepClaim:
    """What one fitted step of a published object guarantees about the private rows.

    Parameters
    ----------
    name : str
        Path of the step inside the published object, e.g. ``"pipeline[0] standardscaler"``.
    estimator : str
        Class name of the step.
    kind : {"data_independent", "dp", "non_private"}
        ``"data_independent"``: nothing the step holds depends on the private rows;
        ``"dp"``: the step is ``(epsilon, delta)``-differentially private with respect to
        the rows it receives; ``"non_private"``: the step was fitted on the private rows
        without a guarantee (``epsilon`` is ``inf``).
    epsilon, delta : float
        The step's own guarantee (``0, 0`` for a data-independent step).
    reason : str
        Why the step has this kind, in words a user can act on.
    gaussian_mu : float or None
        Set when the step is exactly one Gaussian mechanism whose sensitivity divided by
        its noise scale is ``gaussian_mu``; such steps compose exactly through
        ``sqrt(sum mu_i ** 2)``.
    """

    name: str
    estimator: str
    kind: str
    epsilon: float
    delta: float
    reason: str
    gaussian_mu: float | None = None

    def __post_init__(self):
        if self.kind not in STEP_KINDS:
            raise ValueError(f"StepClaim.kind must be one of {STEP_KINDS}, got {self.kind!r}")


@dataclass(frozen=True)
class PrivacyClaim:
    """The (epsilon, delta) of a published object, composed over its steps."""

    epsilon: float
    delta: float
    steps: list[StepClaim] = field(default_factory=list)
    composition: str = "basic"
