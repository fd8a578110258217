"""Attack costs: white-box attribute inversion without refits, and LiRA against its shadow fits.

1. White-box inversion of the VKORC1 genotype (3 levels) on the IWPC training split
   (3,855 rows, least squares, lambda = 1e-2, no intercept -- the FIL paper's setting):
   candidate minimisers for every (row, candidate) by the rank-2 Woodbury update
   (``candidate_minimisers(method="woodbury")``) against the baseline of a full refit per
   (row, candidate) (``method="refit"``, what the paper's public code does). Both feed the
   same 100 simulated releases at sigma = 1e-3; the table reports the largest parameter
   difference and whether every prediction agrees. The logistic rows use a binarised
   dose (above the median) and the Newton update, on the first ``--logistic-rows`` rows.
   The no-refit time includes building the Hessian and its inverse from the training
   data (the fitted estimator already holds them; rebuilt here so the comparison starts
   from the same inputs as the refits).
2. LiRA with ``n_reference_models`` shadow models against the bare cost of fitting the same shadow
   models (``clone(estimator).fit`` on the same halves): the attack's own overhead. The
   first target is a multinomial logistic regression that interpolates its 1,000 training
   digits (100 principal components, C = 100: training accuracy 1.0), so that the attack
   has something to find; the table also gives the best threshold attack on it.

Run: ``python benchmarks/bench_attacks.py`` (``--quick``: 400 rows for the refit baseline).
Every time is the best of ``--repeat`` interleaved runs, with BLAS limited to one thread in
the main process (joblib workers get one each), so that a shared machine's load does not
multiply the cost of small matrix products.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy._experiments import mnist_membership_split
from sklearn_privacy.attacks import candidate_minimisers, lira, membership_inference
from sklearn_privacy.datasets import load_iwpc
from sklearn_privacy.fil._eta._engine import FILEngine


def _predictions(thetas, truth, theta, sigma, Z):
    delta = theta[None, None, :] - thetas
    sq = np.einsum("mcp,mcp->mc", delta, delta)
    preds = [np.argmin(sq + 2 * sigma * np.einsum("mcp,p->mc", delta, z), axis=1) for z in Z]
    return np.array(preds)


def bench_inversion(rows_refit, logistic_rows, repeat):
    d = load_iwpc()
    X, _, y, _ = train_test_split(d.data, d.target, test_size=0.2, random_state=0)
    cols = d.attribute_columns
    cand = np.array([[0, 0], [1, 0], [0, 1]], float)
    sigma = 1e-3
    Z = np.random.RandomState(0).standard_normal((100, X.shape[1]))
    print("| model | rows | Hessian + inverse s | Woodbury/Newton s | refit s "
          "| refit est. all rows s | speed-up (incl. Hessian) "
          "| max abs. parameter diff | same prediction (fraction of rows x 100 releases) |")
    print("|---|---|---|---|---|---|---|---|---|")
    cases = [
        ("least squares", FILLinearRegression(sigma=sigma, alpha=1e-2, fit_intercept=False,
                                              random_state=0), y, rows_refit),
        ("logistic", FILLogisticRegression(sigma=sigma, alpha=1e-2, fit_intercept=False,
                                           random_state=0),
         (y > np.median(y)).astype(int), logistic_rows),
    ]
    for name, est, target, n_ref in cases:
        est.fit(X, target)
        engine = est._audit_engine()
        theta = engine.theta
        rows = np.arange(min(n_ref, len(X)))
        t_setup, t_fast, t_slow = [], [], []
        for _ in range(repeat):  # interleaved; best of `repeat`
            t = time.perf_counter()
            FILEngine(X, target, theta, loss=engine.loss, alpha=engine.alpha,
                      fit_intercept=engine.fit_intercept, sample_weight=engine.omega)
            t_setup.append(time.perf_counter() - t)
            t = time.perf_counter()
            fast, truth, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand)
            t_fast.append(time.perf_counter() - t)
            t = time.perf_counter()
            slow, _, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                              rows=rows, method="refit")
            t_slow.append(time.perf_counter() - t)
        t_setup, t_fast, t_slow = min(t_setup), min(t_fast), min(t_slow)
        t_all = t_slow * len(X) / len(rows)
        diff = np.abs(fast[rows] - slow).max()
        same = np.mean(_predictions(fast[rows], truth[rows], theta, sigma, Z)
                       == _predictions(slow, truth[rows], theta, sigma, Z))
        est_note = "" if len(rows) == len(X) else " (est.)"
        print(f"| {name} | {len(X)} (refit: {len(rows)}) | {t_setup:.4f} | {t_fast:.4f} | "
              f"{t_slow:.2f} | {t_all:.1f}{est_note} | {t_all / (t_setup + t_fast):.0f}x | "
              f"{diff:.1e} | {same:.5f} |", flush=True)


def _fit_rows(est, X, y, rows):
    return clone(est).fit(X[rows], y[rows])


def bench_lira(n_reference_models, n_jobs, repeat):
    X, y, members = mnist_membership_split(2000, 100)
    print()
    print("| target model | train / test acc. | population | n_reference_models | n_jobs "
          "| shadow fits only s | LiRA s | LiRA / fits | LiRA AUC | LiRA TPR@1%FPR "
          "| best threshold attack AUC | its TPR@1%FPR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for est in (LogisticRegression(C=100, max_iter=500),
                FILLogisticRegression(sigma=1e-2, alpha=1e-4, random_state=0)):
        yy = y if isinstance(est, LogisticRegression) else (y >= 5).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = clone(est).fit(X[members], yy[members])
            t_lira, t_fits = [], []
            for _ in range(repeat):  # interleaved; best of `repeat` (first run starts workers)
                t = time.perf_counter()
                res = lira(target, X, yy, members, n_reference_models=n_reference_models,
                           n_jobs=n_jobs,
                           random_state=0)
                t_lira.append(time.perf_counter() - t)
                t = time.perf_counter()
                Parallel(n_jobs=n_jobs)(delayed(_fit_rows)(est, X, yy, res.shadow_in[k])
                                        for k in range(n_reference_models))
                t_fits.append(time.perf_counter() - t)
            t_lira, t_fits = min(t_lira), min(t_fits)
            thr = max((membership_inference(target, X, yy, members, attack=a,
                                            random_state=0)
                       for a in ("confidence", "entropy", "modified_entropy", "loss")),
                      key=lambda r: r.auc)
        acc = (f"{target.score(X[members], yy[members]):.3f} / "
               f"{target.score(X[~members], yy[~members]):.3f}")
        print(f"| {type(est).__name__} | {acc} | {len(y)} | {n_reference_models} | {n_jobs} | "
              f"{t_fits:.2f} | {t_lira:.2f} | {t_lira / t_fits:.2f} | {res.auc:.3f} | "
              f"{res.tpr_at_fpr[0.01]:.3f} | {thr.auc:.3f} ({thr.attack}) | "
              f"{thr.tpr_at_fpr[0.01]:.3f} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--logistic-rows", type=int, default=300)
    parser.add_argument("--n-shadow", type=int, default=16)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1):
        bench_inversion(400 if args.quick else 10**9, args.logistic_rows, args.repeat)
        bench_lira(args.n_reference_models, args.n_jobs, args.repeat)


if __name__ == "__main__":
    main()
