"""Cost of fil.audit of a LogisticRegression trained with scikit-learn, next to its fit.

Data: Adult (``load_adult()``: 30,162 rows, 104 one-hot/standardised columns, binary
income target). In every round, side by side:

* ``sklearn fit``: ``LogisticRegression(C=1.0)`` (see the two solvers below; lbfgs with
  max_iter raised to 1000 so that it stops on its tolerance);
* ``audit``: ``fil.audit(model, X, y, sigma=1.0)`` -- validation, the penalty mapping,
  the Newton polish from the model's coefficients to the exact minimiser (exact Hessian
  and its Cholesky factor), the audit state and the noisy release;
* ``audit + eta_``: the same plus every per-example eta (what an audit is for);
* ``FIL fit from 0``: ``FILLogisticRegression(alpha=1/n)`` fitted from zero (no warm
  start), for reference.

Reports every round, the ranges over rounds and the per-round ratios audit / sklearn fit,
plus the polish distance and the largest relative difference between the audit's etas
and those of the FIL estimator fitted from zero. The machine is shared with other jobs: expect noise
and read the ranges, not single figures.

Two model fits are audited: scikit-learn's default solver (lbfgs, tol=1e-4), which stops
visibly short of the minimiser on Adult (the audit polishes it), and newton-cholesky at
tol=1e-10, whose coefficients already are the minimiser of the mapped objective.

Second dataset, multinomial: MNIST 5k (``load_mnist()``, 500 digits per class, 10
classes), projected on its first 50 principal components (PCA fitted on the 5,000 rows),
``LogisticRegression(C=1 / (n alpha))`` with ``alpha=1e-3`` (multinomial, the
scikit-learn default for 10 classes), the same two solvers and the same columns; the
reference is ``FILLogisticRegression(alpha=1e-3)`` fitted from its own start.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_fil_audit.py
[--repeat 5] [--datasets adult mnist]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_privacy import FILLogisticRegression, fil  # noqa: E402
from sklearn_privacy.datasets import load_adult  # noqa: E402


def _timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def _adult():
    data = load_adult()
    return "Adult", data.data, data.target, 1.0 / data.data.shape[0]


def _mnist(alpha=1e-3):
    from sklearn.decomposition import PCA

    from sklearn_privacy.datasets import load_mnist

    mnist = load_mnist()
    X = np.ascontiguousarray(PCA(n_components=50, random_state=0).fit_transform(mnist.data))
    return "MNIST 5k PCA-50, 10 classes", X, mnist.target, alpha


def run(name, X, y, alpha, repeat):
    n, d = X.shape
    K = np.unique(y).size
    C = 1.0 / (n * alpha)
    print(f"# {name}: n={n}, d={d}, K={K}, alpha={alpha:.3g} (C={C:.4g}); "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    configs = [("lbfgs, tol=1e-4 (default)", dict(max_iter=1000)),
               ("newton-cholesky, tol=1e-10", dict(solver="newton-cholesky", tol=1e-10))]
    times = {cfg: [] for cfg, _ in configs}
    zero = []
    for r in range(repeat):
        for cfg, kw in configs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_fit, model = _timed(lambda kw=kw: LogisticRegression(C=C, **kw).fit(X, y))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the polish-distance note
                t_audit, audited = _timed(lambda m=model: fil.audit(m, X, y, sigma=1.0))
                t_both, _ = _timed(lambda m=model: fil.audit(m, X, y, sigma=1.0).eta_)
            times[cfg].append((t_fit, t_audit, t_both))
            if r == 0:
                ref = FILLogisticRegression(sigma=1.0, alpha=alpha).fit(X, y)
                diff = float(np.max(np.abs(audited.eta_ - ref.eta_) / ref.eta_))
                print(f"{cfg}: n_iter {int(np.max(model.n_iter_))}, polish distance "
                      f"{audited.polish_distance_:.3g} (relative "
                      f"{audited.polish_relative_:.3g}), Newton steps {audited.n_iter_}, "
                      f"eta max rel. diff vs FILLogisticRegression(alpha) {diff:.1e}")
            print(f"round {r}, {cfg}: sklearn fit {t_fit:.3f} s, audit {t_audit:.3f} s "
                  f"({t_audit / t_fit:.2f}x), audit + eta_ {t_both:.3f} s "
                  f"({t_both / t_fit:.2f}x)")
        t_zero, _ = _timed(lambda: FILLogisticRegression(sigma=1.0, alpha=alpha).fit(X, y))
        zero.append(t_zero)
        print(f"round {r}: FILLogisticRegression fit from its own start: {t_zero:.3f} s")
    print(f"\n{name}\n\n| model fit | sklearn fit (s) | audit (s) | audit + eta_ (s) "
          "| audit / fit | (audit + eta_) / fit |\n|---|---|---|---|---|---|")
    for cfg, _ in configs:
        a = np.array(times[cfg])
        r1, r2 = a[:, 1] / a[:, 0], a[:, 2] / a[:, 0]
        print(f"| {cfg} | {a[:, 0].min():.2f} - {a[:, 0].max():.2f} "
              f"| {a[:, 1].min():.2f} - {a[:, 1].max():.2f} "
              f"| {a[:, 2].min():.2f} - {a[:, 2].max():.2f} "
              f"| {r1.min():.2f} - {r1.max():.2f} | {r2.min():.2f} - {r2.max():.2f} |")
    print(f"\nFILLogisticRegression(alpha) fit from its own start: {min(zero):.2f} - "
          f"{max(zero):.2f} s\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", choices=["adult", "mnist"],
                        default=["adult", "mnist"])
    args = parser.parse_args()
    loaders = {"adult": _adult, "mnist": _mnist}
    for key in args.datasets:
        run(*loaders[key](), args.repeat)


if __name__ == "__main__":
    main()
