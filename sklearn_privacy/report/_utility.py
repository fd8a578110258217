"""The report's utility section: the release's score against the trivial baseline."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from ..utils._intervals import paired_difference
from . import _verdicts as V
from ._common import _predict_chunks
from ._section import ReportSection


def _utility_section(ctx):
    """The release's score on the population rows against the trivial baseline."""
    sec = ReportSection("utility", "Utility next to privacy")
    est, y, Xp, yp, conf = (ctx[k] for k in ("estimator", "y", "Xp", "yp", "confidence"))
    if Xp is None:
        sec.add(V.Verdict("not_checked", "Utility was not checked: pass X_population and "
                                         "y_population (rows not used for training)."))
        ctx["summary"]["utility"] = None
        return sec
    pred = _predict_chunks(est, Xp)
    # the baseline is read from the population rows (public), never from the training rows
    if is_classifier(est):
        labels, counts = ctx["ledger"].figure(
            "majority class", np.unique(yp, return_counts=True), source="public")
        majority = labels[np.argmax(counts)]
        majority = majority.item() if hasattr(majority, "item") else majority
        correct = (pred == yp).astype(float)
        base = (yp == majority).astype(float)
        metric, value, base_value = "accuracy", correct.mean(), base.mean()
        base_name = (f"always predicting the majority class of the population rows "
                     f"({majority!r})")
        diff = correct - base
    else:
        yf, pf = yp.astype(float), pred.astype(float)
        mean = ctx["ledger"].figure("baseline mean", float(np.mean(yf)), source="public")
        err, base_err = (yf - pf) ** 2, (yf - mean) ** 2
        metric, value, base_value = "mean squared error", err.mean(), base_err.mean()
        base_name = "always predicting the mean of the population rows"
        diff = base_err - err
    d, lo, hi, p = paired_difference(diff, conf)
    v = V.utility_verdict(metric, value, base_name, base_value, lo, hi, p, yp.size, conf)
    sec.add(v)
    sec.table += [(metric, f"{value:.4g} on {yp.size:,} population rows"),
                  (f"baseline: {base_name}", f"{base_value:.4g}"),
                  (f"improvement over the baseline, {conf:.0%} paired t interval",
                   f"{d:.4g} [{lo:.4g}, {hi:.4g}], one-sided p = {p:.3g}")]
    ctx["summary"]["utility"] = (metric, float(value), float(base_value), v.outcome)
    return sec
