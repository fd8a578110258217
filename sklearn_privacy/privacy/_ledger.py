"""One budget for everything published about one data set, composed in trade-off space."""

from __future__ import annotations

import math
from numbers import Real

from ._compose import tradeoff_curve
from ._tradeoff import RiskTarget, TradeoffCurve

__all__ = ["BudgetExceededError", "PrivacyLedger"]


class BudgetExceededError(ValueError):
    """A release would take the composed risk of a
    :class:`~sklearn_privacy.privacy.PrivacyLedger` over its target."""


class PrivacyLedger:
    """The risk budget of one data set, spent by every release that reads it.

    Everything published about the same rows composes: models, scalers, report pages,
    repeated releases. The ledger keeps their trade-off curves (Gaussian steps exactly as
    ``sqrt(sum mu^2)``-GDP, the others through their privacy-loss distributions) and
    :meth:`record` refuses a release whose composition with what was recorded before would
    let an attacker exceed ``risk``. Whether a release is refused depends only on the
    releases' parameters and claims (public), never on the rows.

    Parameters
    ----------
    risk : RiskTarget
        The largest risk the data set's people accept, e.g. ``RiskTarget(tpr=0.05,
        fpr=0.01)``: no membership attack on all releases together reaches a TPR above 5 %
        at a FPR of 1 %.
    delta : float in (0, 1), default=1e-5
        The delta at which the budget is also printed in (epsilon, delta).

    Attributes
    ----------
    releases_ : list of (str, TradeoffCurve)
        The recorded releases, in order.

    Examples
    --------
    >>> from sklearn_privacy.privacy import PrivacyLedger, RiskTarget, StepClaim
    >>> ledger = PrivacyLedger(RiskTarget(tpr=0.05, fpr=0.01))
    >>> model = StepClaim("model", "FILLogisticRegression", "dp", 1.0, 1e-5, "",
    ...                   gaussian_mu=0.4)
    >>> _ = ledger.record(model, name="first model")
    >>> round(ledger.remaining_mu(), 3)           # sqrt(0.6815 ** 2 - 0.4 ** 2)
    0.552
    >>> _ = ledger.record(model, name="second model")
    >>> ledger.record(model, name="third model")
    Traceback (most recent call last):
    ...
    sklearn_privacy.privacy._ledger.BudgetExceededError: third model: ...
    """

    def __init__(self, risk: RiskTarget, *, delta: float = 1e-5):
        if not isinstance(risk, RiskTarget):
            raise TypeError("PrivacyLedger: risk must be a RiskTarget, e.g. "
                            f"RiskTarget(tpr=0.05, fpr=0.01); got {type(risk).__name__}.")
        if isinstance(delta, bool) or not isinstance(delta, Real) or not 0 < delta < 1:
            raise ValueError(f"PrivacyLedger: delta must be in (0, 1); got {delta!r}.")
        self.risk = risk
        self.delta = float(delta)
        self.releases_: list[tuple[str, TradeoffCurve]] = []

    @property
    def curve_(self) -> TradeoffCurve:
        """The trade-off curve of every recorded release together."""
        return TradeoffCurve.compose([c for _, c in self.releases_])

    def _with(self, curve):
        return TradeoffCurve.compose([c for _, c in self.releases_] + [curve])

    def fits(self, release) -> bool:
        """Whether ``release`` (fitted object, claim or curve) would stay within ``risk``."""
        return self.risk.is_met_by(self._with(tradeoff_curve(release)))

    def record(self, release, *, name: str | None = None) -> TradeoffCurve:
        """Add a release to the ledger, or refuse it.

        Parameters
        ----------
        release : fitted estimator, PrivacyClaim, StepClaim or TradeoffCurve
            What is published (a fitted object is read with ``privacy_claim``).
        name : str, optional
            How the release is listed.

        Returns
        -------
        curve : TradeoffCurve
            The composed curve after the release.

        Raises
        ------
        BudgetExceededError
            When the composition would exceed ``risk``; nothing is recorded.
        """
        curve = tradeoff_curve(release)
        name = name or type(release).__name__
        after = self._with(curve)
        if not self.risk.is_met_by(after):
            raise BudgetExceededError(
                f"{name}: publishing it would let an attacker reach "
                f"{self._value_text(after)} over all {len(self.releases_) + 1} releases, above"
                f" the accepted {self.risk}; it is not recorded. Release with more noise "
                f"(a Gaussian release may have mu <= {self.remaining_mu():.4g} now), or "
                "publish less.")
        self.releases_.append((name, curve))
        return after

    def _value_text(self, curve):
        v = self.risk.stated_value(curve)
        if self.risk.tpr is not None:
            return f"TPR {v:.4g} at FPR {self.risk.fpr:.4g}"
        return f"advantage {v:.4g}"

    def remaining_mu(self) -> float:
        """Largest ``mu`` of one more Gaussian release (sensitivity / sigma) that fits."""
        target = self.risk.gaussian_mu()
        spent = self.curve_
        if spent.method in ("none", "gaussian"):
            return math.sqrt(max(target ** 2 - spent.mu ** 2, 0.0))
        if not self.risk.is_met_by(spent):
            return 0.0
        lo, hi = 0.0, target
        for _ in range(14):   # bisection on the composed curve
            mid = 0.5 * (lo + hi)
            if self.risk.is_met_by(self._with(TradeoffCurve.gaussian(mid))):
                lo = mid
            else:
                hi = mid
        return lo

    def __str__(self) -> str:
        spent = self.curve_
        eps = spent.epsilon(self.delta)
        left = self.remaining_mu()
        if left > 0:
            from ..mechanisms._gaussian import analytic_gaussian_epsilon
            eps_left = analytic_gaussian_epsilon(delta=self.delta, sigma=1.0, sensitivity=left)
            more = (f"one more Gaussian release may have mu <= {left:.4g} "
                    f"(epsilon {eps_left:.4g} at delta {self.delta:.3g} on its own)")
        else:
            more = "no further release fits"
        lines = [f"PrivacyLedger: accepted risk {self.risk}",
                 f"  spent: {self._value_text(spent)} over {len(self.releases_)} release(s) "
                 f"= ({eps:.4g}, {self.delta:.3g})-DP [{spent.label}]",
                 f"  remaining: {more}"]
        lines += [f"  - {name}: {self._value_text(c)}" for name, c in self.releases_]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.__str__()
