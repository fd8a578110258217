"""Members never trained on: the default page's findings stay at its stated false-alarm
level (``ReleasePolicy.false_alarm``), the audits' stored-rows bound included."""

import warnings

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from sklearn_privacy.report import PrivacyReport, ReleasePolicy


def _rows(n, rng):
    X = 0.3 * rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 4, size=n) / 3.0
    X /= 2.0
    y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _page(X, y, Xp, yp, model, noise):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivacyReport.from_estimator(model, X, y, Xp, yp, sensitive_features=[3],
                                            n_canaries=0, canary_releases=0,
                                            random_state=0, noise_random_state=noise)


def _stored_bound_cell(rep):
    sec = next(s for s in rep.sections if s.key == "structural")
    return next(v for k, v in sec.table if "exact match of stored rows (noisy count)" in k)


@pytest.mark.parametrize("noise", [892, 1024, 1246])
def test_stored_rows_bound_is_no_finding_unless_the_stored_rows_finding_survives(noise):
    """1-NN trained on rows A; the report is handed fresh rows B as its "training rows".
    These noise seeds draw a stored-rows count high enough for the table's 95 % bound to
    be positive (0.85 / 0.25 / 0.48) while Holm's procedure over the page's findings
    rejects nothing. The old page still said the audits show "not epsilon-DP for any
    epsilon below 0.852" (outcome "leaks", headline 0.852): a finding outside the Holm
    family, on 9 of about 2,700 null pages of models with stored rows. The bound now
    counts only with the stored-rows finding it is the evidence of."""
    n = 300
    X, y = _rows(3 * n, np.random.default_rng(5))
    model = KNeighborsClassifier(1).fit(X[:n], y[:n])
    rep = _page(X[n:2 * n], y[n:2 * n], X[2 * n:], y[2 * n:], model, noise)
    assert float(_stored_bound_cell(rep).split()[0]) > 0
    stored = next(c for c in rep.structural if c["name"] == "stored_rows")
    assert not stored["found"]
    audits = next(s for s in rep.sections if s.key == "audits")
    assert "leaks" not in audits.outcomes and "cannot_tell" in audits.outcomes
    assert rep.summary["empirical_epsilon"] == 0.0
    assert rep.recommendation["decision"] == "support_release"


def test_stored_rows_bound_counts_when_the_rows_are_stored():
    """The other outcome: 1-NN on its own training rows stores every one; the stored-rows
    finding survives Holm and its bound is the audits' finding and the headline."""
    n = 300
    X, y = _rows(2 * n, np.random.default_rng(5))
    model = KNeighborsClassifier(1).fit(X[:n], y[:n])
    rep = _page(X[:n], y[:n], X[n:], y[n:], model, 892)
    stored = next(c for c in rep.structural if c["name"] == "stored_rows")
    assert stored["found"] > 0
    audits = next(s for s in rep.sections if s.key == "audits")
    assert "leaks" in audits.outcomes
    bound = float(_stored_bound_cell(rep).split()[0])
    assert bound > 1.0
    assert rep.summary["empirical_epsilon"] == pytest.approx(bound, rel=1e-2)
    assert rep.summary["empirical_epsilon_source"] == "exact match of stored rows (noisy count)"


@pytest.mark.statistical
def test_null_experiment_4000_pages_at_most_the_stated_level():
    """4,000 null pages (about 7 minutes on 2 shared cores; logistic regression, an SVC
    pipeline and 1-NN in turn): pages with any finding are not significantly more than
    the stated level 0.001. The old code had 13 of 4,000 (rate 0.0033, 95 %
    Clopper-Pearson [0.0017, 0.0056]; 9 of the first 12 from the audits' stored-rows
    bound outside the Holm family): binomial p = 2.7e-4 against 0.001. Measured after the
    fix: 6 of 4,000 (0.0015, [0.00055, 0.0033]), p = 0.21."""
    from scipy import stats
    from test_report_disclosure import _bench

    res = _bench().null_experiment(4000)
    assert res["level"] == ReleasePolicy().false_alarm == 0.001
    assert stats.binom.sf(res["findings"] - 1, res["reports"], res["level"]) > 0.01, res
