"""The main demo: ``python -m sklearn_privacy.demo``.

Each component contributes one section module named ``_sN_<component>.py`` that
defines ``TITLE`` (str), ``compute()`` (the figures, from the setups of
``sklearn_privacy._experiments``), ``render(result) -> str`` (a table, the paper's
figures next to ours and one sentence on what they mean), ``check(result) -> list[str]``
(the claims of the section's text that the figures do not satisfy, each within its stated
tolerance; empty when all hold) and ``run() -> str`` (``render(compute())``). A section
that cannot run with the installed dependencies defines ``skipped() -> str | None``, the
text it prints instead. Sections run in the order of their file names on the bundled data
and print their text; the demo exits with status 1 when any claim fails, so the CI run of
the demo checks the reproductions. Tests and benchmarks import setups from
``sklearn_privacy._experiments``, never from this package.
"""

import importlib
import pkgutil
import sys
import time


def section_modules():
    """Return the demo section modules in run order."""
    names = sorted(
        m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("_s")
    )
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def format_table(header, rows):
    """Render ``rows`` (sequences of str) under ``header`` as a fixed-width text table."""
    cols = [header, *rows]
    widths = [max(len(str(r[j])) for r in cols) for j in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def run_section(module):
    """Text and failed claims of one section: ``(text, [claim, ...])``."""
    skipped = getattr(module, "skipped", lambda: None)()
    if skipped is not None:
        return skipped, []
    result = module.compute()
    return module.render(result), list(module.check(result))


def main(argv=None):
    """Run every demo section, print its table; return 1 if a claim failed, else 0."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m sklearn_privacy.demo")
    parser.add_argument(
        "--only", nargs="*", default=None,
        help="run only the sections whose module name contains one of these words",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    failed = []
    for module in section_modules():
        if args.only and not any(w in module.__name__ for w in args.only):
            continue
        t0 = time.perf_counter()
        print(f"\n=== {module.TITLE} ===", flush=True)
        text, failures = run_section(module)
        print(text, flush=True)
        for claim in failures:
            print(f"CLAIM FAILED: {claim}", flush=True)
        failed += [f"{module.TITLE}: {claim}" for claim in failures]
        print(f"({time.perf_counter() - t0:.1f} s)", flush=True)
    print(f"\nDemo finished in {time.perf_counter() - start:.1f} s.")
    if failed:
        print(f"{len(failed)} claim(s) of the demo did not hold:", *failed, sep="\n  ",
              file=sys.stderr)
        return 1
    return 0
