"""The report's claim: the model's, and the model's and its page's together."""

from __future__ import annotations

import numpy as np

from . import _verdicts as V
from ._section import ReportSection


def _claim_section(ctx):
    est = ctx["estimator"]
    try:
        from ..privacy import privacy_claim
    except ImportError:  # pragma: no cover
        privacy_claim = None
    sec = ReportSection("claim", "What is claimed")
    if privacy_claim is not None:
        claim = privacy_claim(est)
        ctx["claim"] = claim
        eps, dlt = float(claim.epsilon), float(claim.delta)
        for st in claim.steps:
            sec.table.append((st.name, f"{st.kind}: {st.reason}"))
    else:  # pragma: no cover
        eps = float(getattr(est, "epsilon_", np.inf))
        dlt = float(getattr(est, "delta", 0.0) or 0.0)
    ctx["summary"]["claimed_epsilon"] = eps
    ctx["summary"]["claimed_delta"] = dlt
    if privacy_claim is not None and np.isfinite(eps):
        curve = ctx["curve"] = claim.tradeoff
        ctx["summary"]["tpr_bound"] = float(curve.max_tpr(0.01))
        sec.table.append(("largest TPR of any membership attack at 1% FPR (the claim's "
                          "trade-off curve)", f"{float(curve.max_tpr(0.01)):.4g} "
                                              f"[{curve.label}]"))
    sec.add(V.claim_verdict(eps, dlt))
    return sec


def _page_claim(ctx, ledger, seeded_noise):
    """The claim of the model and its default page together (basic composition)."""
    from ..privacy import PrivacyClaim, StepClaim
    from ..privacy._compose import compose

    model = ctx.get("claim")
    if model is None:  # pragma: no cover - privacy_claim is always importable
        model = PrivacyClaim(ctx["summary"].get("claimed_epsilon", np.inf), 0.0, [], "none")
    page = ledger.step_claim()
    if seeded_noise:
        page = StepClaim(page.name, page.estimator, "non_private", np.inf, 0.0,
                         "the page's noise was seeded (noise_random_state): its noisy "
                         "figures are reproducible")
    steps = list(model.steps)
    if not steps and not model.is_private:  # pragma: no cover
        steps = [StepClaim("model", "?", "non_private", np.inf, 0.0, "no claim")]
    total = compose(steps + [page])
    ctx["summary"]["page_epsilon"] = float(page.epsilon)
    ctx["summary"]["total_epsilon"] = float(total.epsilon)
    ctx["summary"]["page_queries"] = [(label, sens, eps) for label, sens, eps
                                      in ledger.answered]
