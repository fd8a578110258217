"""Coverage of every confidence interval the library reports, by simulation.

For each interval, ``RUNS`` independent data sets are drawn from a model whose true value
is known in closed form; the table gives the fraction of runs whose 95 % interval
contains the truth (target: within 1.5 points of 95 %) with its binomial standard error.

* AUC (``MembershipInferenceResult.confidence_interval("auc")``, the report's tables and
  the ROC legends): DeLong, logit scale. Scores N(mu, 1) for members, N(0, 1) for
  non-members; truth Phi(mu / sqrt 2).
* TPR at FPR (stratified percentile bootstrap): truth 1 - Phi(Phi^-1(1 - fpr) - mu).
* Balanced accuracy of the thresholded attack (MOVER-Wilson; the former percentile
  bootstrap for comparison): the threshold is chosen on the known half; truth is the
  balanced accuracy of that threshold on the two Gaussians.
* Attribute-inversion accuracy (Wilson): an attack correct on each row with
  probability p.

Run: ``python benchmarks/bench_interval_coverage.py [runs]`` (default 1000); it rewrites
the coverage table in ``benchmarks/RESULTS.md`` between its markers.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

from sklearn_privacy.attacks import AttributeInversionResult, evaluate_scores

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
CONF = 0.95


def _coverage(hits):
    hits = np.asarray(hits, dtype=float)
    cov = hits.mean()
    return cov, np.sqrt(cov * (1 - cov) / hits.size)


def membership_runs(mu, n, runs, seed, *, fpr=0.1, n_boot=500):
    """Coverage of the AUC, TPR at ``fpr`` and balanced accuracy intervals."""
    rng = np.random.default_rng(seed)
    true_auc = norm.cdf(mu / np.sqrt(2))
    true_tpr = 1 - norm.cdf(norm.ppf(1 - fpr) - mu)
    hits = {k: [] for k in ("auc", "tpr", "bal", "bal_boot")}
    for r in range(runs):
        s_in, s_out = rng.normal(mu, 1, 2 * n), rng.normal(0, 1, 2 * n)
        res = evaluate_scores(np.arange(4 * n) < 2 * n, np.r_[s_in, s_out],
                              thresholds="global", random_state=int(r))
        lo, hi = res.confidence_interval("auc", confidence=CONF)
        hits["auc"].append(lo <= true_auc <= hi)
        lo, hi = res.confidence_interval("tpr_at_fpr", fpr=fpr, confidence=CONF,
                                         n_resamples=n_boot, random_state=r)
        hits["tpr"].append(lo <= true_tpr <= hi)
        t = res.thresholds[None]
        true_bal = 0.5 * ((1 - norm.cdf(t - mu)) + norm.cdf(t))
        lo, hi = res.confidence_interval("balanced_accuracy", confidence=CONF)
        hits["bal"].append(lo <= true_bal <= hi)
        # the former method, for comparison: percentile bootstrap of the decisions
        vals = res._resampled("balanced_accuracy", None,
                              __import__("sklearn_privacy.attacks._roc",
                                         fromlist=["x"]).bootstrap_weights,
                              np.random.default_rng(r), n_boot)
        lo, hi = np.quantile(vals, [(1 - CONF) / 2, (1 + CONF) / 2])
        hits["bal_boot"].append(lo <= true_bal <= hi)
    return {k: _coverage(v) for k, v in hits.items()}, true_auc, true_tpr


def inversion_runs(p, n, runs, seed):
    rng = np.random.default_rng(seed)
    hits = []
    cand = np.array([[0.0], [1.0]])
    truth = np.zeros(n, dtype=int)
    for _ in range(runs):
        pred = (rng.random(n) >= p).astype(int)[None, :]
        res = AttributeInversionResult.from_predictions(pred, truth, cand)
        lo, hi = res.confidence_interval(CONF)
        hits.append(lo <= p <= hi)
    return _coverage(hits)


def main():
    t0 = time.perf_counter()
    load = os.getloadavg()
    rows = []
    for mu, n in ((0.5, 100), (1.0, 250)):
        cov, true_auc, true_tpr = membership_runs(mu, n, RUNS, seed=int(10 * mu) + n)
        setting = f"scores N({mu:g}, 1) vs N(0, 1), {n} + {n} evaluation rows"
        rows += [("AUC (DeLong, logit)", setting + f", AUC {true_auc:.3f}", cov["auc"]),
                 ("TPR at FPR 0.1 (percentile bootstrap, 500)",
                  setting + f", TPR {true_tpr:.3f}", cov["tpr"]),
                 ("balanced accuracy (MOVER-Wilson)", setting, cov["bal"]),
                 ("balanced accuracy (former percentile bootstrap)", setting,
                  cov["bal_boot"])]
    for p, n in ((0.7, 600), (0.9, 200)):
        rows.append(("attribute-inversion accuracy (Wilson)",
                     f"Bernoulli({p:g}) per row, {n} rows", inversion_runs(p, n, RUNS, n)))
    seconds = time.perf_counter() - t0
    lines = ["<!-- coverage:start -->",
             f"Coverage of the 95 % intervals, {RUNS:,} simulated runs each (target 95 % "
             "+- 1.5 points; SE is the binomial standard error of the coverage). "
             f"{seconds:.0f} s on a shared 2-core machine (load average "
             f"{load[0]:.1f} at the start).", "",
             "| interval | setting | coverage | SE |", "|---|---|---|---|"]
    for name, setting, (cov, se) in rows:
        lines.append(f"| {name} | {setting} | {100 * cov:.1f} % | {100 * se:.1f} |")
    lines.append("<!-- coverage:end -->")
    table = "\n".join(lines)
    print(table)
    path = Path(__file__).with_name("RESULTS.md")
    text = path.read_text(encoding="utf-8")
    if "<!-- coverage:start -->" in text:
        text = re.sub(r"<!-- coverage:start -->.*<!-- coverage:end -->", table, text,
                      flags=re.S)
    else:
        text += ("\n\n## Coverage of the reported intervals "
                 "(`bench_interval_coverage.py`)\n\n" + table + "\n")
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
