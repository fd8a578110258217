"""IRFIL: 10 reweighting iterations, structured engine vs a straightforward baseline.

``sklearn_privacy``: :class:`~sklearn_privacy.IRFILLinearRegression` /
:class:`~sklearn_privacy.IRFILLogisticRegression` (warm-started exact refits, structured
per-example eta).

Baseline: each iteration refits from scratch with scipy's L-BFGS (gradient tolerance
1e-10) and recomputes every eta by building each weighted J_i explicitly and taking its
spectral norm (the dense per-example path).

Both runs do 10 reweighting iterations (11 weighted fits). ``sklearn_privacy`` is timed
as the median of three fits (the baseline once: it runs for minutes); the load average of
the machine at the start of each row is printed because other processes share the cores.
Data: bundled MNIST 0 vs 1 (800 rows, unit ball + PCA-20; least squares without penalty,
logistic with lambda 1e-3) and Adult (30,162 training rows, the FIL paper's 86-column
encoding; lambda 1e-3).

Against one scikit-learn fit: the same runs (sklearn_privacy, with the current eigenvalue
solver and with the solver of revision ``_before.BEFORE``) and one
``sklearn.linear_model.LogisticRegression()`` fit on the same data are interleaved, each
reported as the best of ``--repeat`` rounds, so their ratios are measured side by side.
The L-BFGS/dense baseline runs only with ``--baseline`` (minutes).

Run: ``python benchmarks/bench_irfil.py`` (a few minutes; about 12 more with
``--baseline``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import IRFILLinearRegression, IRFILLogisticRegression
from sklearn_privacy._glm._core import LOGISTIC, SQUARED, augment, penalty_diagonal
from sklearn_privacy.datasets import load_adult, load_mnist01

N_ITER = 10


def lbfgs_fit(X, y, omega, loss, alpha):
    Xt = augment(X, True)
    reg = omega.sum() * alpha * penalty_diagonal(X.shape[1], True)

    def fun(theta):
        z = Xt @ theta
        l1 = loss.derivatives(z, y)[0]
        return (omega @ loss.value(z, y) + 0.5 * reg @ theta**2,
                Xt.T @ (omega * l1) + reg * theta)

    res = minimize(fun, np.zeros(Xt.shape[1]), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000, "maxcor": 20})
    return res.x


def dense_etas(X, y, theta, omega, loss, alpha, chunk=500):
    """Weighted per-example eta the direct way: invert H, build every J_i, SVD each.

    This is what the FIL paper's public code does (a batch of explicit Jacobians and a
    batched spectral norm), with the weighted Hessian built once per call.
    """
    n, d = X.shape
    Xt = augment(X, True)
    l1, l2, l3 = loss.derivatives(Xt @ theta, y)
    H = (Xt * (omega * l2)[:, None]).T @ Xt
    H[np.diag_indices_from(H)] += omega.sum() * alpha * penalty_diagonal(d, True)
    H_inv = np.linalg.inv(H)
    B = H_inv[:, :d]  # H^-1 E
    w = theta[:d]
    out = np.empty(n)
    for start in range(0, n, chunk):
        sl = slice(start, min(n, start + chunk))
        A = Xt[sl] @ H_inv  # rows a_i = H^-1 x~_i
        J = np.empty((A.shape[0], A.shape[1], d + 1))
        J[:, :, :d] = -((omega[sl] * l2[sl])[:, None, None] * A[:, :, None] * w[None, None, :]
                        + (omega[sl] * l1[sl])[:, None, None] * B[None])
        J[:, :, d] = -(omega[sl] * l3[sl])[:, None] * A
        out[sl] = np.linalg.norm(J, ord=2, axis=(1, 2))
    return out


def baseline_irfil(X, y, loss, alpha):
    omega = np.ones(len(y))
    cvs = []
    for t in range(N_ITER + 1):
        theta = lbfgs_fit(X, y, omega, loss, alpha)
        eta = dense_etas(X, y, theta, omega, loss, alpha)
        cvs.append(eta.std() / eta.mean())
        if t < N_ITER:
            omega = len(y) * (omega / eta) / np.sum(omega / eta)
    return theta, omega, np.array(cvs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", action="store_true",
                        help="also run the L-BFGS + dense-eta baseline (minutes)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _before

    old_solver = _before.load_or_none()
    mnist = load_mnist01(n_components=20, random_state=0)
    adult = load_adult(variant="fil")
    cases = [
        ("MNIST01 PCA-20", "linear", mnist.data_train, 2.0 * mnist.target_train - 1, 0.0),
        ("MNIST01 PCA-20", "logistic", mnist.data_train, mnist.target_train.astype(float),
         1e-3),
        ("Adult", "linear", adult.data, 2.0 * adult.target - 1, 1e-3),
        ("Adult", "logistic", adult.data, adult.target.astype(float), 1e-3),
    ]
    print(f"# {platform.machine()}, numpy {np.__version__}; {N_ITER} IRFIL iterations; "
          f"best of {args.repeat} interleaved rounds; before = eigenvalue solver of "
          f"revision {_before.BEFORE}")
    header = ("data", "model", "n x d", "load avg", "LogisticRegression s",
              "IRFIL s (before)", "IRFIL s (after)", "before / LR", "after / LR",
              "final std/mean", "max rel. diff eta (before vs after)")
    if args.baseline:
        header += ("baseline s", "speed-up", "final std/mean (baseline)",
                   "max |w| rel. diff")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for data, model, X, y, alpha in cases:
        Est = IRFILLinearRegression if model == "linear" else IRFILLogisticRegression
        loss = SQUARED if model == "linear" else LOGISTIC
        load = os.getloadavg()[0]
        times = {"lr": [], "new": [], "old": []}
        y01 = (y > 0).astype(int)
        for _ in range(args.repeat):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                t = time.perf_counter()
                LogisticRegression().fit(X, y01)
                times["lr"].append(time.perf_counter() - t)
            est = Est(sigma=1.0, alpha=alpha, eta_max_iter=N_ITER, random_state=0)
            t = time.perf_counter()
            est.fit(X, y)
            times["new"].append(time.perf_counter() - t)
            if old_solver is not None:
                old = Est(sigma=1.0, alpha=alpha, eta_max_iter=N_ITER, random_state=0)
                with _before.patched(old_solver):
                    t = time.perf_counter()
                    old.fit(X, y)
                    times["old"].append(time.perf_counter() - t)
        b = {k: min(v) if v else float("nan") for k, v in times.items()}
        rel = (float(np.max(np.abs(est.eta_ - old.eta_) / old.eta_))
               if old_solver is not None else float("nan"))
        row = (f"| {data} | {model} | {X.shape[0]} x {X.shape[1]} | {load:.1f} | "
               f"{b['lr']:.3f} | {b['old']:.2f} | {b['new']:.2f} | "
               f"{b['old'] / b['lr']:.1f}x | {b['new'] / b['lr']:.1f}x | "
               f"{est.eta_history_['cv'][-1]:.1e} | {rel:.1e} |")
        if args.baseline:
            t = time.perf_counter()
            theta_b, omega_b, cv_b = baseline_irfil(X, y, loss, alpha)
            t_base = time.perf_counter() - t
            theta = est._audit_engine().theta
            diff = np.max(np.abs(theta - theta_b)) / np.max(np.abs(theta))
            row += (f" {t_base:.1f} | {t_base / b['new']:.0f}x | {cv_b[-1]:.1e} | "
                    f"{diff:.1e} |")
        print(row, flush=True)


if __name__ == "__main__":
    main()
