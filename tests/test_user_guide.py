"""The documentation's ``>>>`` snippets run as doctests, page by page: every page of the
user guide and the top-level pages of ``doc/`` (landing page, getting started).

Warnings about feature names are errors: a workflow that passes frames consistently must
not trigger them. A page whose snippets cannot run today is listed in ``XFAIL_PAGES``
with the reason.
"""

import doctest
import warnings
from pathlib import Path

import pytest
from _expected_warnings import (
    FIL_NOISE_DOMINATES,
    IRFIL_REWEIGHTING,
    MULTICALIBRATION_ADVICE,
    STRIP_RESETS_SEED,
)

from sklearn_privacy.utils.fixes import numpy1_print_options

DOC = Path(__file__).resolve().parent.parent / "doc"
GUIDE = DOC / "user_guide"
PAGES = sorted(GUIDE.glob("*.rst"))
#: every page of the documentation with doctests (``doc/api`` holds autosummary stubs only)
DOCTEST_PAGES = PAGES + sorted(DOC.glob("*.rst"))

#: page file name -> why its snippets are expected to fail (none today).
XFAIL_PAGES: dict[str, str] = {}

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_guide_is_found():
    assert len(PAGES) >= 8
    assert "your_own_data.rst" in {p.name for p in PAGES}
    assert set(XFAIL_PAGES) <= {p.name for p in PAGES}
    with_doctests = {p.relative_to(DOC).as_posix() for p in DOCTEST_PAGES
                     if ">>> " in p.read_text(encoding="utf-8")}
    assert {"index.rst", "getting_started.rst", "user_guide/fil.rst"} <= with_doctests


@pytest.mark.parametrize(
    "page",
    [pytest.param(p, id=p.relative_to(DOC).with_suffix("").as_posix(),
                  marks=[pytest.mark.xfail(reason=XFAIL_PAGES[p.name], strict=True)]
                  if p.name in XFAIL_PAGES else [])
     for p in DOCTEST_PAGES])
# the pages show these on purpose (a starved fit, small calibration sets, IRFIL's
# reweighting, stripping seeded fits, epsilon on a few hundred rows); the guide says so
@MULTICALIBRATION_ADVICE
@STRIP_RESETS_SEED
@IRFIL_REWEIGHTING
@FIL_NOISE_DOMINATES
@pytest.mark.filterwarnings("ignore:Newton's method did not reach"
                            ":sklearn_privacy.exceptions.ConvergenceWarning")
def test_page_snippets_run(page):
    with warnings.catch_warnings(), numpy1_print_options():
        warnings.filterwarnings("error", message=".*feature names.*")
        result = doctest.testfile(str(page), module_relative=False, optionflags=OPTIONS,
                                  raise_on_error=False, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_own_data_page_has_snippets_for_every_component():
    text = (GUIDE / "your_own_data.rst").read_text()
    examples = doctest.DocTestParser().get_examples(text)
    assert len(examples) > 60
    source = "\n".join(e.source for e in examples)
    for name in ("load_adult(raw=True, as_frame=True)", "ColumnTransformer", "OneHotEncoder",
                 "FILLogisticRegression", 'eta(model, columns="race", per_example=True)',
                 "feature_columns", "sparse_output=False", "GridSearchCV",
                 "make_membership_scorer", "whitebox_inversion", "prior_baseline",
                 "WERMClassifier", "make_werm_membership_scorer", "PrivateMulticalibrator",
                 "FrozenEstimator", "ColumnPredicate", "strip_for_release"):
        assert name in source, name


def _code_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives of a page, dedented."""
    import textwrap

    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            indent = len(lines[i]) - len(lines[i].lstrip())
            body, i = [], i + 1
            while i < len(lines) and (not lines[i].strip()
                                      or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i])
                i += 1
            blocks.append(textwrap.dedent("\n".join(body)).strip())
        else:
            i += 1
    return blocks


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_code_blocks_compile(page):
    """Illustrative ``code-block`` snippets (not run: they use the reader's own data)
    must at least be valid Python."""
    for block in _code_blocks(page.read_text()):
        assert block, f"empty code-block in {page.name}"
        compile(block, f"{page.name}:code-block", "exec")


def test_code_block_extraction():
    text = ("Intro\n\n.. code-block:: python\n\n   x = 1\n\n   y = x +\n\nAfter\n\n"
            "  .. code-block:: python\n\n     z = 2\n")
    assert _code_blocks(text) == ["x = 1\n\ny = x +", "z = 2"]
    with pytest.raises(SyntaxError):
        compile(_code_blocks(text)[0], "t", "exec")
