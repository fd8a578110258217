"""Scorers locate the evaluated fold's rows by position, never by value.

Real tables are full of exact duplicates. The reference table here is the raw Adult
frame reduced to four categorical columns: over 90 % of its rows have an identical twin
(features and label), and twins often sit in different WERM groups. The scorer's figure
for every fold must equal the attack computed by hand on that fold's rows.
"""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy import WERMClassifier
from sklearn_privacy.attacks import (
    make_membership_scorer,
    make_werm_membership_scorer,
    membership_inference,
)
from sklearn_privacy.datasets import load_adult

pd = pytest.importorskip("pandas")

COLUMNS = ["sex", "race", "relationship", "workclass"]


@pytest.fixture(scope="module")
def duplicated_table():
    bunch = load_adult(raw=True, as_frame=True)
    rng = np.random.RandomState(0)
    idx = rng.permutation(len(bunch.data))[:900]
    X = bunch.data[COLUMNS].iloc[idx].astype(str).reset_index(drop=True)
    y = (bunch.target.iloc[idx] == ">50K").astype(int).to_numpy()
    group = rng.randint(0, 2, size=len(X))
    return X, y, group


def _werm():
    enc = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), COLUMNS)])
    return WERMClassifier(make_pipeline(enc, DecisionTreeClassifier(random_state=0)), w=0.0)


def _by_hand(estimator, X, y, group, cv, k, *, take):
    """Score of fold-by-fold refits, attacking group ``k``'s rows located by position."""
    out = []
    for train, test in cv.split(X):
        est = clone(estimator).fit(take(X, train), y[train], data_source=group[train])
        mem, non = train[group[train] == k], test[group[test] == k]
        rows = np.r_[mem, non]
        res = membership_inference(est, take(X, rows), y[rows],
                                   np.arange(rows.size) < mem.size, attack="confidence",
                                   random_state=0)
        out.append(0.5 - res.auc)
    return np.array(out)


def test_table_is_mostly_duplicates(duplicated_table):
    X, y, group = duplicated_table
    full = X.assign(y=y)
    assert full.duplicated(keep=False).mean() >= 0.4
    # twins in different groups: matching rows by value cannot tell their group
    mixed = full.assign(g=group).groupby(COLUMNS + ["y"], observed=True)["g"].nunique()
    assert (mixed > 1).sum() >= 10


@pytest.mark.parametrize("k", [0, 1])
def test_werm_scorer_on_duplicated_frame_equals_by_hand_folds(duplicated_table, k):
    """Regression: the scorer matched rows by value, assigning duplicated rows to the
    wrong group (about twice the true leakage on COMPAS)."""
    X, y, group = duplicated_table
    cv = KFold(3, shuffle=True, random_state=0)
    scorer = make_werm_membership_scorer(X, y, group, group=k, random_state=0)
    out = cross_validate(_werm(), X, y, cv=cv, scoring=scorer, error_score="raise",
                         params={"data_source": group})
    expected = _by_hand(_werm(), X, y, group, cv, k, take=lambda A, i: A.iloc[i])
    np.testing.assert_array_equal(out["test_score"], expected)


def test_werm_scorer_on_arrays_with_sample_index_routing(duplicated_table):
    """Arrays carry no index: positions come from ``sample_index`` (metadata routing)."""
    X, y, group = duplicated_table
    Xa = OneHotEncoder(sparse_output=False).fit_transform(X)
    cv = KFold(3, shuffle=True, random_state=0)
    est = WERMClassifier(DecisionTreeClassifier(random_state=0), w=0.0)
    with sklearn.config_context(enable_metadata_routing=True):
        est.set_fit_request(data_source=True)
        scorer = make_werm_membership_scorer(Xa, y, group, group=1, random_state=0)
        gs = GridSearchCV(est, {"w": [0.0]}, scoring={"ref": scorer}, refit=False, cv=cv,
                          error_score="raise")
        gs.fit(Xa, y, data_source=group, sample_index=np.arange(len(y)))
    got = [gs.cv_results_[f"split{i}_test_ref"][0] for i in range(3)]
    est = WERMClassifier(DecisionTreeClassifier(random_state=0), w=0.0)
    expected = _by_hand(est, Xa, y, group, cv, 1, take=lambda A, i: A[i])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("werm", [False, True])
def test_arrays_with_duplicated_rows_are_refused_without_positions(duplicated_table, werm):
    """An array fold with twins elsewhere in the population cannot be located: the
    scorer says so instead of guessing which copy was held out."""
    X, y, group = duplicated_table
    Xa = OneHotEncoder(sparse_output=False).fit_transform(X)
    if werm:
        est = WERMClassifier(DecisionTreeClassifier(random_state=0), w=0.0)
        scorer, params = make_werm_membership_scorer(Xa, y, group,
                                                     random_state=0), {"data_source": group}
    else:
        est, scorer, params = LogisticRegression(), make_membership_scorer(Xa, y,
                                                                           random_state=0), None
    with pytest.raises(ValueError, match="identical copies.*DataFrame.*sample_index"):
        cross_validate(est, Xa, y, cv=KFold(3, shuffle=True, random_state=0),
                       scoring=scorer, error_score="raise", params=params)


def test_plain_scorer_by_position_on_duplicates(duplicated_table):
    """The same table as a DataFrame (index) and as an array (sample_index): both give
    the by-hand figure of every fold."""
    X, y, _ = duplicated_table
    Xa = OneHotEncoder(sparse_output=False).fit_transform(X)
    Xf = pd.DataFrame(Xa)
    cv = KFold(3, shuffle=True, random_state=0)
    clf = LogisticRegression(C=100.0, max_iter=1000)
    by_index = cross_validate(clf, Xf, y, cv=cv, scoring=make_membership_scorer(Xf, y,
                                                                                random_state=0),
                              error_score="raise")["test_score"]
    with sklearn.config_context(enable_metadata_routing=True):
        by_routing = cross_validate(clf, Xa, y, cv=cv, scoring=make_membership_scorer(Xa, y,
                                                                                      random_state=0),
                                    error_score="raise",
                                    params={"sample_index": np.arange(len(y))})["test_score"]
    by_hand = []
    for train, test in cv.split(Xa):
        est = clone(clf).fit(Xa[train], y[train])
        rows = np.r_[train, test]
        by_hand.append(0.5 - membership_inference(est, Xa[rows], y[rows],
                                                  np.arange(rows.size) < train.size,
                                                  random_state=0).auc)
    np.testing.assert_array_equal(by_index, by_hand)
    np.testing.assert_array_equal(by_routing, by_hand)


def test_sample_index_is_checked():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression().fit(X[:20], y[:20])
    scorer = make_membership_scorer(X, y, random_state=0)
    with pytest.raises(ValueError, match="one row position per row"):
        scorer(clf, X[20:], y[20:], sample_index=np.arange(5))
    with pytest.raises(ValueError, match="distinct row positions"):
        scorer(clf, X[20:], y[20:], sample_index=np.r_[np.arange(19), 19 + 40])
    with pytest.raises(ValueError, match="labels of the evaluated fold differ"):
        scorer(clf, X[20:], 1 - y[20:], sample_index=np.arange(20, 40))
    assert scorer(clf, X[20:], y[20:], sample_index=np.arange(20, 40)) == \
        scorer(clf, X[20:], y[20:])
