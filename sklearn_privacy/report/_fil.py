"""The report's FIL section: per-example Fisher information loss of the model."""

from __future__ import annotations

import warnings

import numpy as np

from ..attacks._validation import is_frame
from ..exceptions import PrivacyWarning
from . import _verdicts as V
from ._common import _coarse, _figure_png
from ._disclosure import public_audit_reason, published_rows
from ._section import ReportSection
from ._shared import progress


def _final_fil(est):
    from ..fil._base import BaseFILEstimator

    final = est.steps[-1][1] if hasattr(est, "steps") else est
    return final if isinstance(final, BaseFILEstimator) else None


def _fil_model(ctx):
    """The FIL view of the model: itself, or fil.audit of a scikit-learn GLM at sigma."""
    est = ctx["estimator"]
    if _final_fil(est) is not None:
        return est, None
    if ctx["sigma"] is None:
        return None, None
    if "fil_view" not in ctx:   # computed once for the FIL and inversion sections
        ctx["fil_view"] = _audit_view(ctx)
    return ctx["fil_view"]


def _audit_view(ctx):
    est = ctx["estimator"]
    try:
        from ..fil import audit
    except ImportError:  # pragma: no cover
        return None, "fil.audit is not available"
    try:
        progress(ctx, "fil: sklearn_privacy.fil.audit of the model at sigma (once, for the "
                      "FIL and inversion sections)")
        return audit(est, ctx["X"], ctx["y"], sigma=ctx["sigma"]), None
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        if "pass rows=[...]" in msg:
            # the audit's own advice names its parameter; the report audits every row
            msg = msg.split("; pass rows=[...]")[0] + (
                "; the report audits every row, so it did not run this one: call "
                "sklearn_privacy.fil.audit(model, X_train, y_train, sigma=..., "
                "rows=[...]) with the rows to audit")
        return None, public_audit_reason(msg, exc, ctx)


def _eta_view(model):
    """What the report's eta is about, and in which units, for a model or pipeline."""
    if getattr(model, "_fmap", None) is not None:  # an MLP audit through a pipeline
        return ("the raw inputs (each numeric column in its own units, each encoded "
                "categorical column as its one-hot values), through the derivative of the "
                "preprocessing", "in the units of the raw columns")
    if not hasattr(model, "steps") or len(model.steps) < 2:
        return "the model's inputs", "in the units of the model's inputs"
    from ..fil._audits._pipeline import raw_refusals
    from ..fil._raw._feature_maps import feature_map

    refusals = raw_refusals(feature_map(model), model.steps[-1][1])
    if refusals:
        return ("the features entering the final step (not the raw inputs: "
                + "; ".join(refusals) + ")",
                "in the units of the features entering the final step")
    return ("the raw inputs (each numeric column in its own units, each encoded "
            "categorical column as its one-hot values), through the derivative of the "
            "preprocessing", "in the units of the raw columns")


#: at most this many raw columns get their own leakage figure (private channel)
_MAX_COLUMN_ETAS = 20


def _raw_columns(X, cols):
    """The raw columns whose leakage is stated one by one: the sensitive ones first."""
    names = list(X.columns) if is_frame(X) else list(range(np.shape(X)[1]))
    order = [c for c in cols if c in names] + [c for c in names if c not in cols]
    return order[:_MAX_COLUMN_ETAS], len(names)


def _fil_section(ctx):
    from .. import fil

    model, why = _fil_model(ctx)
    if model is None:
        if why:
            sec = ReportSection("fil", "Per-example Fisher information loss")
            sec.add(V.Verdict("not_checked", f"Not computed: {why}"))
            if "fil_audit_refusal" in ctx:
                sec.private_table.append(("fil.audit refused", ctx["fil_audit_refusal"]))
            return sec
        return None
    sec = ReportSection("fil", "Per-example Fisher information loss")
    # every eta is a function of individual training rows (and of all of them through the
    # Hessian): the figures are private; the page says what was computed and where
    if model is not ctx["estimator"] and hasattr(model, "hessian_min_eigenvalue_"):
        sec.table.append(("audited through", (
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this network would leak about "
            "each row's raw values if its weights were released with that noise, locally "
            "at the released local minimum (an attribute-inference bound, not a membership "
            "score)")))
        sec.private_table.append(("audit certificate", (
            f"parameters polished by {model.polish_distance_:.3g} to a local minimum "
            f"certified by the smallest Hessian eigenvalue "
            f"{model.hessian_min_eigenvalue_:.3g}")))
    elif model is not ctx["estimator"]:   # a scikit-learn GLM, through fil.audit
        final = model.steps[-1][1] if hasattr(model, "steps") else model
        sec.table.append(("audited through", (
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this model would leak if its "
            "coefficients were released with that noise (the published model has none)")))
        sec.private_table.append(("audit certificate", (
            f"coefficients polished by {getattr(final, 'polish_distance_', 0.0):.3g} to "
            "the exact minimiser")))
    X = ctx["X"]
    wrt, units = _eta_view(model)
    sec.table.append(("eta with respect to", wrt))
    sec.add(V.Verdict("note", "The per-example figures (eta of each training row, their "
                                 "quantiles and the largest) are functions of individual "
                                 "training rows, so they are in the report's private "
                                 "channel: build the report with include_private_details="
                                 "True to see them on a private page."))
    # how many rows the preprocessing publishes is read from the published object (its
    # components_), not counted among the training rows (a duplicate of one is one more)
    n_published = published_rows(model)
    if n_published:
        sec.add(V.published_rows_verdict(n_published))
    try:
        with warnings.catch_warnings():
            # the view is stated in the table; published rows have eta inf
            warnings.simplefilter("ignore", PrivacyWarning)
            eta = np.asarray(fil.eta(model, per_example=True, X=X))
    except (TypeError, ValueError) as exc:
        # whether these rows can be audited depends on them (e.g. rows the preprocessing
        # does not map back to the final step's data): private, like every eta
        sec.private_table.append(("per-example eta", f"not computed on these rows: "
                                                     f"{type(exc).__name__}: {exc}"))
        return sec
    eta = eta[~np.isinf(eta)]
    if not eta.size:     # every row published verbatim: no other row to describe
        sec.private_table.append(("rows", "every training row has eta = inf"))
        return sec
    ctx["max_eta"] = float(eta.max())
    ctx["ledger"].figure("per-example eta", eta, source="training")
    ctx["eta"] = eta
    qs = np.quantile(eta, [0.5, 0.9, 0.99])
    sec.private_table += [("rows", f"{eta.size:,}"), ("median eta", _coarse(qs[0])),
                          ("90th percentile", _coarse(qs[1])),
                          ("99th percentile", _coarse(qs[2])),
                          ("largest eta", _coarse(eta.max()))]
    per_attr = {}
    for c in ctx["cols"] if ctx["private"] else []:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                v = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
            per_attr[c] = v[np.isfinite(v)]
            sec.private_table.append((f"eta of '{c}' (median / max)",
                                      f"{_coarse(np.median(per_attr[c]))} / "
                                      f"{_coarse(per_attr[c].max())}"))
        except (TypeError, ValueError) as exc:
            sec.private_table.append((f"eta of '{c}'", f"not computed: {exc}"))
    # the leakage in each raw column's own units (one-hot blocks: their one-hot values)
    per_column, skipped = [], []
    columns, n_columns = _raw_columns(X, list(ctx["cols"]))
    for c in columns if ctx["private"] else []:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                v = per_attr.get(c)
                if v is None:
                    v = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
                    v = v[np.isfinite(v)]
            if v.size:
                per_column.append((c, float(v.max())))
        except (TypeError, ValueError):
            skipped.append(c)
    if ctx["private"]:
        sec.add_private(V.fil_verdict(float(eta.max()), float(np.median(eta)), units=units,
                                      per_column=per_column, n_columns=n_columns,
                                      skipped=skipped))
    if ctx["private"] and ctx["figures"]:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.hist(eta, bins=40, color="#3465a4", alpha=0.85, label="every feature and label")
        for c, v in per_attr.items():
            ax.hist(v, bins=40, alpha=0.5, label=f"'{c}'")
        ax.set_xlabel("per-example eta")
        ax.set_ylabel("rows")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        sec.private_figure_png = _figure_png(fig)
    return sec
