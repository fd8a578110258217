"""Multinomial FIL logistic regression on MNIST 5k (10 classes): fit + every eta.

Side by side in one run, best of ``--repeat`` interleaved rounds:

* ``sklearn lbfgs``: one scikit-learn ``LogisticRegression(C=1/(n alpha))`` fit with its
  defaults (lbfgs, ``tol=1e-4``, ``max_iter=1000``) -- the same penalty, a looser solver;
* ``sklearn newton-cholesky``: the same at ``tol=1e-10`` (close to the exact minimiser);
* ``FIL fit``: ``FILLogisticRegression(alpha).fit`` (validation, exact symmetric
  minimiser by L-BFGS + Newton, audit state with the factorised Hessian);
* ``FIL etas``: every per-example eta (``eta_``) from the structured engine: one GEMM
  per row chunk for ``x~^T M_kl`` (``M = H^-2``), one GEMM over the class pairs for the
  ``D_i`` blocks, the ``(d + K - 1)``-square Grams by batched products and their top
  eigenvalues by batched Lanczos with a certified Rayleigh quotient;
* ``dense``: the plain path -- form each example's Jacobian ``J_i = -H^-1 B_i``
  (``K (d+1) x (d + K - 1)``) explicitly (``B_i`` built densely, ``H^-1 B`` one GEMM per
  block of 50 rows) and take its spectral norm by batched SVD. Timed on the
  first ``--dense-rows`` rows and **extrapolated linearly** to all rows (plus the shared
  ``H^-1``); its etas are compared with the structured ones on those rows.

Then the largest ``d`` (PCA components) for which fit + all 10-class etas of the 5,000
rows finish within ``--budget`` seconds: each ``d`` of ``--d-grid`` runs in a fresh
subprocess, which reports its wall time and peak resident memory (``ru_maxrss``, the
whole process: Python, numpy, the data and the audit state).

Run: ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_fil_multinomial.py``
(a few minutes). The goal's table -- fit + all etas <= 8x one scikit-learn lbfgs fit in
each of five runs, every run a fresh process with one round, wall and CPU-time ratios
and the load average -- is ``... bench_fil_multinomial.py --runs 5`` (half a minute).
The machine is shared: timings are noisy, ratios are measured within the same round.
``--before REF`` also times the solver and engine of git ``REF`` in the
same rounds (before/after of a change, one run).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# the checkout's package, not an installed one
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _data(d):
    from sklearn.decomposition import PCA

    from sklearn_privacy.datasets import load_mnist

    mnist = load_mnist()
    X = mnist.data
    if d < X.shape[1]:
        X = PCA(n_components=d, random_state=0).fit_transform(X)
    return np.ascontiguousarray(X), mnist.target


def _before_module(ref):
    """``sklearn_privacy.fil._multinomial`` as of git ``ref`` (the code before a change).

    Loaded under another name inside the current package (its relative imports resolve
    to the current package), so both versions run side by side in the same process.
    """
    import importlib.util
    import tempfile

    src = subprocess.run(["git", "show", f"{ref}:sklearn_privacy/fil/_multinomial.py"],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent).stdout
    path = Path(tempfile.mkdtemp()) / "_multinomial_before.py"
    path.write_text(src)
    name = "sklearn_privacy.fil._multinomial_before"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _use_engine:
    """Context: ``FILLogisticRegression`` fits with the given module's solver and engine."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        from sklearn_privacy.fil import _classification as cls

        self.saved = cls.fit_multinomial, cls.MultinomialFILEngine
        fit, engine = self.module.fit_multinomial, self.module.MultinomialFILEngine
        if "return_factor" not in inspect.signature(fit).parameters:
            # code from before the engine reused the fit's Cholesky factor
            def fit(*args, _fit=fit, return_factor=False, **kwargs):
                out = _fit(*args, **kwargs)
                return (*out, None) if return_factor else out

            def engine(*args, _engine=engine, factor=None, **kwargs):
                return _engine(*args, **kwargs)
        cls.fit_multinomial, cls.MultinomialFILEngine = fit, engine

    def __exit__(self, *exc):
        from sklearn_privacy.fil import _classification as cls

        cls.fit_multinomial, cls.MultinomialFILEngine = self.saved


_CPU = {}  # CPU time (time.process_time) of the last _timed call of each label


def _timed(fn, label=None):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    if label is not None:
        _CPU.setdefault(label, []).append(time.process_time() - c)
    return time.perf_counter() - t, out


def headline(d, alpha, repeat, dense_rows, before=None):
    import warnings

    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy import FILLogisticRegression

    X, y = _data(d)
    n = len(y)
    sub = np.arange(min(dense_rows, n))

    def dense(engine):
        # B_i built densely, J_i = -H^-1 B_i by one GEMM per block of rows, SVD per row
        H_inv = engine.H_inv
        out = np.empty(sub.size)
        for start in range(0, sub.size, 50):
            part = sub[start:start + 50]
            B = engine.dense_b(part)  # (r, p, m)
            r, p, m = B.shape
            J = (H_inv @ B.transpose(1, 0, 2).reshape(p, r * m)).reshape(p, r, m)
            out[start:start + 50] = np.linalg.svd(J.transpose(1, 0, 2),
                                                  compute_uv=False)[:, 0]
        return out

    rows = {k: [] for k in ("sk_lbfgs", "sk_newton", "fit", "eta", "dense_inv_t",
                            "dense_rows_t")}
    if before is not None:
        rows.update(fit_before=[], eta_before=[])
    for _ in range(repeat):
        if before is not None:
            with _use_engine(before):
                est = FILLogisticRegression(sigma=1.0, alpha=alpha, random_state=0)
                t, est = _timed(lambda est=est: est.fit(X, y))
                rows["fit_before"].append(t)
                t, eta_before = _timed(lambda est=est: est.eta_)
                rows["eta_before"].append(t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, _ = _timed(lambda: LogisticRegression(C=1.0 / (n * alpha), max_iter=1000)
                          .fit(X, y), "sk_lbfgs")
            rows["sk_lbfgs"].append(t)
            t, sk = _timed(lambda: LogisticRegression(
                C=1.0 / (n * alpha), solver="newton-cholesky", tol=1e-10, max_iter=1000)
                .fit(X, y), "sk_newton")
            rows["sk_newton"].append(t)
        est = FILLogisticRegression(sigma=1.0, alpha=alpha, random_state=0)
        t, est = _timed(lambda est=est: est.fit(X, y), "fit")
        rows["fit"].append(t)
        t, eta = _timed(lambda est=est: est.eta_, "eta")
        rows["eta"].append(t)
        # the dense path on the first rows of the same fit (timed in every round too)
        engine = est._audit_engine()
        t, _ = _timed(lambda engine=engine: np.linalg.inv(engine.H))
        rows["dense_inv_t"].append(t)
        t, dense_eta = _timed(lambda engine=engine: dense(engine))
        rows["dense_rows_t"].append(t)
    best = {k: min(v) for k, v in rows.items()}
    engine = est._audit_engine()
    theta = engine.theta.reshape(10, -1)
    coef_gap = float(np.abs(theta[:, :d] - sk.coef_).max())

    # dense Jacobians on the first rows, extrapolated (best of the rounds)
    t_inv, t_dense_rows = best["dense_inv_t"], best["dense_rows_t"]
    dense_total = t_inv + t_dense_rows * n / sub.size
    diff = float(np.max(np.abs(dense_eta - eta[sub]) / eta[sub]))
    before_diff = (float(np.max(np.abs(eta_before - eta) / eta)) if before is not None
                   else None)
    return dict(n=n, d=d, K=10, alpha=alpha, **{k: v for k, v in best.items()},
                cpu={k: min(v) for k, v in _CPU.items()}, all_rounds=rows,
                dense_inverse=t_inv, dense_rows=int(sub.size),
                dense_rows_time=t_dense_rows, dense_total_est=dense_total,
                dense_max_rel_diff=diff, coef_gap_vs_newton_cholesky=coef_gap,
                before_max_rel_diff=before_diff,
                n_iter=int(est.n_iter_), eta_max=float(eta.max()))


def one_d(d, alpha):
    """Fit + all etas at this d (run in a fresh subprocess)."""
    from sklearn_privacy import FILLogisticRegression

    X, y = _data(d)
    t0 = time.perf_counter()
    est = FILLogisticRegression(sigma=1.0, alpha=alpha, random_state=0).fit(X, y)
    t_fit = time.perf_counter() - t0
    eta = est.eta_
    total = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return dict(d=d, fit=t_fit, total=total, peak_rss_mib=peak_kib / 1024,
                eta_max=float(eta.max()))


def one_run(alpha, dense_rows):
    """One round of the headline (run in a fresh subprocess by ``--runs``)."""
    load = os.getloadavg()[0]
    h = headline(50, alpha, 1, dense_rows)
    keep = ("sk_lbfgs", "sk_newton", "fit", "eta", "cpu", "dense_max_rel_diff",
            "coef_gap_vs_newton_cholesky", "n_iter")
    return dict(load_start=load, load_end=os.getloadavg()[0], **{k: h[k] for k in keep})


def runs_table(n_runs, alpha, dense_rows, goal=8.0):
    """``n_runs`` fresh processes, one headline round each: the goal's table."""
    print(f"\nMNIST 5k, 10 classes, PCA-50, alpha={alpha}: {n_runs} runs, each a fresh "
          "process with one round (fit + all etas vs one scikit-learn lbfgs fit, "
          "same penalty)")
    print("| run | load avg 1 min (start / end) | sklearn lbfgs (s) | FIL fit (s) | "
          "all 5,000 etas (s) | fit + etas (s) | x sklearn (wall) | x sklearn (CPU) | "
          "max rel. diff vs dense SVD | coef gap vs newton-cholesky |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    wall, cpu = [], []
    for i in range(n_runs):
        out = subprocess.run([sys.executable, __file__, "--one-run", "--alpha", str(alpha),
                              "--dense-rows", str(dense_rows)], capture_output=True,
                             text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        ours = r["fit"] + r["eta"]
        c = r["cpu"]
        wall.append(ours / r["sk_lbfgs"])
        cpu.append((c["fit"] + c["eta"]) / c["sk_lbfgs"])
        print(f"| {i + 1} | {r['load_start']:.2f} / {r['load_end']:.2f} | "
              f"{r['sk_lbfgs']:.3f} | {r['fit']:.3f} | {r['eta']:.3f} | {ours:.3f} | "
              f"**{wall[-1]:.1f}** | {cpu[-1]:.1f} | {r['dense_max_rel_diff']:.1e} | "
              f"{r['coef_gap_vs_newton_cholesky']:.1e} |")
    verdict = "holds" if max(wall) <= goal else "does NOT hold"
    print(f"\nwall ratio: max {max(wall):.2f}, median {np.median(wall):.2f}; CPU ratio: "
          f"max {max(cpu):.2f}, median {np.median(cpu):.2f}. Goal (<= {goal:g}x in each "
          f"run, wall): {verdict}.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dense-rows", type=int, default=500)
    ap.add_argument("--d-grid", default="50,100,150,200,250,300",
                    help="comma-separated d values ('' skips the scan)")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--before", default=None,
                    help="git ref whose multinomial solver and engine are timed side by "
                         "side with the current ones (e.g. the commit before a change)")
    ap.add_argument("--runs", type=int, default=0,
                    help="print the goal's table of this many runs (fresh processes, "
                         "one round each) instead of the headline")
    ap.add_argument("--one-d", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one_d is not None:
        print(json.dumps(one_d(args.one_d, args.alpha)))
        return
    if args.one_run:
        print(json.dumps(one_run(args.alpha, args.dense_rows)))
        return

    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}"
          f", numpy {np.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if args.runs:
        runs_table(args.runs, args.alpha, args.dense_rows)
        return
    before = _before_module(args.before) if args.before else None
    h = headline(50, args.alpha, args.repeat, args.dense_rows, before)
    sk = h["sk_lbfgs"]
    ours = h["fit"] + h["eta"]
    print(f"\nMNIST 5k, 10 classes, PCA-50, alpha={args.alpha} (C = 1/(n alpha)), "
          f"best of {args.repeat} interleaved rounds")
    steps = [("sklearn LogisticRegression (lbfgs, tol=1e-4)", "sk_lbfgs"),
             ("sklearn LogisticRegression (newton-cholesky, tol=1e-10)", "sk_newton"),
             ("FILLogisticRegression.fit (exact minimiser + audit state)", "fit"),
             ("all 5,000 etas (structured)", "eta")]
    if before is not None:
        print(f"(before = the solver and engine of {args.before}, same rounds)")
        print("| step | before (s) | x sklearn lbfgs | after (s) | x sklearn lbfgs |")
        print("|---|---|---|---|---|")
        for name, key in steps:
            b = h.get(key + "_before", h[key])
            print(f"| {name} | {b:.3f} | {b / sk:.1f} | {h[key]:.3f} | {h[key] / sk:.1f} |")
        old_total = h["fit_before"] + h["eta_before"]
        print(f"| **fit + all etas** | **{old_total:.3f}** | **{old_total / sk:.1f}** | "
              f"**{ours:.3f}** | **{ours / sk:.1f}** |")
        print(f"| dense / structured etas | | {h['dense_total_est'] / h['eta_before']:.1f} "
              f"| | {h['dense_total_est'] / h['eta']:.1f} |")
    else:
        print("| step | seconds | x sklearn lbfgs fit |")
        print("|---|---|---|")
        for name, key in steps:
            print(f"| {name} | {h[key]:.3f} | {h[key] / sk:.1f} |")
        print(f"| **fit + all etas** | **{ours:.3f}** | **{ours / sk:.1f}** |")
    print(f"| dense Jacobians + SVD, all rows (extrapolated from {h['dense_rows']} rows: "
          f"{h['dense_rows_time']:.2f} s, + H^-1 {h['dense_inverse']:.3f} s) | "
          f"{h['dense_total_est']:.2f} | {h['dense_total_est'] / sk:.1f} |")
    rounds = {k: [round(x, 3) for x in v] for k, v in h["all_rounds"].items()}
    print(f"\nstructured etas vs dense: {h['dense_total_est'] / h['eta']:.0f}x faster, max "
          f"rel. diff {h['dense_max_rel_diff']:.1e}; |coef - sklearn newton-cholesky| max "
          f"{h['coef_gap_vs_newton_cholesky']:.1e}; Newton/chord steps {h['n_iter']}; "
          + (f"max rel. diff of the etas before/after {h['before_max_rel_diff']:.1e}; "
             if before is not None else "") +
          f"all rounds {json.dumps(rounds)}")

    print(f"\nLargest d within {args.budget:.0f} s (fit + all 5,000 10-class etas, "
          "fresh process each)")
    print("| d | parameters K(d+1) | fit (s) | fit + etas (s) | peak RSS (MiB) |")
    print("|---|---|---|---|---|")
    best = None
    for d in [int(v) for v in args.d_grid.split(",") if v.strip()]:
        try:
            out = subprocess.run([sys.executable, __file__, "--one-d", str(d),
                                  "--alpha", str(args.alpha)], capture_output=True,
                                 text=True, timeout=4 * args.budget, check=True)
        except subprocess.TimeoutExpired:
            print(f"| {d} | {10 * (d + 1)} | - | > {4 * args.budget:.0f} | - |")
            break
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {d} | {10 * (d + 1)} | {r['fit']:.1f} | {r['total']:.1f} | "
              f"{r['peak_rss_mib']:.0f} |")
        if r["total"] <= args.budget:
            best = r
        else:
            break
    if best is not None:
        print(f"\nlargest d within {args.budget:.0f} s: {best['d']} "
              f"({best['total']:.1f} s, peak RSS {best['peak_rss_mib']:.0f} MiB)")


if __name__ == "__main__":
    main()
