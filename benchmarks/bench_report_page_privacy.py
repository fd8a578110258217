"""The report's default page as a release: a null experiment and a D-vs-D' distinguisher.

1. Null experiment. Members that the model never saw (the "training rows" handed to the
   report are fresh rows of the same distribution), ``R`` reports with a sensitive
   column of four groups, on a model that stores no row (logistic regression) and two
   that store training rows (an SVC pipeline, 1-NN): the rate of pages with any finding
   (membership leaks or below chance, training rows read back from the pickle or stored
   in the model) must stay at most the page's stated false-alarm level
   (``ReleasePolicy().false_alarm``: Holm's procedure over every finding of the page,
   p-values that include the page's noise).
2. Distinguisher. One published DP model (epsilon 1) fixed; D and D' differ in one
   training row, chosen to move every accounted figure by its full sensitivity (the row
   with the highest rank in one group replaced by a row with the lowest score of another
   group). ``N`` fresh default pages on each side (fresh OS noise), each read by the
   likelihood-ratio test an adversary who knows D and D' would use on the numbers the
   page prints. Its empirical advantage (TPR - FPR) must stay within what the page's
   claim allows: for an epsilon-DP page, (e^eps - 1) / (e^eps + 1).

Run: ``python benchmarks/bench_report_page_privacy.py [n_null] [n_pages]``.
"""

from __future__ import annotations

import re
import sys
import time
import warnings

import numpy as np
from scipy import stats


def _rows(n, rng):
    X = 0.3 * rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 4, size=n) / 3.0
    X /= 2.0
    y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
    return X, y


#: the findings of the null experiment: what a false alarm of the page would say
NULL_FINDINGS = ("leaks", "below_chance", "verbatim")
#: models of the null experiment: one that stores no row, and two that store training rows
#: (every structural stored-rows check and the release's count then run)
NULL_MODELS = ("logistic", "svc", "1nn")


def _null_model(kind):
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return {"logistic": LogisticRegression(C=100.0),
            "svc": make_pipeline(StandardScaler(), SVC(C=10.0)),
            "1nn": KNeighborsClassifier(1)}[kind]


def null_experiment(n_reports=100, n=300, confidence=0.95, seed=0, models=NULL_MODELS):
    """Share of default pages with any finding (membership leaks or below chance, rows read
    back from the pickle, rows stored in the model) when nobody is a member: the model is
    trained on rows A, the report is handed fresh rows B as its "training rows" and C as
    population. Models cycle through ``models``; the page's stated level is
    ``ReleasePolicy().false_alarm`` (Holm over every finding of the page)."""
    from sklearn_privacy.report import PrivacyReport, ReleasePolicy

    hits, rejects, support, per = 0, 0, 0, {m: 0 for m in models}
    t = time.perf_counter()
    for r in range(n_reports):
        rng = np.random.default_rng(seed + r)
        X, y = _rows(3 * n, rng)
        kind = models[r % len(models)]
        model = _null_model(kind).fit(X[:n], y[:n])     # trained on A only
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = PrivacyReport.from_estimator(
                model, X[n:2 * n], y[n:2 * n], X[2 * n:], y[2 * n:],
                sensitive_features=[3], n_canaries=0, canary_releases=0,
                confidence=confidence, random_state=r, min_group_size=20)
        found = any(o in NULL_FINDINGS for s in rep.sections for o in s.outcomes) or any(
            c["name"] == "stored_rows" and c.get("found") for c in rep.structural)
        hits += found
        per[kind] += found
        rejects += rep.recommendation["decision"] == "reject"
        support += rep.recommendation["decision"] == "support_rejection"
    rate = hits / n_reports
    lo, hi = stats.beta.ppf([0.025, 0.975], [hits, hits + 1], [n_reports - hits + 1,
                                                              n_reports - hits])
    return dict(reports=n_reports, findings=hits, leaks=hits, rate=rate,
                interval=(float(np.nan_to_num(lo)), float(np.nan_to_num(hi, nan=1.0))),
                level=getattr(ReleasePolicy(), "false_alarm", round(1 - confidence, 12)),
                per_model=per, reject=rejects,
                support_rejection=support, seconds=round(time.perf_counter() - t, 1))


_AUC = re.compile(r"threshold attack \(\w+\) AUC[^<]*</td><td>(\d\.\d+) ")
_GROUP = re.compile(r"AUC where &#x27;3&#x27; = ([\d.]+)</td><td>(\d\.\d+) \[[^\]]*\] "
                    r"\(about (-?[\d,]+) members")


def _read(page, levels):
    """The numbers an adversary reads off a default page: overall AUC, per group
    (noisy member count, AUC) or None when the group is not shown."""
    auc = float(_AUC.search(page).group(1))
    groups = {m.group(1): (float(m.group(3).replace(",", "")), float(m.group(2)))
              for m in _GROUP.finditer(page)}
    return auc, [groups.get(lev) for lev in levels]


def distinguisher(n_pages=200, n=300, epsilon_model=1.0, page_epsilon=1.0, seed=0):
    """Empirical advantage of the likelihood-ratio test on fresh default pages."""
    from sklearn_privacy import FILLogisticRegression
    from sklearn_privacy.report import PrivacyReport
    from sklearn_privacy.report._membership import _ranks, _scores

    rng = np.random.default_rng(seed)
    X, y = _rows(2 * n, rng)
    Xp, yp = X[n:], y[n:]
    X, y = X[:n], y[:n]
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.05, sigma=1.0,
                                classes=[0, 1])
    est.set_params(sigma=est.fit(X, y).sigma_for_epsilon(epsilon_model)).fit(X, y)
    # the neighbour: the highest-ranked member of group 0 replaced by the population row
    # with the lowest score in group 3 (the rank sum moves by almost 1, the row changes group)
    idx = np.arange(n)
    s_in, _ = _scores(est, X, y, idx)
    s_out, _ = _scores(est, Xp, yp, idx)
    u = _ranks(s_in, s_out)
    g_in, g_out = X[:, 3], Xp[:, 3]
    first, last = np.unique(g_out)[[0, -1]]
    i = int(np.argmax(np.where(g_in == first, u, -1)))
    j = int(np.argmin(np.where(g_out == last, s_out, np.inf)))
    X2, y2 = X.copy(), y.copy()
    X2[i], y2[i] = Xp[j], yp[j]
    levels = [str(v) for v in np.unique(g_out)]

    def exact(Xd, yd):
        s, _ = _scores(est, Xd, yd, idx)
        total = _ranks(s, s_out).sum()
        out = []
        for lev in np.unique(g_out):
            a, b = s[Xd[:, 3] == lev], s_out[g_out == lev]
            out.append((float(a.size), float(_ranks(a, b).sum())))
        return total, out

    ex_d, ex_d2 = exact(X, y), exact(X2, y2)

    def pages(Xd, yd):
        out = []
        for _ in range(n_pages):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = PrivacyReport.from_estimator(
                    est, Xd, yd, Xp, yp, sensitive_features=[3], n_canaries=0,
                    canary_releases=0, random_state=0, page_epsilon=page_epsilon)
            out.append(_read(rep.default_page(dated=False), levels))
        return out, rep

    t = time.perf_counter()
    on_d, rep = pages(X, y)
    on_d2, _ = pages(X2, y2)
    seconds = time.perf_counter() - t
    eps_q = rep.summary["page_queries"][1][2]          # epsilon of one query
    scale_sum, scale_vec = 1.0 / eps_q, 2.0 / eps_q

    def llr(page):
        """log p(page | D) - log p(page | D') from the printed numbers (Laplace)."""
        auc, groups = page
        val = 0.0
        v = auc * n
        val += (abs(v - ex_d2[0]) - abs(v - ex_d[0])) / scale_sum
        for g, (ka, sa), (kb, sb) in zip(groups, ex_d[1], ex_d2[1], strict=True):
            if g is None:
                continue
            k_noisy, auc_g = g
            val += (abs(k_noisy - kb) - abs(k_noisy - ka)) / scale_vec
            s_noisy = auc_g * k_noisy
            val += (abs(s_noisy - sb) - abs(s_noisy - sa)) / scale_vec
        return val

    a = np.array([llr(p) for p in on_d])
    b = np.array([llr(p) for p in on_d2])
    tpr, fpr = float(np.mean(a > 0)), float(np.mean(b > 0))
    adv = tpr - fpr
    se = np.sqrt(tpr * (1 - tpr) / n_pages + fpr * (1 - fpr) / n_pages)
    allowed_page = (np.exp(page_epsilon) - 1) / (np.exp(page_epsilon) + 1)
    total = rep.summary["total_epsilon"]
    allowed_total = (np.exp(total) - 1) / (np.exp(total) + 1)
    return dict(pages_per_side=n_pages, tpr=tpr, fpr=fpr, advantage=adv,
                advantage_upper_95=adv + 1.96 * se, allowed_by_page_claim=allowed_page,
                allowed_by_total_claim=allowed_total, page_epsilon=page_epsilon,
                total_epsilon=total, seconds=seconds,
                exact_changes=(ex_d[0] - ex_d2[0],
                               [(p[0] - q[0], p[1] - q[1]) for p, q in zip(ex_d[1],
                                                                          ex_d2[1],
                                                                          strict=True)]))


if __name__ == "__main__":
    n_null = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    n_pages = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    t = time.perf_counter()
    print("null experiment:", null_experiment(n_null),
          f"({time.perf_counter() - t:.0f} s)")
    print("distinguisher:", distinguisher(n_pages))
