"""IRFIL per attribute, before and after the weight guardrails (Adult, race columns).

Equalising the attribute-level eta of the race columns drives the weights of whole
groups towards zero; the Hessian then loses curvature in their directions and some
people's whole-row eta grows by orders of magnitude. The table gives, on ``N`` Adult
training rows (rows scaled to norm at most 1, ``sigma = 1e-3``, ``alpha = 1e-3``, ten
reweighting iterations), the unweighted FIL model, IRFIL without bounds and IRFIL with
``weight_bounds=(0.1, 10)``: the largest race eta, the largest whole-row eta, Kish's
effective sample size, the largest individual's weight share, and the accuracy on 5,000
held-out rows.

Run: ``python benchmarks/bench_irfil_guardrails.py [n_rows]`` (default 2000); it rewrites
its table in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from sklearn_privacy import FILLogisticRegression, IRFILLogisticRegression
from sklearn_privacy.datasets import load_adult

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


def main():
    t0 = time.perf_counter()
    load = os.getloadavg()[0]
    a = load_adult()
    X, y = np.asarray(a.data, dtype=float), np.asarray(a.target)
    race = a.sensitive_features["race"]
    rng = np.random.default_rng(0)
    idx = rng.choice(len(X), N, replace=False)
    test = np.setdiff1d(np.arange(len(X)), idx)[:5000]
    X = X / np.linalg.norm(X[idx], axis=1).max()
    kw = dict(sigma=1e-3, alpha=1e-3, random_state=0)
    models = [("FILLogisticRegression (unweighted)", FILLogisticRegression(**kw)),
              ("IRFIL sensitive_features=race, no bound",
               IRFILLogisticRegression(sensitive_features=race, eta_max_iter=10, **kw)),
              ("IRFIL sensitive_features=race, weight_bounds=(0.1, 10)",
               IRFILLogisticRegression(sensitive_features=race, eta_max_iter=10,
                                       weight_bounds=(0.1, 10), **kw))]
    lines = ["<!-- irfil-guardrails:start -->",
             f"Adult, {N:,} training rows, race columns equalised (load average {load:.1f} "
             "on a shared 2-core machine).", "",
             "| model | largest race eta | largest whole-row eta | effective sample size "
             "| largest weight share | accuracy | warned |", "|---|---|---|---|---|---|---|"]
    for name, est in models:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X[idx], y[idx])
        w = getattr(est, "sample_weight_", np.ones(N))
        ess = w.sum() ** 2 / np.sum(w**2)
        warned = any("concentrates" in str(c.message) for c in caught)
        lines.append(
            f"| {name} | {est.eta(columns=race, per_example=True).max():.3g} | "
            f"{est.eta(per_example=True).max():.3g} | {ess:,.0f} | "
            f"{w.max() / w.sum():.2%} | {np.mean(est.predict(X[test]) == y[test]):.3f} | "
            f"{'yes' if warned else 'no'} |")
    lines.append(f"\n{time.perf_counter() - t0:.0f} s in all.")
    lines.append("<!-- irfil-guardrails:end -->")
    table = "\n".join(lines)
    print(table)
    path = Path(__file__).with_name("RESULTS.md")
    text = path.read_text(encoding="utf-8")
    if "<!-- irfil-guardrails:start -->" in text:
        text = re.sub(r"<!-- irfil-guardrails:start -->.*<!-- irfil-guardrails:end -->",
                      table, text, flags=re.S)
    else:
        text += ("\n\n## IRFIL per attribute: weight guardrails "
                 "(`bench_irfil_guardrails.py`)\n\n" + table + "\n")
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
