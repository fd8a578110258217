"""A new user's workflow on the raw Adult table, end to end, with no manual encoding.

Every test runs on the raw UCI frame (``category`` columns, missing values, pandas in and
out) with a ``ColumnTransformer`` in front of the model, and turns every ``UserWarning``
into an error, so a ``X does not have valid feature names`` warning anywhere fails it.
"""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

import sklearn_privacy.fil as fil  # noqa: E402
from sklearn_privacy import (  # noqa: E402
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
    PrivateMulticalibrator,
    WERMClassifier,
)
from sklearn_privacy.attacks import (  # noqa: E402
    make_membership_scorer,
    make_werm_membership_scorer,
    prior_baseline,
    whitebox_inversion,
)
from sklearn_privacy.datasets import load_adult  # noqa: E402
from sklearn_privacy.exceptions import PrivacyWarning  # noqa: E402
from sklearn_privacy.multicalibration import ColumnPredicate  # noqa: E402
from sklearn_privacy.utils import feature_columns, strip_for_release  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::UserWarning")

CATEGORICAL = ["workclass", "education", "marital_status", "occupation", "relationship",
               "race", "sex"]
NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]


@pytest.fixture(scope="module")
def adult():
    bunch = load_adult(raw=True, as_frame=True)
    X = bunch.data[CATEGORICAL + NUMERIC]
    y = (bunch.target == ">50K").astype(int).to_numpy()
    rng = np.random.RandomState(0)
    idx = rng.permutation(len(X))
    tr, te = idx[:2500], idx[2500:5000]
    return (X.iloc[tr].reset_index(drop=True), y[tr], X.iloc[te].reset_index(drop=True),
            y[te])


def _pipeline(model, *, sparse):
    cats = make_pipeline(SimpleImputer(strategy="most_frequent"),
                         OneHotEncoder(handle_unknown="ignore", sparse_output=sparse))
    pre = ColumnTransformer([("cat", cats, CATEGORICAL), ("num", StandardScaler(), NUMERIC)],
                            sparse_threshold=1.0 if sparse else 0.0)
    return make_pipeline(pre, model)


def test_raw_frame_fil_pipeline_sparse_equals_dense(adult):
    """The default sparse one-hot output gives the dense pipeline's etas to 1e-10."""
    X, y, X_test, y_test = adult
    kw = {"sigma": 0.5, "alpha": 1e-3, "random_state": 0}
    dense = _pipeline(FILLogisticRegression(**kw), sparse=False).fit(X, y)
    sparse = _pipeline(FILLogisticRegression(**kw), sparse=True).fit(X, y)
    import scipy.sparse as sp

    assert sp.issparse(sparse[0].transform(X.iloc[:5]))
    np.testing.assert_allclose(sparse[-1].eta_, dense[-1].eta_, rtol=1e-10)
    np.testing.assert_allclose(sparse[-1].coef_, dense[-1].coef_, rtol=1e-10, atol=1e-12)
    # eta of one original attribute of every row, through the pipeline
    race_dense = fil.eta(dense, columns="race", per_example=True)
    race_sparse = fil.eta(sparse, columns="race", per_example=True)
    np.testing.assert_allclose(race_sparse, race_dense, rtol=1e-10)
    # ... equals the final step's eta over the one-hot block found by feature_columns
    block = feature_columns(dense, "race")
    names = dense[:-1].get_feature_names_out()[block]
    assert all(n.startswith("cat__race_") for n in names) and len(block) == 5
    np.testing.assert_allclose(race_dense, dense[-1].eta(columns=block, per_example=True),
                               rtol=1e-12)
    # the one-hot columns by name, through the sparse pipeline (no feature_names_in_ there)
    np.testing.assert_allclose(fil.eta(sparse, columns=list(names), per_example=True),
                               race_dense, rtol=1e-10)
    # DataFrame in, predictions out; the model is useful
    assert dense.score(X_test, y_test) > 0.78


def test_grid_search_over_sigma_with_accuracy_and_membership(adult):
    """GridSearchCV(n_jobs=2) over sigma scores accuracy and membership leakage."""
    X, y, _, _ = adult
    X, y = X.iloc[:1500], y[:1500]
    cv = KFold(3, shuffle=True, random_state=0)
    pipe = _pipeline(FILLogisticRegression(alpha=1e-3, random_state=0), sparse=True)
    scoring = {"acc": "accuracy",
               "mia": make_membership_scorer(X, y, attack="loss", cv=cv, metric="auc",
                                             random_state=0)}
    search = GridSearchCV(pipe, {"fillogisticregression__sigma": [1e-3, 1.0, 100.0]},
                          scoring=scoring, refit="acc", cv=cv, n_jobs=2).fit(X, y)
    acc = search.cv_results_["mean_test_acc"]
    mia = search.cv_results_["mean_test_mia"]
    assert np.all(np.isfinite(mia)) and np.all(np.abs(mia) <= 0.5)
    # more noise: lower accuracy; at sigma = 100 the model is noise and the attack is chance
    assert acc[0] > 0.8 > acc[2]
    assert abs(mia[2]) < 0.1
    assert search.best_params_["fillogisticregression__sigma"] in (1e-3, 1.0)


def test_whitebox_inversion_of_race_through_the_pipeline(adult):
    """The MAP white-box attack on race stays at or above the prior baseline."""
    X, y, _, _ = adult
    X, y = X.iloc[:800], y[:800]
    rows = np.arange(200)
    for sigma, expect_high in ((1e-4, True), (10.0, False)):
        pipe = _pipeline(FILLogisticRegression(sigma=sigma, alpha=1e-2, random_state=0),
                         sparse=False).fit(X, y)
        attack = whitebox_inversion(pipe, X, sensitive_features="race", rows=rows,
                                    prior="empirical", n_draws=20,
                                    random_state=0)
        prior = prior_baseline(X.iloc[rows], sensitive_features="race", X_prior=X)
        assert attack.accuracy >= prior.accuracy     # 0.995 and 0.845 vs 0.845
        if expect_high:
            assert attack.accuracy > 0.95
    # the prior baseline is the majority level's share among the attacked rows
    share = (X["race"].iloc[rows] == X["race"].mode()[0]).mean()
    assert prior.accuracy == pytest.approx(share)


def test_irfil_equalises_eta_of_race_on_raw_frame(adult):
    X, y, _, _ = adult
    # the paper's attribute-level IRFIL experiment uses least squares
    pipe = _pipeline(IRFILLinearRegression(alpha=1e-2, eta_max_iter=5, random_state=0),
                     sparse=True)
    names = pipe[0].fit(X).get_feature_names_out()
    race = [k for k, n in enumerate(names) if n.startswith("cat__race_")]
    # equalising one attribute raises the whole-row eta here, which the fit says
    with pytest.warns(PrivacyWarning, match="whole-row eta .* grew"):
        pipe.set_params(irfillinearregression__sensitive_features=race).fit(X, y)
    cv = pipe[-1].eta_history_["cv"]
    # spread of the race eta across people: 0.78 -> 0.17 in five reweightings
    assert cv[-1] < 0.3 * cv[0]


def test_werm_on_frame_with_reference_rows(adult):
    X, y, _, _ = adult
    X, y = X.iloc[:1200], y[:1200]
    group = np.r_[np.zeros(600, int), np.ones(600, int)]
    cv = KFold(3, shuffle=True, random_state=0)
    werm = WERMClassifier(_pipeline(LogisticRegression(max_iter=500), sparse=True), w=0.5)
    scoring = {"acc": "accuracy",
               "train_rows": make_werm_membership_scorer(X, y, group, group=0, cv=cv,
                                                         random_state=0),
               "reference_rows": make_werm_membership_scorer(X, y, group, group=1, cv=cv,
                                                             random_state=0)}
    search = GridSearchCV(werm, {"w": [0.0, 1.0]}, scoring=scoring, refit="acc", cv=cv)
    search.fit(X, y, data_source=group)
    assert np.all(search.cv_results_["mean_test_acc"] > 0.75)
    assert search.best_estimator_.feature_names_in_.tolist() == list(X.columns)


def test_multicalibration_with_raw_groups_and_frozen_base(adult):
    X, y, X_cal, y_cal = adult
    base = _pipeline(LogisticRegression(max_iter=500), sparse=True).fit(X, y)
    groups = [ColumnPredicate("race", "==", "Black"), ColumnPredicate("sex", "==", "Female"),
              ColumnPredicate("age", ">=", 50)]
    mc = PrivateMulticalibrator(FrozenEstimator(base), groups=groups,
                                mechanism="numeric_sparse", epsilon=1.0, random_state=0)
    # at epsilon = 1 a few hundred calibration rows cannot correct every group: the fit
    # says so (see smallest_correctable_cell) instead of silently making few updates
    with pytest.warns(UserWarning, match="groups|noisy answers"):
        mc.fit(X_cal, y_cal)
    assert np.isfinite(mc.epsilon_) and mc.epsilon_ <= 1.0
    proba = mc.predict_proba(X_cal)
    assert proba.shape == (len(X_cal), 2) and np.all((proba >= 0) & (proba <= 1))
    # membership evaluated on the frame: the Black group of the calibration rows
    black = ColumnPredicate("race", "==", "Black")(X_cal)
    assert black.sum() == (X_cal["race"] == "Black").sum() > 0


def test_strip_for_release_keeps_predictions(adult):
    X, y, X_test, _ = adult
    pipe = _pipeline(IRFILLogisticRegression(alpha=1e-2, eta_max_iter=2, random_state=0),
                     sparse=True).fit(X, y)
    with pytest.warns(PrivacyWarning, match=r"random_state=0 set to None"):
        released = strip_for_release(pipe)       # the seed is cleared from the copy
    np.testing.assert_array_equal(released.predict_proba(X_test), pipe.predict_proba(X_test))
    assert not hasattr(released[-1], "sample_weight_")
    assert not hasattr(released[-1], "eta_history_")
    assert hasattr(pipe[-1], "sample_weight_")     # the original is untouched
