"""The tail of a membership attack: its true-positive rate at a low false-positive rate.

An attack's AUC averages over every threshold; what matters for the most exposed people is
the tail: how many members it finds while wrongly accusing at most 0.1 % or 1 % of
non-members (Carlini et al., 2022). The threshold is set on the non-members' scores alone
(at most ``floor(fpr * m)`` of the ``m`` non-members above it), so the members' count above
it is binomial given the threshold and its Clopper-Pearson interval is exact; the realised
false-positive count is stated next to it. Fewer than ``1 / fpr`` non-members cannot
resolve the level: the page then says so instead of printing a number.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

#: false-positive rates of the tail
FPR_LEVELS = (0.001, 0.01)


def clopper_pearson(k, n, confidence):
    """Two-sided exact interval of a binomial proportion ``k / n``."""
    a = (1.0 - confidence) / 2.0
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1.0 - a, k + 1, n - k))
    return lo, hi


def tpr_at_fpr(s_in, s_out, fpr, confidence=0.95):
    """TPR of the threshold admitting at most ``floor(fpr * m)`` non-members, with its interval.

    Parameters
    ----------
    s_in, s_out : ndarray
        Scores of members and non-members (higher: more likely a member).
    fpr : float
        The false-positive rate.
    confidence : float
        Confidence of the Clopper-Pearson interval.

    Returns
    -------
    result : dict or None
        ``tpr``, ``low``, ``high``, ``false_positives``, ``n_members``, ``n_nonmembers``;
        None when fewer than ``1 / fpr`` non-members cannot resolve the level.
    """
    s_in, s_out = np.asarray(s_in, float), np.asarray(s_out, float)
    m = s_out.size
    allowed = int(np.floor(fpr * m + 1e-9))
    if allowed < 1 or s_in.size == 0:
        return None
    srt = np.sort(s_out)[::-1]
    # the threshold: the (allowed+1)-th largest non-member score; "member" when above it
    t = srt[allowed] if allowed < m else -np.inf
    tp = int(np.sum(s_in > t))
    fp = int(np.sum(s_out > t))
    lo, hi = clopper_pearson(tp, s_in.size, confidence)
    return {"tpr": tp / s_in.size, "low": lo, "high": hi, "false_positives": fp,
            "n_members": int(s_in.size), "n_nonmembers": int(m)}


def _fmt(fpr, r, conf):
    if r is None:
        return f"not resolved (needs at least {int(round(1 / fpr)):,} non-members)"
    return (f"{r['tpr']:.3f} [{r['low']:.3f}, {r['high']:.3f}] ({conf:.0%} Clopper-Pearson; "
            f"{r['false_positives']} of {r['n_nonmembers']:,} non-members above the "
            "threshold)")


def tail_rows(ctx, sec, curves):
    """Add the TPR at 0.1 % and 1 % FPR of every attack that ran to ``sec``, and the
    strongest (largest TPR at 1 %, then at 0.1 %) to the report's summary.

    ``curves`` are ``(label, member scores, non-member scores, ...)``; the structural
    checks' membership tests (``ctx["structural_tests"]``) are added to them.
    """
    conf = ctx["confidence"]
    cands = [(c[0], c[1], c[2]) for c in curves] + list(ctx.get("structural_tests", []))
    best = None
    for label, a, b in cands:
        res = {f: tpr_at_fpr(a, b, f, conf) for f in FPR_LEVELS}
        sec.table.append((f"{label}: TPR at FPR 0.1 % / 1 %",
                          " / ".join(_fmt(f, res[f], conf) for f in FPR_LEVELS)))
        key = tuple(-1.0 if res[f] is None else res[f]["tpr"] for f in FPR_LEVELS[::-1])
        if best is None or key > best[0]:
            best = (key, label, res)
    if best is not None:
        ctx["summary"]["tpr_at_low_fpr"] = {
            "attack": best[1],
            "levels": {str(f): best[2][f] for f in FPR_LEVELS}}
