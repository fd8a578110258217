"""Tell D from D' when D' holds a label outside the declared classes.

For each DP classifier that takes ``classes=``, a fixed pair of neighbouring data sets:
``D``, and ``D'`` with one row replaced by an outlying row (a new direction, far from the
others) whose label is outside the declared classes. ``--releases`` fresh releases on
each side (``random_state=None``: OS entropy, as published); everything a user sees of a
release is turned into numbers (every number of the pickled object, whether ``fit``
failed, the warnings) by ``bench_distinguishers.py``'s observer, and its adversary picks
the number that best separates the sides on a quarter of the releases, then bounds
epsilon (one-sided Clopper-Pearson, 95%) on the rest. Under a pure ``epsilon`` claim the
advantage ``TPR - FPR`` of any test is at most ``(e^eps - 1) / (e^eps + 1)``, and under
``(epsilon, delta)`` at most that plus ``2 delta / (1 + e^eps)``.

Run: ``PYTHONPATH=$PWD python benchmarks/bench_distinguish_labels.py [--releases 200]``
(about five minutes on a shared 2-core machine). On the code before the rule, ``fit``
raised on ``D'``: the advantage was 1.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
from sklearn.base import clone

sys.path.insert(0, os.path.dirname(__file__))
from bench_distinguishers import _distinguish, _observe  # noqa: E402

from sklearn_privacy import FILLogisticRegression, privacy_claim  # noqa: E402
from sklearn_privacy.additive import DPBoostingClassifier  # noqa: E402
from sklearn_privacy.dummy import DPDummyClassifier  # noqa: E402
from sklearn_privacy.linear_model import DPLogisticRegression  # noqa: E402

CLASSES = ["no", "yes"]
MODELS = {
    "DPLogisticRegression (pure)": lambda: DPLogisticRegression(
        epsilon=1.0, delta=0.0, data_norm=1.5, classes=CLASSES),
    "DPLogisticRegression (Gaussian)": lambda: DPLogisticRegression(
        epsilon=1.0, delta=1e-5, data_norm=1.5, classes=CLASSES),
    "FILLogisticRegression (epsilon)": lambda: FILLogisticRegression(
        epsilon=1.0, delta=1e-5, alpha=0.1, fit_intercept=False, data_norm=1.0,
        classes=CLASSES),
    "DPBoostingClassifier": lambda: DPBoostingClassifier(
        epsilon=1.0, delta=0.0, bounds=(-1, 1), max_bins=4, classes=CLASSES),
    "DPDummyClassifier": lambda: DPDummyClassifier(epsilon=1.0, classes=CLASSES),
}


def _pair(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, "yes", "no").astype(object)
    X2, y2 = X.copy(), y.copy()
    X2[0] = [0.0, 0.0, 1.0]                       # an outlying direction
    y2[0] = "maybe"                               # outside the declared classes
    return (X, y), (X2, y2)


def _allowed(epsilon, delta):
    return (math.expm1(epsilon) + 2 * delta) / (math.exp(epsilon) + 1)


def run(name, releases, seed=0):
    (X, y), (X2, y2) = _pair(seed)
    make = MODELS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        claim = privacy_claim(clone(make()).fit(X, y))
    t = time.perf_counter()
    sides = [[_observe(lambda Xs=Xs, ys=ys: make().fit(Xs, ys)) for _ in range(releases)]
             for Xs, ys in ((X, y), (X2, y2))]
    failed = [sum(o["fit failed"] for o in side) for side in sides]
    key, auc, advantage, bound = _distinguish(*sides, claim.delta, seed)
    return dict(name=name, claim=claim.epsilon, delta=claim.delta, failed=failed,
                feature=key, auc=auc, advantage=advantage, bound=bound,
                allowed=_allowed(claim.epsilon, claim.delta),
                seconds=time.perf_counter() - t)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    print("| estimator | claim (epsilon, delta) | releases per side | fits failed (D, D') "
          "| number used | empirical advantage | allowed by the claim | epsilon lower bound "
          "(95%) | within | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        r = run(name, args.releases)
        within = "yes" if r["bound"] <= r["claim"] and r["advantage"] <= r["allowed"] \
            else "**no**"
        print(f"| {r['name']} | ({r['claim']:.3g}, {r['delta']:.0e}) | {args.releases} | "
              f"{r['failed'][0]:.0f}, {r['failed'][1]:.0f} | {str(r['feature'])[:60]} | "
              f"{r['advantage']:.3f} | {r['allowed']:.3f} | {r['bound']:.2f} | {within} | "
              f"{r['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
