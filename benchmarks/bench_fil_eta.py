"""Per-example Fisher information loss: structured engine vs dense Jacobians vs one GEMM.

For every (model, d, n) the script fits the exact minimiser once, then times

* ``structured``: building the audit state (Hessian, Cholesky, inverse: done once by
  ``fit``) and then every per-example eta with the FIL engine (one
  eigendecomposition, one GEMM, a 2 x 2 secular equation per example) -- the work of
  ``eta_`` on a fitted estimator;
* ``dense``: the straightforward path of the paper's public code -- form the Hessian and
  its inverse, build each J_i (p x (d+1), in batches from one GEMM ``X~ @ H^-1``) and
  take its spectral norm by a batched SVD. The two parts
  are timed separately: the shared Hessian inverse, then the per-row work on all n rows
  when n <= ``--dense-rows``, else on the first ``--dense-sample`` rows; the dense time is
  ``inverse + per-row time * n / rows`` (marked ``est.`` when scaled). Its etas are
  compared with the structured ones on the rows it computed;
* ``gemm``: one product ``X~ @ H^-1`` of the same size (the floor: any method must at least
  read every example through ``H^-1``).

Peak memory of the structured path is measured with ``tracemalloc`` (numpy reports its
allocations to it) in a separate run.

Data: the bundled MNIST subset (digits 0-9, pixels in [0, 1], target: even digit),
projected by PCA on ``d`` components when ``d < 784``; for ``n`` above 5,000 rows are
resampled with small Gaussian jitter (MNIST-sized synthetic data).

Headline cases (``--headline``, the default): Adult (30,162 x 86, the FIL paper's
encoding) and the paper scale (MNIST digits 0 vs 1, n = 12,665, d = 784: the bundled 0/1
images resampled with small Gaussian jitter), least squares and logistic regression at
lambda = 1e-3. For each, interleaved in every round and reported as the best of
``--repeat`` rounds (so the ratios are measured side by side): one estimator ``fit``
(validation, exact minimiser, audit state) with Newton's method forming the exact
Hessian at every iteration (``fit_minimiser(approximate=False)``, the earlier fit) and
with the default approximate-Hessian phase; one GEMM ``X~ @ H^-1``; all per-example etas
from scratch (eigendecomposition, skeleton poles, rotation GEMM, secular solver) with the
current engine, with the current solver on all poles (no skeleton poles:
``_before.all_poles``) and with the solver of revision ``_before.BEFORE`` (bisection
branch). "max rel. diff": etas of the current engine against the old solver / against
all poles.

Run: ``python benchmarks/bench_fil_eta.py`` (headline, a few minutes; ``--grid`` for the
dense-baseline grid, about 12 minutes; ``--quick`` for a smaller grid).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.decomposition import PCA

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy._glm._core import LOGISTIC, SQUARED, augment, fit_minimiser
from sklearn_privacy.datasets import load_adult, load_mnist
from sklearn_privacy.fil._eta._engine import FILEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _fil_dense_oracle import dense_hessian_inverse  # noqa: E402  (a test oracle, not shipped)

ALPHA = 1e-3


def make_data(n, d, rng):
    mnist = load_mnist()
    X, digit = mnist.data, mnist.target
    if d < X.shape[1]:
        X = PCA(n_components=d, random_state=0).fit_transform(X)
    idx = rng.choice(len(X), size=n, replace=n > len(X))
    X = X[idx]
    if n > len(mnist.data):
        X = X + 0.01 * X.std() * rng.standard_normal(X.shape)
    X = X / np.linalg.norm(X, axis=1).max()
    y01 = (digit[idx] % 2 == 0).astype(float)
    return X, y01


def best_of(fn, repeat, min_time=0.3, max_repeat=200):
    """Best time of at least ``repeat`` calls, repeated until ``min_time`` s are spent."""
    times = []
    out = None
    while len(times) < repeat or (sum(times) < min_time and len(times) < max_repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def run_case(loss, X, y, dense_rows, dense_sample, repeat):
    theta, _ = fit_minimiser(X, y, loss=loss, alpha=ALPHA, fit_intercept=True,
                             sample_weight=np.ones(len(y)))
    omega = np.ones(len(y))

    def state():
        return FILEngine(X, y, theta, loss=loss, alpha=ALPHA, fit_intercept=True,
                         sample_weight=omega)

    def structured():
        engine = state()
        return engine, np.sqrt(engine.per_example_sq_norms())

    t_state, engine = best_of(state, repeat)
    def etas():  # from scratch: the eigendecomposition of M is not reused between calls
        engine._cache.clear()
        return np.sqrt(engine.per_example_sq_norms())

    t_eta, eta = best_of(etas, repeat)
    t_struct = t_state + t_eta
    Xt = augment(X, True)
    t_gemm, _ = best_of(lambda: Xt @ engine.H_inv, repeat)

    tracemalloc.start()
    structured()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    # Dense baseline, in two parts timed separately (nothing is subtracted):
    # the shared Hessian and its inverse, then the per-row work (build J_i, SVD),
    # timed on a fixed block of rows and scaled linearly to all n rows.
    kw = dict(loss=loss, alpha=ALPHA, fit_intercept=True, sample_weight=omega)
    t_fixed, H_inv = best_of(lambda: dense_hessian_inverse(X, y, theta, **kw), repeat)
    m = len(y) if len(y) <= dense_rows else min(len(y), dense_sample)
    rows = np.arange(m)
    n_feat = X.shape[1]
    p = n_feat + 1
    batch = max(1, 8_000_000 // (p * (n_feat + 1)))  # J batches of at most 64 MB

    def dense_rows_etas():
        # the batched form of the paper's code: A = X~ H^-1 by one GEMM, every
        # J_i = -[l''_i a_i w^T + l'_i H^-1 E, (dl'/dy)_i a_i] materialised, batched SVD
        Xr = Xt[rows]
        l1, l2, l3 = loss.derivatives(Xr @ theta, y[rows])
        A = Xr @ H_inv
        B = H_inv[:, :n_feat]
        w = theta[:n_feat]
        out = np.empty(m)
        for start in range(0, m, batch):
            sl = slice(start, min(m, start + batch))
            J = np.empty((sl.stop - start, p, n_feat + 1))
            np.multiply((l2[sl, None] * A[sl])[:, :, None], w[None, None, :],
                        out=J[:, :, :n_feat])
            J[:, :, :n_feat] += l1[sl, None, None] * B[None]
            J[:, :, n_feat] = l3[sl, None] * A[sl]
            J *= -1.0
            out[sl] = np.linalg.norm(J, 2, axis=(1, 2))
        return out

    # best of `repeat` runs for short blocks, of two up to 30 s, a single run beyond
    t_rows, eta_dense = best_of(dense_rows_etas, 1, min_time=0.0)
    if t_rows < 30.0:
        more = repeat if t_rows < 5.0 else 1
        t_rows = min(t_rows, best_of(dense_rows_etas, more, min_time=0.0)[0])
    t_dense_full = t_fixed + t_rows * len(y) / m
    rel = float(np.max(np.abs(eta_dense - eta[:m]) / eta_dense))
    return {
        "t_struct": t_struct, "t_state": t_state, "t_eta": t_eta, "t_gemm": t_gemm,
        "t_dense": t_dense_full,
        "dense_estimated": m < len(y), "rel_err": rel, "peak_mb": peak / 2**20,
    }


def make_mnist01(n, rng):
    """Digits 0 and 1 of the bundled MNIST subset, resampled to n rows with jitter."""
    mnist = load_mnist()
    keep = np.isin(mnist.target, (0, 1))
    X, digit = mnist.data[keep], mnist.target[keep]
    idx = rng.choice(len(X), size=n, replace=True)
    X = X[idx] + 0.01 * X.std() * rng.standard_normal((n, X.shape[1]))
    return X / np.linalg.norm(X, axis=1).max(), (digit[idx] == 1).astype(float)


def headline(repeat):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _before

    import sklearn_privacy.fil._base as base_module

    old_solver = _before.load_or_none()
    adult = load_adult(variant="fil")
    Xa = np.ascontiguousarray(adult.data, dtype=float)
    ya = adult.target.astype(float)
    Xm, ym = make_mnist01(12_665, np.random.default_rng(0))
    cases = [("Adult", "linear", Xa, 2 * ya - 1), ("Adult", "logistic", Xa, ya),
             ("MNIST 0/1", "linear", Xm, 2 * ym - 1), ("MNIST 0/1", "logistic", Xm, ym)]
    print(f"# {platform.machine()}, numpy {np.__version__}, {os.cpu_count()} CPUs; "
          f"alpha={ALPHA}; best of {repeat} interleaved rounds; old solver = revision "
          f"{_before.BEFORE}")
    header = ("data", "model", "n x d", "load avg", "GEMM s", "X~^T X~ s",
              "fit s (exact Newton)", "fit s", "etas s (old solver)", "etas s (all poles)",
              "etas s", "etas/GEMM", "(fit+etas)/GEMM", "(fit+etas)/X~^T X~",
              "max rel. diff")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    exact_newton = functools.partial(fit_minimiser, approximate=False)
    skeleton = []
    for data, model, X, y in cases:
        Est = FILLinearRegression if model == "linear" else FILLogisticRegression
        load = os.getloadavg()[0]
        times = {k: [] for k in ("gemm", "xtx", "fit_old", "fit", "old", "all", "new")}
        Xt = augment(X, True)
        for _ in range(repeat):
            with mock.patch.object(base_module, "fit_minimiser", exact_newton):
                t = time.perf_counter()
                Est(alpha=ALPHA, random_state=0).fit(X, y)
                times["fit_old"].append(time.perf_counter() - t)
            t = time.perf_counter()
            est = Est(alpha=ALPHA, random_state=0).fit(X, y)
            times["fit"].append(time.perf_counter() - t)
            engine = est._audit_engine()
            t = time.perf_counter()
            Xt @ engine.H_inv
            times["gemm"].append(time.perf_counter() - t)
            t = time.perf_counter()
            Xt.T @ Xt        # the one-pass floor: the Gram matrix of the rows
            times["xtx"].append(time.perf_counter() - t)
            engine._cache.clear()
            t = time.perf_counter()
            eta = engine.per_example_sq_norms()
            times["new"].append(time.perf_counter() - t)
            comp = engine._skeleton(engine._eig_structure(np.arange(X.shape[1]), True))
            with _before.all_poles():
                engine._cache.clear()
                t = time.perf_counter()
                eta_all = engine.per_example_sq_norms()
                times["all"].append(time.perf_counter() - t)
            if old_solver is not None:
                with _before.patched(old_solver):
                    engine._cache.clear()
                    t = time.perf_counter()
                    eta_old = engine.per_example_sq_norms()
                    times["old"].append(time.perf_counter() - t)
        b = {k: min(v) if v else float("nan") for k, v in times.items()}
        rel = (float(np.max(np.abs(np.sqrt(eta) - np.sqrt(eta_old)) / np.sqrt(eta_old)))
               if old_solver is not None else float("nan"))
        rel_all = float(np.max(np.abs(np.sqrt(eta) - np.sqrt(eta_all)) / np.sqrt(eta_all)))
        g = b["gemm"]
        x = b["xtx"]
        print(f"| {data} | {model} | {X.shape[0]} x {X.shape[1]} | {load:.1f} | {g:.4f} | "
              f"{x:.4f} | {b['fit_old']:.3f} | {b['fit']:.3f} | {b['old']:.3f} | "
              f"{b['all']:.3f} | {b['new']:.3f} | {b['new'] / g:.1f}x | "
              f"{(b['fit'] + b['new']) / g:.1f}x | {(b['fit'] + b['new']) / x:.1f}x | "
              f"{rel:.1e} / {rel_all:.1e} |",
              flush=True)
        skeleton.append(f"{data} {model}: {comp['rank'] if comp else 'none'} of "
                        f"{X.shape[1] + 1} poles")
    print("# skeleton poles (all columns): " + "; ".join(skeleton))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid (about a minute)")
    parser.add_argument("--grid", action="store_true",
                        help="the grid with the dense baseline instead of the headline")
    parser.add_argument("--dense-rows", type=int, default=800,
                        help="rows the dense baseline is timed on (then scaled)")
    parser.add_argument("--dense-sample", type=int, default=200,
                        help="rows the dense per-row work is timed on when n > --dense-rows")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dims", type=int, nargs="*", default=(20, 64, 784),
                        help="feature dimensions of the full grid")
    args = parser.parse_args(argv)
    if not (args.grid or args.quick):
        headline(max(args.repeat, 5))
        return
    if args.quick:
        grid = [(20, 800), (64, 800), (784, 800), (784, 12665)]
        dense_rows = min(args.dense_rows, 100)
    else:
        grid = [(d, n) for d in args.dims for n in (800, 5000, 12665)]
        dense_rows = args.dense_rows
    rng = np.random.default_rng(0)
    print(f"# machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
          f"numpy {np.__version__}; alpha={ALPHA}; dense per-row work timed on all rows "
          f"up to n = {dense_rows}, else on {min(args.dense_sample, dense_rows)} rows")
    header = ("model", "d", "n", "audit state s", "all etas s", "dense s",
              "dense/(state+etas)", "GEMM s", "etas/GEMM", "(state+etas)/GEMM",
              "max rel. diff", "peak MB")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for d, n in grid:
        X, y01 = make_data(n, d, rng)
        for name, loss, y in (("linear", SQUARED, 2 * y01 - 1), ("logistic", LOGISTIC, y01)):
            r = run_case(loss, X, y, dense_rows, min(args.dense_sample, dense_rows),
                         args.repeat)
            est = " (est.)" if r["dense_estimated"] else ""
            print(f"| {name} | {d} | {n} | {r['t_state']:.3f} | {r['t_eta']:.3f} | "
                  f"{r['t_dense']:.2f}{est} | {r['t_dense'] / r['t_struct']:.0f}x | "
                  f"{r['t_gemm']:.4f} | {r['t_eta'] / r['t_gemm']:.1f}x | "
                  f"{r['t_struct'] / r['t_gemm']:.1f}x | {r['rel_err']:.1e} | "
                  f"{r['peak_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
