"""RMIA against LiRA with the same few reference models, on the bundled MNIST-5k.

Population: the 5,000 bundled MNIST digits on their first ``--components`` principal
components; the target is a multinomial logistic regression with almost no penalty
(``C = --C``) trained on a random half (it interpolates its training digits). LiRA and
RMIA run with the same ``random_state``, so they train the *same* reference models (one
fitting routine: identical training halves and seeds, checked below). Every attack
scores all 5,000 rows; AUC and TPR at 1% FPR are read on the evaluation half (the
threshold-choosing half is the same for all attacks of one seed). Repeated over
``--seeds`` seeds (different reference halves and splits, same target).

Rows: LiRA online / offline with a pooled variance (Carlini et al.'s recommendation below
64 shadows; per-example variances need 4 models and are shown at 4), RMIA online and
offline (``a`` from ``--offline-a``), plus the best threshold attack (no reference model).

Run: ``python benchmarks/bench_rmia.py`` (``--quick``: 2 seeds, PCA 30).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression

from sklearn_privacy.attacks import lira, membership_inference, rmia
from sklearn_privacy.datasets import load_mnist


def _row(name, runs):
    auc = np.array([r.auc for r in runs])
    tpr = np.array([r.tpr_at_fpr[0.01] for r in runs])
    return f"| {name} | {auc.mean():.3f} ± {auc.std():.3f} | {tpr.mean():.3f} ± {tpr.std():.3f} |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--components", type=int, default=100)
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--offline-a", type=float, default=0.33)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.components = 2, 30
    warnings.simplefilter("ignore")  # lbfgs convergence notes of the interpolating fits
    d = load_mnist()
    X = PCA(args.components, random_state=0).fit_transform(d.data)
    y = d.target
    n = len(y)
    rng = np.random.RandomState(0)
    members = np.zeros(n, bool)
    members[rng.permutation(n)[: n // 2]] = True
    est = LogisticRegression(C=args.C, max_iter=1000)
    t0 = time.perf_counter()
    target = est.fit(X[members], y[members])
    fit_s = time.perf_counter() - t0
    print(f"# MNIST-5k, PCA {args.components}, LogisticRegression(C={args.C}); "
          f"train acc {target.score(X[members], y[members]):.3f}, "
          f"test acc {target.score(X[~members], y[~members]):.3f}, one fit {fit_s:.1f} s; "
          f"{platform.processor() or platform.machine()}, {args.seeds} seeds")
    thr = max((membership_inference(target, X, y, members, attack=a, random_state=0)
               for a in ("confidence", "loss", "modified_entropy")),
              key=lambda r: r.auc)
    print(f"best threshold attack ({thr.attack}): AUC {thr.auc:.3f}, "
          f"TPR@1%FPR {thr.tpr_at_fpr[0.01]:.3f}")
    for k in (2, 4):
        rows = {}
        t0 = time.perf_counter()
        for s in range(args.seeds):
            common = dict(random_state=100 + s, n_jobs=args.n_jobs)
            runs = {
                "LiRA online (pooled var)": lira(target, X, y, members, n_reference_models=k,
                                                 global_variance=True, **common),
                "LiRA offline (pooled var)": lira(target, X, y, members, n_reference_models=k,
                                                  online=False, global_variance=True,
                                                  **common),
                "RMIA online": rmia(target, X, y, members, n_reference_models=k,
                                    gamma=args.gamma, **common),
                f"RMIA offline (a = {args.offline_a})": rmia(
                    target, X, y, members, n_reference_models=k, online=False,
                    offline_a=args.offline_a, gamma=args.gamma, **common),
            }
            if k >= 4:
                runs["LiRA online (per-example var)"] = lira(target, X, y, members,
                                                             n_reference_models=k, **common)
            ref = runs["RMIA online"]
            for r in runs.values():   # one fitting routine: the same reference models
                assert np.array_equal(r.shadow_in, ref.shadow_in)
            for name, r in runs.items():
                rows.setdefault(name, []).append(r)
        print(f"\n{k} reference models ({time.perf_counter() - t0:.0f} s for all rows)\n")
        print("| attack | AUC (mean ± sd over seeds) | TPR at 1% FPR |")
        print("|---|---|---|")
        for name, runs in rows.items():
            print(_row(name, runs))


if __name__ == "__main__":
    main()
