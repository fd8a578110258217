"""The user guide's ``>>>`` snippets run as doctests, page by page.

Warnings about feature names are errors: a workflow that passes frames consistently must
not trigger them. A page whose snippets cannot run today is listed in ``XFAIL_PAGES``
with the reason.
"""

import doctest
import warnings
from pathlib import Path

import numpy as np
import pytest

GUIDE = Path(__file__).resolve().parent.parent / "doc" / "user_guide"
PAGES = sorted(GUIDE.glob("*.rst"))

#: page file name -> why its snippets are expected to fail (none today).
XFAIL_PAGES: dict[str, str] = {}

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_guide_is_found():
    assert len(PAGES) >= 8
    assert "15_your_own_data.rst" in {p.name for p in PAGES}
    assert set(XFAIL_PAGES) <= {p.name for p in PAGES}


@pytest.mark.parametrize(
    "page",
    [pytest.param(p, id=p.stem,
                  marks=[pytest.mark.xfail(reason=XFAIL_PAGES[p.name], strict=True)]
                  if p.name in XFAIL_PAGES else [])
     for p in PAGES])
def test_page_snippets_run(page):
    with warnings.catch_warnings(), np.printoptions(legacy="1.25"):
        warnings.filterwarnings("error", message=".*feature names.*")
        result = doctest.testfile(str(page), module_relative=False, optionflags=OPTIONS,
                                  raise_on_error=False, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_own_data_page_has_snippets_for_every_component():
    text = (GUIDE / "15_your_own_data.rst").read_text()
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
