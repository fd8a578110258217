"""PrivateMulticalibrator and its groups on raw pandas frames, named columns and
sensitive features the model does not see."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privacy import PrivateMulticalibrator
from sklearn_privacy.metrics import make_multicalibration_scorer, multicalibration_error
from sklearn_privacy.multicalibration import (
    ColumnPredicate,
    Group,
    conjunction_groups,
    membership_matrix,
)

#: The fit's advice on the calibration data (a budget of answers spent before the last
#: cell, no cell large enough to correct, updates within a cell's sampling noise) is
#: expected on the small data sets of these tests; each advice is asserted where it is the
#: subject (tests/test_multicalibration_figures.py, and
#: test_updates_within_the_sampling_noise_are_said in tests/test_multicalibration_counts.py).
_FIT_ADVICE = r".*(updates shifted a cell|The private fit|Some groups have no)"
pytestmark = pytest.mark.filterwarnings(
    "ignore:" + _FIT_ADVICE + ":sklearn_privacy.exceptions.StatisticalWarning")


def _raw_frame(n=3000, seed=0, category=False):
    rng = np.random.RandomState(seed)
    race = rng.choice(["White", "Black", "Asian"], size=n, p=[0.7, 0.2, 0.1])
    sex = rng.choice(["Male", "Female"], size=n)
    age = rng.randint(18, 80, size=n)
    hours = rng.normal(40, 10, size=n)
    logit = -1 + 0.03 * (age - 40) + 0.02 * (hours - 40)
    # an interaction the linear base misses: Black women over 50 are much more positive
    bonus = 2.5 * ((race == "Black") & (sex == "Female") & (age >= 50))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(logit + bonus)))).astype(int)
    df = pd.DataFrame({"race": race, "sex": sex, "age": age, "hours": hours,
                       "female": (sex == "Female").astype(int)})
    if category:
        df["race"] = df["race"].astype("category")
        df["sex"] = df["sex"].astype("category")
    return df, y


def _pipeline():
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["race", "sex"]),
                            ("num", StandardScaler(), ["age", "hours"])])
    return make_pipeline(ct, LogisticRegression(max_iter=1000))


@pytest.mark.parametrize("category", [False, True], ids=["str", "category"])
def test_raw_frame_with_named_groups_matches_precomputed_masks(category):
    df, y = _raw_frame(category=category)
    groups = [ColumnPredicate("race", "==", "Black"), ColumnPredicate("age", ">=", 50),
              Group(("female", ColumnPredicate("race", "==", "Black")))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name (or any other) warning
        warnings.filterwarnings("ignore", _FIT_ADVICE, UserWarning)
        mc = PrivateMulticalibrator(_pipeline(), groups, calibration_tol=0.05).fit(df, y)
        p = mc.predict_proba(df)
        acc = mc.score(df, y)
    assert mc.n_features_in_ == 5
    np.testing.assert_array_equal(mc.feature_names_in_, df.columns)
    # oracle: the same loop with the masks computed by pandas, passed as 0/1 columns
    S = np.column_stack([df["race"] == "Black", df["age"] >= 50,
                         (df["sex"] == "Female") & (df["race"] == "Black")]).astype(float)
    ref = PrivateMulticalibrator(_pipeline(), [0, 1, 2], calibration_tol=0.05).fit(
        df, y, sensitive_features=S)
    assert mc.n_updates_ > 0 and mc.updates_ == ref.updates_
    np.testing.assert_array_equal(p, ref.predict_proba(df, sensitive_features=S))
    assert acc == pytest.approx(np.mean((p[:, 1] > 0.5) == y))
    names = [g.name for g in mc.groups_]
    assert names == ["all", "race=='Black'", "age>=50.0", "female&race=='Black'"]


def test_missing_values_are_never_members():
    df = pd.DataFrame({"race": pd.Series(["Black", None, "White", np.nan], dtype=object),
                       "cat": pd.Categorical(["a", None, "b", "a"]),
                       "s": pd.array(["x", pd.NA, "y", "x"], dtype="string"),
                       "age": [50.0, np.nan, 20.0, 70.0],
                       "flag": pd.array([1, pd.NA, 0, 1], dtype="Int64")})
    assert ColumnPredicate("race", "!=", "White")(df).tolist() == [True, False, False, False]
    assert ColumnPredicate("cat", "==", "a")(df).tolist() == [True, False, False, True]
    assert ColumnPredicate("s", "!=", "y")(df).tolist() == [True, False, False, True]
    assert ColumnPredicate("age", "<", 60)(df).tolist() == [True, False, True, False]
    assert Group("flag").mask(df).tolist() == [True, False, False, True]


def test_named_columns_errors_are_clear():
    df, y = _raw_frame(n=200)
    with pytest.raises(ValueError, match="'rac' is not a column.*race"):
        PrivateMulticalibrator(_pipeline(), [ColumnPredicate("rac", "==", "Black")]).fit(df, y)
    with pytest.raises(ValueError, match="needs data with column names"):
        membership_matrix([ColumnPredicate("race", "==", "Black")], df.to_numpy())
    with pytest.raises(TypeError, match="not numeric"):
        Group("race").mask(df)                         # a string column is not binary
    with pytest.raises(TypeError, match="numeric"):
        ColumnPredicate("age", "==", "50")(df)           # string value, numeric column
    with pytest.raises(TypeError, match="not numeric"):
        ColumnPredicate("race", ">", 3)(df)              # number, string column
    with pytest.raises(ValueError, match="numeric value"):
        ColumnPredicate("race", "<", "Black")
    # a frame at fit and an array at predict: the group cannot be evaluated
    mc = PrivateMulticalibrator(FrozenEstimator(make_pipeline(
        ColumnTransformer([("n", "passthrough", [2, 3])]), LogisticRegression()).fit(
        df, y)), [ColumnPredicate("race", "==", "Black")]).fit(df, y)
    with pytest.raises(ValueError, match="column names"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # scikit-learn's feature-name warning
        mc.predict_proba(df.to_numpy())


def test_integer_positions_still_work_on_arrays_and_frames():
    X = np.array([[1, 0, 3.0], [0, 1, 5.0], [1, 1, 7.0]])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    for data in (X, df):
        assert Group((0, 1)).mask(data).tolist() == [False, False, True]
        assert ColumnPredicate(2, ">", 4)(data).tolist() == [False, True, True]
    assert Group(("a", 1)).mask(df).tolist() == [False, False, True]


def test_conjunction_groups_over_named_columns():
    df, _ = _raw_frame(n=500, category=True)
    groups = conjunction_groups({"race": "race", "sex": "sex"}, X=df, min_size=10)
    M = membership_matrix(groups, df)
    for g, col in zip(groups, M.T, strict=True):
        want = np.ones(len(df), bool)
        for part in g.name.split("&"):
            name, value = part.split("==")
            want &= (df[name] == value.strip("'")).to_numpy()
        np.testing.assert_array_equal(col, want)
        assert col.sum() >= 10
    assert len(groups) == 3 + 2 + sum(
        ((df.race == r) & (df.sex == s)).sum() >= 10
        for r in ["Asian", "Black", "White"] for s in ["Female", "Male"])
    # names of binary columns, with readable names for integer positions
    named = conjunction_groups([["female"], [2]], names={2: "age"})
    assert [g.name for g in named] == ["female", "age", "female&age"]
    with pytest.raises(ValueError, match="pass X"):
        conjunction_groups({"race": "race"})


def test_sensitive_features_the_model_does_not_see():
    df, y = _raw_frame()
    X, S = df[["age", "hours"]], df[["race", "sex"]]
    groups = [ColumnPredicate("race", "==", "Black"),
              (ColumnPredicate("race", "==", "Black"), ColumnPredicate("sex", "==", "Female"))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", _FIT_ADVICE, UserWarning)
        mc = PrivateMulticalibrator(LogisticRegression(), groups, calibration_tol=0.05).fit(
            X, y, sensitive_features=S)
        p = mc.predict_proba(X, sensitive_features=S)
    np.testing.assert_array_equal(mc.feature_names_in_, ["age", "hours"])
    assert mc.estimator_.n_features_in_ == 2 and mc.n_updates_ > 0
    # the groups raise the interaction cell: the calibration error on it drops
    M = membership_matrix(mc.groups_, S)
    before = multicalibration_error(y, mc.estimator_.predict_proba(X)[:, 1], M, min_size=20)
    after = multicalibration_error(y, p[:, 1], M, min_size=20)
    assert after <= 0.05 < before
    with pytest.raises(ValueError, match="fitted with sensitive_features"):
        mc.predict_proba(X)
    with pytest.raises(ValueError, match=r"sensitive_features: these rows give 1 column "
                       r"named \['race'\] but the fit used 2 columns named \['race', "
                       r"'sex'\]; pass the same columns"):
        mc.predict_proba(X, sensitive_features=S[["race"]])
    with pytest.raises(ValueError, match=r"2 columns without names \(an array\) but"):
        mc.predict_proba(X, sensitive_features=S.to_numpy())
    with pytest.raises(ValueError, match="rows"):
        mc.predict_proba(X, sensitive_features=S.iloc[:10])
    plain = PrivateMulticalibrator(LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match="fitted without them"):
        plain.predict_proba(X, sensitive_features=S)
    # a 1-D array (a Series) of a single sensitive feature works too
    one = PrivateMulticalibrator(LogisticRegression(), [ColumnPredicate(0, "==", "Black")],
                                 calibration_tol=0.05).fit(
        X, y, sensitive_features=df["race"].to_numpy())
    assert one.predict_proba(X, sensitive_features=df["race"].to_numpy()).shape == (len(y), 2)


def test_grid_search_routes_sensitive_features():
    df, y = _raw_frame()
    X, S = df[["age", "hours"]], df[["race", "sex"]]
    Xpub, ypub = _raw_frame(seed=5)
    base = FrozenEstimator(LogisticRegression().fit(Xpub[["age", "hours"]], ypub))
    groups = [ColumnPredicate("race", "==", "Black"),
              (ColumnPredicate("race", "==", "Black"), ColumnPredicate("sex", "==", "Female"))]
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", _FIT_ADVICE, UserWarning)
        est = (PrivateMulticalibrator(base, groups, mechanism="numeric_sparse", epsilon=2.0,
                                      random_state=0)
               .set_fit_request(sensitive_features=True)
               .set_score_request(sensitive_features=True))
        search = GridSearchCV(est, {"calibration_tol": [0.05, 0.2]}, cv=cv).fit(
            X, y, sensitive_features=S)
    assert search.best_estimator_.epsilon_ == 2.0
    assert search.best_estimator_.sensitive_features_in_["names"] == ["race", "sex"]
    # oracle: the same folds by hand
    for k, alpha in enumerate([0.05, 0.2]):
        manual = []
        for tr, te in cv.split(X):
            m = PrivateMulticalibrator(base, groups, calibration_tol=alpha,
                                       mechanism="numeric_sparse", epsilon=2.0,
                                       random_state=0).fit(
                X.iloc[tr], y[tr], sensitive_features=S.iloc[tr])
            manual.append(m.score(X.iloc[te], y[te], sensitive_features=S.iloc[te]))
        assert search.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(manual))


def test_scorer_on_raw_frames_and_sensitive_features():
    df, y = _raw_frame(n=1500)
    scorer = make_multicalibration_scorer([ColumnPredicate("race", "==", "Black")],
                                          min_size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", _FIT_ADVICE, UserWarning)
        scores = cross_val_score(_pipeline(), df, y, cv=3, scoring=scorer)
    assert np.all((scores <= 0) & (scores > -1))
    model = _pipeline().fit(df, y)
    G = np.column_stack([np.ones(len(y), bool), df["race"] == "Black"])
    want = -multicalibration_error(y, model.predict_proba(df)[:, 1], G, min_size=10)
    assert scorer(model, df, y) == pytest.approx(want)
    X, S = df[["age", "hours"]], df[["race"]]
    lr = LogisticRegression().fit(X, y)
    want = -multicalibration_error(y, lr.predict_proba(X)[:, 1], G, min_size=10)
    assert scorer(lr, X, y, sensitive_features=S) == pytest.approx(want)


def test_scorer_receives_routed_sensitive_features_in_grid_search():
    df, y = _raw_frame()
    X, S = df[["age", "hours"]], df[["race", "sex"]]
    groups = [ColumnPredicate("race", "==", "Black")]
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", _FIT_ADVICE, UserWarning)
        scorer = make_multicalibration_scorer(groups, min_size=20).set_score_request(
            sensitive_features=True)
        est = (PrivateMulticalibrator(LogisticRegression(), groups)
               .set_fit_request(sensitive_features=True)
               .set_predict_proba_request(sensitive_features=True))
        search = GridSearchCV(est, {"calibration_tol": [0.02, 0.3]}, cv=cv, scoring=scorer).fit(
            X, y, sensitive_features=S)
    for k, alpha in enumerate([0.02, 0.3]):
        manual = []
        for tr, te in cv.split(X):
            m = PrivateMulticalibrator(LogisticRegression(), groups, calibration_tol=alpha).fit(
                X.iloc[tr], y[tr], sensitive_features=S.iloc[tr])
            p = m.predict_proba(X.iloc[te], sensitive_features=S.iloc[te])[:, 1]
            G = membership_matrix(m.groups_, S.iloc[te])
            manual.append(-multicalibration_error(y[te], p, G, min_size=20))
        assert search.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(manual))
    assert search.best_params_ == {"calibration_tol": 0.02}
