"""Import time of ``sklearn_privacy`` next to ``import sklearn``, in fresh processes.

Each statement runs in a new interpreter and is timed with ``time.perf_counter`` around
it (interpreter start-up left out); ``import sklearn`` and ``import sklearn_privacy`` are
cross-checked with ``python -X importtime`` (cumulative time of the top-level module).
Statements alternate within a round (so machine load hits them alike) and the median of
``--repeat`` rounds is reported, with the ratio to ``import sklearn`` measured in the same
rounds.

``import sklearn`` itself imports ``sklearn.base`` and, through ``sklearn.utils``, scipy
(``scipy.stats`` and ``scipy.optimize`` among others) and, when installed, pandas; the
package cannot import faster than that floor. ``import sklearn; import sklearn_privacy``
shows what the package adds on top of it, and ``from sklearn_privacy import
FILLogisticRegression`` what the first use of a component costs (its subpackage and the
scikit-learn modules it builds on are imported then).

Run: ``python benchmarks/bench_import_time.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

# label -> (code run first, untimed; statement timed)
STATEMENTS = {
    "import sklearn": ("", "import sklearn"),
    "import sklearn_privacy": ("", "import sklearn_privacy"),
    "import sklearn_privacy, after import sklearn (added)": (
        "import sklearn", "import sklearn_privacy"),
    "from sklearn_privacy import FILLogisticRegression, after import sklearn": (
        "import sklearn", "from sklearn_privacy import FILLogisticRegression"),
    "import sklearn_privacy.attacks, after import sklearn": (
        "import sklearn", "import sklearn_privacy.attacks"),
}

# the cross-check: ``python -X importtime``'s cumulative time of the top-level module
IMPORTTIME = {"import sklearn": "sklearn", "import sklearn_privacy": "sklearn_privacy"}

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def wall_seconds(setup: str, statement: str) -> float:
    """Wall time of ``statement`` in a fresh interpreter, after the untimed ``setup``."""
    code = (f"{setup}\nimport time\nt = time.perf_counter()\n{statement}\n"
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[-1])


def importtime_seconds(statement: str, module: str) -> float:
    """Cumulative ``-X importtime`` figure of ``module`` in a fresh interpreter."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], env=ENV,
                         capture_output=True, text=True, check=True).stderr
    total = None
    for line in err.splitlines():
        match = LINE.match(line)
        if match and match.group(4) == module:
            total = int(match.group(2)) * 1e-6
    if total is None:
        raise RuntimeError(f"{module} not in the import-time trace of {statement!r}")
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import sklearn_privacy

    print(f"sklearn_privacy from {os.path.dirname(sklearn_privacy.__file__)}")
    times = {label: [] for label in STATEMENTS}
    traced = {label: [] for label in IMPORTTIME}
    for _ in range(args.repeat):
        for label, (setup, statement) in STATEMENTS.items():
            times[label].append(wall_seconds(setup, statement))
        for label, module in IMPORTTIME.items():
            traced[label].append(importtime_seconds(label, module))
    base = statistics.median(times["import sklearn"])
    print(f"| statement (fresh process) | median of {args.repeat} (s) | min (s) "
          "| ratio to import sklearn |")
    print("| --- | --- | --- | --- |")
    for label, values in times.items():
        med = statistics.median(values)
        print(f"| `{label}` | {med:.3f} | {min(values):.3f} | {med / base:.2f} |")
    base = statistics.median(traced["import sklearn"])
    for label, values in traced.items():
        med = statistics.median(values)
        print(f"| `{label}` (-X importtime, cumulative) | {med:.3f} | {min(values):.3f} "
              f"| {med / base:.2f} |")


if __name__ == "__main__":
    main()
