"""The report's default page as a template, its false-alarm level, and the paths that
still read the training rows.

* Template: every element the page reads from its noisy figures (sentences, cells,
  findings, headline rows, the recommendation) is an item of the page's ledger and a
  typed placeholder of ``page_template``; everything else is a function of public inputs.
* False alarms: the findings of the page (membership leaks or below chance, training
  rows read back or stored) are one family, Holm at ``ReleasePolicy.false_alarm``.
* Paths that read the training rows: the FIL section's "not computed" text, a cell
  holding an array in a sensitive column, and the count of rows a Nystroem step publishes.
"""

import html
import re
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.preprocessing import PublicSchema
from sklearn_privacy.report import PrivacyReport, ReleasePolicy
from sklearn_privacy.report._disclosure import AccountedValue, PageLedger, count_p_value

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn_privacy.exceptions.PrivacyWarning",
    "ignore::sklearn.exceptions.ConvergenceWarning")


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    X = 0.3 * rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 3, size=n) / 3.0
    X /= np.linalg.norm(X, axis=1).max()
    return X, (X[:, 0] + 0.05 * rng.normal(size=n) > 0).astype(int)


def _report(model, X, y, Xp, yp, **kw):
    kw = {"n_canaries": 0, "canary_releases": 0, "random_state": 0, **kw}
    with warnings.catch_warnings(), mock.patch(
            "sklearn_privacy.report._report._have_matplotlib", lambda: False):
        warnings.simplefilter("ignore")
        return PrivacyReport.from_estimator(model, X, y, Xp, yp, **kw)


def _section(rep, key):
    return next(s for s in rep.sections if s.key == key)


# ------------------------------------------------------------------------ the template
def test_template_is_the_page_with_each_noisy_element_a_placeholder():
    """Two pages with different noise differ (the control); their templates are the
    same byte for byte, and every placeholder names figures the ledger released."""
    X, y = _rows(300, 0)
    Xp, yp = _rows(300, 1)
    model = make_pipeline(StandardScaler(), SVC()).fit(X, y)     # stores rows: 3 counts
    a = _report(model, X, y, Xp, yp, sensitive_features=[3], noise_random_state=1)
    b = _report(model, X, y, Xp, yp, sensitive_features=[3], noise_random_state=2)
    assert a.default_page(dated=False) != b.default_page(dated=False)
    assert a.page_template() == b.page_template()
    template, record = a.page_template(), a.page_accounting()
    released = {r["id"]: r for r in record["released"]}
    assert [r["label"] for r in record["released"]][:2] == [
        "training rows the pickle holds", "training rows stored in the model (stored_rows)"]
    for r in released.values():     # each a Laplace release at an even share of the budget
        assert r["epsilon"] == pytest.approx(1.0 / record["n_queries"])
        assert r["scale"] == pytest.approx(r["sensitivity"] / r["epsilon"])
    assert sum(r["epsilon"] for r in released.values()) <= 1.0 + 1e-12
    placeholders = re.findall(r"\[\[(D\d+|R) (\w+) from ([A\d ]+)\]\]", template)
    assert {p[0] for p in placeholders} >= {i["id"] for i in record["items"]}
    assert all(f in released for p in placeholders for f in p[2].split())
    # the sentences read from the noisy figures are placeholders, not printed
    memb = html.escape(_section(a, "membership").verdicts[0])
    assert memb in a.default_page() and memb not in template
    assert "Recommendation: [[R recommendation from A1" in template
    # the public sentences are printed as they are
    assert _section(a, "claim").verdicts[0].replace("'", "&#x27;") in template


def test_page_without_population_rows_has_one_noisy_figure():
    X, y = _rows(200, 0)
    rep = _report(LogisticRegression().fit(X, y), X, y, None, None)
    # the count of rows the pickle holds: its cell and its sentence, and the decision
    record = rep.page_accounting()
    assert [r["label"] for r in record["released"]] == ["training rows the pickle holds"]
    assert [(i["section"], i["part"]) for i in record["items"]] == [
        ("release", "cell"), ("release", "verdict")]
    page, template = rep.default_page(dated=False), rep.page_template()
    lines = set(page.splitlines())
    # what the template has that the page does not: placeholders, and the heading of the
    # findings (on the page when the noisy sentence is a finding)
    extra = [t for t in template.splitlines() if t not in lines]
    assert extra and all("[[" in t or t == "<h2>Findings to act on before publishing</h2>"
                         for t in extra), extra
    assert sum("[[" in t for t in extra) == 4     # decision, finding, sentence, cell


def test_ledger_refuses_an_item_derived_from_no_released_figure():
    ledger = PageLedger(1.0, 1, 10, np.random.default_rng(0))
    from sklearn_privacy.report import ReportSection

    sec = ReportSection("x", "x")
    with pytest.raises(ValueError, match="derived from no accounted figure"):
        ledger.show(sec, "verdict", "a sentence")
    with pytest.raises(ValueError, match="not a figure this ledger released"):
        ledger.show(sec, "verdict", "a sentence", AccountedValue(1.0, 1.0, 1.0, "A9"))
    v = ledger.figure("n", 3, source="training", bound=1)
    assert ledger.show(sec, "cell", ("n", f"{v.value:.0f}"), v) == "D1"
    assert ledger.record()["items"][0]["inputs"] == ["A1"]


# ------------------------------------------------------------------------ false alarms
def test_noisy_count_p_value_is_the_laplace_tail():
    for value, scale in [(0.0, 2.0), (3.0, 2.0), (-1.0, 0.5), (40.0, 6.0)]:
        v = AccountedValue(value, scale, 1.0, "A1")
        rng = np.random.default_rng(0)
        sampled = np.mean(rng.laplace(0, scale, 400_000) >= value)
        assert count_p_value(v) == pytest.approx(sampled, abs=3e-3)


@pytest.fixture
def noise_of(monkeypatch):
    """Every accounted figure released with the given noise in units of its scale."""
    original = PageLedger.figure
    shift = {"z": 0.0}

    def figure(self, label, value, *, source, bound=None, vector=False):
        out = original(self, label, value, source=source, bound=bound, vector=vector)
        if isinstance(out, AccountedValue):
            out.value = np.asarray(value, float) + shift["z"] * out.scale
            out.value = out.value if np.ndim(out.value) else float(out.value)
        return out

    monkeypatch.setattr(PageLedger, "figure", figure)
    return shift


def test_noise_at_the_old_threshold_is_no_longer_a_reason_to_reject(noise_of):
    """Issue: the noisy count of rows read back from the pickle was a finding above its
    95 % noise tail, so about one honest page in twenty said "reject". A model that holds
    no training row with noise of 3 scales on the count (beyond the old threshold of
    ln(10) = 2.3 scales): seen failing on the old code ("verbatim", decision "reject")."""
    X, y = _rows(300, 0)
    Xp, yp = _rows(300, 1)
    model = LogisticRegression().fit(X, y)
    noise_of["z"] = 3.0
    rep = _report(model, X, y, Xp, yp)
    assert "verbatim" not in _section(rep, "release").outcomes
    assert rep.recommendation["decision"] != "reject"
    assert "false_alarm = 0.001" in rep.default_page()
    assert rep.summary["false_alarm"] == 0.001
    # the level is the policy's: a lax level makes the same noise a finding
    lax = _report(model, X, y, Xp, yp, policy=ReleasePolicy(false_alarm=0.2))
    assert "verbatim" in _section(lax, "release").outcomes
    with pytest.raises(ValueError, match="false_alarm must be a number in"):
        ReleasePolicy(false_alarm=0.0)


@pytest.mark.parametrize("kind", ["svc", "1nn"])
def test_models_that_store_their_rows_are_still_found(kind):
    """The stricter level keeps its power where rows are stored: an SVC pipeline (its
    support vectors) and 1-NN (every row) are found by both counts and rejected."""
    X, y = _rows(300, 0)
    Xp, yp = _rows(300, 1)
    model = (make_pipeline(StandardScaler(), SVC(C=10.0)) if kind == "svc"
             else KNeighborsClassifier(1)).fit(X, y)
    rep = _report(model, X, y, Xp, yp)
    assert "verbatim" in _section(rep, "release").outcomes
    stored = next(c for c in rep.structural if c["name"] == "stored_rows")
    assert stored["found"] > 0 and "adjusted" in stored["detail"]
    assert rep.recommendation["decision"] == "reject"


@pytest.mark.statistical
def test_null_experiment_any_finding_at_most_the_stated_level():
    """Members never trained on: 150 reports (logistic regression, an SVC pipeline and
    1-NN in turn; each page has two to four noisy counts and seven membership tests).
    Pages with any finding (membership leaks or below chance, rows read back or stored)
    are not significantly more than the stated level 0.001. Measured: 0 of 150 [0,
    0.024]; the old code (95 % thresholds, Holm at 0.05 over the membership tests only)
    had 19 of 300 such pages, 11 of them "reject"."""
    from scipy import stats
    from test_report_disclosure import _bench

    res = _bench().null_experiment(150)
    assert res["level"] == ReleasePolicy().false_alarm == 0.001
    assert stats.binom.sf(res["findings"] - 1, res["reports"], res["level"]) > 0.01, res
    assert res["reject"] == 0, res


# ------------------------------------------------------ paths that read the training rows
def test_fil_not_computed_text_does_not_quote_the_training_rows():
    """fil.audit refuses a LinearRegression with a duplicated column on these rows, and
    its message states how much the features differ in scale: ~1e4 on D, ~1e8 with one
    extreme row. The old page printed the message ("Not computed: ... ~1e8"); the page
    now states the exception's type, and the message is in the private channel."""
    rng = np.random.default_rng(0)

    def rows(n):
        a, b = rng.normal(size=n), rng.normal(size=n)
        return np.c_[a, a, 1e5 * b], a + b + 0.1 * rng.normal(size=n)

    X, y = rows(80)
    Xp, yp = rows(60)
    model = LinearRegression().fit(X, y)
    X2 = X.copy()
    X2[5] = [3.0, 3.0, 1e9]
    pages = [_section(_report(model, Xd, y, Xp, yp, sigma=1.0), "fil").verdicts
             for Xd in (X, X2)]
    assert pages[0] == pages[1], pages
    assert "SingularHessianError" in pages[0][0] and "1e4" not in pages[0][0]
    private = _report(model, X2, y, Xp, yp, sigma=1.0, include_private_details=True)
    assert "~1e8" in dict(_section(private, "fil").private_table)["fil.audit refused"]
    # a refusal decided by the model's type is public: said as it is
    from sklearn.tree import DecisionTreeRegressor

    tree = _report(DecisionTreeRegressor(max_depth=2).fit(X, y), X, y, Xp, yp, sigma=1.0)
    assert "audit supports fitted scikit-learn" in _section(tree, "fil").verdicts[0]


def test_an_array_in_a_sensitive_column_is_a_group_label_not_a_crash():
    """One raw cell holding an array (a value a CSV reader or a join can leave): the old
    membership section raised ValueError ('setting an array element with a sequence')
    on these rows only, so whether the page could be made depended on one row."""
    rng = np.random.default_rng(0)
    jobs = ["clerk", "nurse", "welder"]

    def frame(n):
        X = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.uniform(1, 99, n),
                          "job": rng.choice(jobs, n), "grade": rng.integers(1, 4, n)})
        return X, np.where(X["age"] > 50, "yes", "no")

    X, y = frame(80)
    Xp, yp = frame(80)
    schema = PublicSchema({"age": (17, 90), "hours": (1, 99), "job": jobs,
                           "grade": [1, 2, 3]})
    model = make_pipeline(schema, schema.make_encoder(), FILLogisticRegression(
        sigma=1.0, alpha=0.1, fit_intercept=False, data_norm=schema.data_norm,
        classes=["no", "yes"])).fit(X, y)
    X2 = X.copy()
    X2["job"] = X2["job"].astype(object)
    X2.iat[3, 2] = np.array(["clerk", "nurse"], dtype=object)
    a = _report(model, X, y, Xp, yp, sensitive_features=["job"])
    b = _report(model, X2, y, Xp, yp, sensitive_features=["job"])
    assert a.page_template() == b.page_template()


def test_rows_a_nystroem_step_publishes_are_counted_from_the_published_object():
    """A training row equal to a Nystroem component has an infinite eta too: the old
    page counted rows with eta = inf, so a duplicate of a component said "publishes 6
    training rows" where the model publishes 5."""
    X, y = _rows(120, 0)
    Xp, yp = _rows(100, 1)
    y = np.where(y == 1, "yes", "no")
    yp = np.where(yp == 1, "yes", "no")
    # without data_norm the eta is of the raw inputs, through the Nystroem map
    model = make_pipeline(Nystroem(n_components=5, random_state=0), FILLogisticRegression(
        sigma=1.0, alpha=0.1, fit_intercept=False, classes=["no", "yes"])).fit(X, y)
    component = int(model[0].component_indices_[0])
    other = next(i for i in range(len(X)) if i not in model[0].component_indices_)
    X2, y2 = X.copy(), y.copy()
    X2[other], y2[other] = X[component], y[component]       # a duplicate of a component
    model2 = clone(model).fit(X2, y2)         # the same components (the same seed and n)
    assert np.array_equal(model2[0].components_, model[0].components_)
    pages = [_section(_report(m, Xd, yd, Xp, yp), "fil").verdicts
             for m, Xd, yd in ((model, X, y), (model2, X2, y2))]
    assert pages[0] == pages[1], pages
    assert "publishes 5 training rows verbatim" in " ".join(pages[0])
    # the same model's page on rows it was not fitted on: the etas cannot be computed
    # there (a crash of the old page, on those rows only); now a private note
    assert _section(_report(model, X2, y2, Xp, yp), "fil").verdicts == pages[0]
