"""Membership ROC: the library's batched routine against ``sklearn.metrics.roc_curve``.

The membership metrics are read off the ROC curve of ``score >= t`` on the evaluation
rows. Two questions decide whether the library keeps its own routine
(``sklearn_privacy.attacks._roc.roc_counts``) or calls scikit-learn's:

1. one curve (the point estimate of a result): time per call and the largest AUC
   difference against ``roc_curve`` + trapezoid and ``roc_auc_score``, on scores rounded
   to two decimals (many ties) and on continuous scores;
2. 1,000 resamples (a bootstrap interval or a permutation null): the batched routine
   (one weight matrix, cumulative sums) against a loop of ``roc_auc_score`` calls with
   the resample counts as ``sample_weight``.

Run: ``python benchmarks/bench_roc.py``. Times are the best of ``--repeat`` runs of
``--min-time`` seconds each, BLAS limited to one thread.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.metrics import roc_auc_score, roc_curve  # noqa: E402

from sklearn_privacy.attacks._roc import (  # noqa: E402
    batched_metric,
    bootstrap_weights,
    roc_counts,
)


def best_time(fn, repeat, min_time):
    best = np.inf
    for _ in range(repeat):
        k, t0 = 0, time.perf_counter()
        while True:
            fn()
            k += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
        best = min(best, elapsed / k)
    return best


def own_auc(s_in, s_out):
    w_in = np.r_[np.ones(s_in.size), np.zeros(s_out.size)][None, :]
    tp, fp = roc_counts(np.r_[s_in, s_out], w_in, 1.0 - w_in)
    tpr, fpr = tp[0] / s_in.size, fp[0] / s_out.size
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


def sk_auc(s_in, s_out):
    y = np.r_[np.ones(s_in.size), np.zeros(s_out.size)]
    fpr, tpr, _ = roc_curve(y, np.r_[s_in, s_out], drop_intermediate=False)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


def weighted_loop(y, scores, weights):
    return np.array([roc_auc_score(y, scores, sample_weight=w) for w in weights])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| n per class | scores | library ms | roc_curve ms | ratio | max abs AUC diff "
          "(vs roc_curve, vs roc_auc_score) |")
    print("|---|---|---|---|---|---|")
    for n in (100, 1_000, 15_000):
        for kind in ("ties", "continuous"):
            a, b = rng.normal(0.2, 1, n), rng.normal(0, 1, n)
            if kind == "ties":
                a, b = np.round(a, 2), np.round(b, 2)
            t_own = best_time(partial(own_auc, a, b), args.repeat, args.min_time)
            t_sk = best_time(partial(sk_auc, a, b), args.repeat, args.min_time)
            ref = roc_auc_score(np.r_[np.ones(n), np.zeros(n)], np.r_[a, b])
            d1 = abs(own_auc(a, b) - sk_auc(a, b))
            d2 = abs(own_auc(a, b) - ref)
            print(f"| {n} | {kind} | {1e3 * t_own:.3f} | {1e3 * t_sk:.3f} | "
                  f"{t_sk / t_own:.1f}x | {d1:.1e}, {d2:.1e} |", flush=True)
    print()
    print("| n per class | resamples | batched s | loop of roc_auc_score s | ratio | "
          "max abs AUC diff |")
    print("|---|---|---|---|---|---|")
    for n in (150, 1_000, 5_000):
        a, b = np.round(rng.normal(0.2, 1, n), 2), np.round(rng.normal(0, 1, n), 2)
        scores = np.r_[a, b]
        w_in, w_out = bootstrap_weights(np.random.default_rng(1), n, n, args.resamples)
        y = np.r_[np.ones(n), np.zeros(n)]

        batched = partial(batched_metric, scores, w_in, w_out, "auc")
        loop = partial(weighted_loop, y, scores, w_in + w_out)

        t_b = best_time(batched, 1, 0.0)
        t_l = best_time(loop, 1, 0.0)
        diff = np.max(np.abs(batched() - loop()))
        print(f"| {n} | {args.resamples} | {t_b:.3f} | {t_l:.3f} | {t_l / t_b:.1f}x | "
              f"{diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
