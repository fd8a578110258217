"""Skeleton poles: the hand-written interpolative decomposition vs scipy's.

``sklearn_privacy._linalg._secular.compress_poles`` picks "skeleton" poles by a column
interpolative decomposition (ID) of the Cauchy-kernel samples ``K`` (160 x (p-1)) at
relative tolerance 1e-15. This script builds ``K`` exactly as ``compress_poles`` does from
the eigenvalues of the headline cases of ``bench_fil_eta.py`` (Adult 30,162 x 86 and
MNIST 0/1 12,665 x 784, least squares and logistic regression, lambda = 1e-3), then
compares

* ``hand-written``: the greedy pivoted Gram-Schmidt ID in numpy that the library uses
  (``sklearn_privacy._linalg._secular._interpolative``);
* ``scipy det.``: ``scipy.linalg.interpolative.interp_decomp(K, 1e-15, rand=False)``
  (deterministic pivoted QR);
* ``scipy rand.``: the same with ``rand=True`` (randomised, seeded);

on rank, relative reconstruction error ``||K - K[:, S] coef||_F / ||K||_F``, best-of
``--repeat`` time, run-to-run determinism, and the largest relative change of the
per-example etas against those with the hand-written ID (``--no-etas`` skips it).

``--end-to-end``: instead, all per-example etas of MNIST 0/1 logistic regression with each
of the two deterministic IDs, interleaved over ``--repeat`` rounds (run it without a BLAS
thread limit: it is about scipy's BLAS pool next to numpy's).

Run: ``python benchmarks/bench_interp_decomp.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from unittest import mock

import numpy as np
import scipy
import scipy.linalg.interpolative as sli

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy._linalg import _secular
from sklearn_privacy.datasets import load_adult, load_mnist


def kernel(d, u_min=_secular._U_MIN, n_samples=_secular._ID_SAMPLES):
    """K of compress_poles (scaled columns), from the poles d."""
    d = np.maximum(np.asarray(d, float), 0.0)
    k1 = int(np.argmax(d))
    cols = np.delete(np.arange(d.size), k1)
    d2 = float(d[cols].max())
    half = n_samples // 2
    mu_near = d2 * (1.0 + np.geomspace(u_min, 1e3, half))
    t_max = 1.0 / (d2 * (1.0 + u_min))
    t = 0.5 * t_max * (1.0 - np.cos(np.pi * np.arange(1, half + 1) / half))
    mu = np.concatenate([mu_near, 1.0 / t])
    K = mu[:, None] / (mu[:, None] - d[cols][None, :])
    return K / K.max(axis=0)


def scipy_id(K, tol, rand):
    """scipy's ID in the (skeleton, coef) form of _interpolative (coef[:, S] = I)."""
    k, idx, proj = sli.interp_decomp(K, tol, rand=rand, rng=np.random.default_rng(0))
    S = idx[:k]
    coef = np.zeros((k, K.shape[1]))
    coef[:, S] = np.eye(k)
    coef[:, idx[k:]] = proj
    return S, coef


def best_of(f, repeat):
    out, best = None, np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def make_mnist01(n, rng):
    mnist = load_mnist()
    keep = np.isin(mnist.target, (0, 1))
    X, digit = mnist.data[keep], mnist.target[keep]
    idx = rng.choice(len(X), size=n, replace=True)
    X = X[idx] + 0.01 * X.std() * rng.standard_normal((n, X.shape[1]))
    return X / np.linalg.norm(X, axis=1).max(), (digit[idx] == 1).astype(float)


def end_to_end(repeat):
    X, y = make_mnist01(12_665, np.random.default_rng(0))
    engine = FILLogisticRegression(alpha=1e-3, random_state=0).fit(X, y)._audit_engine()
    methods = {"hand-written": _secular._interpolative,
               "scipy det.": lambda K, tol: scipy_id(K, tol, False)}
    times = {name: [] for name in methods}
    for _ in range(repeat):
        for name, f in methods.items():
            with mock.patch.object(_secular, "_interpolative", f):
                engine._cache.clear()
                t = time.perf_counter()
                engine.per_example_sq_norms()
                times[name].append(time.perf_counter() - t)
    print(f"# MNIST 0/1 logistic, all etas; load {os.getloadavg()[0]:.1f}; {repeat} rounds")
    for name, v in times.items():
        print(f"{name}: best {min(v):.3f} s, median {float(np.median(v)):.3f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-etas", action="store_true",
                        help="skip the eta comparison (the full per-example audit)")
    parser.add_argument("--end-to-end", action="store_true")
    args = parser.parse_args(argv)
    if args.end_to_end:
        return end_to_end(args.repeat)
    adult = load_adult(variant="fil")
    Xa, ya = np.ascontiguousarray(adult.data, dtype=float), adult.target.astype(float)
    Xm, ym = make_mnist01(12_665, np.random.default_rng(0))
    cases = [("Adult", FILLinearRegression, Xa, 2 * ya - 1),
             ("Adult", FILLogisticRegression, Xa, ya),
             ("MNIST 0/1", FILLinearRegression, Xm, 2 * ym - 1),
             ("MNIST 0/1", FILLogisticRegression, Xm, ym)]
    print(f"# {platform.machine()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    print("| data | model | K | method | rank | rel. error | time ms | deterministic | "
          "max rel. eta change |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data, Est, X, y in cases:
        est = Est(alpha=1e-3, random_state=0).fit(X, y)
        engine = est._audit_engine()
        st = engine._eig_structure(np.arange(X.shape[1]), True)
        K = kernel(st["d"])
        eta_ref = None
        if not args.no_etas:
            engine._cache.clear()
            eta_ref = np.sqrt(engine.per_example_sq_norms())
        methods = {
            "hand-written": lambda K, g=_secular._interpolative: g(K, _secular._ID_TOL),
            "scipy det.": lambda K: scipy_id(K, _secular._ID_TOL, False),
            "scipy rand.": lambda K: scipy_id(K, _secular._ID_TOL, True),
        }
        for name, f in methods.items():
            t, (S, coef) = best_of(lambda f=f, K=K: f(K.copy()), args.repeat)
            S2, coef2 = f(K.copy())
            same = bool(np.array_equal(S, S2) and np.array_equal(coef, coef2))
            err = np.linalg.norm(K - K[:, S] @ coef) / np.linalg.norm(K)
            change = "-"
            if eta_ref is not None and name != "hand-written":
                with mock.patch.object(_secular, "_interpolative", lambda K, tol, f=f: f(K)):
                    engine._cache.clear()
                    eta = np.sqrt(engine.per_example_sq_norms())
                change = f"{float(np.max(np.abs(eta - eta_ref) / eta_ref)):.1e}"
            print(f"| {data} | {Est.__name__} | {K.shape[0]} x {K.shape[1]} | {name} | "
                  f"{S.size} | {err:.1e} | {1e3 * t:.2f} | {same} | {change} |", flush=True)


if __name__ == "__main__":
    main()
