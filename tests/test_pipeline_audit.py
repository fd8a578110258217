"""Audit tools on raw DataFrames and pipelines; scorer safety; the WERM scorer."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, ShuffleSplit, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, WERMClassifier
from sklearn_privacy.attacks import (
    candidate_minimisers,
    fredrikson_inversion,
    lira,
    make_attribute_inversion_scorer,
    make_membership_scorer,
    make_werm_membership_scorer,
    membership_inference,
    prior_baseline,
    whitebox_inversion,
)
from sklearn_privacy.fil import eta, fisher_information

LEVELS = ["Asian", "Black", "Other", "White"]


def _frame(n=160, seed=0):
    rng = np.random.RandomState(seed)
    race = rng.choice(LEVELS, size=n, p=[0.15, 0.25, 0.1, 0.5])
    df = pd.DataFrame({
        "age": rng.normal(40, 10, n),
        "race": pd.Categorical(race, categories=LEVELS),
        "hours": rng.normal(40, 5, n),
    })
    effect = pd.Series(race).map({"Asian": 1.0, "Black": -1.0, "Other": 0.5, "White": 0.0})
    y = 0.05 * df["age"].to_numpy() + 2.0 * effect.to_numpy() + 0.3 * rng.normal(size=n)
    return df, y


def _pipeline(sigma, **kw):
    ct = ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["race"]),
                            ("num", StandardScaler(), ["age", "hours"])])
    return make_pipeline(ct, FILLinearRegression(sigma=sigma, alpha=1e-2, random_state=0,
                                                 **kw))


@pytest.mark.filterwarnings("error::UserWarning")
def test_whitebox_through_column_transformer_equals_hand_made_attack():
    df, y = _frame()
    pipe = _pipeline(0.05).fit(df, y)
    final = pipe[-1]
    hand = np.eye(4)  # one-hot of the four levels, columns 0..3 of the final step
    released = np.r_[final.coef_, final.intercept_]
    a = whitebox_inversion(pipe, df, sensitive_features="race", candidates=LEVELS,
                           released=released)
    b = whitebox_inversion(final, sensitive_features=[0, 1, 2, 3], candidates=hand,
                           released=released)
    assert np.array_equal(a.predictions, b.predictions) and a.accuracy == b.accuracy
    assert np.array_equal(a.truth, pd.Categorical(df["race"]).codes)
    assert list(a.levels) == LEVELS
    for prior in (None, "empirical"):
        a = whitebox_inversion(pipe, df, sensitive_features="race", candidates=LEVELS,
                               n_draws=10, prior=prior, random_state=0,
                               rows=[5, 1, 1, 90])
        b = whitebox_inversion(final, sensitive_features=[0, 1, 2, 3], candidates=hand,
                               n_draws=10, prior=prior, random_state=0,
                               rows=[5, 1, 1, 90])
        assert np.array_equal(a.predictions, b.predictions)
    # default candidates: the distinct encoded values in the training data
    c = whitebox_inversion(pipe, sensitive_features="race", released=released)
    assert c.accuracy == whitebox_inversion(final, sensitive_features=[0, 1, 2, 3],
                                            released=released).accuracy
    th_a, tr_a, cand_a = candidate_minimisers(pipe, df, sensitive_features="race",
                                              candidates=LEVELS,
                                              rows=[3, 0])
    th_b, tr_b, _ = candidate_minimisers(final, sensitive_features=[0, 1, 2, 3], candidates=hand,
                                         rows=[3, 0])
    np.testing.assert_array_equal(cand_a, hand)
    np.testing.assert_allclose(th_a, th_b, rtol=1e-12)
    # a final-step column name (verbose names of the ColumnTransformer) is also accepted
    est_df = FILLinearRegression(sigma=0.05, alpha=1e-2, random_state=0).fit(
        pd.DataFrame(pipe[:-1].transform(df), columns=pipe[:-1].get_feature_names_out()), y)
    d = whitebox_inversion(est_df,
                           sensitive_features=["cat__race_Asian", "cat__race_Black",
                                               "cat__race_Other", "cat__race_White"],
                           released=released)
    assert d.accuracy == b.accuracy


@pytest.mark.filterwarnings("error::UserWarning")
def test_whitebox_pipeline_small_and_large_sigma_against_prior():
    df, y = _frame()
    base = prior_baseline(df, sensitive_features="race").accuracy
    assert base == pytest.approx((df["race"] == "White").mean())
    small = whitebox_inversion(_pipeline(1e-6).fit(df, y), df, sensitive_features="race",
                               candidates=LEVELS, n_draws=5, random_state=0)
    assert small.accuracy == 1.0
    big = _pipeline(10.0).fit(df, y)
    ml = whitebox_inversion(big, df, sensitive_features="race", candidates=LEVELS, n_draws=20,
                            random_state=0)
    mapped = whitebox_inversion(big, df, sensitive_features="race", candidates=LEVELS,
                                n_draws=20, prior="empirical", random_state=0)
    assert ml.accuracy < base  # the likelihood alone is noise at this sigma
    assert mapped.accuracy >= base


@pytest.mark.filterwarnings("error::UserWarning")
def test_fredrikson_and_prior_on_raw_frames():
    df, y = _frame()
    pipe = _pipeline(1e-3).fit(df, y)
    raw = fredrikson_inversion(pipe, df, y, sensitive_features="race")
    Z = pipe[:-1].transform(df)
    hand = fredrikson_inversion(pipe[-1], Z, y, sensitive_features=[0, 1, 2, 3],
                                candidates=np.eye(4))
    assert np.array_equal(raw.predictions, hand.predictions)
    assert raw.accuracy > 0.8
    assert list(raw.candidates) == LEVELS
    with pytest.raises(ValueError, match="not among the candidates"):
        fredrikson_inversion(pipe, df, y, sensitive_features="race", candidates=["Asian", "Black"])
    # string (not categorical) column
    df_str = df.assign(race=df["race"].astype(str))
    pipe_s = _pipeline(1e-3).fit(df_str, y)
    assert (fredrikson_inversion(pipe_s, df_str, y, sensitive_features="race").accuracy
            == raw.accuracy)


def test_pipeline_eta_and_fisher_information():
    df, y = _frame()
    pipe = _pipeline(1.0).fit(df, y)
    final = pipe[-1]
    np.testing.assert_allclose(eta(pipe, columns="race", per_example=True),
                               final.eta(columns=[0, 1, 2, 3], per_example=True),
                               rtol=1e-12)
    np.testing.assert_allclose(eta(pipe, columns="race", per_example=True, constrained=True),
                               final.eta(columns=[0, 1, 2, 3], per_example=True,
                                         constrained=True), rtol=1e-12)
    assert eta(pipe, rows=[0, 1], columns=["age", "label"], wrt="features") == pytest.approx(
        final.eta(rows=[0, 1], columns=[4, 6]), rel=1e-12)
    assert eta(pipe, wrt="features") == final.eta()
    # by default through the scaler: age in years, i.e. the scaled column's eta / scale_
    scale = pipe[0].named_transformers_["num"].scale_[0]
    np.testing.assert_allclose(eta(pipe, columns="age", per_example=True),
                               final.eta(columns=[4], per_example=True) / scale, rtol=1e-10)
    np.testing.assert_allclose(fisher_information(pipe, rows=[2], columns="race"),
                               final.fisher_information(rows=[2], columns=[0, 1, 2, 3]))
    with pytest.raises(TypeError, match="FIL estimator"):
        eta(make_pipeline(StandardScaler(), LogisticRegression()).fit(df[["age"]], y > 0))


def test_untraceable_or_mixing_pipelines_refused():
    df, y = _frame()
    mix = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["race"]),
                           ("num", StandardScaler(), ["age", "hours"])]),
        # declared one-to-one but adds the last column to every column
        FunctionTransformer(lambda Z: Z + Z[:, -1:], feature_names_out="one-to-one"),
        FILLinearRegression(sigma=1.0, alpha=1e-2, random_state=0)).fit(df, y)
    with pytest.raises(ValueError, match="depend on other features"):
        whitebox_inversion(mix, df, sensitive_features="race", candidates=LEVELS)
    pca = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["race"]),
                           ("num", StandardScaler(), ["age", "hours"])]),
        PCA(3), FILLinearRegression(sigma=1.0, alpha=1e-2, random_state=0)).fit(df, y)
    with pytest.raises(ValueError, match="cannot trace"):
        whitebox_inversion(pca, sensitive_features="race")
    pipe = _pipeline(1.0).fit(df, y)
    with pytest.raises(ValueError, match="need X"):
        whitebox_inversion(pipe, sensitive_features="race", candidates=LEVELS)
    with pytest.raises(ValueError, match="Martian"):
        whitebox_inversion(pipe, df, sensitive_features="race", candidates=LEVELS + ["Martian"])


# ---------------------------------------------------------------- scorers on raw frames
def _adult_like(n=240, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({
        "age": rng.normal(40, 10, n),
        "workclass": rng.choice(["Private", "State-gov", "Self-emp"], n),
        "race": pd.Categorical(rng.choice(LEVELS, n)),
        "hours": rng.normal(40, 8, n),
    })
    y = ((df["age"] - 40) / 10 + (df["workclass"] == "Private") + rng.normal(size=n) > 0.5)
    return df, y.astype(int).to_numpy()


def _clf_pipeline(C=1e4):
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"),
                             ["workclass", "race"]),
                            ("num", StandardScaler(), ["age", "hours"])])
    return make_pipeline(ct, LogisticRegression(C=C, max_iter=2000))


def test_membership_scorer_on_raw_frame_equals_direct_attack():
    df, y = _adult_like()
    cv = KFold(3, shuffle=True, random_state=0)
    scorer = make_membership_scorer(df, y, attack="loss", metric="advantage", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name (or any) warning
        out = cross_validate(_clf_pipeline(), df, y, cv=cv, scoring=scorer,
                             return_estimator=True, return_indices=True)
        for est, train, test, score in zip(out["estimator"], out["indices"]["train"],
                                           out["indices"]["test"], out["test_score"],
                                           strict=True):
            rows = np.r_[train, test]
            ref = membership_inference(est, df.iloc[rows], y[rows],
                                       np.arange(rows.size) < len(train), attack="loss",
                                       random_state=0)
            assert score == -ref.advantage
        # numeric frame with a plain model: no "X does not have valid feature names"
        num = df[["age", "hours"]]
        cross_validate(LogisticRegression(), num, y, cv=cv,
                       scoring=make_membership_scorer(num, y, random_state=0))
        # index reset (positions, not labels, identify the rows)
        out2 = cross_validate(_clf_pipeline(), df.reset_index(drop=True).set_axis(
            np.arange(len(df))[::-1]), y, cv=cv, scoring=scorer)
    np.testing.assert_array_equal(out2["test_score"], out["test_score"])


def test_grid_search_n_jobs_on_raw_frame_with_fil_pipeline():
    df, y = _adult_like()
    ct = ColumnTransformer([("cat", OneHotEncoder(sparse_output=False,
                                                  handle_unknown="ignore"),
                             ["workclass", "race"]),
                            ("num", StandardScaler(), ["age", "hours"])])
    pipe = make_pipeline(ct, FILLogisticRegression(alpha=1e-4, random_state=0))
    gs = GridSearchCV(pipe, {"fillogisticregression__sigma": [1e-3, 1e3]},
                      scoring={"acc": "accuracy",
                               "mia": make_membership_scorer(df, y, attack="loss", random_state=0)},
                      refit="acc", cv=KFold(2, shuffle=True, random_state=0), n_jobs=2,
                      error_score="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        gs.fit(df, y)
    res = gs.cv_results_
    assert np.all(np.isfinite(res["mean_test_mia"]))
    assert res["mean_test_acc"][0] > res["mean_test_acc"][1]
    # the workers score exactly as a sequential run does
    seq = GridSearchCV(pipe, gs.param_grid, scoring=gs.scoring, refit="acc", cv=gs.cv,
                       error_score="raise").fit(df, y)
    np.testing.assert_array_equal(seq.cv_results_["mean_test_mia"], res["mean_test_mia"])


def test_non_complementary_folds_refused_or_reproduced():
    df, y = _adult_like()
    shuffle = ShuffleSplit(n_splits=2, train_size=0.2, test_size=0.2, random_state=0)
    fil = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["workclass"]),
                           ("num", StandardScaler(), ["age"])]),
        FILLogisticRegression(sigma=1e-3, alpha=1e-3, random_state=0))
    with pytest.raises(ValueError, match="not complements"):
        cross_validate(fil, df, y, cv=shuffle, error_score="raise",
                       scoring=make_membership_scorer(df, y, random_state=0))
    tree = DecisionTreeClassifier(random_state=0)
    num = df[["age", "hours"]]
    with pytest.raises(ValueError, match="not complements"):
        cross_validate(tree, num, y, cv=shuffle, error_score="raise",
                       scoring=make_membership_scorer(num, y, random_state=0))
    # KFold: complements, accepted
    ok = cross_validate(fil, df, y, cv=KFold(3), error_score="raise",
                        scoring=make_membership_scorer(df, y, random_state=0))
    assert np.all(np.isfinite(ok["test_score"]))
    # cv= given: the scorer reproduces each training set, for any splitter
    out = cross_validate(_clf_pipeline(), df, y, cv=shuffle, error_score="raise",
                         scoring=make_membership_scorer(df, y, cv=shuffle, attack="loss",
                                                        metric="advantage", random_state=0),
                         return_estimator=True, return_indices=True)
    for est, train, test, score in zip(out["estimator"], out["indices"]["train"],
                                       out["indices"]["test"], out["test_score"],
                                       strict=True):
        train = np.sort(train)  # the scorer lists the members in population order
        rows = np.r_[train, test]
        ref = membership_inference(est, df.iloc[rows], y[rows],
                                   np.arange(rows.size) < len(train), attack="loss",
                                   random_state=0)
        assert score == -ref.advantage
    with pytest.raises(ValueError, match="not one of the test folds"):
        cross_validate(_clf_pipeline(), df, y, cv=KFold(3), error_score="raise",
                       scoring=make_membership_scorer(df, y, cv=shuffle, random_state=0))


@pytest.mark.parametrize("routing", [False, True])
def test_werm_scorer_trades_training_for_reference_leakage(routing):
    rng = np.random.RandomState(0)
    n, d = 600, 40
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 1.5 * rng.normal(size=n) > 0).astype(int)
    g = rng.randint(0, 2, size=n)
    scoring = {f"g{k}": make_werm_membership_scorer(X, y, g, group=k, attack="loss",
                                                    thresholds="global", metric="advantage",
                                                    random_state=0)
               for k in (0, 1)}
    with sklearn.config_context(enable_metadata_routing=routing):
        est = WERMClassifier(DecisionTreeClassifier(random_state=0))
        if routing:
            est.set_fit_request(data_source=True)
        gs = GridSearchCV(est, {"w": [0.0, 0.5, 1.0]}, scoring=scoring, refit=False,
                          cv=KFold(3, shuffle=True, random_state=0),
                          error_score="raise").fit(X, y, data_source=g)
    train_adv = -gs.cv_results_["mean_test_g0"]
    ref_adv = -gs.cv_results_["mean_test_g1"]
    assert train_adv[0] > train_adv[1] > train_adv[2]
    assert ref_adv[0] < ref_adv[1] < ref_adv[2]
    assert train_adv[0] > 0.3 and ref_adv[2] > 0.3
    assert train_adv[2] < 0.2 and ref_adv[0] < 0.2  # rows the model never learnt from
    with pytest.raises(ValueError, match="group 5"):
        make_werm_membership_scorer(X, y, g, group=5, random_state=0)
    with pytest.raises(ValueError, match="data_source"):
        make_werm_membership_scorer(X, y, g[:-1], random_state=0)


@pytest.mark.filterwarnings("error::UserWarning")
def test_lira_and_inversion_scorer_on_raw_frames():
    df, y = _adult_like(n=160)
    members = np.zeros(len(y), bool)
    members[:80] = True
    target = _clf_pipeline().fit(df.iloc[:80], y[:80])
    res = lira(target, df, y, members, n_reference_models=4, random_state=0)
    ref = lira(target, df, y, np.arange(80), n_reference_models=4, random_state=0)
    assert np.isfinite(res.auc) and res.auc == ref.auc
    dfr, yr = _frame()
    scorer = make_attribute_inversion_scorer("race", LEVELS, n_draws=5, random_state=0)
    gs = GridSearchCV(_pipeline(1.0), {"fillinearregression__sigma": [1e-6, 10.0]},
                      scoring={"inv": scorer, "map": make_attribute_inversion_scorer("race",
                                                                                     LEVELS,
                                                                                     attack="map",
                                                                                     n_draws=5,
                                                                                     random_state=0),
                          "fred": make_attribute_inversion_scorer("race", attack="fredrikson",
                                                                  random_state=0)},
                      refit="inv", cv=KFold(2, shuffle=True, random_state=0),
                      error_score="raise").fit(dfr, yr)
    inv = gs.cv_results_["mean_test_inv"]
    assert inv[0] == -1.0 and inv[1] > -0.6
    assert gs.best_params_ == {"fillinearregression__sigma": 10.0}


def test_membership_scorer_on_sparse_and_lists_equals_dense():
    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    X = rng.binomial(1, 0.2, size=(120, 15)).astype(float)
    X[:10] = X[10:20]  # duplicated rows: located by sample_index, not by value
    y = (X[:, 0] + rng.normal(size=120) > 0.5).astype(int)
    cv = KFold(3, shuffle=True, random_state=0)
    pos = {"sample_index": np.arange(120)}
    with sklearn.config_context(enable_metadata_routing=True):
        dense = cross_validate(LogisticRegression(C=100), X, y, cv=cv, params=pos,
                               scoring=make_membership_scorer(X, y, random_state=0))["test_score"]
        Xs = sp.csr_matrix(X)
        sparse = cross_validate(LogisticRegression(C=100), Xs, y, cv=cv, params=pos,
                                scoring=make_membership_scorer(Xs, y, random_state=0))["test_score"]
    np.testing.assert_allclose(sparse, dense, rtol=1e-9)
    assert dense.mean() < 0  # 0.5 - AUC: a weakly regularised fit leaks on average
