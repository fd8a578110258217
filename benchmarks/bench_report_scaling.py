"""Time and peak memory of ``PrivacyReport`` against the number of rows (log-log slope).

Synthetic data: ``n`` training rows and ``n`` population rows of 20 Gaussian features, a
logistic label, and a ``LogisticRegression`` fitted beforehand (its fit is not counted).
The report runs with its defaults (1,000 one-run canaries, which refit the model once on
the ``n`` rows, a numeric sensitive column attacked by regression). Each size runs in its
own process; the peak resident memory is that process's (data, model and report), the
time is the report's alone. The slope of log(time) on log(n) is printed.

Run: ``python benchmarks/bench_report_scaling.py [n ...]`` (default 1e4 1e5 1e6); it
rewrites its table in ``benchmarks/RESULTS.md``. The machine is shared: the load average is
recorded with every run.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def child(n):
    import warnings

    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy.report import PrivacyReport

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    w = rng.normal(size=20)

    def draw(m):
        X = rng.normal(size=(m, 20))
        return X, (X @ w + rng.logistic(size=m) > 0).astype(int)

    X, y = draw(n)
    Xp, yp = draw(n)
    model = LogisticRegression().fit(X, y)
    load = os.getloadavg()[0]
    t = time.perf_counter()
    rep = PrivacyReport.from_estimator(model, X, y, Xp, yp, sensitive_features=[0],
                                       random_state=0,
                                       include_private_details=True)  # every section
    seconds = time.perf_counter() - t
    page = rep.to_html()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux: KB)
    print(json.dumps({"n": n, "seconds": seconds, "peak_mb": peak, "load": load,
                      "timings": rep.timings, "page_kb": len(page) / 1024}))


def main():
    sizes = [int(float(a)) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    out = []
    for n in sizes:
        res = subprocess.run([sys.executable, __file__, "--child", str(n)],
                             capture_output=True, text=True, check=True)
        out.append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(out[-1], flush=True)
    ns = np.array([o["n"] for o in out], dtype=float)
    ts = np.array([o["seconds"] for o in out])
    slope = np.polyfit(np.log(ns), np.log(ts), 1)[0] if len(out) > 1 else float("nan")
    lines = ["<!-- report-scaling:start -->",
             "| rows (train + population) x 20 features | report s | peak memory (process) "
             "| load average | slowest sections |", "|---|---|---|---|---|"]
    for o in out:
        slow = sorted(o["timings"].items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"| {o['n']:,} + {o['n']:,} | {o['seconds']:.1f} | "
                     f"{o['peak_mb']:,.0f} MB | {o['load']:.1f} | "
                     + ", ".join(f"{k} {v:.1f} s" for k, v in slow) + " |")
    lines += ["", f"log-log slope of time on rows: {slope:.2f} (2 shared cores).",
              "<!-- report-scaling:end -->"]
    table = "\n".join(lines)
    print(table)
    path = Path(__file__).with_name("RESULTS.md")
    text = path.read_text(encoding="utf-8")
    if "<!-- report-scaling:start -->" in text:
        text = re.sub(r"<!-- report-scaling:start -->.*<!-- report-scaling:end -->", table,
                      text, flags=re.S)
    else:
        text += ("\n\n## PrivacyReport cost against rows (`bench_report_scaling.py`)\n\n"
                 + table + "\n")
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        main()
