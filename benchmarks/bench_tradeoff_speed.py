"""Speed of trade-off curves: 10,000 compositions, against Google's dp-accounting.

1. One heterogeneous composition of 10,000 steps: a Gaussian part (500 Gaussian steps of
   mu = 0.02, composed exactly), 3,000 pure-epsilon steps (epsilon 0.002, Laplace-norm
   releases), 4,000 (epsilon, delta) steps (0.001, 1e-9; objective perturbation) and 2,499
   pure-epsilon steps (0.003; NumericSparse answers), to its TPR at FPR 1 % with a
   certified error below 1e-3 (``TradeoffCurve``), against dp-accounting composing the
   same dominating pairs (``self_compose`` per kind, then ``compose``, on its default grid
   1e-4) and reading the TPR with riskcal (when both are installed).
2. 10,000 Gaussian compositions (each of 1 to 100 steps) to their TPR at FPR 1 %: a ledger
   checking 10,000 releases.

Each timing is the best of ``--repeat`` runs; the ratio is measured side by side.
Run: ``python benchmarks/bench_tradeoff_speed.py`` (dp-accounting and riskcal optional).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from sklearn_privacy.privacy import TradeoffCurve

GAUSS = (0.02, 500)
STEPS = [(0.002, 0.0, 3000), (0.001, 1e-9, 4000), (0.003, 0.0, 2499)]


def ours():
    c = TradeoffCurve(GAUSS[0] * np.sqrt(GAUSS[1]), STEPS)
    return float(c.max_tpr(0.01)), c.error


def reference():
    from dp_accounting.pld import privacy_loss_distribution as pldm
    from riskcal.analysis import get_beta_from_pld

    h = 1e-4
    g = pldm.from_gaussian_mechanism(1 / GAUSS[0], sensitivity=1.0,
                                     value_discretization_interval=h).self_compose(GAUSS[1])
    for eps, delta, count in STEPS:
        k = int(round(eps / h))
        rr = pldm.PrivacyLossDistribution.create_from_rounded_probability(
            {k: (1 - delta) / (1 + np.exp(-eps)), -k: (1 - delta) / (1 + np.exp(eps))},
            delta, h)
        g = g.compose(rr.self_compose(count))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(1 - get_beta_from_pld(g, alpha=0.01)), None


def gaussian_batch():
    rng = np.random.default_rng(0)
    n_steps = rng.integers(1, 101, size=10_000)
    mus = 0.05 * np.sqrt(n_steps)
    return [float(TradeoffCurve.gaussian(m).max_tpr(0.01)) for m in mus]


def best(fn, repeat):
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    (tpr, err), t_ours = best(ours, args.repeat)
    print(f"10,000-step heterogeneous composition: TPR at FPR 1% <= {tpr:.5f} "
          f"(certified error {err:.1e}) in {t_ours:.3f} s")
    try:
        (tpr_ref, _), t_ref = best(reference, args.repeat)
        print(f"dp-accounting + riskcal, same pairs: TPR {tpr_ref:.5f} in {t_ref:.3f} s; "
              f"ratio {t_ref / t_ours:.1f}x; difference {tpr - tpr_ref:+.2e}")
    except ImportError:
        print("dp-accounting / riskcal not installed: no reference timing")
    _, t_batch = best(gaussian_batch, args.repeat)
    print(f"10,000 Gaussian compositions to their TPR at FPR 1%: {t_batch:.3f} s")


if __name__ == "__main__":
    main()
