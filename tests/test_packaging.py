"""Packaging and the first commands: what a new user meets before reading any API page.

* ``.ci/run`` runs exactly README.md's commands, each in a fresh virtual environment, and
  fails when one of them fails (checked by running it on a stub README whose demo fails).
* The version, the changelog and the deprecation messages agree; the license files that
  ``pyproject.toml`` declares exist.
* Internals are private; the main demo runs without pandas (a core-dependency install).
* ``_helmert`` (now :func:`scipy.linalg.helmert`) is the orthonormal basis it was.
"""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import sklearn_privacy

ROOT = Path(__file__).resolve().parents[1]
# the package under test: the checkout's sources, or the installed wheel when the suite runs
# from an unpacked sdist (README's test command removes the sdist's copy of the package)
PACKAGE = Path(sklearn_privacy.__file__).resolve().parent
sys.path.insert(0, str(ROOT / ".ci"))
import readme_commands  # noqa: E402

sys.path.pop(0)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- .ci/run
def test_readme_commands_are_the_demo_both_suites_lint_and_docs():
    cmds = readme_commands.commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(cmds) == 4
    demo, suite, minimum, docs = cmds
    assert demo.endswith("-m sklearn_privacy.demo")
    # the newest stack tests the installed wheel with the tests of the unpacked sdist
    assert "-m build" in suite and "[test" in suite and ".whl" in suite
    assert "rm -r .venv/sdist/sklearn_privacy" in suite
    assert suite.endswith("-m pytest -q ./tests --pyargs sklearn_privacy")
    assert "-c .ci/min-versions.txt" in minimum and minimum.endswith("-m pytest -q")
    assert [readme_commands.venv_dir(c) for c in cmds] == [".venv", ".venv", ".venv-min",
                                                            ".venv-doc"]
    # lint, then the documentation with every reference resolved and warnings as errors
    steps = docs.split(" && ")
    assert '.venv-doc/bin/python -m pip install -q -e ".[doc,lint]"' in steps
    assert steps.index(".venv-doc/bin/ruff check .") < len(steps) - 1
    assert steps[-1].startswith(".venv-doc/bin/python -m sphinx -n -W ")
    assert steps[-1].endswith("-b html doc doc/_build/html")
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert any(r.startswith("ruff") for r in extras["lint"])
    assert {"sphinx-copybutton", "sphinx-mathjax-offline"} <= {
        re.split(r"[<>=]", r)[0] for r in extras["doc"]}


def test_the_documentation_doctests_run_in_the_suite():
    """The doctests of the doc pages run in README's test command (pytest collects
    tests/test_user_guide.py, which runs every doc page with ``>>>``)."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "tests" in cfg["tool:pytest"]["testpaths"].split()
    guide_test = (ROOT / "tests" / "test_user_guide.py").read_text(encoding="utf-8")
    assert "DOCTEST_PAGES = PAGES + sorted(DOC.glob(\"*.rst\"))" in guide_test


def test_ci_run_reads_the_commands_from_readme():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 .ci/readme_commands.py" in script
    assert 'rm -rf -- "$venv"' in script       # each command starts from a fresh venv
    assert "set -e" not in script               # set -e ignores failures inside && lists


def test_venv_dir_refuses_paths_outside_the_checkout():
    for bad in ("python3 -m venv / && x", "python3 -m venv ../v && x", "pip install x"):
        with pytest.raises(ValueError, match="inside the checkout"):
            readme_commands.venv_dir(bad)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("failing", [None, 0, 1, 2, 3])
def test_ci_run_fails_when_a_readme_command_fails(tmp_path, failing):
    """.ci/run on a stub checkout whose README commands are cheap: the run fails exactly
    when one of them fails, whichever part of its ``&&`` chain fails (venv creation, an
    install, the final command), and every command still runs."""
    (tmp_path / ".ci").mkdir()
    for name in ("run", "readme_commands.py"):
        shutil.copy(ROOT / ".ci" / name, tmp_path / ".ci" / name)
    parts = ["python3 -m venv .v{k} && true && echo ran{k} >> log",
             "python3 -m venv .v{k} && false && echo ran{k} >> log",  # an install fails
             "python3 -m venv .v{k} && true && (echo ran{k} >> log; exit 5)"]  # pytest: 5
    lines = []
    for k in range(4):   # command 1 fails at its end, commands 0, 2 and 3 at an install
        template = parts[0] if failing != k else parts[2] if k == 1 else parts[1]
        lines.append(template.format(k=k))
    # the venv module is replaced by a stub: the test is about exit statuses, not pip
    stub = tmp_path / "bin"
    stub.mkdir()
    real = shutil.which("python3")
    (stub / "python3").write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3"; exit 0; fi\n'
        f'exec {real} "$@"\n')
    (stub / "python3").chmod(0o755)
    readme = "# x\n\n## The two commands\n\n```bash\n" + "\n".join(lines) + "\n```\n\n## Next\n"
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / ".v1").mkdir()
    (tmp_path / ".v1" / "stale").write_text("from an earlier run")
    env = {"PATH": f"{stub}:/usr/bin:/bin"}
    proc = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    ran = (tmp_path / "log").read_text().split() if (tmp_path / "log").exists() else []
    assert not (tmp_path / ".v1" / "stale").exists()       # the venv was removed first
    if failing is None:
        assert proc.returncode == 0, proc.stderr
        assert ran == ["ran0", "ran1", "ran2", "ran3"]
        assert "all 4 README commands passed" in proc.stdout
    else:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "FAILED" in proc.stderr and f".v{failing}" in proc.stderr
        expected = [f"ran{k}" for k in range(4) if k != failing or failing == 1]
        assert ran == expected


# --------------------------------------------------------------------------- versions
def test_version_is_declared_once_and_released_in_the_changelog():
    """One version string (pyproject and ``__version__``); the changelog's newest section is
    that version, headed "(in development)" while it is a ``.devN`` version."""
    assert PYPROJECT["project"]["version"] == sklearn_privacy.__version__ == "0.3.0.dev0"
    changelog = (ROOT / "CHANGELOG.rst").read_text(encoding="utf-8")
    first = re.search(r"^Version (\d+\.\d+\.\d+)(.*)$", changelog, flags=re.M)
    release, _, dev = sklearn_privacy.__version__.partition(".dev")
    assert first and first.group(1) == release
    assert ("in development" in first.group(2)) == bool(dev)
    assert "version policy" in changelog.lower()


def test_no_deprecation_shims_before_the_first_published_release():
    """Nothing was published to an index, so replaced names were removed, not deprecated
    (CHANGELOG, the section in development). The one exception, the renames of 0.3 that
    ``tests/test_vocabulary.py`` lists (``RENAMED``), warns through one module,
    ``utils/_deprecation.py``: no FutureWarning or deprecation message anywhere else."""
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).as_posix() == "utils/_deprecation.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "FutureWarning" not in text, path.name
        assert not re.search(r"deprecated since|will be removed in", text, flags=re.I), path.name
    assert "removed, not deprecated" in (ROOT / "CHANGELOG.rst").read_text(encoding="utf-8")


def test_the_wheel_holds_no_test_oracle():
    """The wheel is every module of the packages setuptools finds (pyproject's
    ``packages.find``) plus the data files; none of them is a test oracle."""
    from setuptools import find_packages

    packages = find_packages(str(PACKAGE.parent), include=PYPROJECT["tool"]["setuptools"]
                             ["packages"]["find"]["include"])
    assert "sklearn_privacy.fil" in packages and not any(p.startswith("tests") for p in packages)
    shipped = [f for p in packages for f in (PACKAGE.parent / p.replace(".", "/")).glob("*.py")]
    assert len(shipped) > 50
    for f in shipped:
        assert "test oracle" not in f.read_text(encoding="utf-8").lower(), f
    assert (ROOT / "tests" / "_fil_dense_oracle.py").exists()


def test_declared_license_files_exist():
    project = PYPROJECT["project"]
    assert project["license"].startswith("BSD-3-Clause")
    # the package's own files are read where the package under test lives (the unpacked
    # sdist's copy of the package is removed when the suite tests the installed wheel)
    files = [p for pattern in project["license-files"]
             for p in (PACKAGE.parent if pattern.startswith("sklearn_privacy/") else ROOT)
             .glob(pattern)]
    names = {p.name for p in files}
    assert {"LICENSE", "ATTRIBUTION.txt", "CC-BY-4.0.txt", "CC-BY-SA-4.0.txt",
            "CC-BY-SA-3.0.txt"} <= names
    attribution = (PACKAGE / "datasets/data/ATTRIBUTION.txt").read_text()
    for spdx in ("CC BY 4.0", "CC BY-SA 4.0", "CC BY-SA 3.0"):   # each shipped license
        assert spdx in attribution
        assert spdx.replace(" ", "-") in project["license"]
    build = PYPROJECT["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d)(\.\d+)*", r) for r in build)


# --------------------------------------------------------------------------- privacy of internals
def test_internals_are_not_public():
    import sklearn_privacy.fil as fil
    import sklearn_privacy.multicalibration as mc

    assert not {"FILEngine", "BaseFILEstimator"} & set(fil.__all__)
    assert not hasattr(fil, "FILEngine") and not hasattr(fil, "BaseFILEstimator")
    assert "GradientDescentLogisticRegression" not in mc.__all__
    assert not hasattr(mc, "GradientDescentLogisticRegression")
    package = Path(sklearn_privacy.__file__).parent
    assert not (package / "experiments.py").exists()
    assert importlib.import_module("sklearn_privacy._experiments").__file__ == str(
        package / "_experiments.py")


# --------------------------------------------------------------------------- demo on core deps
_BLOCK_PANDAS = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is blocked for this test")
sys.meta_path.insert(0, _Block())
from sklearn_privacy.demo import main
main(["--only", "raw_data", "s1_fil"])
"""


def test_demo_runs_without_pandas():
    """The core install has no pandas: the raw-table section says so and the demo exits 0."""
    proc = subprocess.run([sys.executable, "-c", _BLOCK_PANDAS], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Skipped: this section runs the raw UCI Adult DataFrame" in proc.stdout
    assert "pip install pandas" in proc.stdout
    assert "Fisher information loss, MNIST 0 vs 1" in proc.stdout   # other sections ran


# --------------------------------------------------------------------------- helmert
@pytest.mark.parametrize("k", [2, 3, 7, 40])
def test_helmert_basis(k):
    from sklearn_privacy.fil._eta._engine import FILEngine

    Q = FILEngine._helmert(k)
    # the hand-written construction it replaces, as the oracle
    ref = np.zeros((k, k - 1))
    for j in range(k - 1):
        ref[: j + 1, j] = 1.0
        ref[j + 1, j] = -(j + 1)
        ref[:, j] /= np.linalg.norm(ref[:, j])
    np.testing.assert_allclose(Q, ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k - 1), atol=1e-14)
    np.testing.assert_allclose(Q.T @ np.ones(k), 0.0, atol=1e-14)
    assert Q.flags.c_contiguous


def test_helmert_needs_two_columns():
    from sklearn_privacy.fil._eta._engine import FILEngine

    with pytest.raises(ValueError, match="at least two one-hot columns"):
        FILEngine._helmert(1)


# --------------------------------------------------------------------------- front pages
@pytest.mark.parametrize("page", ["index.rst", "getting_started.rst"])
def test_front_page_snippets_run(page):
    import doctest

    result = doctest.testfile(str(ROOT / "doc" / page), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


def test_user_guide_lists_new_pages_without_breaking_the_build(tmp_path, monkeypatch):
    """A page added to doc/user_guide/ but not yet to its toctree is appended to it (so
    ``sphinx -W`` does not fail on "document isn't included in any toctree"); listed pages
    are not repeated."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("doc_conf", ROOT / "doc" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    for name in ("index", "fil", "brand_new_page"):
        (tmp_path / f"{name}.rst").write_text("x\n")
    monkeypatch.setattr(conf, "_GUIDE", tmp_path)
    source = ["Guide\n=====\n\n.. toctree::\n\n   fil\n"]
    conf._list_every_guide_page(None, "user_guide/index", source)
    assert source[0].count("   fil\n") == 1
    assert source[0].endswith("   brand_new_page\n")
    other = ["unchanged"]
    conf._list_every_guide_page(None, "user_guide/fil", other)
    assert other == ["unchanged"]
    listed = set(re.findall(r"^   ([a-z0-9_]+)\s*$",
                            (ROOT / "doc/user_guide/index.rst").read_text(), flags=re.M))
    pages = {p.stem for p in (ROOT / "doc/user_guide").glob("*.rst")} - {"index"}
    assert listed <= pages          # every listed page exists
