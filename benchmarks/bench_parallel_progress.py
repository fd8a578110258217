"""``n_jobs`` of the long operations: wall time at ``n_jobs=2`` over ``n_jobs=1``.

Side by side in one process, alternating within each round (so machine load hits both
alike), median of ``--repeat`` rounds; every parallel result is checked equal to the
serial one bit for bit before it is timed.

- ``worst_case_neighbours`` of a ``FILLogisticRegression`` (5,000 x 20, 16 starts, 60
  steps, 12 exact refits), joblib's worker processes (loky) and threads;
- ``fil.audit`` of an ``MLPClassifier`` (20,000 x 10, hidden (16,)): the per-example
  etas by threads over blocks of 512 rows.

Run: ``python benchmarks/bench_parallel_progress.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import joblib
import numpy as np
from sklearn.neural_network import MLPClassifier

from sklearn_privacy import FILLogisticRegression, fil
from sklearn_privacy.attacks import worst_case_neighbours


def _worst_case_setup():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=5000) > 0).astype(int)
    est = FILLogisticRegression(data_norm=1.0, alpha=1e-3, sigma=1.0)

    def run(n_jobs, backend="loky"):
        with joblib.parallel_config(backend=backend):
            return worst_case_neighbours(est, X, y, n_jobs=n_jobs, random_state=0)

    def same(a, b):
        return (a.index == b.index and np.array_equal(a.x_replacement, b.x_replacement)
                and a.movement == b.movement)
    return run, same


def _mlp_setup():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 10))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = MLPClassifier((16,), activation="tanh", alpha=1.0, solver="lbfgs",
                            max_iter=3000, random_state=0).fit(X, y)

    def run(n_jobs, backend=None):
        return fil.audit(net, X, y, sigma=1.0, n_jobs=n_jobs)

    def same(a, b):
        return np.array_equal(a.eta_, b.eta_)
    return run, same


def _time(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [("worst_case_neighbours, processes", _worst_case_setup, "loky"),
             ("worst_case_neighbours, threads", _worst_case_setup, "threading"),
             ("fil.audit of an MLP (20,000 rows)", _mlp_setup, None)]
    print("| operation | n_jobs=1 (s) | n_jobs=2 (s) | ratio 2 / 1 | equal |")
    print("| --- | --- | --- | --- | --- |")
    for name, setup, backend in cases:
        run, same = setup()
        run(1, backend) if backend else run(1)            # warm-up (pools, caches)
        t1, t2, equal = [], [], True
        for _ in range(args.repeat):
            a, ra = _time(run, 1, backend)
            b, rb = _time(run, 2, backend)
            t1.append(a)
            t2.append(b)
            equal &= bool(same(ra, rb))
        m1, m2 = statistics.median(t1), statistics.median(t2)
        print(f"| {name} | {m1:.2f} | {m2:.2f} | {m2 / m1:.2f} | {equal} |", flush=True)


if __name__ == "__main__":
    main()
