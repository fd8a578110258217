"""The privacy claim of a published object: step claims and their composition."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

STEP_KINDS = ("data_independent", "dp", "non_private")

#: What every finite claim assumes, in words (printed with the claim).
ASSUMPTIONS = (
    "neighbouring data sets differ in the values of one row (replace-one; the number of "
    "rows is public)",
    "the schema (column names, dtypes, categories, bounds, data_norm) and the label set "
    "are public facts, declared without looking at the private rows",
    "every hyperparameter was chosen without the private rows, or by a private selection "
    "whose cost is in the claim",
    "all noise came from fresh OS entropy (random_state=None at fit)",
    "what is published is the object's pickle: audit state it leaves out stays private",
)


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
    tradeoff : TradeoffCurve or None
        A trade-off curve tighter than the (epsilon, delta) pair, when the step knows
        one (e.g. a random-stopping selection's privacy profile); used for the claim's
        curve when the step is the only DP step.

    Examples
    --------
    >>> from sklearn_privacy.privacy import StepClaim
    >>> StepClaim("pipeline[0] scaler", "BoundedScaler", "data_independent", 0.0, 0.0,
    ...           "bounds given as parameters")
    StepClaim(name='pipeline[0] scaler', estimator='BoundedScaler', kind='data_independent', \
epsilon=0.0, delta=0.0, reason='bounds given as parameters', gaussian_mu=None)
    """

    name: str
    estimator: str
    kind: str
    epsilon: float
    delta: float
    reason: str
    gaussian_mu: float | None = None
    tradeoff: object = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.kind not in STEP_KINDS:
            raise ValueError(f"StepClaim.kind must be one of {STEP_KINDS}, got {self.kind!r}")
        if self.kind == "non_private" and self.epsilon != math.inf:
            raise ValueError("StepClaim: a non_private step has epsilon=inf; got "
                             f"epsilon={self.epsilon!r}.")
        if self.kind == "data_independent" and (self.epsilon != 0 or self.delta != 0):
            raise ValueError("StepClaim: a data_independent step has epsilon=0 and delta=0; "
                             f"got ({self.epsilon!r}, {self.delta!r}).")
        if self.kind == "dp" and not (self.epsilon >= 0 and 0 <= self.delta <= 1):
            raise ValueError("StepClaim: a dp step needs epsilon >= 0 and delta in [0, 1]; "
                             f"got ({self.epsilon!r}, {self.delta!r}).")
        if self.gaussian_mu is not None and not (self.kind == "dp" and self.gaussian_mu >= 0
                                                 and math.isfinite(self.gaussian_mu)):
            raise ValueError("StepClaim: gaussian_mu is a finite number >= 0 of a dp step; "
                             f"got {self.gaussian_mu!r} for kind={self.kind!r}.")

    def __str__(self) -> str:
        if self.kind == "dp":
            what = f"dp (epsilon={self.epsilon:.6g}, delta={self.delta:.3g})"
            if self.gaussian_mu is not None:
                what += f" Gaussian mu={self.gaussian_mu:.6g}"
        elif self.kind == "data_independent":
            what = "data-independent"
        else:
            what = "NOT PRIVATE"
        return f"{self.name} [{self.estimator}]: {what} -- {self.reason}"


@dataclass(frozen=True)
class PrivacyClaim:
    """The (epsilon, delta) of a published object, composed over its steps.

    Returned by :func:`sklearn_privacy.privacy_claim`. ``epsilon`` is ``inf`` as soon as
    one step is ``non_private``; ``reasons`` then lists why, step by step.

    Parameters
    ----------
    epsilon : float
        The object's epsilon with respect to replacing one row of the data it was
        fitted on (``inf``: no guarantee).
    delta : float
        The delta at which ``epsilon`` holds.
    steps : list of StepClaim
        One claim per fitted step, in the order of the walk.
    composition : str
        The rule that gave ``epsilon``: ``"none"`` (no DP step), ``"basic"`` (sums of
        epsilons and deltas), ``"gaussian"`` (Gaussian steps composed exactly as one
        Gaussian mechanism, the others added), or ``"not private"``.

    Attributes
    ----------
    is_private : bool
        Whether ``epsilon`` is finite.
    reasons : list of str
        ``"<step>: <reason>"`` of every step that makes the claim infinite.

    Examples
    --------
    >>> from sklearn_privacy.privacy import PrivacyClaim, StepClaim
    >>> step = StepClaim("scaler", "StandardScaler", "non_private", float("inf"), 0.0,
    ...                  "mean_ and scale_ are learned from the rows")
    >>> claim = PrivacyClaim(float("inf"), 0.0, [step], "not private")
    >>> claim.is_private, claim.reasons
    (False, ['scaler: mean_ and scale_ are learned from the rows'])
    """

    epsilon: float
    delta: float
    steps: list[StepClaim] = field(default_factory=list)
    composition: str = "basic"

    @property
    def is_private(self) -> bool:
        """Whether the claim is a finite epsilon."""
        return math.isfinite(self.epsilon)

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What the claim assumes, in words (the same for every claim)."""
        return ASSUMPTIONS

    @property
    def tradeoff(self):
        """The claim as an f-DP trade-off curve (:class:`~sklearn_privacy.privacy.TradeoffCurve`).

        Gaussian steps compose exactly (``sqrt(sum mu^2)``-GDP); steps known by their
        (epsilon, delta) enter as randomised response with that claim; a mixture is
        composed numerically with a pessimistic, certified error. Computed once.
        """
        cached = self.__dict__.get("_tradeoff_cache")
        if cached is None:
            from ._tradeoff import claim_curve
            cached = claim_curve(self)
            object.__setattr__(self, "_tradeoff_cache", cached)
        return cached

    def max_tpr(self, fpr=0.01):
        """Largest TPR of any membership attack at false-positive rate ``fpr`` (see
        :meth:`TradeoffCurve.max_tpr <sklearn_privacy.privacy.TradeoffCurve.max_tpr>`)."""
        return self.tradeoff.max_tpr(fpr)

    def max_advantage(self) -> float:
        """Largest membership advantage ``TPR - FPR`` of any attack."""
        return self.tradeoff.max_advantage()

    @property
    def reasons(self) -> list[str]:
        """Why the claim is infinite: one ``"<step>: <reason>"`` per non-private step."""
        return [f"{s.name}: {s.reason}" for s in self.steps if s.kind == "non_private"]

    def __str__(self) -> str:
        if self.is_private:
            head = (f"PrivacyClaim: ({self.epsilon:.6g}, {self.delta:.3g})-DP for replacing "
                    f"one row [composition: {self.composition}]")
        else:
            k = len(self.reasons)
            head = (f"PrivacyClaim: NOT PRIVATE (epsilon=inf) -- {k} "
                    f"reason{'s' if k != 1 else ''} below (what the object holds that was "
                    "fitted on the rows without a guarantee)")
        lines = [head] + [f"  {s}" for s in self.steps]
        if self.is_private:
            curve = self.tradeoff
            lines[0] += (f"; an attacker's TPR at 1% FPR is at most "
                         f"{float(curve.max_tpr(0.01)):.4g}, membership advantage at most "
                         f"{curve.max_advantage():.4g} [{curve.label}]")
            lines.append("  assumes: " + "; ".join(ASSUMPTIONS) + ".")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.__str__()
