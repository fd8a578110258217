"""Cost of exact bucket membership against ``floor(p * k)``, and of a multicalibration fit.

Run from the checkout root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_buckets.py

Prints the best of 5 timings of ``score_buckets`` (exact: one floor plus two edge
comparisons) and of the previous one-liner on 10 million uniform probabilities, the
number of values on which they differ, and the time of a non-private
``PrivateMulticalibrator`` fit (12 groups, 20,000 rows).
"""

import time

import numpy as np

from sklearn_privacy.utils._buckets import score_buckets


def floor_buckets(p, n_bins):
    return np.minimum((np.asarray(p) * n_bins).astype(np.int64), n_bins - 1)


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=10_000_000)
    for k in (10, 1000):
        t_exact = best(lambda k=k: score_buckets(p, k))
        t_floor = best(lambda k=k: floor_buckets(p, k))
        edges = np.arange(k + 1) / k
        near = np.concatenate([np.nextafter(edges, 0), edges])
        near = near[(near >= 0) & (near <= 1)]
        diff = int(np.sum(score_buckets(near, k) != floor_buckets(near, k)))
        print(f"n_bins={k}: exact {t_exact * 1e3:.1f} ms, floor {t_floor * 1e3:.1f} ms "
              f"(ratio {t_exact / t_floor:.2f}); values at or one ulp below an edge where "
              f"they differ: {diff} of {near.size}")

    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.frozen import FrozenEstimator

    from sklearn_privacy import PrivateMulticalibrator

    class ColumnZero(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X):
            q = np.asarray(X)[:, 0]
            return np.column_stack([1 - q, q])

    n = 20_000
    q = rng.uniform(0.1, 0.7, n)
    g = rng.integers(0, 12, n)
    X = np.column_stack([q, np.eye(12)[g]])
    y = (rng.uniform(size=n) < np.clip(q + 0.2 * (g == 0), 0, 1)).astype(int)
    base = FrozenEstimator(ColumnZero().fit(None, None))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_fit = best(lambda: PrivateMulticalibrator(base, list(range(1, 13)),
                                                    min_cell_size=100).fit(X, y), repeat=3)
    print(f"PrivateMulticalibrator fit, 12 groups, {n} rows: {t_fit * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
