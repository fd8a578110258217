"""What ``import sklearn_privacy`` costs: no heavy module beyond what ``import sklearn`` loads.

Each check runs in a fresh interpreter (``sys.modules`` of this test process is already
full) and compares the modules loaded against a run of ``import sklearn`` alone, so the
test holds on any scikit-learn version, whatever that version imports itself. Before the
top-level names became lazy, ``import sklearn_privacy`` imported every subpackage and,
through ``privacy._tradeoff``, ``scipy.signal`` (0.15 s, not imported by scikit-learn): the
first test failed on that code. The timings are in ``benchmarks/bench_import_time.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import sklearn_privacy

# imported only where used: optional dependencies (matplotlib, dask, pandas) and scipy
# modules that take a tenth of a second or more to import
HEAVY = ("scipy.stats", "scipy.signal", "pandas", "matplotlib", "dask", "polars")
OPTIONAL = ("matplotlib", "dask", "polars")


def _modules_after(code: str) -> set[str]:
    """Top-level-or-submodule names in ``sys.modules`` after ``code``, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.fixture(scope="module")
def sklearn_modules():
    return _modules_after("import sklearn")


def _heavy(modules: set[str], names=HEAVY) -> list[str]:
    return sorted(name for name in names if name in modules)


def test_import_loads_nothing_heavy_beyond_sklearn(sklearn_modules):
    ours = _modules_after("import sklearn_privacy")
    extra = set(_heavy(ours)) - set(_heavy(sklearn_modules))
    assert not extra, f"import sklearn_privacy imports {sorted(extra)}; import them lazily"
    # the subpackages are imported on first use, not by the package import (the version
    # string's one-line module excepted)
    assert not [m for m in ours
                if m.startswith("sklearn_privacy.") and m != "sklearn_privacy._version"]


def test_every_subpackage_leaves_optional_dependencies_unimported():
    """matplotlib, dask and polars are optional: no public module imports them at load."""
    subpackages = sorted(sklearn_privacy._SUBPACKAGES)
    code = "import sklearn_privacy\n" + "\n".join(
        f"import sklearn_privacy.{name}" for name in subpackages)
    loaded = _modules_after(code)
    assert not _heavy(loaded, OPTIONAL), _heavy(loaded, OPTIONAL)
    assert all(f"sklearn_privacy.{name}" in loaded for name in subpackages)


def test_lazy_names_resolve_to_their_definitions():
    import sklearn_privacy.fil

    for name in sklearn_privacy.__all__:
        assert getattr(sklearn_privacy, name) is not None, name
        assert name in dir(sklearn_privacy)
    assert sklearn_privacy.FILLogisticRegression is sklearn_privacy.fil.FILLogisticRegression
    assert sklearn_privacy.attacks.lira.__module__.startswith("sklearn_privacy.attacks")
    with pytest.raises(AttributeError, match="no attribute 'FILLogisticRegresion'"):
        sklearn_privacy.FILLogisticRegresion  # noqa: B018
    # the lazy table lists exactly the public names (a new name cannot be forgotten)
    assert set(sklearn_privacy._LAZY) == set(sklearn_privacy.__all__) - {"__version__"}
