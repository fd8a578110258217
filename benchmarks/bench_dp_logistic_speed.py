"""``DPLogisticRegression.fit`` against scikit-learn's ``LogisticRegression.fit``.

200,000 x 50 dense rows (bounded, norm at most 1.5 with the intercept column), binary
labels; both estimators fitted side by side in one process, alternating, ``--repeats``
times; the figure is the ratio of the medians (and of the minima). The DP fit is pure
(``delta=0``), ``alpha="auto"``, declared ``classes``; scikit-learn's at its defaults
(lbfgs, ``C=1``). The DP fit's certificate (the float64 gradient threshold) is checked on
every fit: ``epsilon_`` must stay finite.

Run::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dp_logistic_speed.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

from sklearn_privacy.linear_model import DPLogisticRegression


def data(n=200_000, d=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    w = rng.normal(size=d) * 3
    y = (rng.random(n) < 1 / (1 + np.exp(-3 * X @ w))).astype(int)
    return X, y


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=50)
    args = parser.parse_args(argv)
    X, y = data(args.n, args.d)
    sk, dp = [], []
    warnings.simplefilter("ignore")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        LogisticRegression().fit(X, y)
        sk.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        est = DPLogisticRegression(1.0, delta=0.0, data_norm=1.5, classes=[0, 1]).fit(X, y)
        dp.append(time.perf_counter() - t0)
        assert np.isfinite(est.epsilon_), "certificate failed"
    sk, dp = np.array(sk), np.array(dp)
    print(f"n={args.n} d={args.d} repeats={args.repeats}")
    print(f"LogisticRegression.fit   median {np.median(sk):.3f} s  min {sk.min():.3f} s")
    print(f"DPLogisticRegression.fit median {np.median(dp):.3f} s  min {dp.min():.3f} s")
    print(f"ratio of medians {np.median(dp) / np.median(sk):.2f}, of minima "
          f"{dp.min() / sk.min():.2f}")


if __name__ == "__main__":
    main()
