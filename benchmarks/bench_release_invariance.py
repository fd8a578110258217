"""Figures of the random-pipeline property test of ``neighbour_invariance``.

Runs every family of ``tests/test_release_invariance.py`` with the pipeline counts of its
slow test,
and prints per family: pipelines, pipelines with a finite claim, neighbours fitted,
pipelines whose reference data set was refused, and the cases with a finite claim in
which an observable differed (with the kinds of difference). Under every finite claim
the goal is 0 such cases.

Run: ``python benchmarks/bench_release_invariance.py [--families a,b] [--scale 1.0]``
(about ten minutes on a shared 2-core machine at scale 1).
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import test_release_invariance as T  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(T.FAMILIES))
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    totals = collections.Counter()
    print("| family | pipelines | finite claim | neighbours | refused on D | "
          "cases with a difference | kinds of difference | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for family in args.families.split(","):
        n = max(1, round(T._FULL.get(family, 8) * args.scale))
        t = time.perf_counter()
        figures, found = T._run_family(family, n)
        whats = collections.Counter(w for r in found for w in r.whats())
        totals.update(figures)
        totals["cases with a difference"] += len(found)
        print(f"| {family} | {figures['pipelines']} | {figures['finite']} | "
              f"{figures['neighbours']} | "
              f"{figures['refused_on_d']} | {len(found)} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(whats.items())) or '-'} | "
              f"{time.perf_counter() - t:.0f} |", flush=True)
    print(f"| total | {totals['pipelines']} | {totals['finite']} | "
          f"{totals['neighbours']} | {totals['refused_on_d']} | "
          f"{totals['cases with a difference']} | | |")


if __name__ == "__main__":
    main()
