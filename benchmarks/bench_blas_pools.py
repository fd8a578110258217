"""Why the FIL code does its level-3 linear algebra in numpy, not scipy.

numpy and scipy wheels each bundle an OpenBLAS with its own thread pool, whose threads
busy-wait for a while after every multi-threaded call. Alternating the two libraries'
level-3 routines makes the pools compete for the cores. This script times, on the
paper-scale Hessian (p = 785, from 12,665 MNIST-sized rows), each step of one Newton
iteration -- a numpy syrk (the Gram matrix) followed by a Cholesky factorisation -- with the
Cholesky from scipy (``scipy.linalg.cho_factor``, the earlier code) and from numpy
(``numpy.linalg.cholesky``, the current code), each pair alternated in its own loop as in
a Newton fit; and the two ways
of forming the audit state's ``H^-1`` from the factor: ``inv(L)`` then ``L^-T L^-1``
(earlier) and numpy's LU inverse of the equilibrated matrix (current). Medians of
``--repeat`` rounds.

Run: ``python benchmarks/bench_blas_pools.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from scipy import linalg


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12_665, 785))
    H = X.T @ X + 12.665 * np.eye(785)

    def timed(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    times = {}
    L = np.linalg.cholesky(H)
    # each variant alternates its own pair of calls for all rounds (a Newton loop), after
    # a pause that lets the other variant's pool fall asleep
    for lib, chol in (("scipy", lambda: linalg.cho_factor(H, lower=True, check_finite=False)),
                      ("numpy", lambda: np.linalg.cholesky(H))):
        time.sleep(1.0)
        syrk_t, chol_t = [], []
        for _ in range(args.repeat):
            syrk_t.append(timed(lambda: X.T @ X))
            chol_t.append(timed(chol))
        times[f"numpy syrk, alternating with the {lib} Cholesky"] = syrk_t
        times[f"{lib} Cholesky, alternating with the numpy syrk"] = chol_t

    def via_l():
        c_inv = np.linalg.inv(L)
        return c_inv.T @ c_inv

    def via_lu():
        inv = np.linalg.inv(H)
        return 0.5 * (inv + inv.T)

    for name, fn in (("H^-1 by inv(L), then L^-T L^-1", via_l), ("H^-1 by numpy's LU", via_lu)):
        times[name] = [timed(fn) for _ in range(args.repeat)]
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}; "
          f"p = 785; median of {args.repeat} rounds; load average {os.getloadavg()[0]:.1f}")
    print("| step | ms |")
    print("|---|---|")
    for key, values in times.items():
        print(f"| {key} | {1000 * float(np.median(values)):.1f} |")


if __name__ == "__main__":
    main()
