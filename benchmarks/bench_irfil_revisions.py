"""IRFIL on Adult against one scikit-learn fit, for several git revisions side by side.

Each revision is checked out into a temporary git worktree (``git worktree add --detach``)
and measured in its own Python process (``PYTHONPATH`` = that checkout), in interleaved
rounds: round r runs every revision once, so load on a shared machine affects all of them
alike. In each process: the bundled Adult data (30,162 x 86, the FIL paper's encoding),
``LogisticRegression()`` and ``IRFILLogisticRegression(sigma=1, alpha=1e-3,
eta_max_iter=10)`` alternately, ``--fits`` times each; the process reports the best time of
each and their ratio, in wall time and in CPU time (``time.process_time``: all threads of
the process, busy-waiting BLAS threads included), which a shared machine's load inflates
far less than wall time. The table gives, per revision, the median of the rounds' ratios
and their range. The floor of the ratio is one ``LogisticRegression()`` fit (lbfgs, default
tolerance) on the same rows in the same process.

Run: ``python benchmarks/bench_irfil_revisions.py HEAD REV ...`` (about 10 s per revision
and round on a quiet 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time, warnings, json
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn_privacy import IRFILLogisticRegression
from sklearn_privacy.datasets import load_adult
try:
    adult = load_adult(variant="fil")
except TypeError:   # revisions before the variant parameter: the FIL encoding by default
    adult = load_adult()
X, y = adult.data, adult.target.astype(float)
lr, ir, lr_cpu, ir_cpu = [], [], [], []
for _ in range({fits}):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t, c = time.perf_counter(), time.process_time()
        LogisticRegression().fit(X, y.astype(int))
        lr.append(time.perf_counter() - t); lr_cpu.append(time.process_time() - c)
    try:
        est = IRFILLogisticRegression(sigma=1.0, alpha=1e-3, eta_max_iter=10, random_state=0)
    except TypeError:   # revisions before the parameter was named eta_max_iter
        est = IRFILLogisticRegression(sigma=1.0, alpha=1e-3, n_iter=10, random_state=0)
    t, c = time.perf_counter(), time.process_time()
    est.fit(X, y)
    ir.append(time.perf_counter() - t); ir_cpu.append(time.process_time() - c)
print(json.dumps({{"lr": min(lr), "irfil": min(ir), "lr_cpu": min(lr_cpu),
                   "irfil_cpu": min(ir_cpu),
                   "cv": float(est.eta_.std() / est.eta_.mean())}}))
"""


def run(checkout, fits):
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", CHILD.format(fits=fits)], cwd=checkout,
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"# {checkout.name}: failed ({last})", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fits", type=int, default=3)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="irfil-revisions-"))
    checkouts = {}
    try:
        for rev in args.revisions:
            path = tmp / rev.replace("/", "_")
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(path), rev],
                           cwd=ROOT, check=True)
            checkouts[rev] = path
        results = {rev: [] for rev in args.revisions}
        loads = []
        for _ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            for rev, path in checkouts.items():
                results[rev].append(run(path, args.fits))
        print(f"# {args.rounds} interleaved rounds, best of {args.fits} fits per round; "
              f"load average at the rounds' starts: "
              + ", ".join(f"{x:.1f}" for x in loads))
        print("| revision | LogisticRegression s | IRFIL (10 iterations) s | "
              "IRFIL / LR, median | range | LR CPU s | IRFIL CPU s | IRFIL / LR, CPU time | "
              "final std/mean |")
        print("|---|---|---|---|---|---|---|---|---|")
        for rev, rows in results.items():
            rows = [r for r in rows if r is not None]
            if not rows:
                print(f"| {rev} | - | - | - | - | - | - | - | - |")
                continue
            ratios = [r["irfil"] / r["lr"] for r in rows]
            print(f"| {rev} | {statistics.median(r['lr'] for r in rows):.3f} | "
                  f"{statistics.median(r['irfil'] for r in rows):.3f} | "
                  f"{statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x | "
                  f"{statistics.median(r['lr_cpu'] for r in rows):.3f} | "
                  f"{statistics.median(r['irfil_cpu'] for r in rows):.3f} | "
                  f"{statistics.median(r['irfil_cpu'] / r['lr_cpu'] for r in rows):.2f}x | "
                  f"{rows[-1]['cv']:.1e} |", flush=True)
    finally:
        for path in checkouts.values():
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT,
                           check=False)


if __name__ == "__main__":
    main()
