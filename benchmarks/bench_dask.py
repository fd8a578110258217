"""FIL on a dask array larger than a worker's memory: fit + every per-example eta.

Data: ``X`` of shape (n, 50), standard normal, generated chunk by chunk inside dask
(``dask.array.random``, row chunks of ``--chunk`` rows; never materialised: every pass
regenerates it), ``y = X beta + noise``. Model: :class:`~sklearn_privacy.FILLinearRegression`
(alpha = 1e-3): one tree-reduced pass for the Hessian and ``X^T y``, one ``map_blocks``
pass for the etas (``eta_``, the n results gathered in the client).

Cluster: ``distributed.LocalCluster`` with 2 worker processes, 1 thread each,
``memory_limit`` 2 GB each. The resident memory of every worker process is sampled every
0.2 s with psutil (``client.run``) during the run; the peak is reported.

Reference: at ``--compare-n`` rows (default 2,000,000, 800 MB: what fits comfortably in
memory next to the other jobs on this machine) the same data are computed into a numpy
array and fitted in memory (fit + ``eta_``); the dask run on the same rows is timed too, and
the released coefficients and etas of both paths are compared.

IRFIL: at ``--compare-n`` rows, :class:`~sklearn_privacy.IRFILLinearRegression` with
``--irfil-iter`` reweightings (default 3) in memory and on the dask array (each iteration:
one tree-reduced pass for the weighted Hessian, one ``map_blocks`` pass for the etas; the
n weights live in the client), with the relative differences of the final weights and etas.

Run: ``python benchmarks/bench_dask.py`` (n = 10,000,000: 4 GB of float64; several minutes).
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time

import numpy as np

D = 50
ALPHA = 1e-3


def make(n, chunk, seed=0):
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, D), chunks=(chunk, D))
    beta = np.linspace(-1.0, 1.0, D)
    y = X @ beta + 0.5 + rng.standard_normal(n, chunks=chunk)
    return X, y


class PeakMemory:
    """Samples the RSS of every worker process in a background thread."""

    def __init__(self, client, every=0.2):
        self.client, self.every, self.peak = client, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    def _run(self):
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, *self.client.run(self._rss).values())
            except Exception:  # noqa: BLE001 - a worker restarting; keep sampling
                pass
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def fit_dask(client, n, chunk):
    from sklearn_privacy import FILLinearRegression

    X, y = make(n, chunk)
    with PeakMemory(client) as mem:
        t = time.perf_counter()
        est = FILLinearRegression(alpha=ALPHA, random_state=0).fit(X, y)
        t_fit = time.perf_counter() - t
        eta = est.eta_
        t_all = time.perf_counter() - t
    return est, eta, t_fit, t_all, mem.peak


def irfil_rows(client, n, chunk, n_iter):
    """IRFIL (least squares, ``n_iter`` reweightings) at ``n`` rows: numpy, then dask."""
    import dask

    from sklearn_privacy import IRFILLinearRegression

    X, y = make(n, chunk)
    Xn, yn = dask.compute(X, y, scheduler="threads")
    kw = dict(alpha=ALPHA, eta_max_iter=n_iter, random_state=0)
    load = os.getloadavg()[0]
    t = time.perf_counter()
    ref = IRFILLinearRegression(**kw).fit(Xn, yn)
    t_ref = time.perf_counter() - t
    w_ref, eta_ref = ref.sample_weight_, ref.eta_
    del Xn, yn, ref._audit
    with PeakMemory(client) as mem:
        t = time.perf_counter()
        est = IRFILLinearRegression(**kw).fit(X, y)
        eta = est.eta_
        t_dask = time.perf_counter() - t
    gb = n * D * 8 / 1e9
    w_rel = np.max(np.abs(est.sample_weight_ - w_ref) / w_ref)
    eta_rel = np.max(np.abs(eta - eta_ref) / eta_ref)
    print(f"| IRFIL numpy, {n_iter} iter. | {n:,} | {gb:.1f} | {load:.1f} | - | {t_ref:.1f} | - "
          "| - | - |")
    print(f"| IRFIL dask, {n_iter} iter. | {n:,} | {gb:.1f} | {load:.1f} | - | {t_dask:.1f} | "
          f"{mem.peak / 1e9:.2f} | {w_rel:.1e} (weights) | {eta_rel:.1e} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--compare-n", type=int, default=2_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--irfil-iter", type=int, default=3,
                        help="IRFIL reweightings at --compare-n rows (0: skip)")
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from sklearn_privacy import FILLinearRegression

    print(f"# {platform.machine()}, numpy {np.__version__}, {os.cpu_count()} CPUs; "
          f"LocalCluster 2 workers x 1 thread, memory_limit {args.memory_limit}; "
          f"d = {D}, row chunks of {args.chunk}")
    header = ("path", "n", "X size GB", "load avg", "fit s", "fit + all etas s",
              "peak worker RSS GB", "max coef rel. diff", "max eta rel. diff")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        # the in-memory reference at the comparison size, same data
        n = args.compare_n
        X, y = make(n, args.chunk)
        import dask

        # generated in this process (not on the workers, whose memory is measured)
        Xn, yn = dask.compute(X, y, scheduler="threads")
        load = os.getloadavg()[0]
        t = time.perf_counter()
        ref = FILLinearRegression(alpha=ALPHA, random_state=0).fit(Xn, yn)
        t_fit = time.perf_counter() - t
        eta_ref = ref.eta_
        t_all = time.perf_counter() - t
        gb = n * D * 8 / 1e9
        print(f"| numpy | {n:,} | {gb:.1f} | {load:.1f} | {t_fit:.1f} | {t_all:.1f} | - | - "
              "| - |", flush=True)
        del Xn, yn, ref._audit
        load = os.getloadavg()[0]
        est, eta, t_fit, t_all, peak = fit_dask(client, n, args.chunk)
        coef = np.max(np.abs(np.append(est.coef_, est.intercept_)
                             - np.append(ref.coef_, ref.intercept_))
                      / np.max(np.abs(ref.coef_)))
        rel = np.max(np.abs(eta - eta_ref) / eta_ref)
        print(f"| dask | {n:,} | {gb:.1f} | {load:.1f} | {t_fit:.1f} | {t_all:.1f} | "
              f"{peak / 1e9:.2f} | {coef:.1e} | {rel:.1e} |", flush=True)
        del eta, eta_ref, est
        if args.irfil_iter:
            irfil_rows(client, n, args.chunk, args.irfil_iter)
        n = args.n
        load = os.getloadavg()[0]
        est, eta, t_fit, t_all, peak = fit_dask(client, n, args.chunk)
        print(f"| dask | {n:,} | {n * D * 8 / 1e9:.1f} | {load:.1f} | {t_fit:.1f} | "
              f"{t_all:.1f} | {peak / 1e9:.2f} | - | - |", flush=True)
        print(f"# eta over {n:,} rows: mean {eta.mean():.4g}, max {eta.max():.4g}")


if __name__ == "__main__":
    main()
