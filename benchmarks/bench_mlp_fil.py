"""Cost of fil.audit of a scikit-learn MLP next to one default scikit-learn fit.

Synthetic binary data (standard normal inputs, a non-linear decision function, label
noise) at several sizes, one and two hidden layers, at most 1,000 parameters. In every
case, side by side in one process:

* ``sklearn fit``: ``MLPClassifier(hidden, activation="tanh", alpha=alpha,
  random_state=0)`` with every other parameter at its default (adam, batch 200,
  ``max_iter=200``, ``tol=1e-4``);
* ``audit``: ``fil.audit(model, X, y, sigma=1.0)`` -- L-BFGS then Newton polish to a
  gradient norm of 1e-10, the exact Hessian and its eigendecomposition (the certificate)
  and every per-example eta (exact dense route). The audit's stages are timed separately:
  ``polish`` (L-BFGS preconditioned by the exact Hessian, then Newton), ``hessian`` (one
  exact Hessian at the polished point) and ``eta`` (the per-example Grams ``J_i^T J_i``
  of all rows).

Both are timed twice: with BLAS limited to one thread (``threadpoolctl``) and with the
default threads; wall-clock and CPU time (``time.process_time``) ratios are reported with
the load average, since the machine may be shared. (The dense audit runs on one BLAS
thread whatever the setting; the ``hessian`` and ``eta`` stage times are re-measured
after it under the table's setting.)

A case whose polished point is not a strict minimum (typically a dead hidden unit, whose
unpenalised bias is a flat direction) is reported as refused, with the time to refuse.
``polish relative`` is the distance the polish moved the parameters relative to their
norm (scikit-learn's adam stops far from the minimiser of its own objective, and finishing
the optimisation is part of the audit's cost).

The last part times the Hessian-vector-product route (``hessian="operator"``) on named
rows, up to networks above the dense limit: L-BFGS + Newton-CG polish, the Lanczos
certificate and the per-example eta of the named rows (block conjugate gradients), with
the number of Hessian-vector products; next to it the dense route on the same model
(every row), and the named rows' etas against a dense solve at the operator route's own
minimum (the two routes polish along different paths, and on a non-convex objective may
stop at different nearby minima). ``--operator`` runs only this part.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_mlp_fil.py``
(about two minutes on a 2-core machine at load 4).
"""

from __future__ import annotations

import os
import platform
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from sklearn_privacy import fil
from sklearn_privacy.exceptions import UncertifiedMinimumError
from sklearn_privacy.fil._mlp import _math as _mlp_math
from sklearn_privacy.fil._mlp import _polish as _mlp

CASES = [  # (rows, inputs, hidden layers, alpha)
    (1000, 5, (5,), 1.0),
    (5000, 10, (20,), 1.0),
    (20000, 20, (40,), 1.0),
    (1000, 5, (8, 4), 0.1),
    (5000, 10, (16, 8), 0.1),
    (20000, 20, (24, 16), 0.1),
]
OPERATOR_CASES = [  # (rows, inputs, hidden, alpha, named rows)
    (2000, 10, (20,), 1.0, 5),
    (5000, 40, (40,), 0.1, 10),
    (2000, 8, (300,), 1.0, 6),
]


def _data(n, d, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    z = X[:, 0] - 0.7 * X[:, 1] ** 2 + np.sin(2 * X[:, 2])
    return X, (z + 0.5 * rng.normal(size=n) > -0.3).astype(int)


def _stage_timer():
    """Wrap the audit's polish to time it (restored afterwards)."""
    times = {"polish": 0.0}
    originals = (_mlp._lbfgs, _mlp._lbfgs_preconditioned, _mlp._newton_dense,
                 _mlp._newton_operator)

    def timed(fn):
        def inner(*a, **k):
            t = time.perf_counter()
            out = fn(*a, **k)
            times["polish"] += time.perf_counter() - t
            return out
        return inner

    (_mlp._lbfgs, _mlp._lbfgs_preconditioned, _mlp._newton_dense,
     _mlp._newton_operator) = map(timed, originals)
    return times, originals


def _clock():
    return time.perf_counter(), time.process_time()


def _since(start):
    return time.perf_counter() - start[0], time.process_time() - start[1]


def _fitted(n, d, hidden, alpha):
    """The data, one default scikit-learn fit of the network on it, and that fit's times."""
    X, y = _data(n, d)
    model = MLPClassifier(hidden, activation="tanh", alpha=alpha, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = _clock()
        model.fit(X, y)
        fit = _since(start)
    return X, y, model, fit


def run_case(n, d, hidden, alpha):
    X, y, model, fit = _fitted(n, d, hidden, alpha)
    times, originals = _stage_timer()
    label = f"| {n:,} | {d} | {hidden} (alpha {alpha}) |"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            start = _clock()
            audited = fil.audit(model, X, y, sigma=1.0)
            audit = _since(start)
    except UncertifiedMinimumError as exc:
        audit = _since(start)
        return (f"{label} -- | {fit[0]:.2f} ({model.n_iter_}) | {audit[0]:.2f} | refused: "
                f"lambda_min {exc.smallest_eigenvalue:.2g} | {audit[0] / fit[0]:.2f} | "
                f"{audit[1] / fit[1]:.2f} | -- |")
    finally:
        (_mlp._lbfgs, _mlp._lbfgs_preconditioned, _mlp._newton_dense,
         _mlp._newton_operator) = originals
    obj = audited._obj
    t = time.perf_counter()
    obj.hessian(audited._theta)
    t_h = time.perf_counter() - t
    audited.__dict__["_gram"] = None
    t = time.perf_counter()
    audited._grams(np.arange(n))
    t_eta = time.perf_counter() - t
    return (f"{label} {audited.n_parameters_} | {fit[0]:.2f} ({model.n_iter_}) | "
            f"{audit[0]:.2f} | {times['polish']:.2f} / {t_h:.2f} / {t_eta:.2f} | "
            f"**{audit[0] / fit[0]:.2f}** | {audit[1] / fit[1]:.2f} | "
            f"{audited.polish_relative_:.3f} |")


def run_operator_case(n, d, hidden, alpha, n_rows):
    X, y, model, fit = _fitted(n, d, hidden, alpha)
    rows = np.arange(n_rows)
    times, originals = _stage_timer()
    products = [0]
    make = _mlp_math.MLPObjective.hvp_operator

    def counted(self, theta):
        op = make(self, theta)

        def apply(V):
            products[0] += 1 if np.ndim(V) == 1 else np.shape(V)[1]
            return op(V)
        return apply

    _mlp_math.MLPObjective.hvp_operator = counted
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            start = _clock()
            audited = fil.audit(model, X, y, sigma=1.0, rows=rows, hessian="operator")
            audit = _since(start)
    finally:
        (_mlp._lbfgs, _mlp._lbfgs_preconditioned, _mlp._newton_dense,
         _mlp._newton_operator) = originals
        _mlp_math.MLPObjective.hvp_operator = make
    # the dense route on the same model (every row), and the operator's etas against a
    # dense solve at the operator's own minimum
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        start = _clock()
        try:
            fil.audit(model, X, y, sigma=1.0, hessian="dense")
            dense = f"{_since(start)[0]:.2f}"
        except UncertifiedMinimumError:
            dense = f"refused ({_since(start)[0]:.2f})"
    obj, theta = audited._obj, audited._theta
    H = obj.hessian(theta)
    G = obj.mixed(theta, rows)
    ref = np.array([np.linalg.norm(np.linalg.solve(H, G[k].T), 2) for k in range(n_rows)])
    err = np.max(np.abs(audited.eta_ - ref) / ref)
    return (f"| {n:,} | {d} | {hidden} (alpha {alpha}) | {audited.n_parameters_} | "
            f"{n_rows} | {fit[0]:.2f} ({model.n_iter_}) | {audit[0]:.2f} | "
            f"{times['polish']:.2f} | {products[0]:,} | {audit[0] / fit[0]:.2f} | "
            f"{audit[1] / fit[1]:.2f} | {dense} | {err:.1e} | "
            f"{audited.hessian_min_eigenvalue_:.3g} |")


def main():
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for threads in (() if "--operator" in sys.argv else (1, None)):
        print(f"\n## BLAS threads: {threads or 'default'}; load average at start "
              f"{os.getloadavg()[0]:.1f}\n")
        print("| rows | inputs | hidden | parameters | sklearn fit s (epochs) | audit s | "
              "polish / hessian / eta s | audit / fit (wall) | audit / fit (CPU) | "
              "polish relative |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        with threadpool_limits(threads):
            for case in CASES:
                print(run_case(*case), flush=True)
        print(f"(load average at end {os.getloadavg()[0]:.1f})")
    print("\n## Hessian-vector products on named rows (BLAS threads: default)\n")
    print("| rows | inputs | hidden | parameters | named rows | sklearn fit s (epochs) | "
          "audit s | polish s | Hessian-vector products | audit / fit (wall) | audit / fit "
          "(CPU) | dense route, every row, s | eta vs dense solve at the same minimum "
          "(max rel.) | lambda_min(H) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in OPERATOR_CASES:
        print(run_operator_case(*case), flush=True)


if __name__ == "__main__":
    main()
