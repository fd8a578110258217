"""The tail of a membership attack: its true-positive rate at a low false-positive rate.

An attack's AUC averages over every threshold; what matters for the most exposed people is
the tail: how many members it finds while wrongly accusing at most 0.1 % or 1 % of
non-members (Carlini et al., 2022). The threshold is set on the non-members' scores alone
(at most ``floor(fpr * m)`` of the ``m`` non-members above it), so the members' count above
it is binomial given the threshold and its Clopper-Pearson interval is exact; the realised
false-positive count is stated next to it. Fewer than ``1 / fpr`` non-members cannot
resolve the level: the page then says so instead of printing a number.

On the report's default page the members' count above the threshold is a sum of 0/1 per
member given the published model and the population rows: it is released with Laplace
noise through the page's ledger (:func:`noisy_tpr_at_fpr`) and the interval includes the
noise. The exact tails of every attack (and of the structural membership tests) are
private (:func:`tail_rows`).
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
    """The private page's tail: the exact TPR at 0.1 % and 1 % FPR of every attack that
    ran, in ``sec``'s private table, and the strongest (largest TPR at 1 %, then at
    0.1 %) in the private summary (``ctx["private_summary"]``).

    ``curves`` are ``(label, member scores, non-member scores, ...)``; the structural
    checks' membership tests (``ctx["structural_tests"]``) are added to them. The member
    scores are of training rows, so every figure here is private.
    """
    conf = ctx["confidence"]
    cands = [(c[0], c[1], c[2]) for c in curves] + list(ctx.get("structural_tests", []))
    best = None
    for label, a, b in cands:
        res = {f: tpr_at_fpr(a, b, f, conf) for f in FPR_LEVELS}
        sec.private_table.append((f"{label}: TPR at FPR 0.1 % / 1 % (exact)",
                                  " / ".join(_fmt(f, res[f], conf) for f in FPR_LEVELS)))
        key = tuple(-1.0 if res[f] is None else res[f]["tpr"] for f in FPR_LEVELS[::-1])
        if best is None or key > best[0]:
            best = (key, label, res)
    if best is not None:
        ctx.setdefault("private_summary", {})["tpr_at_low_fpr"] = {
            "attack": best[1],
            "levels": {str(f): best[2][f] for f in FPR_LEVELS}}


def noisy_tpr_at_fpr(s_in, s_out, fpr, ledger, label, confidence=0.95):
    """TPR at ``fpr`` for the default page: the members' count above the threshold is
    released through the page's ledger (a sum of 0/1 per member given the published model
    and the population rows: Laplace noise of scale ``1 / epsilon_query``).

    The threshold is set on the non-members' scores alone (public); the interval splits
    ``1 - confidence`` evenly between the noise (its two-sided tail) and the binomial
    (Clopper-Pearson at the remaining level on the count moved out by the noise's tail),
    so it covers the TPR with probability at least ``confidence``.

    Returns None when fewer than ``1 / fpr`` non-members cannot resolve the level (no
    query is answered then: the number of non-members is public).
    """
    s_in, s_out = np.asarray(s_in, float), np.asarray(s_out, float)
    m, k = s_out.size, s_in.size
    allowed = int(np.floor(fpr * m + 1e-9))
    if allowed < 1 or k == 0:
        return None
    srt = np.sort(s_out)[::-1]
    t = srt[allowed] if allowed < m else -np.inf
    fp = int(np.sum(s_out > t))
    count = ledger.figure(f"{label}: members above the threshold at FPR {fpr:g}",
                          int(np.sum(s_in > t)), source="training", bound=1)
    alpha = 1.0 - confidence
    width = count.tail(alpha / 2)
    tp = float(np.clip(count.value, 0.0, k))
    lo_k = int(np.clip(np.floor(count.value - width), 0, k))
    hi_k = int(np.clip(np.ceil(count.value + width), 0, k))
    lo, _ = clopper_pearson(lo_k, k, 1.0 - alpha / 2)
    _, hi = clopper_pearson(hi_k, k, 1.0 - alpha / 2)
    return {"tpr": tp / k, "low": lo, "high": hi, "false_positives": fp,
            "n_members": int(k), "n_nonmembers": int(m), "noise_scale": count.scale / k,
            "count": count}


def noisy_tail_rows(ctx, sec, label, s_in, s_out):
    """The default page's tail: the threshold attack's TPR at 0.1 % and 1 % FPR from
    noisy counts (two planned queries), in ``sec``'s table and the report's summary."""
    conf = ctx["confidence"]
    res = {f: noisy_tpr_at_fpr(s_in, s_out, f, ctx["ledger"], label, conf)
           for f in FPR_LEVELS}
    scale = next((r["noise_scale"] for r in res.values() if r is not None), None)
    row = (f"{label}: TPR at FPR 0.1 % / 1 %"
           + ("" if scale is None else
              f" (members above the threshold: a count released with Laplace "
              f"noise, TPR scale {scale:.2g}; intervals include the noise)"),
           " / ".join(_fmt(f, res[f], conf) for f in FPR_LEVELS))
    counts = [r["count"] for r in res.values() if r is not None]
    if counts:     # read from the noisy counts (whether a level resolves is public)
        ctx["ledger"].show(sec, "cell", row, *counts)
    else:
        sec.table.append(row)
    mine = {"attack": label,
            "levels": {str(f): (None if r is None else
                                {k: r[k] for k in ("tpr", "low", "high", "false_positives",
                                                   "n_members", "n_nonmembers")})
                       for f, r in res.items()}}
    # the strongest of the page's noisy tails (the stored-rows test, when it has one)
    cands = [mine] + [t for t in (ctx.get("structural_public_tail"),) if t]

    def key(t):
        return tuple(-1.0 if t["levels"].get(str(f)) is None
                     else t["levels"][str(f)]["tpr"] for f in FPR_LEVELS[::-1])

    ctx["summary"]["tpr_at_low_fpr"] = max(cands, key=key)
    inputs = counts + list(ctx.get("structural_public_inputs") or [])
    if inputs:     # the headline row is read from the noisy counts
        ctx["ledger"].headline("tpr_at_low_fpr", *inputs)
