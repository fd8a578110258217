"""How close the audits of the FIL DP view come to the claimed epsilon.

For least squares and logistic regression, at claimed epsilon in {1, 2, 4}:
``worst_case_neighbours`` finds the replace-one pair that moves the exact minimiser the
most, and ``canary_audit`` (``refit=False``: releases redrawn through the estimators' own
noise code) tests ``--releases`` releases of each side with the pair's likelihood-ratio
statistic (the projection on the move). Printed: the move as a share of
``sensitivity_``, the audited lower bound, and audited / claimed.

Two data sets: the adversarial one (five rows, one of them on the data_norm sphere, a
strong penalty: the regime in which the bound is attained), and a realistic one
(2,000 rows of Adult scaled to the unit ball, alpha = 1), for which only the move ratio
is computed (the audited epsilon of a pair follows from it).

Run:  python benchmarks/bench_audit_tightness.py [--releases 1000000]
"""

import argparse
import time
import warnings

import numpy as np

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.attacks import canary_audit, worst_case_neighbours
from sklearn_privacy.datasets import load_adult

warnings.simplefilter("ignore")


def adversarial(loss):
    n, R, B, alpha = 5, 1.3, 2.0, 1e4
    X = np.zeros((n, 1))
    X[0, 0] = R
    if loss == "squared":
        y = np.zeros(n)
        y[0] = B
        est = FILLinearRegression(fit_intercept=False, data_norm=R, target_bound=B,
                                  alpha=alpha)
    else:
        y = np.zeros(n, dtype=int)
        y[1] = 1
        est = FILLogisticRegression(fit_intercept=False, data_norm=R, alpha=alpha)
    return est, X, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", type=int, default=1_000_000)
    args = ap.parse_args()
    print(f"releases per data set: {args.releases:,}; confidence 0.95; delta = 1e-5")
    print(f"{'loss':<9} {'claimed':>7} {'move/sens':>9} {'audited':>8} {'ratio':>6} "
          f"{'seconds':>8}")
    for loss in ("squared", "logistic"):
        est, X, y = adversarial(loss)
        pair = worst_case_neighbours(est, X, y, random_state=0)
        fitted = est.set_params(sigma=1.0).fit(X, y)
        for eps in (1.0, 2.0, 4.0):
            sigma = fitted.sigma_for_epsilon(eps)
            t = time.perf_counter()
            res = canary_audit(est.set_params(sigma=sigma), X, y, pair.index,
                               pair.x_replacement, pair.y_replacement,
                               attack=pair.statistic(), n_releases=args.releases,
                               refit=False, random_state=0)
            print(f"{loss:<9} {eps:7.1f} {pair.ratio:9.4f} {res.epsilon_lower_bound:8.3f} "
                  f"{res.epsilon_lower_bound / eps:6.2f} {time.perf_counter() - t:8.1f}",
                  flush=True)
    d = load_adult()
    X = d.data[:2000] / np.max(np.linalg.norm(d.data[:2000], axis=1))
    yb = d.target[:2000]
    yr = np.clip(X @ np.random.default_rng(0).normal(size=X.shape[1]), -1, 1)
    print("\nrealistic data (Adult, 2,000 rows, unit ball, alpha = 1): worst move found")
    for loss, est, y in (
            ("squared", FILLinearRegression(fit_intercept=False, data_norm=1.0,
                                            target_bound=1.0, alpha=1.0), yr),
            ("logistic", FILLogisticRegression(fit_intercept=False, data_norm=1.0,
                                               alpha=1.0), yb)):
        pair = worst_case_neighbours(est, X, y, random_state=0)
        print(f"{loss:<9} move / sensitivity = {pair.ratio:.3f} ({pair.n_refits} exact refits)")


if __name__ == "__main__":
    main()
