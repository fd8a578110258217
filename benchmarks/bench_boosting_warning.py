"""False-positive and false-negative rates of the private boosting's
``NoiseDominatesWarning`` on the cells of ``benchmarks/bench_dp_tabular.py``.

A cell (table, epsilon, pure or Gaussian) *loses* when fewer than 90 % of its draws score
at least the constant (training majority class / training mean). The warning's public
noise-to-signal ratio is computed once per cell (it does not depend on the rows or the
draw); the warning fires where it exceeds ``LOSE_TO_CONSTANT_RATIO``. The thresholds
were chosen on the cells at epsilon 0.5, 1 and 4 (``CHOSEN_ON``): the rates are printed
for those (in-sample) and for the other epsilons (out of sample) apart.

Needs the prepared tables and the library worker's per-draw scores of
``bench_dp_tabular.py`` (``--data DIR`` holding ``<table>.npz``/``.json`` and
``library.json``, e.g. from ``bench_dp_tabular.py --tools library --draws 20 --eps 0.5 1
4``). From the repository root::

    PYTHONPATH=$PWD python benchmarks/bench_boosting_warning.py --data /tmp/acc2/data
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dp_tabular import _load, _models  # noqa: E402

import sklearn_privacy.additive._boosting as boosting  # noqa: E402
from sklearn_privacy.exceptions import NoiseDominatesWarning  # noqa: E402

WIN_SHARE = 0.9
#: the epsilons whose cells chose the thresholds
CHOSEN_ON = (0.5, 1.0, 4.0)


def ratio_of(fit, Xtr, ytr):
    """The public ratio of one cell, read from the warning with the threshold at 0."""
    saved = boosting._LOSE_RATIO
    boosting._LOSE_RATIO = dict.fromkeys(saved, 0.0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit(Xtr, ytr, Xtr[:2], 0)
    finally:
        boosting._LOSE_RATIO = saved
    msg = next(str(w.message) for w in caught if w.category is NoiseDominatesWarning)
    return float(re.search(r"histograms is ([0-9.e+-]+) times", msg).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    args = ap.parse_args()
    scores = json.loads((args.data / "library.json").read_text())
    rows = []
    for name, table in scores.items():
        X, y, tr, te, meta = _load(args.data, name)
        const = table["reference"]["constant"]
        for label in ("pure", "gauss"):
            for eps, cell in table[f"library-{label}"].items():
                fit = _models("library", meta, float(eps))[f"library-{label}"]
                ratio = ratio_of(fit, X[tr], y[tr])
                share = float(np.mean(np.asarray(cell["scores"]) >= const))
                task = "regression" if meta["task"] == "regression" else "classification"
                thr = boosting._LOSE_RATIO[task]
                rows.append((name, label, float(eps), ratio, share, share < WIN_SHARE,
                             ratio > thr))
    print("| table | noise | epsilon | ratio | share >= constant | loses | warns |")
    print("|---|---|---|---|---|---|---|")
    for name, label, eps, ratio, share, loses, warn in sorted(rows, key=lambda r: -r[3]):
        print(f"| {name} | {label} | {eps:g} | {ratio:.3g} | {share:.2f} | "
              f"{'yes' if loses else ''} | {'yes' if warn else ''} |")
    print(f"\nthresholds {boosting._LOSE_RATIO}:")
    for what, keep in (("in-sample", lambda e: e in CHOSEN_ON),
                       ("out of sample", lambda e: e not in CHOSEN_ON),
                       ("all", lambda e: True)):
        part = [r for r in rows if keep(r[2])]
        if not part:
            continue
        warns = np.array([r[6] for r in part])
        loses = np.array([r[5] for r in part])
        fp, fn = np.sum(warns & ~loses), np.sum(~warns & loses)
        print(f"{what}: {len(part)} cells, {loses.sum()} lose, {warns.sum()} warn; "
              f"false positives {fp}/{(~loses).sum()}, false negatives {fn}/{loses.sum()}")


if __name__ == "__main__":
    main()
