"""The report's membership section: threshold attack, groups, LiRA, two-sample test."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from ..attacks._validation import is_frame, n_rows, take_rows
from ..utils._columns import frame_codes
from ..utils._intervals import auc_delong
from . import _verdicts as V
from ._common import _CHUNK, _TEST_ROWS, _column_of, _concat
from ._disclosure import noisy_sum_upper_p, register_tests
from ._section import ReportSection
from ._shared import lira_scores, reference_set, rmia_scores
from ._tail import noisy_tail_rows, tail_rows

#: a categorical column with more levels is not split into membership groups
_MAX_GROUPS = 20


def _scores(est, X, y, idx):
    """Membership scores of the rows ``idx`` of ``X``, queried in chunks (bounded memory)."""
    from ..attacks import membership_scores

    attack = "loss" if not (is_classifier(est) and hasattr(est, "predict_proba")) \
        else "confidence"
    out = [membership_scores(est, take_rows(X, idx[i:i + _CHUNK]), y[idx[i:i + _CHUNK]],
                             attack=attack) for i in range(0, idx.size, _CHUNK)]
    return np.concatenate(out), attack


def _encode_rows(X, ref_frame=None):
    """Rows as a float matrix for the two-sample test (categories as codes)."""
    if is_frame(X):
        return frame_codes(X, ref_frame)
    if hasattr(X, "tocsr"):
        return X.toarray().astype(float), []
    return np.asarray(X, dtype=float), []


def _two_sample_test(X, Xp, rng, confidence):
    """Classifier two-sample test: held-out AUC of telling training from population rows.

    Equal numbers of rows from each side (at most ``_TEST_ROWS``), half of each to fit a
    gradient-boosted classifier, half to score it; under "same distribution" the held-out
    AUC is that of exchangeable scores (Mann-Whitney null), which gives the p-value.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    from ..utils._intervals import auc_p_value

    k = min(n_rows(X), n_rows(Xp), _TEST_ROWS)
    if k < 20:
        return None
    a = take_rows(X, np.sort(rng.choice(n_rows(X), size=k, replace=False)))
    b = take_rows(Xp, np.sort(rng.choice(n_rows(Xp), size=k, replace=False)))
    if hasattr(a, "tocsr") and a.shape[1] > 2000:
        return None
    A, cat = _encode_rows(a, a)
    B, _ = _encode_rows(b, a)
    half = k // 2
    Z = np.vstack([A[:half], B[:half]])
    t = np.r_[np.ones(half), np.zeros(half)]
    clf = HistGradientBoostingClassifier(max_iter=100, categorical_features=cat or None,
                                         random_state=int(rng.integers(2**31 - 1)))
    # one OpenMP thread: a few thousand rows need no more, and on a busy machine the
    # default thread pool spins (146 s instead of 0.5 s for 5,000 rows at load 20)
    with threadpool_limits(limits=1, user_api="openmp"):
        clf.fit(Z, t)
        s_a = clf.predict_proba(A[half:])[:, 1]
        s_b = clf.predict_proba(B[half:])[:, 1]
    auc, lo, hi, _ = auc_delong(s_a, s_b, confidence)
    return auc, lo, hi, auc_p_value(s_a, s_b, "greater"), s_a.size + s_b.size


def _as_labels(values):
    """Group labels as strings, element by element (``astype(str)`` fails on a cell that
    holds an array, which one training row can)."""
    return np.frompyfunc(str, 1, 1)(np.asarray(values, dtype=object)).astype(str)


def _ranks(s_in, s_out):
    """Each member's normalised rank among the non-members (Mann-Whitney, ties half).

    ``u_i`` in ``[0, 1]`` depends on member ``i``'s score and the non-members' scores only,
    so a sum of ``u`` over members changes by at most 1 when one member row is replaced;
    the AUC is their mean.
    """
    out = np.sort(s_out)
    lo = np.searchsorted(out, s_in, side="left")
    hi = np.searchsorted(out, s_in, side="right")
    return (lo + 0.5 * (hi - lo)) / max(1, out.size)


def _mw_null_var(k_in, k_out):
    """Variance of the Mann-Whitney rank sum ``sum u_i`` under exchangeable scores."""
    return k_in * (k_in + k_out + 1) / (12.0 * k_out)


def _noisy_auc_interval(auc, k_in, k_out, noise_tail, confidence):
    """A conservative interval for an AUC released with noise.

    The sampling part uses the distribution-free bound Var(AUC) <= AUC (1 - AUC) /
    min(k_in, k_out) (van Dantzig) at the AUC in the noise band closest to 0.5, at level
    ``(1 - confidence) / 2``; ``noise_tail`` (on the AUC scale) covers the noise at the
    other half of the level (union bound).
    """
    from scipy.stats import norm

    a = float(np.clip(auc, 0.0, 1.0))
    closest = 0.5 if abs(a - 0.5) <= noise_tail else (a - noise_tail if a > 0.5
                                                      else a + noise_tail)
    z = norm.ppf(1 - (1 - confidence) / 4)
    half = z * np.sqrt(closest * (1 - closest) / max(1, min(k_in, k_out))) + noise_tail
    return max(0.0, a - half), min(1.0, a + half)


def _membership_section(ctx):
    if ctx["Xp"] is None:
        return None
    est, X, y, Xp, yp, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "Xp", "yp",
                                                     "rng", "confidence"))
    ledger = ctx["ledger"]
    level = 1.0 - conf
    sec = ReportSection("membership", "Membership inference")
    # equal-size evaluation sets: a random subset of the larger side (positions drawn from
    # the seed: which rows are evaluated does not depend on their values)
    k = min(n_rows(X), n_rows(Xp))
    if k < ledger.min_group_size:
        sec.add(V.Verdict("not_checked", f"Membership was not checked: {k} members and "
                                         f"{k} non-members, fewer than min_group_size = "
                                         f"{ledger.min_group_size} (no figure on this page "
                                         "comes from fewer people)."))
        return sec
    i_in = np.sort(rng.choice(n_rows(X), size=k, replace=False))
    i_out = np.sort(rng.choice(n_rows(Xp), size=k, replace=False))
    s_in, attack = _scores(est, X, y, i_in)
    s_out, _ = _scores(est, Xp, yp, i_out)
    label = f"threshold ({attack})"
    # --- default page: the rank sum of the members, released with Laplace noise
    u = _ranks(s_in, s_out)
    total = ledger.figure("membership rank sum", float(u.sum()), source="training", bound=1)
    auc_n = total.value / k
    tail = total.tail(level / 2) / k
    lo_n, hi_n = _noisy_auc_interval(auc_n, k, k, tail, conf)
    p_all = noisy_sum_upper_p(total.value, 0.5 * k, _mw_null_var(k, k), [total.scale])
    # below chance: the same test on the other side (part of the page's family too)
    p_below = noisy_sum_upper_p(-total.value, -0.5 * k, _mw_null_var(k, k), [total.scale])
    ledger.show(sec, "cell", (f"threshold attack ({attack}) AUC, released with Laplace noise "
                              f"of scale {total.scale / k:.2g}; conservative {conf:.0%} "
                              "interval",
                              f"{auc_n:.3f} [{lo_n:.3f}, {hi_n:.3f}] (chance 0.5; {k:,} "
                              f"members, {k:,} non-members; one-sided p = {p_all:.3g})"),
                total)
    tests = [("attack", label, auc_n, lo_n, hi_n, p_all), ("below", label, auc_n, lo_n, hi_n,
                                                           p_below)]
    # --- the tail: members above thresholds set on the population rows (noisy counts)
    noisy_tail_rows(ctx, sec, f"threshold attack ({attack})", s_in, s_out)
    # --- groups of each sensitive column, defined on the population rows (public)
    group_rows, group_tests, group_inputs = _group_tests(ctx, sec, s_in, s_out, i_in,
                                                        i_out)
    tests += group_tests

    # --- one family with the page's other findings: Holm at its false-alarm level
    def write(rejected, adjusted, method):
        # the population-shift wording needs this page's own two-sample test (private)
        out = [V.membership_verdict(label, auc_n, lo_n, hi_n, conf, n_members=k,
                                    n_nonmembers=k, leaks=rejected[0], below=rejected[1],
                                    p_value=adjusted[0], method=method,
                                    population_differs=None, noisy=True)]
        pos = 2
        for c, shown, hidden in group_rows:
            n_g = len(shown)
            out.append(V.group_membership_verdict(
                c, [g[:6] for g in shown], conf, rejected=rejected[pos:pos + n_g],
                adjusted=adjusted[pos:pos + n_g], method=method, hidden=hidden,
                min_group_size=ledger.min_group_size))
            pos += n_g
        return out

    register_tests(ctx, sec, [total] + group_inputs, [t[5] for t in tests], write,
                   n_verdicts=1 + len(group_rows))
    # --- private channel: exact AUCs, LiRA, the two-sample test, exact groups, the figure
    _private_membership(ctx, sec, label, attack, k, s_in, s_out, i_in, i_out)
    return sec


def _group_tests(ctx, sec, s_in, s_out, i_in, i_out):
    """Noisy per-group membership AUCs of each categorical sensitive column (groups
    defined by the population's levels). Returns ``(group_rows, tests, inputs)``, the
    last the accounted figures the group findings are read from."""
    X, Xp, conf, ledger = ctx["X"], ctx["Xp"], ctx["confidence"], ctx["ledger"]
    level = 1.0 - conf
    group_rows, tests, inputs = [], [], []
    for c in ctx["cols"]:
        try:
            g_in, g_out = _column_of(X, c)[i_in], _column_of(Xp, c)[i_out]
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        # any value, however exotic (an array in a cell), is a label: never a failure
        g_in, g_out = _as_labels(g_in), _as_labels(g_out)
        levels = np.unique(g_out)
        if levels.size > _MAX_GROUPS:
            sec.table.append((f"membership by '{c}'", f"not split: {levels.size} distinct "
                                                       "values in the population rows"))
            continue
        sums, counts, n_out = [], [], []
        for lev in levels:
            b = s_out[g_out == lev]
            a = s_in[g_in == lev]
            sums.append(_ranks(a, b).sum() if a.size else 0.0)
            counts.append(a.size)
            n_out.append(b.size)
        # a member row moves from one group to another: L1 sensitivity 2 per vector
        S = ledger.figure(f"per-group rank sums of '{c}'", np.array(sums), source="training",
                          bound=1, vector=True)
        K = ledger.figure(f"per-group member counts of '{c}'", np.array(counts, float),
                          source="training", bound=1, vector=True)
        inputs += [S, K]
        shown, hidden = [], 0
        for j, lev in enumerate(levels):
            k_g, m_g = float(K.value[j]), int(n_out[j])
            if m_g < ledger.min_group_size:      # the population rows are public
                hidden += 1
                sec.table.append((f"AUC where '{c}' = {lev}", f"not shown: fewer than "
                                  f"{ledger.min_group_size} non-members"))
                continue
            if k_g < ledger.min_group_size:      # a noisy count: one row per group always
                hidden += 1
                ledger.show(sec, "cell", (f"AUC where '{c}' = {lev}", f"not shown: fewer "
                                          f"than {ledger.min_group_size} members (noisy "
                                          "count)"), S, K)
                continue
            # the count's upper band makes the null variance conservative
            k_hi = k_g + K.tail(level / 2)
            p_g = noisy_sum_upper_p(S.value[j] - 0.5 * k_g, 0.0, _mw_null_var(k_hi, m_g),
                                    [S.scale, 0.5 * K.scale])
            auc_g = float(np.clip(S.value[j] / k_g, 0.0, 1.0))
            noise_g = (S.tail(level / 4) + K.tail(level / 4)) / max(k_g - K.tail(level / 4),
                                                                    1.0)
            glo, ghi = _noisy_auc_interval(auc_g, k_g, m_g, noise_g, conf)
            shown.append((lev, auc_g, glo, ghi, int(round(k_g)), m_g, p_g))
            ledger.show(sec, "cell", (f"AUC where '{c}' = {lev}",
                                      f"{auc_g:.3f} [{glo:.3f}, {ghi:.3f}] (about "
                                      f"{int(round(k_g)):,} members (noisy count), {m_g:,} "
                                      f"non-members; one-sided p = {p_g:.3g})"), S, K)
        group_rows.append((c, shown, hidden))
        tests += [("group", (c, g[0]), g[1], g[2], g[3], g[6]) for g in shown]
    return group_rows, tests, inputs


def _private_membership(ctx, sec, label, attack, k, s_in, s_out, i_in, i_out):
    """The membership section's private channel: exact AUC, LiRA, the two-sample test,
    the exact tail, the strongest attack against the claim's bound, the ROC curves."""
    est, X, y, Xp, yp, rng, conf = (ctx[k_] for k_ in ("estimator", "X", "y", "Xp", "yp",
                                                       "rng", "confidence"))
    ledger = ctx["ledger"]
    level = 1.0 - conf
    auc, lo, hi, _ = auc_delong(s_in, s_out, conf)
    ledger.figure("exact threshold AUC", auc, source="training")
    curves = [(label, s_in, s_out, auc, lo, hi)]
    sec.private_table.append((f"threshold attack ({attack}) AUC, exact, {conf:.0%} "
                              "interval (DeLong)", f"{auc:.3f} [{lo:.3f}, {hi:.3f}]"))
    private_tests = [(label, auc, lo, hi)]
    if ctx["n_ref"] and not ctx["private"]:
        sec.add(V.Verdict("note", "LiRA was not run: its reference models train on the "
                                  "member rows, so its figures belong to the private "
                                  "channel; build the report with include_private_details="
                                  "True to run it."))
    if ctx["n_ref"] and ctx["private"]:
        m = min(k, _TEST_ROWS)
        Xall = _concat(take_rows(X, i_in[:m]), take_rows(Xp, i_out[:m]))
        yall = np.r_[y[i_in[:m]], yp[i_out[:m]]]
        # one set of reference models for every attack that needs them (trained once)
        ref = reference_set(ctx, Xall, yall, rng)
        n_ref = ref["n_models"]
        for name, scores in ((f"LiRA ({n_ref} reference models)", lira_scores(ref)),
                             (f"RMIA (the same {n_ref} reference models)",
                              rmia_scores(ref))):
            if scores is None:
                continue
            a_in, a_out = scores[:m], scores[m:]
            auc2, lo2, hi2, _ = auc_delong(a_in, a_out, conf)
            # the reference models saw the member rows: private
            ledger.figure(f"{name.split()[0]} AUC", auc2, source="training")
            sec.private_table.append((f"{name} AUC, {conf:.0%} interval (DeLong)",
                                      f"{auc2:.3f} [{lo2:.3f}, {hi2:.3f}] ({m:,} members, "
                                      f"{m:,} non-members)"))
            curves.append((name, a_in, a_out, auc2, lo2, hi2))
            private_tests.append((name, auc2, lo2, hi2))
    test = _two_sample_test(X, Xp, rng, conf) if ctx["private"] else None
    differs = None
    if not ctx["private"]:
        pass
    elif test is None:
        sec.add_private(V.Verdict("not_checked", "Whether the population rows resemble the "
                                                 "training rows was not checked (fewer than "
                                                 "20 rows a side, or too many sparse "
                                                 "columns)."))
    else:
        t_auc, t_lo, t_hi, t_p, t_n = test
        ledger.figure("two-sample test", t_auc, source="training")
        sec.private_table.append(("two-sample test: held-out AUC of a classifier telling "
                                  "training from population rows",
                                  f"{t_auc:.3f} [{t_lo:.3f}, {t_hi:.3f}], one-sided p = "
                                  f"{t_p:.3g} ({t_n:,} rows)"))
        pv = V.population_verdict(t_auc, t_lo, t_hi, t_p, conf, t_n)
        differs = pv.outcome == "population_differs"
        sec.add_private(pv)
    # per-attack verdicts of the private page: Bonferroni over the attacks (two-sided
    # intervals at level / number of attacks)
    from scipy.stats import norm

    for name, a_, lo_, hi_ in private_tests:
        se = (hi_ - lo_) / (2 * norm.ppf(1 - level / 2))
        z = norm.ppf(1 - level / (2 * len(private_tests)))
        sec.add_private(V.membership_verdict(
            name, a_, a_ - z * se, a_ + z * se, conf, n_members=k, n_nonmembers=k,
            population_differs=differs,
            method=(f"Bonferroni over the {len(private_tests)} attacks of this page"
                    if len(private_tests) > 1 else None)))
    if ctx["private"]:
        tail_rows(ctx, sec, curves)
    if ctx["private"] and ctx.get("curve") is not None:   # strongest attack vs the bound
        from ..privacy._tradeoff import empirical_point, refutes
        points = [(c[0], empirical_point(c[1], c[2], fpr=0.01, confidence=conf))
                  for c in curves]
        name, point = max(points, key=lambda t: t[1]["tpr"])
        ctx["summary"]["empirical_tpr"] = dict(point, attack=name,
                                               refuted=refutes(ctx["curve"], point))
    if ctx["private"] and ctx["figures"]:   # drawn by the report after the section
        ctx["roc_figure"] = (curves, conf, rng, ctx.get("curve"))
