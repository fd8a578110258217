"""Cost of fil.audit of a scikit-learn MLP next to one default scikit-learn fit.

Synthetic binary data (standard normal inputs, a non-linear decision function, label
noise) at several sizes. In every case, side by side in one process:

* ``sklearn fit``: ``MLPClassifier(hidden, activation="tanh", alpha=alpha,
  random_state=0)`` with every other parameter at its default (adam, batch 200,
  ``max_iter=200``, ``tol=1e-4``);
* ``audit``: ``fil.audit(model, X, y, sigma=1.0)`` -- L-BFGS then Newton polish to a
  gradient norm of 1e-10, the exact Hessian and its eigendecomposition (the certificate)
  and every per-example eta (exact dense route). The audit's stages are timed separately:
  ``polish`` (L-BFGS + Newton), ``hessian`` (one exact Hessian at the polished point)
  and ``eta`` (the per-example Jacobians of all rows).

A case whose polished point is not a strict minimum (typically a dead hidden unit, whose
unpenalised bias is a flat direction) is reported as refused, with the time to refuse.
Reports the ratio audit / sklearn fit, the polish distance relative to the norm of the
parameters (scikit-learn's adam stops far from the minimiser of its own objective, and
finishing the optimisation is part of the audit's cost) and the certificate (smallest
eigenvalue of the exact Hessian). The machine is shared: read ratios, not seconds.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_mlp_fil.py``.
"""

from __future__ import annotations

import os
import platform
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

from sklearn_privacy import fil  # noqa: E402
from sklearn_privacy.exceptions import UncertifiedMinimumError  # noqa: E402
from sklearn_privacy.fil import _mlp  # noqa: E402

CASES = [  # (rows, inputs, hidden layers, alpha)
    (1000, 5, (5,), 1.0),
    (5000, 10, (20,), 1.0),
    (20000, 20, (40,), 1.0),
    (5000, 10, (16, 8), 1.0),
    (5000, 10, (16, 8), 0.1),
]


def _data(n, d, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    z = X[:, 0] - 0.7 * X[:, 1] ** 2 + np.sin(2 * X[:, 2])
    return X, (z + 0.5 * rng.normal(size=n) > -0.3).astype(int)


def _stage_timer():
    """Wrap the audit's stages to time them (restored afterwards)."""
    times = {"polish": 0.0, "hessian": 0.0}
    originals = (_mlp._lbfgs, _mlp._newton_dense)

    def lbfgs(*a, **k):
        t = time.perf_counter()
        out = originals[0](*a, **k)
        times["polish"] += time.perf_counter() - t
        return out

    def newton(*a, **k):
        t = time.perf_counter()
        out = originals[1](*a, **k)
        times["polish"] += time.perf_counter() - t
        return out

    _mlp._lbfgs, _mlp._newton_dense = lbfgs, newton
    return times, originals


def main():
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| rows | inputs | hidden | parameters | sklearn fit s (epochs) | audit s | "
          "polish / hessian / eta s | audit / fit | polish relative | lambda_min(H) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n, d, hidden, alpha in CASES:
        X, y = _data(n, d)
        model = MLPClassifier(hidden, activation="tanh", alpha=alpha, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            model.fit(X, y)
            t_fit = time.perf_counter() - t
        times, originals = _stage_timer()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                t = time.perf_counter()
                audited = fil.audit(model, X, y, sigma=1.0)
                t_audit = time.perf_counter() - t
        except UncertifiedMinimumError as exc:
            t_audit = time.perf_counter() - t
            print(f"| {n:,} | {d} | {hidden} (alpha {alpha}) | -- | {t_fit:.2f} "
                  f"({model.n_iter_}) | {t_audit:.2f} | refused: not a strict minimum | "
                  f"{t_audit / t_fit:.2f} | -- | {exc.smallest_eigenvalue:.3g} |", flush=True)
            continue
        finally:
            _mlp._lbfgs, _mlp._newton_dense = originals
        obj = audited._obj
        t = time.perf_counter()
        obj.hessian(audited._theta)
        t_h = time.perf_counter() - t
        audited.__dict__["_gram"] = None
        t = time.perf_counter()
        audited.eta(per_example=True)
        t_eta = time.perf_counter() - t
        print(f"| {n:,} | {d} | {hidden} (alpha {alpha}) | {audited.n_parameters_} | "
              f"{t_fit:.2f} "
              f"({model.n_iter_}) | {t_audit:.2f} | {times['polish']:.2f} / {t_h:.2f} / "
              f"{t_eta:.2f} | {t_audit / t_fit:.2f} | {audited.polish_relative_:.3f} | "
              f"{audited.hessian_min_eigenvalue_:.3g} |", flush=True)


if __name__ == "__main__":
    main()
