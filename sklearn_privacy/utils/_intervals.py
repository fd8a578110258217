"""The confidence intervals and tests behind every figure the library reports.

One method per quantity, used by the result objects, the report's tables and the figures'
legends alike (so a page never shows two intervals for one number):

* a proportion (attribute-inversion accuracy, accuracy of a model): Wilson score interval;
  against a fixed rate, the exact one-sided binomial test;
* the AUC of two samples of scores: DeLong's nonparametric variance (midranks, ties counted
  one half) on the logit scale, so that the limits stay inside [0, 1];
* balanced accuracy ``(TPR + TNR) / 2`` of fixed decisions: the MOVER sum (Newcombe; Zou &
  Donner) of the Wilson intervals of the two independent rates;
* a paired difference of per-row losses (a model against a baseline on the same rows): the
  t interval of the mean difference and its one-sided p-value.

Where scipy computes the same quantity it is the implementation: the Wilson interval of an
integer count is ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``, the paired
difference is ``scipy.stats.ttest_1samp`` and the AUC's p-value against 0.5 is
``scipy.stats.mannwhitneyu`` (normal approximation with the tie correction). Written by hand
are only what scipy does not offer: the Wilson interval of a fractional count (a weighted
accuracy), DeLong's variance of the AUC (scipy has none) and the MOVER sum.

Their coverage is measured by simulation in ``benchmarks/bench_interval_coverage.py``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def _z(confidence):
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def wilson_interval(k, n, confidence=0.95):
    """Wilson score interval of a proportion ``k / n`` (``k`` may be fractional).

    An integer ``k`` goes to ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``;
    a fractional ``k`` (a weighted count, which scipy does not take) uses the same closed
    form, the roots of ``(p - L)^2 = z^2 L (1 - L) / n``.
    """
    k, n = float(k), float(n)
    if n <= 0:
        return float("nan"), float("nan")
    if k == round(k) and n == round(n) and 0 <= k <= n:
        ci = stats.binomtest(int(round(k)), int(round(n))).proportion_ci(
            confidence_level=confidence, method="wilson")
        return float(ci.low), float(ci.high)
    z = _z(confidence)
    p = k / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / den
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def binomial_p_greater(k, n, p0):
    """One-sided exact binomial p-value of ``P(K >= k)`` for ``K ~ Bin(n, p0)``."""
    k = int(round(k))
    if n <= 0:
        return float("nan")
    return float(stats.binom.sf(k - 1, int(n), min(max(float(p0), 0.0), 1.0)))


def _midranks(x):
    return stats.rankdata(x, method="average")


def auc_delong(s_in, s_out, confidence=0.95):
    """``(auc, low, high, se)``: the AUC with DeLong's interval on the logit scale.

    ``auc`` is the Mann-Whitney statistic ``P(s_in > s_out) + P(tie) / 2``. Its variance
    is DeLong's (1988) from the structural components; the interval is symmetric on the
    logit scale (delta method) and mapped back. When every pair is ordered (AUC 0 or 1)
    the variance is 0 and the limit on the open side is the exact one-sided bound for a
    proportion with no failures among ``min(n_in, n_out)`` trials.
    """
    x = np.asarray(s_in, dtype=float)
    y = np.asarray(s_out, dtype=float)
    m, n = x.size, y.size
    if m == 0 or n == 0:
        raise ValueError("The AUC needs at least one member score and one non-member "
                         "score.")
    r_all = _midranks(np.r_[x, y])
    rx, ry = _midranks(x), _midranks(y)
    v10 = (r_all[:m] - rx) / n             # P(x_i > Y) + ties / 2, per member
    v01 = 1.0 - (r_all[m:] - ry) / m       # P(X > y_j) + ties / 2, per non-member
    auc = float(v10.mean())
    var = (np.var(v10, ddof=1) / m if m > 1 else 0.0) + (
        np.var(v01, ddof=1) / n if n > 1 else 0.0)
    se = float(np.sqrt(max(var, 0.0)))
    alpha = 1.0 - confidence
    if 0.0 < auc < 1.0 and se > 0:
        z = _z(confidence)
        logit = np.log(auc / (1 - auc))
        half = z * se / (auc * (1 - auc))
        lo, hi = 1.0 / (1.0 + np.exp(-(logit - half))), 1.0 / (1.0 + np.exp(-(logit + half)))
        return auc, float(lo), float(hi), se
    edge = float((alpha / 2.0) ** (1.0 / min(m, n)))  # no "failure" among min(m, n)
    if auc >= 1.0:
        return auc, edge, 1.0, se
    if auc <= 0.0:
        return auc, 0.0, 1.0 - edge, se
    return auc, auc, auc, se


def balanced_accuracy_interval(k_in, n_in, k_out, n_out, confidence=0.95):
    """``(value, low, high)`` of ``(k_in / n_in + k_out / n_out) / 2`` (MOVER-Wilson).

    ``k_in`` members flagged among ``n_in``, ``k_out`` non-members *not* flagged among
    ``n_out`` (the true negatives); the two rates are independent binomials.
    """
    p1, p2 = k_in / n_in, k_out / n_out
    l1, u1 = wilson_interval(k_in, n_in, confidence)
    l2, u2 = wilson_interval(k_out, n_out, confidence)
    value = 0.5 * (p1 + p2)
    low = value - 0.5 * np.hypot(p1 - l1, p2 - l2)
    high = value + 0.5 * np.hypot(u1 - p1, u2 - p2)
    return float(value), float(max(low, 0.0)), float(min(high, 1.0))


def paired_difference(diff, confidence=0.95):
    """``(mean, low, high, p_greater)`` of paired differences ``diff`` (t interval).

    ``scipy.stats.ttest_1samp(diff, 0)``: the interval is its ``confidence_interval`` and
    ``p_greater`` the p-value of ``alternative="greater"`` ("the mean difference is above
    0"). With no spread (every difference equal, where scipy returns NaN) the interval is
    the point and the p-value 0 or 1.
    """
    d = np.asarray(diff, dtype=float)
    n = d.size
    mean = float(d.mean()) if n else float("nan")
    if n < 2:
        return mean, float("nan"), float("nan"), float("nan")
    if float(d.std(ddof=1)) == 0.0:
        return mean, mean, mean, (0.0 if mean > 0 else 1.0)
    res = stats.ttest_1samp(d, 0.0, alternative="greater")
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(confidence_level=confidence)
    return mean, float(ci.low), float(ci.high), float(res.pvalue)


def auc_p_value(s_in, s_out, alternative="greater"):
    """p-value of the AUC of ``s_in`` against ``s_out`` under exchangeable scores.

    ``scipy.stats.mannwhitneyu(s_in, s_out, method="asymptotic")``: the Mann-Whitney U
    statistic is ``AUC * m * n``; its null variance carries the tie correction (0/1 scores
    are all ties) and the continuity correction. ``alternative="greater"`` tests "members
    score higher".
    """
    x = np.asarray(s_in, dtype=float).ravel()
    y = np.asarray(s_out, dtype=float).ravel()
    if x.size == 0 or y.size == 0:
        raise ValueError("The AUC's p-value needs at least one score on each side.")
    if np.ptp(np.r_[x, y]) == 0.0:       # every score tied: no evidence either way
        return 1.0
    return float(stats.mannwhitneyu(x, y, alternative=alternative,
                                    method="asymptotic").pvalue)
