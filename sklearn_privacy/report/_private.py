"""The report's private section: the most exposed training rows (private page only)."""

from __future__ import annotations

import numpy as np

from ..attacks._validation import is_frame
from . import _verdicts as V
from ._section import ReportSection


def _private_section(ctx):
    """Per-person figures, only when asked for: the page is then not for publication."""
    if not ctx["private"]:
        return None
    sec = ReportSection("private", "Private details: do not publish this page")
    sec.add(V.Verdict("private", "This section lists individual training rows by the "
                                 "caller's index with exact figures. The page must not be "
                                 "shared beyond those allowed to see the training data."))
    eta = ctx.get("eta")
    if eta is not None:
        X = ctx["X"]
        labels = np.asarray(X.index) if is_frame(X) else np.arange(eta.size)
        order = np.argsort(-eta)[: ctx["top_k"]]
        sec.table.append(("most exposed rows (index: eta)",
                          ", ".join(f"{labels[i]}: {eta[i]:.6g}" for i in order)))
    else:
        sec.table.append(("most exposed rows", "no per-example figure was computed"))
    return sec
