"""Structural disclosure checks: for every model family, each check finds what is there
(a case built to hold it) and finds nothing where nothing is (a case built not to)."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.attacks import epsilon_lower_bound
from sklearn_privacy.preprocessing import BoundedScaler
from sklearn_privacy.report._structural import recover_values, structural_checks


def _data(n=400, seed=0, parity=False):
    """Two continuous columns, one integer column with 5 levels among the training rows
    (7 among the population rows); the label follows the first column, or the parity of
    the integer column (every level boundary is a split)."""
    rng = np.random.default_rng(seed)
    X = np.c_[rng.uniform(-1, 1, size=(2 * n, 2)),
              np.r_[rng.integers(0, 5, size=n), rng.integers(0, 7, size=n)]]
    y = (X[:, 2] % 2 if parity else X[:, 0] + 0.3 * rng.normal(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _run(model, X, y, Xp, yp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in structural_checks(model, X, y, Xp, yp,
                                                     rng=np.random.default_rng(0))}


def _found(checks, name):
    c = checks[name]
    assert c.ran, c.reason
    return c.found


def _brute_small_leaves(trees, k):
    return sum(int(np.sum(t.tree_.n_node_samples[t.tree_.children_left == -1] < k))
               for t in trees)


def test_recover_values_inverts_the_midpoints():
    v = np.array([-3.0, -1.25, 0.0, 2.0, 7.5])
    m = (v[:-1] + v[1:]) / 2
    for anchor in v:
        np.testing.assert_allclose(recover_values(m, anchor), v)


def test_decision_tree_with_tiny_leaves():
    X, y, Xp, yp = _data()
    full = DecisionTreeClassifier(random_state=0).fit(X, y)
    c = _run(full, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == _brute_small_leaves([full], 10) > 0
    assert _found(c, "class_disclosure") > 0
    # every threshold on a continuous column is a midpoint of two training values
    assert _found(c, "threshold_midpoints") == c["threshold_midpoints"].total > 0
    assert _found(c, "recoverable_values") == 0        # not every level boundary is split
    # big leaves; thresholds learned from other rows (population rows)
    big = DecisionTreeClassifier(min_samples_leaf=20, random_state=0).fit(X, y)
    c = _run(big, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == 0 and _found(c, "class_disclosure") == 0
    other = DecisionTreeClassifier(random_state=0).fit(Xp, yp)
    assert _found(_run(other, X, y, Xp, yp), "threshold_midpoints") == 0
    # a label that changes at every level of the integer column: all its values recovered
    Xq, yq, Xqp, yqp = _data(parity=True)
    parity = DecisionTreeClassifier(random_state=0).fit(Xq, yq)
    assert _found(_run(parity, Xq, yq, Xqp, yqp), "recoverable_values") == 1


def test_random_forest():
    X, y, Xp, yp = _data()
    rf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    c = _run(rf, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == _brute_small_leaves(rf.estimators_, 10) > 0
    assert _found(c, "class_disclosure") > 0
    assert _found(c, "threshold_midpoints") > 0.8 * c["threshold_midpoints"].total
    assert _found(c, "recoverable_values") == 0
    # a leaf test is a membership test: members land in their own small leaves
    members, scores = c["leaf_k_anonymity"].membership
    assert scores[members].mean() > scores[~members].mean()
    big = RandomForestClassifier(n_estimators=20, min_samples_leaf=20, random_state=0).fit(X, y)
    c = _run(big, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == 0 and _found(c, "class_disclosure") == 0
    other = RandomForestClassifier(n_estimators=20, random_state=0).fit(Xp, yp)
    assert _found(_run(other, X, y, Xp, yp), "threshold_midpoints") == 0
    Xq, yq, Xqp, yqp = _data(parity=True)
    parity = RandomForestClassifier(n_estimators=20, random_state=0).fit(Xq, yq)
    assert _found(_run(parity, Xq, yq, Xqp, yqp), "recoverable_values") == 1


def test_extra_trees():
    """Extra trees draw thresholds uniformly between a node's extremes: the threshold
    checks can find nothing there, and say so only because they looked."""
    X, y, Xp, yp = _data()
    et = ExtraTreesClassifier(n_estimators=20, random_state=0).fit(X, y)
    c = _run(et, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == _brute_small_leaves(et.estimators_, 10) > 0
    assert _found(c, "class_disclosure") > 0
    assert _found(c, "threshold_midpoints") == 0 and c["threshold_midpoints"].total > 0
    assert _found(c, "recoverable_values") == 0
    big = ExtraTreesClassifier(n_estimators=20, min_samples_leaf=20, random_state=0).fit(X, y)
    c = _run(big, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") == 0 and _found(c, "class_disclosure") == 0


def test_hist_gradient_boosting():
    """Bin thresholds are midpoints of consecutive distinct training values (every one, on
    a column of at most 255 distinct values): the integer column's values are recovered."""
    X, y, Xp, yp = _data(n=600)
    small = HistGradientBoostingClassifier(max_iter=10, min_samples_leaf=1,
                                           random_state=0).fit(X, y)
    c = _run(small, X, y, Xp, yp)
    assert _found(c, "leaf_k_anonymity") > 0
    assert not c["class_disclosure"].ran and "boosting" in c["class_disclosure"].reason
    assert _found(c, "threshold_midpoints") == c["threshold_midpoints"].total > 0
    assert _found(c, "recoverable_values") == 1 and "columns 2" in c[
        "recoverable_values"].detail
    # the same column without a population value outside 0..4 discloses nothing
    Xp_in = Xp.copy()
    Xp_in[:, 2] = np.minimum(Xp_in[:, 2], 4)
    assert _run(small, X, y, Xp_in, yp)["recoverable_values"].found == 0
    default = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    assert _found(_run(default, X, y, Xp, yp), "leaf_k_anonymity") == 0  # 20 rows a leaf
    other = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(Xp, yp)
    assert _found(_run(other, X, y, Xp, yp), "threshold_midpoints") == 0
    cont = np.c_[X[:, :2], X[:, :1] * 2]                 # no column of few values
    contp = np.c_[Xp[:, :2], Xp[:, :1] * 2]
    m = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(cont, y)
    assert _found(_run(m, cont, y, contp, yp), "recoverable_values") == 0


def test_hist_gradient_boosting_recovered_values_prove_non_members():
    """A population row whose value is not a training value of a recoverable column is
    proved a non-member: the membership test gives a positive epsilon lower bound."""
    rng = np.random.default_rng(1)
    levels_in, levels_out = np.arange(0, 60, 2.0), np.arange(1, 61, 2.0)
    X = np.c_[rng.choice(levels_in, 800), rng.normal(size=800)]
    Xp = np.c_[rng.choice(np.r_[levels_in, levels_out], 800), rng.normal(size=800)]
    y, yp = (X[:, 1] > 0).astype(int), (Xp[:, 1] > 0).astype(int)
    m = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    c = _run(m, X, y, Xp, yp)["recoverable_values"]
    assert c.found == 1
    members, scores = c.membership
    assert scores[members].min() == 1.0                  # every member is consistent
    assert 0.4 < np.mean(scores[~members] < 1) < 0.6     # half the population is not
    res = epsilon_lower_bound(members=members, scores=scores, random_state=0)
    assert res.epsilon_lower_bound > 0


@pytest.mark.parametrize("final", [SVC(), KNeighborsClassifier()],
                         ids=["SVC", "KNeighbors"])
def test_instance_based_pipelines(final):
    X, y, Xp, yp = _data()
    model = make_pipeline(StandardScaler(), final).fit(X, y)
    c = _run(model, X, y, Xp, yp)["stored_rows"]
    scaled = model[:-1].transform(X)
    stored = model[-1].support_vectors_ if hasattr(model[-1], "support_vectors_") else scaled
    expected = int(np.sum((scaled[:, None, :] == stored[None, :, :]).all(-1).any(1)))
    assert c.found == expected > 0                       # brute-force row comparison
    members, scores = c.membership
    assert scores[~members].sum() == 0 and scores[members].sum() > 0
    # a model fitted on other rows stores none of the training rows
    other = make_pipeline(StandardScaler(), type(final)()).fit(Xp, yp)
    assert _run(other, X, y, Xp, yp)["stored_rows"].found == 0


def test_mlp_degrees_of_freedom():
    X, y, Xp, yp = _data(n=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = MLPClassifier((100,), max_iter=20, random_state=0).fit(X, y)
        narrow = MLPClassifier((2,), max_iter=20, random_state=0).fit(X, y)
    c = _run(wide, X, y, Xp, yp)["degrees_of_freedom"]
    assert c.found == 1 and f"{3 * 100 + 100 + 100 + 1:,} fitted parameters" in c.detail
    assert _run(narrow, X, y, Xp, yp)["degrees_of_freedom"].found == 0


def test_logistic_regression_degrees_of_freedom():
    X, y, Xp, yp = _data(n=400)
    idx = np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]
    tiny = LogisticRegression().fit(X[idx], y[idx])      # 12 rows, 4 parameters: 8 < 10
    c = _run(tiny, X[idx], y[idx], Xp, yp)["degrees_of_freedom"]
    assert c.found == 1 and "4 fitted parameters for 12 training rows" in c.detail
    assert _run(LogisticRegression().fit(X, y), X, y, Xp, yp)["degrees_of_freedom"].found == 0


def test_dp_recipe_degrees_of_freedom():
    X, y, Xp, yp = _data(n=400)

    def recipe():
        return make_pipeline(BoundedScaler([(-1, 1), (-1, 1), (0, 4)]),
                             FILLogisticRegression(epsilon=1.0, data_norm=2.0,
                                                   intercept_scaling=1.0, classes=[0, 1]))
    idx = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tiny = recipe().fit(X[idx], y[idx])
        full = recipe().fit(X, y)
    c = _run(tiny, X[idx], y[idx], Xp, yp)
    assert set(c) == {"degrees_of_freedom"} and c["degrees_of_freedom"].found == 1
    assert _run(full, X, y, Xp, yp)["degrees_of_freedom"].found == 0


def test_gaussian_nb_small_classes():
    X, y, Xp, yp = _data()
    y3 = y.copy()
    y3[:3] = 2                                           # a class of three rows
    c = _run(GaussianNB().fit(X, y3), X, y3, Xp, yp)["small_class_statistics"]
    assert c.found == 1 and "classes 2" in c.detail
    assert _run(GaussianNB().fit(X, y), X, y, Xp, yp)["small_class_statistics"].found == 0


def test_hist_gradient_boosting_report_flags_what_the_pickle_proves():
    """The old page printed only "None of the training rows checked was found in the
    pickle" for histogram gradient boosting, whose bin thresholds give back every
    distinct value of a column of few values. The structural section now flags it, its
    membership test enters the audits' bounds, and the recommendation is not a release.

    The check compares the thresholds with the training values, so the finding, its
    membership test and its bound are on the private page (with the private
    recommendation); the default page says the check ran in the private section."""
    from sklearn_privacy.report import PrivacyReport

    X, y, Xp, yp = _data(n=300)
    m = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(m, X, y, Xp, yp, n_canaries=0, random_state=0,
                                           include_private_details=True)
    sec = next(s for s in rep.sections if s.key == "structural")
    flagged = [v for v, o in zip(sec.private_verdicts, sec.private_outcomes, strict=True)
               if o == "disclosive"]
    assert any("every distinct training value recoverable" in v for v in flagged)
    assert any(v in rep.private_details["flags"] for v in flagged)
    assert rep.private_details["recommendation"]["decision"] != "support_release"
    assert any(name.startswith("membership test from the columns whose training values")
               for name, _ in sec.private_table)
    assert "membership test from the columns" in rep.private_details["summary"][
        "empirical_epsilon_source"]
    # the default page: the check ran, its figures are private
    assert not any("recoverable" in v for v in sec.verdicts if "Flag" in v)
    assert ("columns whose training values the thresholds recover",
            "ran; computed from the training rows: in the private section") in sec.table
    assert "every distinct training value recoverable" not in rep.default_page()
    row = next(c for c in rep.structural if c["name"] == "recoverable_values")
    assert row["channel"] == "private" and row["found"] is None
    assert any("recoverable_values" in r and "private page" in r
               for r in rep.recommendation["reasons"])


def test_checks_that_cannot_see_the_rows_say_so():
    """Histogram boosting on a frame with a string category column: the rows the model
    sees are not numbers, so the threshold checks do not run and say why (no "none")."""
    import pandas as pd

    X, y, Xp, yp = _data()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1],
                          "c": pd.Categorical(np.array(list("vwxyzst"))[X[:, 2].astype(int)])})
    framep = pd.DataFrame({"a": Xp[:, 0], "b": Xp[:, 1],
                           "c": pd.Categorical(np.array(list("vwxyzst"))[Xp[:, 2].astype(int)])})
    m = HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype",
                                       random_state=0).fit(frame, y)
    c = _run(m, frame, y, framep, yp)
    for name in ("threshold_midpoints", "recoverable_values"):
        assert not c[name].ran and c[name].outcome == "not_checked"
        assert "not available" in c[name].reason
    assert c["leaf_k_anonymity"].ran            # read from the pickle alone
