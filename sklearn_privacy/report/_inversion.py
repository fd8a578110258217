"""The report's inversion section: attribute inversion of the sensitive columns."""

from __future__ import annotations

import warnings

import numpy as np

from ..attacks._validation import n_rows, take_rows
from ..exceptions import PrivacyWarning, UncertifiedMinimumError
from . import _verdicts as V
from ._common import _TEST_ROWS, _column_of, _figure_png, _is_numeric_attribute
from ._fil import _fil_model, _final_fil
from ._section import ReportSection
from ._shared import progress


def _inversion_section(ctx):
    """Attribute inversion: every figure goes to the private channel.

    The attacks score training rows with statistics that depend on other training rows
    (the adversary's prior and the model's confusion rates are read from the attacked
    rows; the white-box and regression attacks use every other row), so no per-row bound
    makes their sums accountable; the default page says so.
    """
    if not ctx["cols"]:
        return None
    if not ctx["private"]:
        sec = ReportSection("inversion", "Attribute inversion of the sensitive columns")
        sec.add(V.Verdict("note", "Attribute-inversion figures would be computed on "
                                  "training rows by attacks whose result for one row "
                                  "depends on the other rows, so they belong to the "
                                  "report's private channel, which this report did not "
                                  "compute: build the report with include_private_details"
                                  "=True to run them and see them on a private page."))
        return sec
    sec = _inversion_figures(ctx)
    if sec is None:
        return None
    ctx["ledger"].figure("attribute inversion", sec.table, source="training")
    sec.private_table, sec.table = sec.table, []
    sec.private_verdicts, sec.verdicts = sec.verdicts, []
    sec.private_outcomes, sec.outcomes = sec.outcomes, []
    sec.private_figure_png, sec.figure_png = sec.figure_png, None
    sec.add(V.Verdict("note", "Attribute-inversion figures are computed on training rows "
                              "by attacks whose result for one row depends on the other "
                              "rows, so they are in the report's private channel: build "
                              "the report with include_private_details=True to see them "
                              "on a private page."))
    return sec


def _inversion_figures(ctx):
    if not ctx["cols"]:
        return None
    from ..attacks import (
        fredrikson_inversion,
        prior_baseline,
        regression_inversion,
        whitebox_inversion,
    )

    est, X, y, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "rng", "confidence"))
    sec = ReportSection("inversion", "Attribute inversion of the sensitive columns")
    fil_model, _ = _fil_model(ctx)
    rows = np.sort(rng.choice(n_rows(X), size=min(1000, n_rows(X)), replace=False))
    Xr = take_rows(X, rows)
    bars = []
    for c in ctx["cols"]:
        try:
            values = _column_of(Xr, c)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            sec.table.append((f"'{c}'", f"not attacked: {exc}"))
            continue
        if _is_numeric_attribute(values):
            if ctx["Xp"] is None:
                sec.add(V.Verdict("not_checked", f"'{c}' is numeric: the regression attack "
                                                 "needs X_population to learn from; not "
                                                 "checked."))
                continue
            m = min(n_rows(ctx["Xp"]), _TEST_ROWS)
            ip = np.sort(rng.choice(n_rows(ctx["Xp"]), size=m, replace=False))
            try:
                res = regression_inversion(est, Xr, y[rows], sensitive_features=c,
                                           X_population=take_rows(ctx["Xp"], ip),
                                           y_population=ctx["yp"][ip], confidence=conf,
                                           random_state=int(rng.integers(2**31 - 1)))
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}'", f"not attacked: {exc}"))
                continue
            lo_i, hi_i = res.improvement_interval
            sec.table.append((f"'{c}' regression attack, mean absolute error",
                              f"{res.mae:.3g} vs {res.baseline_mae:.3g} for the median "
                              f"({res.baseline:.3g}); improvement {res.improvement:.3g} "
                              f"[{lo_i:.3g}, {hi_i:.3g}] ({rows.size:,} rows)"))
            g_lo, g_hi = res.model_gain_interval
            sec.table.append((f"'{c}' same attack without querying the model",
                              f"{res.without_model_mae:.3g}; the model's answers lower the "
                              f"error by [{g_lo:.3g}, {g_hi:.3g}], one-sided p = "
                              f"{res.model_gain_p_value:.3g}"))
            sec.add(V.numeric_inversion_verdict(
                c, res.mae, res.baseline_mae, lo_i, hi_i, res.p_value, rows.size, conf,
                without_model_mae=res.without_model_mae, gain_low=g_lo, gain_high=g_hi,
                gain_p_value=res.model_gain_p_value))
            continue
        try:
            base = prior_baseline(Xr, sensitive_features=c).accuracy
        except (TypeError, ValueError) as exc:
            sec.table.append((f"'{c}'", f"not attacked: {exc}"))
            continue
        res = None
        if fil_model is not None and fil_model is est:
            try:
                res = whitebox_inversion(est, X, sensitive_features=c, rows=rows,
                                         prior="empirical", random_state=rng)
                kind = "white-box (release + all other values)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}' white-box", f"not attacked: {exc}"))
        if res is None:
            try:
                res = fredrikson_inversion(est, Xr, y[rows], sensitive_features=c)
                kind = "black-box (Fredrikson)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}'", f"not attacked: {exc}"))
                continue
        lo_a, hi_a = res.confidence_interval(conf)
        p = res.p_value(base)
        sec.table.append((f"'{c}' {kind} accuracy, {conf:.0%} Wilson interval",
                          f"{res.accuracy:.3f} [{lo_a:.3f}, {hi_a:.3f}] vs prior baseline "
                          f"{base:.3f}, exact binomial p = {p:.3g} ({rows.size:,} rows)"))
        bars.append((str(c), res.accuracy, lo_a, hi_a, base))
        sec.add(V.inversion_verdict(c, kind, res.accuracy, lo_a, hi_a, base, p, rows.size,
                                    conf))
    if fil_model is not None and fil_model is not est:   # fil.audit at sigma
        for c in ctx["cols"]:
            _release_inversion(ctx, fil_model, c, rows, sec, bars)
    if bars and ctx["figures"]:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.2, 3.4))
        xs = np.arange(len(bars))
        acc = np.array([b[1] for b in bars])
        err = np.clip([[b[1] - b[2] for b in bars], [b[3] - b[1] for b in bars]], 0, None)
        ax.bar(xs - 0.2, acc, 0.4, yerr=err, capsize=4,
               label=f"attack ({conf:.0%} Wilson interval)")
        ax.bar(xs + 0.2, [b[4] for b in bars], 0.4, label="prior baseline")
        ax.set_xticks(xs, [b[0] for b in bars])
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=8)
        sec.figure_png = _figure_png(fig)
    return sec


#: attacked rows of the white-box attack on a hypothetical release when every (row,
#: candidate) is a refit: an MLP (certified Newton refit, 0.007-0.03 CPU s each at
#: 2,000-5,000 training rows of Adult) or a multinomial GLM
_REFIT_ROWS = 200


#: simulated releases of the white-box attack on a hypothetical release
_RELEASE_DRAWS = 20


def _release_inversion(ctx, model, c, rows, sec, bars):
    """White-box inversion of ``c`` under the audit's threat model, on simulated releases.

    ``model`` is ``fil.audit(estimator, X, y, sigma=sigma)``: the audited minimiser
    released with Gaussian noise of ``sigma`` (hypothetical: the published model has no
    noise); the adversary knows every other training row and the row's other values.
    """
    from ..attacks import prior_baseline, whitebox_inversion

    X, rng, conf, sigma = (ctx[k] for k in ("X", "rng", "confidence", "sigma"))
    mlp = hasattr(model, "hessian_min_eigenvalue_")
    what = "weights" if mlp else "coefficients"
    label = f"'{c}' white-box if the {what} were released with noise sigma = {sigma:.4g}"
    try:
        values = _column_of(take_rows(X, rows), c)
    except (KeyError, IndexError, ValueError, TypeError):
        return
    if _is_numeric_attribute(values):
        sec.table.append((label, "not attacked: a numeric column (the white-box attack "
                                 "chooses among levels; its eta is in the FIL section)"))
        return
    final = _final_fil(model)
    refits = mlp or len(getattr(final, "classes_", ())) > 2
    if refits and rows.size > _REFIT_ROWS:
        rows = np.sort(rng.choice(rows, size=_REFIT_ROWS, replace=False))

    def attack(rows):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return whitebox_inversion(model, sensitive_features=c, rows=rows, prior="empirical",
                                      n_draws=_RELEASE_DRAWS, X=X, random_state=rng)

    sampled = rows.size
    progress(ctx, f"inversion: white-box attack on '{c}', {rows.size:,} rows x "
                  f"{_RELEASE_DRAWS} simulated releases" + (" (each row and candidate a "
                                                           "refit)" if refits else ""))
    try:
        try:
            res = attack(rows)
        except UncertifiedMinimumError:
            # a row whose candidate minimum is not certified (its likelihood is undefined)
            # is left out, and counted in the table and the sentence
            rows = rows[[_certified(model, c, i) for i in rows]]
            if not rows.size:
                raise
            res = attack(rows)
        base = prior_baseline(take_rows(X, rows), sensitive_features=c).accuracy
    except (TypeError, ValueError) as exc:
        sec.table.append((label, f"not attacked: {exc}"))
        sec.add(V.Verdict("not_checked", f"If the {what} were released with Gaussian noise "
                                         f"of sigma = {sigma:.4g}, what the white-box "
                                         f"attack recovers of '{c}' was not checked (the "
                                         "attack could not run: see the table)."))
        return
    lo_a, hi_a = res.confidence_interval(conf)
    p = res.p_value(base)
    cost = (f"; {rows.size:,} rows: each row and candidate is a refit" if refits
            else f"; {rows.size:,} rows")
    if rows.size < sampled:
        cost += (f"; {sampled - rows.size:,} of the {sampled:,} sampled rows left out: a "
                 "candidate minimum of theirs is not certified")
    sec.table.append((f"{label} (hypothetical: the published model has none), accuracy, "
                      f"{conf:.0%} Wilson interval",
                      f"{res.accuracy:.3f} [{lo_a:.3f}, {hi_a:.3f}] vs prior baseline "
                      f"{base:.3f}, exact binomial p = {p:.3g} ({_RELEASE_DRAWS} simulated "
                      f"releases{cost})"))
    bars.append((f"{c} (sigma {sigma:.2g})", res.accuracy, lo_a, hi_a, base))
    sec.add(V.release_inversion_verdict(c, sigma, what, res.accuracy, lo_a, hi_a, base, p,
                                        rows.size, conf, n_draws=_RELEASE_DRAWS,
                                        n_left_out=sampled - rows.size))


def _certified(model, c, i):
    """Whether every candidate minimum of training row ``i`` is certified."""
    from ..attacks import candidate_minimisers

    try:
        candidate_minimisers(model, sensitive_features=c, rows=[int(i)])
    except UncertifiedMinimumError:
        return False
    return True
