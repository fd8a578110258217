"""Tell D from D' from what a user sees: empirical advantage against the stated claim.

For each case, a fixed pair of neighbouring raw data sets ``D, D'`` (one row replaced)
and ``--releases`` fresh releases on each (``random_state=None``: OS entropy, as
published). Everything the user sees of a release is turned into numbers: every number
of the published object (its pickled state, walked into nested estimators, dicts and
small arrays, DP outputs included), whether ``fit`` failed, the warnings (count per
text), and, for the report, every number of its default page by its place in a sentence.
The adversary picks the number that best separates ``D`` from ``D'`` on a quarter of the
releases (the largest Clopper-Pearson bound there), then
:func:`sklearn_privacy.attacks.epsilon_lower_bound` chooses a threshold on a third of the
rest and bounds epsilon (one-sided Clopper-Pearson, 95%) from the counts on the other
two thirds. The empirical advantage is ``TPR - FPR`` of that test on those releases.
Under an ``(epsilon, delta)`` claim the lower bound must stay at or below ``epsilon``.

Cases (the issue's cases 1-4):

1. ``report_page`` -- a FIL logistic model (epsilon 1) and the report's default page on
   its training rows (figures not drawn: the sentences and tables only, which can only
   weaken the adversary); ``D'`` replaces one row by an outlying row with the other
   label.
2. ``balanced_weights`` -- ``FILLogisticRegression`` (epsilon 1) fitted with
   ``compute_sample_weight("balanced", y)``; ``D'`` flips one label of the smaller class.
3. ``search_selection`` -- ``RandomStoppingSearch`` over ``{"alpha": [0.01, 1.0]}`` of a
   FIL logistic candidate (``sigma=10``, one run, ``validation_fraction=0.02``) with the
   smallest ``max_iter`` under which ``alpha=0.01`` certifies on ``D``, and a ``D'``
   (one row duplicated) on which it does not (the pair is found by trying seeds: the
   adversary chooses the pair).
4. ``schema_index`` -- the documented ``PublicSchema -> make_encoder() ->
   DPLogisticRegression`` pipeline; ``D'`` replaces one row by another row's values
   under a new index label (4a), or appends a row with an existing label in place of
   the last one, as ``pd.concat`` without ``ignore_index`` does (4b, with Gaussian output
   perturbation, ``FILLogisticRegression`` at epsilon 1).

Run: ``python benchmarks/bench_distinguishers.py [--releases 200] [--cases 1,2,3,4]``
(about ten minutes on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import re
import time
import warnings
from collections import Counter
from unittest import mock

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.class_weight import compute_sample_weight

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.attacks import epsilon_lower_bound
from sklearn_privacy.linear_model import DPLogisticRegression
from sklearn_privacy.model_selection import RandomStoppingSearch
from sklearn_privacy.preprocessing import PublicSchema
from sklearn_privacy.privacy._attributes import _published_state
from sklearn_privacy.privacy._invariance import _page_lines
from sklearn_privacy.report import PrivacyReport

JOBS = ["clerk", "nurse", "welder"]
SCHEMA = {"age": (17, 90), "hours": (1, 99), "job": JOBS, "grade": [1, 2, 3]}
_ABSENT = -1e12                     # a number that a release does not show


# ---------------------------------------------------------------- what a user sees
def _numbers(value, name, out, depth=0):
    """Every number held in ``value`` (estimators by their pickled state)."""
    if depth > 8:
        return
    if isinstance(value, BaseEstimator):
        for k, v in _published_state(value).items():
            _numbers(v, f"{name}.{k}", out, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _numbers(v, f"{name}[{k!r}]", out, depth + 1)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value[:50]):
            _numbers(v, f"{name}[{i}]", out, depth + 1)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.size <= 50:
        for i, v in enumerate(value.ravel()):
            out[f"{name}[{i}]"] = float(v)
    elif isinstance(value, bool | np.bool_ | int | float | np.integer | np.floating):
        out[name] = float(value)


def _observe(fit, page=None):
    """The numbers a user sees of one fresh release."""
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fitted = fit()
            out["fit failed"] = 0.0
        except Exception:  # noqa: BLE001 - a failure is what the user sees
            fitted = None
            out["fit failed"] = 1.0
    for text, count in Counter(str(w.message) for w in caught).items():
        out[f"warning {text[:60]!r}"] = float(count)
    if fitted is not None:
        _numbers(fitted, "release", out)
        if page is not None:
            for i, (template, numbers) in enumerate(_page_lines(page(fitted))):
                for k, v in enumerate(numbers):
                    out[f"page {template[:50]!r}#{i}.{k}"] = float(v)
    return out


def _distinguish(obs_d, obs_d2, delta, seed):
    """The best single number on a quarter of the releases, bounded on the rest."""
    rng = np.random.default_rng(seed)
    keys = sorted(set().union(*obs_d, *obs_d2), key=str)
    F = np.array([[o.get(k, _ABSENT) for k in keys] for o in obs_d + obs_d2])
    members = np.r_[np.zeros(len(obs_d), bool), np.ones(len(obs_d2), bool)]
    pick = np.zeros(len(members), bool)
    for side in (False, True):
        idx = np.flatnonzero(members == side)
        pick[rng.choice(idx, len(idx) // 4, replace=False)] = True
    best, best_gap, best_key = 0, -1.0, None
    for c in range(F.shape[1]):
        gap = _separation(F[pick, c], members[pick])
        if gap > best_gap:
            best, best_gap, best_key = c, gap, keys[c]
    rest = ~pick
    res = epsilon_lower_bound(members=members[rest], scores=F[rest, best], delta=delta,
                              known_fraction=1 / 3, random_state=seed)
    tpr = res.true_positives / res.n_positive
    fpr = res.false_positives / res.n_negative
    auc = roc_auc_score(members[pick], F[pick, best]) if np.ptp(F[pick, best]) else 0.5
    return best_key, max(auc, 1 - auc), tpr - fpr, res.epsilon_lower_bound


def _separation(col, members):
    """How well a threshold test on ``col`` separates the sides: the Clopper-Pearson
    epsilon bound on these releases (small counts in a tail do not win by chance), then
    ``|AUC - 1/2|`` to break ties."""
    if np.all(col == col[0]):
        return 0.0
    bound = epsilon_lower_bound(members=members, scores=col, random_state=0)
    return bound.epsilon_lower_bound + abs(roc_auc_score(members, col) - 0.5) / 10


# ---------------------------------------------------------------------- the cases
def _normalised(rng, n, d=3):
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _no_figures():
    return mock.patch("sklearn_privacy.report._report._have_matplotlib", lambda: False)


def case_report_page(rng):
    X, y = _normalised(rng, 200)
    Xp, yp = _normalised(rng, 200)
    X2, y2 = X.copy(), y.copy()
    X2[0] = -X[0] * 0 + np.array([0.0, 0.0, 1.0])          # an outlying direction
    y2[0] = 1 - y[0]
    model = FILLogisticRegression(epsilon=1.0, delta=1e-5, data_norm=1.0, alpha=0.1,
                                  fit_intercept=False, classes=[0, 1])

    def page(Xt, yt):
        def render(fitted):
            with _no_figures():
                return PrivacyReport.from_estimator(
                    fitted, Xt, yt, Xp, yp, n_canaries=0, canary_releases=0).to_html()
        return render
    return model, (X, y), (X2, y2), {}, page


def case_balanced_weights(rng):
    X, y = _normalised(rng, 200)
    y = (X[:, 0] > 0.55).astype(int)                         # a small class 1
    X2, y2 = X.copy(), y.copy()
    j = int(np.flatnonzero(y == 1)[0])
    y2[j] = 0
    model = FILLogisticRegression(epsilon=1.0, delta=1e-5, data_norm=1.0, alpha=0.1,
                                  fit_intercept=False, classes=[0, 1])
    rule = {"sample_weight": lambda X, y: compute_sample_weight("balanced", y)}
    return model, (X, y), (X2, y2), rule, None


def case_search_selection(rng):
    grid = {"alpha": [0.01, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(200):
            X, y = _normalised(np.random.default_rng(seed), 200)
            for k in range(3, 16):
                cand = FILLogisticRegression(sigma=10.0, fit_intercept=False,
                                             data_norm=1.0, classes=[0, 1], alpha=0.01,
                                             max_iter=k)
                if not np.isfinite(clone(cand).fit(X, y).certified_distance_):
                    continue
                for j in range(20):
                    X2, y2 = X.copy(), y.copy()
                    X2[j], y2[j] = X[j + 1], y[j + 1]
                    if not np.isfinite(clone(cand).fit(X2, y2).certified_distance_):
                        search = RandomStoppingSearch(
                            cand.set_params(alpha=1.0), grid, mean_runs=1.0,
                            score_epsilon=0.1, validation_fraction=0.02)
                        return search, (X, y), (X2, y2), {}, None
                break          # the smallest cap that certifies on D: try another D
    raise RuntimeError("no pair found")


def _raw_frame(rng, n):
    return pd.DataFrame({"age": rng.integers(17, 91, n),
                         "hours": rng.uniform(1, 99, n).round(1),
                         "job": rng.choice(JOBS, n),
                         "grade": rng.integers(1, 4, n)})


def _schema_model(output_perturbation=False):
    schema = PublicSchema(SCHEMA, classes=["no", "yes"])
    final = (FILLogisticRegression(epsilon=1.0, delta=1e-5, alpha=0.1, fit_intercept=False,
                                   data_norm=schema.data_norm, classes=schema.classes)
             if output_perturbation else
             DPLogisticRegression(epsilon=1.0, delta=0.0, data_norm=schema.data_norm,
                                  classes=schema.classes))
    return make_pipeline(schema, schema.make_encoder(), final)


def case_schema_new_label(rng):
    X = _raw_frame(rng, 150)
    y = np.where(X["hours"] > 40, "yes", "no")
    X2, y2 = X.copy(), y.copy()
    X2.iloc[0] = X.iloc[1]
    y2[0] = y[1]
    X2.index = [10 ** 6, *X.index[1:]]                      # a new label
    return _schema_model(), (X, y), (X2, y2), {}, None


def case_schema_concat(rng):
    X = _raw_frame(rng, 150)
    y = np.where(X["hours"] > 40, "yes", "no")
    extra = pd.DataFrame({"age": [90], "hours": [99.0], "job": ["welder"], "grade": [3]},
                         index=[0])                          # label 0 again
    X2 = pd.concat([X.iloc[:-1], extra])                     # without ignore_index
    y2 = np.append(y[:-1], "no")
    X1 = pd.concat([X.iloc[:-1], extra.set_axis([149])])     # the same row, label 149
    return _schema_model(output_perturbation=True), (X1, y2), (X2, y2), {}, None


CASES = {"1": ("report page", case_report_page),
         "2": ("balanced sample_weight", case_balanced_weights),
         "3": ("RandomStoppingSearch selection", case_search_selection),
         "4a": ("schema: a new index label", case_schema_new_label),
         "4b": ("schema: a duplicated index label (concat)", case_schema_concat)}


def run(key, releases, seed=0):
    title, make = CASES[key]
    rng = np.random.default_rng(seed)
    model, (X, y), (X2, y2), rules, page = make(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = clone(model).fit(X, y, **{k: r(X, y) for k, r in rules.items()})
    claim = privacy_claim(ref)
    t = time.perf_counter()
    sides = []
    for Xs, ys in ((X, y), (X2, y2)):
        params = {k: r(Xs, ys) for k, r in rules.items()}
        render = page(Xs, ys) if page is not None else None
        sides.append([_observe(lambda Xs=Xs, ys=ys, params=params:
                               clone(model).fit(Xs, ys, **params), render)
                      for _ in range(releases)])
    key_, auc, advantage, bound = _distinguish(*sides, claim.delta, seed)
    return dict(case=f"{key} {title}", claim=claim.epsilon, delta=claim.delta,
                releases=releases, feature=key_, auc=auc, advantage=advantage,
                bound=bound, seconds=time.perf_counter() - t)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    print("| case | claim (epsilon, delta) | releases per side | number used | AUC on "
          "the selection quarter (either way) | empirical advantage | epsilon lower bound (95%) | "
          "within the claim | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in args.cases.split(","):
        r = run(key, args.releases)
        within = "yes" if r["bound"] <= r["claim"] else "**no**"
        print(f"| {r['case']} | ({r['claim']:.3g}, {r['delta']:.0e}) | {r['releases']} | "
              f"{re.sub(r'[|]', '/', str(r['feature']))[:70]} | {r['auc']:.2f} | "
              f"{r['advantage']:.2f} | {r['bound']:.2f} | {within} | {r['seconds']:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
