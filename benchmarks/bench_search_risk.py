"""Random-stopping selection in the currency of attacks, and audits against the bound.

1. The selection's curve from its privacy profile against the curve of its reported
   (epsilon, delta) pair: TPR bound at FPR 1 % for a few searches.
2. Planning from a risk target: the candidate epsilon found and the stated TPR.
3. Audit points against the proven curve: how often an honest mechanism is flagged
   (should be at most 5 %) and how often a tenfold noise cut is (should be 100 %), for
   the canary audit's point at FPR 1 %, the one-run audit's point, and the display's own
   check (before: bootstrap band; now: exact at the legend's levels).

Run: PYTHONPATH=. python benchmarks/bench_search_risk.py
"""

from __future__ import annotations

import time
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_privacy import DPLogisticRegression, FILLogisticRegression  # noqa: E402
from sklearn_privacy.attacks import MembershipROCDisplay, one_run_audit_scores  # noqa: E402
from sklearn_privacy.model_selection import RandomStoppingSearch  # noqa: E402
from sklearn_privacy.model_selection._accounting import (  # noqa: E402
    selection_bound,
    selection_profile,
)
from sklearn_privacy.privacy import RiskTarget, TradeoffCurve  # noqa: E402
from sklearn_privacy.privacy._tradeoff import empirical_point, refutes  # noqa: E402


def curves():
    print("| search | (epsilon_, delta_) | TPR@1% of the pair | TPR@1% of the profile |")
    print("|---|---|---|---|")
    for runs, score, mu, pure, dist in [(10, 0.1, 0.5, 0.0, "geometric"),
                                         (10, 0.1, 0.0, 0.5, "geometric"),
                                         (10, 0.1, 0.0, 0.5, "logarithmic"),
                                         (5, 0.05, 0.3, 0.0, "geometric"),
                                         (1, 0.05, 1.0, 0.0, "geometric")]:
        eps, is_pure = selection_bound(runs, score, mu, pure, 1e-5, dist)
        delta = 0.0 if is_pure else 1e-5
        e, d = selection_profile(runs, score, mu, pure, dist)
        c = TradeoffCurve.from_profile(e, d, claim=(eps, delta))
        pair = TradeoffCurve.epsilon_delta(eps, delta)
        what = (f"E[K]={runs} {dist}, score eps {score}, "
                + (f"Gaussian mu {mu}" if mu else f"pure eps {pure}"))
        print(f"| {what} | ({eps:.3g}, {delta:.0e}) | {float(pair.max_tpr(0.01)):.4f} | "
              f"{float(c.max_tpr(0.01)):.4f} |")


def planning():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
    print("\n| candidate | risk | planned epsilon | stated TPR@FPR | fit s |")
    print("|---|---|---|---|---|")
    for base in [FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                       classes=[0, 1]),
                 DPLogisticRegression(epsilon=1.0, delta=0.0, data_norm=1.0,
                                      classes=[0, 1])]:
        for target in (RiskTarget(tpr=0.05, fpr=0.01), RiskTarget(tpr=0.1, fpr=0.01)):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = RandomStoppingSearch(base, {"alpha": [0.01, 0.1]}, mean_runs=5,
                                         score_epsilon=0.05, risk=target).fit(X, y)
            dt = time.perf_counter() - t
            print(f"| {type(base).__name__} | {target} | {s.planned_epsilon_:.4g} | "
                  f"{float(s.tradeoff_.max_tpr(target.fpr)):.4f} | {dt:.2f} |")


def audits(n_seeds=200):
    mu = 1.0
    curve = TradeoffCurve.gaussian(mu)
    counts = {}
    for seed in range(n_seeds):
        g = np.random.default_rng(seed)
        for factor in (1.0, 0.1):
            # canary audit: 300 releases a side of a mu-GDP statistic (noise cut: 10 mu)
            m_true = mu / factor
            s_in = m_true + g.standard_normal(300)
            s_out = g.standard_normal(300)
            p = empirical_point(s_in, s_out, fpr=0.01)
            counts.setdefault(("canary point", factor), []).append(refutes(curve, p))
            # one-run audit: 2000 canaries, top quarter guessed "included"
            members = g.random(2000) < 0.5
            scores = m_true * members + g.standard_normal(2000)
            res = one_run_audit_scores(members, scores, k_plus=500, k_minus=0,
                                       random_state=0)
            q = res.roc_point()
            counts.setdefault(("one-run point", factor), []).append(
                q["tpr_low"] > float(curve.max_tpr(q["fpr_high"])))
            # the display's own check on the one-run scores: exact (now) vs band (before)
            disp = MembershipROCDisplay.from_predictions(members.astype(int), scores,
                                                         random_state=seed,
                                                         n_resamples=200)
            disp.plot_bound(curve)
            counts.setdefault(("display, exact at levels", factor), []).append(
                disp.refuted_)
            del disp._scores
            disp.plot_bound(curve)
            counts.setdefault(("display, bootstrap band (before)", factor), []).append(
                disp.refuted_)
            plt.close("all")
    print(f"\n| check ({n_seeds} seeds, claim 1-GDP) | flagged, honest | flagged, "
          "tenfold cut |")
    print("|---|---|---|")
    for name in ("canary point", "one-run point", "display, exact at levels",
                 "display, bootstrap band (before)"):
        print(f"| {name} | {sum(counts[(name, 1.0)])}/{n_seeds} | "
              f"{sum(counts[(name, 0.1)])}/{n_seeds} |")


if __name__ == "__main__":
    curves()
    planning()
    audits()
