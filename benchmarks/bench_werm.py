"""WERMClassifier overhead: fit time against the inner estimator fitted with the same weights.

For each inner estimator, data set and reference weight ``w``,
``WERMClassifier(est, w).fit(X, y, data_source=g)`` (``g`` a random half of the rows) is
timed against ``clone(est).fit(X[keep], y[keep], sample_weight=W[keep])`` with the per-row
weights ``W`` WERM computes and the rows it keeps (all rows for ``0 < w < 1``, the training
rows for ``w = 0``; the baseline gets them already extracted, or the very arrays WERM
receives when every row is kept). The two models must be identical. Best of ``--repeat``
runs each, interleaved. The last column times WERM around
an inner estimator whose ``fit`` does nothing: the wrapper's own cost (validation, weights,
row selection), which does not depend on the load of a shared machine.

Run: ``python benchmarks/bench_werm.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from sklearn_privacy import WERMClassifier
from sklearn_privacy.datasets import load_adult, load_mnist


class _NoFit(ClassifierMixin, BaseEstimator):
    """Inner estimator whose fit only records the classes: isolates WERM's own cost."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    adult, mnist = load_adult(), load_mnist()
    cases = [
        ("Adult 30,162 x 104", adult.data, adult.target, LogisticRegression(max_iter=500), 0.3),
        ("Adult 30,162 x 104", adult.data, adult.target, LogisticRegression(max_iter=500), 0.0),
        ("Adult 30,162 x 104", adult.data, adult.target,
         MLPClassifier((64,), max_iter=20, random_state=0), 0.3),
        ("MNIST 5,000 x 784", mnist.data, mnist.target, LogisticRegression(max_iter=200), 0.3),
        ("MNIST 5,000 x 784", mnist.data, mnist.target,
         MLPClassifier((128,), max_iter=20, random_state=0), 0.3),
        ("MNIST 5,000 x 784", mnist.data, mnist.target,
         MLPClassifier((128,), max_iter=20, random_state=0), 0.0),
    ]
    print("| data | inner estimator | w | rows fitted | inner fit s | WERM fit s | ratio "
          "| same coefficients | WERM own cost s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data, X, y, est, w in cases:
        g = np.random.RandomState(0).randint(0, 2, size=len(y))
        werm = WERMClassifier(est, w=w)
        t_inner, t_werm, t_own = [], [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            werm.fit(X, y, data_source=g)
            keep = werm.sample_weight_ > 0
            if keep.all():  # the very arrays WERM receives (no copy, same memory layout)
                Xk, yk, Wk = X, y, werm.sample_weight_
            else:
                Xk, yk, Wk = X[keep], y[keep], werm.sample_weight_[keep]
            for _ in range(args.repeat):
                t = time.perf_counter()
                inner = clone(est).fit(Xk, yk, sample_weight=Wk)
                t_inner.append(time.perf_counter() - t)
                t = time.perf_counter()
                werm.fit(X, y, data_source=g)
                t_werm.append(time.perf_counter() - t)
                t = time.perf_counter()
                WERMClassifier(_NoFit(), w=w).fit(X, y, data_source=g)
                t_own.append(time.perf_counter() - t)
        a = inner.coef_ if hasattr(inner, "coef_") else inner.coefs_[0]
        b = werm.estimator_.coef_ if hasattr(inner, "coef_") else werm.estimator_.coefs_[0]
        print(f"| {data} | {type(est).__name__} | {w:g} | {keep.sum():,} | {min(t_inner):.3f} "
              f"| {min(t_werm):.3f} | {min(t_werm) / min(t_inner):.3f} "
              f"| {np.array_equal(a, b)} | {min(t_own):.4f} |", flush=True)


if __name__ == "__main__":
    main()
