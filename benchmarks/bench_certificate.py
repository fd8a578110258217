"""Fit time and epsilon_ of FIL fits with the minimiser certificate (RESULTS.md).

Run from a checkout root: ``PYTHONPATH=. python benchmarks/bench_certificate.py``; run it
on an older checkout the same way for the comparison (that one prints ``n/a`` for
``certified_distance_``).
"""

import time
import warnings

import numpy as np
import scipy.sparse as sp

import sklearn_privacy
from sklearn_privacy import FILLinearRegression, FILLogisticRegression


def _cases():
    rng = np.random.RandomState(0)
    dp = dict(fit_intercept=False, data_norm=1.0, alpha=1e-3)
    for n, d in [(30000, 100), (5000, 300)]:
        X = rng.normal(size=(n, d))
        X /= np.maximum(1, np.linalg.norm(X, axis=1, keepdims=True))
        y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
        yield f"dense logistic n={n} p={d}", FILLogisticRegression(**dp), X, y
        yield (f"dense least squares n={n} p={d}",
               FILLinearRegression(target_bound=2.0, **dp), X,
               X[:, 0] + 0.1 * rng.normal(size=n))
    Xs = sp.random(30000, 1000, density=0.01, format="csr", random_state=0)
    Xs.data = np.sign(Xs.data - 0.5) * 0.3
    ys = (np.asarray(Xs[:, :10].sum(axis=1)).ravel() > 0).astype(int)
    yield "sparse logistic n=30000 p=1000 (1%)", FILLogisticRegression(**dp), Xs, ys


def main(repeats: int = 5) -> None:
    warnings.simplefilter("ignore")
    print("package:", sklearn_privacy.__file__)
    print("| case | median fit (ms) | best fit (ms) | epsilon_ | certified_distance_ |")
    for name, est, X, y in _cases():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            est.fit(X, y)
            times.append(time.perf_counter() - start)
        print(f"| {name} | {np.median(times) * 1e3:.0f} | {min(times) * 1e3:.0f} | "
              f"{est.epsilon_!r} | {getattr(est, 'certified_distance_', 'n/a')} |")


if __name__ == "__main__":
    main()
