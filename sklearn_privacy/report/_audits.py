"""The report's audit section: empirical lower bounds on epsilon of the recipe."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone

from ..attacks._validation import is_frame, n_rows
from . import _verdicts as V
from ._common import _figure_png
from ._disclosure import register_tests
from ._fil import _final_fil
from ._section import ReportSection
from ._shared import count, progress


def _audit_section(ctx):
    from ..attacks import one_run_audit

    est, rng, conf = (ctx[k] for k in ("estimator", "rng", "confidence"))
    # the audits retrain the recipe (a clone: hyperparameters only) on the population
    # rows, which the page treats as public: an audit tests the training algorithm, and a
    # DP claim holds for every data set, so the bound needs no training row
    X, y = ctx["Xp"], ctx["yp"]
    sec = ReportSection("audits", "Empirical lower bounds on epsilon")
    if X is None:
        if not ctx["n_canaries"] and not ctx["canary_releases"]:
            return None
        sec.add(V.Verdict("not_checked", "No audit was run: the audits retrain the model's "
                                         "recipe on the population rows (so that the page "
                                         "uses no training row); pass X_population and "
                                         "y_population."))
        return sec
    sec.table.append(("data the audits train on", f"the {n_rows(X):,} population rows "
                                                  "(a clone of the model: its "
                                                  "hyperparameters, not its fit)"))
    bounds = []
    fil = _final_fil(est)
    dense = not is_frame(X) and not hasattr(X, "tocsr")
    claimed = ctx["summary"].get("claimed_epsilon", np.inf)
    if ctx["n_canaries"]:
        template = clone(est)
        if fil is not None and fil is est and dense:
            kw = dict(canaries="fil_worst", attack="whitebox")
        else:
            kw = dict(canaries="mislabel", n_canaries=int(ctx["n_canaries"]))
        progress(ctx, "one-run audit: 1 fit with the canaries")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = one_run_audit(template, X, y, confidence=conf, random_state=rng,
                                n_jobs=ctx["n_jobs"], verbose=ctx["verbose"], **kw)
        # the fit with the canaries, and the white-box attack's fit without them
        count(ctx, "audit_refits", 1 + (kw.get("attack") == "whitebox"))
        audit_results = [res]
        bounds.append(("one-run audit", res.epsilon_lower_bound))
        sec.table.append(("one-run audit (Steinke, Nasr & Jagielski 2023; add/remove-one "
                          "canaries)",
                          f"{res.epsilon_lower_bound:.3g} ({res.n_correct}/{res.n_guesses} "
                          f"guesses correct, {res.n_canaries} canaries, attack {res.attack})"))
    else:
        audit_results = []
        sec.table.append(("one-run audit", "not run: n_canaries=0"))
    canary_res = None
    canary, why_not = _canary_target(ctx, fil, claimed, X)
    if canary is not None:
        target, Xf, on = canary
        pair, res = _worst_case_audit(ctx, target, Xf, y, conf, rng)
        count(ctx, "canary_releases", 2 * int(ctx["canary_releases"]))
        canary_res = res
        audit_results.append(res)
        bounds.append(("canary audit (worst-case pair)", res.epsilon_lower_bound))
        curve = ctx.get("curve")
        if curve is not None:   # the audit's point against the claim's proven curve
            point = res.tpr_at(0.01, confidence=conf)
            above = float(curve.max_tpr(point["fpr_high"])) < point["tpr_low"]
            sec.table.append((
                "canary audit: TPR at 1% FPR against the proven bound",
                f"{point['tpr']:.3g} [{point['tpr_low']:.3g}, {point['tpr_high']:.3g}] "
                f"against at most {float(curve.max_tpr(0.01)):.3g}"
                + (" -- above the proven curve: the claim is refuted" if above else "")))
            if above:
                sec.add(V.Verdict("refuted", "Flag: the canary audit's TPR at 1% FPR lies "
                                             "above the claim's proven trade-off curve at "
                                             f"{conf:.0%} confidence: the claim is "
                                             "refuted."))
        sec.table.append(("canary audit on the worst pair found (replace-one)",
                          f"{res.epsilon_lower_bound:.3g} ({ctx['canary_releases']:,} "
                          f"releases per side; the pair moves the minimiser "
                          f"{pair.ratio:.2f} of sensitivity_; {on})"))
    else:
        sec.table.append(("canary audit on the worst-case pair", f"not run: {why_not}"))
        sec.add(V.Verdict("not_checked", f"The worst-case canary audit did not run: "
                                         f"{why_not}."))
    # the stored-rows test from the page's noisy count is public; the other structural
    # membership tests score training rows: their bounds are private, and the private
    # page's headline counts them
    stored = ctx.get("structural_public_bounds", [])
    # the stored-rows bound is read from the page's noisy count: what depends on the bounds
    # (the verdict, the headline, the figure) is derived from that count
    noisy = list(ctx.get("structural_public_inputs") or [])
    if noisy:
        ctx["ledger"].headline("empirical_epsilon", *noisy)
    structural = ctx.get("structural_bounds", [])
    if structural:
        every = bounds + stored + structural
        top = max(every, key=lambda b: b[1])
        ctx.setdefault("private_summary", {}).update(
            empirical_epsilon=float(top[1]), empirical_epsilon_source=top[0])
        sec.add_private(V.audit_verdict(claimed, every, conf))
        sec.private_table += [(f"{name} (from the training rows)", f"{eps:.3g}")
                              for name, eps in structural]

    def write(bounds):
        if bounds:
            best = max(bounds, key=lambda b: b[1])
            ctx["summary"].update(empirical_epsilon=float(best[1]),
                                  empirical_epsilon_source=best[0], confidence=conf)
            if ctx["figures"]:
                sec.figure_png = _audit_figure(ctx, bounds, claimed, canary_res,
                                               audit_results, conf)
        return V.audit_verdict(claimed, bounds, conf)

    if not stored:
        _add_derived(ctx, sec, write(bounds), noisy)
    else:
        # the stored-rows bound is the evidence of the stored-rows finding: it counts only
        # when that finding survives Holm's procedure with the page's other findings (at
        # the page's false-alarm level); otherwise it enters as 0
        register_tests(ctx, sec, noisy, [], lambda *_: [write(bounds + [
            (name, eps if _stored_found(ctx) else 0.0) for name, eps in stored])])
        if ctx["figures"]:
            ctx["ledger"].mark(sec, "figure", 0, *noisy)
    return sec


def _stored_found(ctx):
    """Whether the page's stored-rows finding survived Holm's procedure (decided before
    the audits' sentence: the structural section registers its test first)."""
    return any(c.channel == "accounted" and c.membership is not None and c.found
               for c in ctx.get("structural_checks", []))


def _worst_case_audit(ctx, target, Xf, y, conf, rng):
    """The worst-case pair search and the canary audit on the pair found, with their fits
    counted: ``(pair, result)``."""
    from ..attacks import canary_audit, worst_case_neighbours

    progress(ctx, "canary audit: worst-case pair search")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = worst_case_neighbours(clone(target), Xf, y, random_state=rng,
                                     n_jobs=ctx["n_jobs"], verbose=ctx["verbose"])
        # the exact fit on the rows, and one per candidate pair refitted
        count(ctx, "audit_refits", 1 + pair.n_refits)
        progress(ctx, f"canary audit: {int(ctx['canary_releases']):,} releases per side")
        fits = getattr(pair, "_fits", None)
        if fits is not None:     # the search's exact fits of D and D', redrawn
            return pair, _canary_of_fits(fits, Xf, y, pair, int(ctx["canary_releases"]),
                                         conf, rng)
        res = canary_audit(clone(target), Xf, y, pair.index, pair.x_replacement,
                           pair.y_replacement, attack=pair.statistic(),
                           n_releases=int(ctx["canary_releases"]), refit=False,
                           confidence=conf, random_state=rng)
    count(ctx, "audit_refits", 2)      # one fit of each side, its noise redrawn
    return pair, res


def _canary_of_fits(fits, X, y, pair, n_releases, confidence, rng):
    """``canary_audit(..., refit=False)`` on the worst-case search's exact fits of ``D``
    and ``D'`` (the estimator's own noise parameters): the same releases from the same
    seeds (a redraw equals a refit with its seed, bitwise), without fitting them again."""
    from ..attacks._audit import _canary_result, _neighbouring_pair, _redraws
    from ..utils import child_seeds, noise_generator

    y, _, _, attack = _neighbouring_pair(fits[0], X, y, pair.index, pair.x_replacement,
                                         pair.y_replacement, False, pair.statistic())
    rng = noise_generator(rng)
    seeds = child_seeds(rng, 2 * n_releases)
    out = [o for side in (0, 1)
           for o in _redraws(fits[side], seeds[side * n_releases:(side + 1) * n_releases],
                             attack)]
    claim = max((o[1] for o in out), key=lambda c: (c.epsilon, c.delta))
    return _canary_result(np.array([o[0] for o in out]), claim, None, confidence, 0.5, rng)


def _add_derived(ctx, sec, verdict, inputs):
    """Append ``verdict``: through the ledger when it is read from accounted figures."""
    if inputs:
        ctx["ledger"].show(sec, "verdict", verdict, *inputs)
    else:
        sec.add(verdict)


def _canary_target(ctx, fil, claimed, X):
    """What the worst-case canary audit runs on, or why it cannot run.

    The audit retrains the recipe on ``X`` (the population rows: public). A bare FIL
    estimator is audited on those rows; a pipeline ending in one is audited on its final
    step, on the rows as the pipeline's own (fitted, held fixed) preprocessing outputs
    them: the final step's DP guarantee is over those rows, and the claim of the whole
    object is at least the final step's.
    Returns ``((estimator, rows, where), None)`` or ``(None, reason)``.
    """
    est = ctx["estimator"]
    if not ctx["canary_releases"]:
        return None, "canary_releases=0"
    if fil is None:
        return None, ("it audits the library's output-perturbed FIL estimators; this model "
                      "is not one")
    if not np.isfinite(claimed):
        return None, "no finite claim to audit (epsilon = inf)"
    if len(getattr(fil, "classes_", ())) > 2:
        return None, "the worst-case search supports binary and least-squares FIL models"
    if fil is est:
        try:
            Xf = np.asarray(X.toarray() if hasattr(X, "tocsr") else X, dtype=float)
        except (TypeError, ValueError):
            return None, "the population rows have non-numeric columns"
        return (est, Xf, "on the population rows"), None
    try:
        Xf = est[:-1].transform(X)
        Xf = np.asarray(Xf.toarray() if hasattr(Xf, "toarray") else Xf, dtype=float)
    except Exception as exc:  # noqa: BLE001 - the refusal is the reason
        return None, f"the population rows could not be pushed through the preprocessing " \
                     f"({exc})"
    return (fil, Xf, "on the final step, on the population rows as the pipeline's "
                     "preprocessing outputs them"), None


def _audit_figure(ctx, bounds, claimed, canary_res, audit_results, conf):
    """The audits' bounds against the claim (and the canary audit's ROC against the
    claim's proven curve) as a PNG."""
    import matplotlib.pyplot as plt

    curve = ctx.get("curve")
    if canary_res is not None and curve is not None:   # audits against the bound
        from ..attacks import MembershipROCDisplay

        fig, (ax, ax_roc) = plt.subplots(1, 2, figsize=(10.4, max(3.2, 1.2 + 0.55
                                                                    * len(bounds))))
        disp = MembershipROCDisplay.from_canary_audit(
            canary_res, ax=ax_roc, confidence=conf, random_state=0,
            name="canary audit (releases)")
        disp.plot_bound(curve, audits=audit_results)
        ax_roc.legend(fontsize=7, loc="lower right")
    else:
        fig, ax = plt.subplots(figsize=(5.2, 1.2 + 0.55 * len(bounds)))
    names = [b[0] for b in bounds]
    vals = [b[1] for b in bounds]
    ax.barh(names, vals, color="#73a33f", label="audited lower bound")
    if np.isfinite(claimed):
        ax.axvline(claimed, color="#c00", lw=2, label=f"claimed {claimed:.3g}")
    ax.set_xlabel("epsilon")
    ax.legend(fontsize=8, loc="lower right")
    return _figure_png(fig)
