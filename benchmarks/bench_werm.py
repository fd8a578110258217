"""WERMClassifier overhead: fit time against the inner estimator fitted with the same weights.

For each inner estimator and data set, ``WERMClassifier(est, w=0.3).fit(X, y,
sample_group=g)`` is timed against ``clone(est).fit(X, y, sample_weight=W)`` with the
per-row weights WERM computes (identical models). Best of ``--repeat`` runs each,
interleaved.

Run: ``python benchmarks/bench_werm.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from sklearn_privacy import WERMClassifier
from sklearn_privacy.datasets import load_adult, load_mnist


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    adult, mnist = load_adult(), load_mnist()
    cases = [
        ("Adult 30,162 x 104", adult.data, adult.target, LogisticRegression(max_iter=500)),
        ("Adult 30,162 x 104", adult.data, adult.target,
         MLPClassifier((64,), max_iter=20, random_state=0)),
        ("MNIST 5,000 x 784", mnist.data, mnist.target, LogisticRegression(max_iter=200)),
        ("MNIST 5,000 x 784", mnist.data, mnist.target,
         MLPClassifier((128,), max_iter=20, random_state=0)),
    ]
    print("| data | inner estimator | inner fit s | WERM fit s | ratio | same coefficients |")
    print("|---|---|---|---|---|---|")
    for data, X, y, est in cases:
        g = np.random.RandomState(0).randint(0, 2, size=len(y))
        werm = WERMClassifier(est, w=0.3)
        t_inner, t_werm = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            werm.fit(X, y, sample_group=g)
            W = werm.sample_weight_
            for _ in range(args.repeat):
                t = time.perf_counter()
                inner = clone(est).fit(X, y, sample_weight=W)
                t_inner.append(time.perf_counter() - t)
                t = time.perf_counter()
                werm.fit(X, y, sample_group=g)
                t_werm.append(time.perf_counter() - t)
        a = inner.coef_ if hasattr(inner, "coef_") else inner.coefs_[0]
        b = werm.estimator_.coef_ if hasattr(inner, "coef_") else werm.estimator_.coefs_[0]
        print(f"| {data} | {type(est).__name__} | {min(t_inner):.3f} | {min(t_werm):.3f} | "
              f"{min(t_werm) / min(t_inner):.3f} | {np.array_equal(a, b)} |", flush=True)


if __name__ == "__main__":
    main()
