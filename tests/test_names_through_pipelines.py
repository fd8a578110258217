"""Original feature names through pipelines: sigma_for_eta, IRFIL attributes, displays."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _expected_warnings import IRFIL_REWEIGHTING
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privacy import FILLogisticRegression, IRFILLogisticRegression, fil
from sklearn_privacy.attacks import make_membership_scorer
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.utils import feature_columns


@pytest.fixture(scope="module")
def adult():
    bunch = load_adult(raw=True, as_frame=True)
    rng = np.random.RandomState(0)
    idx = np.sort(rng.choice(len(bunch.target), 800, replace=False))
    X = bunch.data.iloc[idx][["age", "hours_per_week", "sex", "race", "workclass"]]
    y = (bunch.target.iloc[idx] == ">50K").astype(int).to_numpy()
    return X, y


def _pre():
    return make_column_transformer(
        (StandardScaler(), ["age", "hours_per_week"]),
        (OneHotEncoder(sparse_output=False, handle_unknown="ignore"), ["sex", "race"]))


def test_pipeline_sigma_for_eta_matches_the_final_step_on_indices(adult):
    X, y = adult
    pipe = make_pipeline(_pre(), FILLogisticRegression(sigma=1.0, random_state=0)).fit(X, y)
    cols = feature_columns(pipe, "sex")
    for constrained in (False, True):
        want = pipe[-1].sigma_for_eta(0.5, columns=cols, constrained=constrained)
        got = fil.sigma_for_eta(pipe, 0.5, columns="sex", constrained=constrained)
        assert got == pytest.approx(want, rel=1e-12)
    # the refit reaches the target exactly (eta scales as 1 / sigma)
    sigma = fil.sigma_for_eta(pipe, 0.5, columns="sex")
    pipe.set_params(fillogisticregression__sigma=sigma).fit(X, y)
    assert fil.eta(pipe, columns="sex", per_example=True).max() == pytest.approx(0.5)


def test_final_step_names_say_what_to_do(adult):
    # before: "fitted on data without column names ... fit on a pandas DataFrame"
    X, y = adult
    pipe = make_pipeline(_pre(), FILLogisticRegression(random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match=r"fil.eta / fisher_information / sigma_for_eta"):
        pipe[-1].sigma_for_eta(0.5, columns="sex")
    with pytest.raises(ValueError, match=r"set_output\(transform='pandas'\)"):
        make_pipeline(_pre(), IRFILLogisticRegression(sensitive_features="sex",
                                                      random_state=0)).fit(X, y)


def test_pandas_output_resolves_original_features_exactly(adult):
    X, y = adult
    pipe = make_pipeline(_pre(), FILLogisticRegression(sigma=1.0, random_state=0))
    pipe.set_output(transform="pandas").fit(X, y)
    final = pipe[-1]
    names = list(final.feature_names_in_)
    want = [names.index("onehotencoder__sex_Female"), names.index("onehotencoder__sex_Male")]
    np.testing.assert_allclose(final.eta(columns="sex", per_example=True),
                               final.eta(columns=want, per_example=True))
    assert final.sigma_for_eta(0.5, columns="sex") == pytest.approx(
        fil.sigma_for_eta(pipe, 0.5, columns="sex"), rel=1e-12)
    # a scaled numeric feature is its own column
    np.testing.assert_allclose(final.eta(columns="age", per_example=True),
                               final.eta(columns=[names.index("standardscaler__age")],
                                         per_example=True))


@IRFIL_REWEIGHTING
def test_irfil_attributes_by_original_name_inside_a_pipeline(adult):
    X, y = adult
    by_name = make_pipeline(_pre(), IRFILLogisticRegression(sensitive_features="sex",
                                                            eta_max_iter=3,
                                                            random_state=0))
    by_name.set_output(transform="pandas").fit(X, y)
    names = list(by_name[-1].feature_names_in_)
    idx = [names.index("onehotencoder__sex_Female"), names.index("onehotencoder__sex_Male")]
    by_index = make_pipeline(_pre(), IRFILLogisticRegression(sensitive_features=idx, eta_max_iter=3,
                                                             random_state=0)).fit(X, y)
    np.testing.assert_allclose(by_name[-1].sample_weight_, by_index[-1].sample_weight_,
                               rtol=1e-10)
    np.testing.assert_allclose(by_name[-1].coef_, by_index[-1].coef_, rtol=1e-10)


def test_prefix_shared_by_two_features_is_refused():
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"sex": rng.choice(["F", "M"], 300),
                      "sex_at_birth": rng.choice(["F", "M"], 300),
                      "age": rng.normal(size=300)})
    y = (X["age"] > 0).astype(int)
    pre = make_column_transformer((OneHotEncoder(sparse_output=False),
                                   ["sex", "sex_at_birth"]), (StandardScaler(), ["age"]))
    pipe = make_pipeline(pre, FILLogisticRegression(random_state=0))
    pipe.set_output(transform="pandas").fit(X, y)
    with pytest.raises(ValueError, match="exact column names"):
        pipe[-1].eta(columns="sex")
    with pytest.raises(ValueError, match="exact column names"):
        make_pipeline(pre, IRFILLogisticRegression(sensitive_features="sex", eta_max_iter=2,
                                                   random_state=0)).set_output(
            transform="pandas").fit(X, y)
    # the pipeline-level entry traces the encoder exactly
    assert feature_columns(pipe, "sex").size == 2


def test_eta_display_by_original_feature_and_index_labels(adult):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_privacy.fil import EtaDisplay

    X, y = adult
    pipe = make_pipeline(_pre(), FILLogisticRegression(random_state=0)).fit(X, y)
    try:
        disp = EtaDisplay.from_estimator(pipe, sensitive_features="sex", top_k=5)
        assert sorted(disp.counts_) == ["Female", "Male"]
        n_female = int((X["sex"] == "Female").sum())
        assert disp.counts_["Female"].sum() == n_female
        framed = EtaDisplay.from_estimator(pipe, sensitive_features="sex", X=X, top_k=5)
        eta = fil.eta(pipe, per_example=True)
        top = np.argsort(-eta, kind="stable")[:5]
        texts = [t.get_text() for t in framed.top_k_texts_]
        assert texts == [str(v) for v in X.index[top]]      # frame labels, not positions
        assert texts != [str(v) for v in top]
        framed.figure_.canvas.draw()
        from matplotlib.text import Text

        renderer = framed.figure_.canvas.get_renderer()
        boxes = [Text.get_window_extent(t, renderer) for t in framed.top_k_texts_]
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes[i].overlaps(boxes[j])
    finally:
        plt.close("all")


def test_membership_scorer_train_score():
    # before: NaN and "Scoring failed" tracebacks about ShuffleSplit for a FIL model, and
    # silently exchanged members / non-members for a model without a training size
    rng = np.random.RandomState(0)
    Xn = rng.normal(size=(300, 4))
    y = (Xn[:, 0] + rng.normal(size=300) > 0).astype(int)
    scorer = make_membership_scorer(Xn, y, metric="auc", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cross_validate(FILLogisticRegression(random_state=0), Xn, y, cv=KFold(3),
                             scoring=scorer, return_train_score=True)
    # the same attack on the same split: members the training fold, non-members the rest
    np.testing.assert_allclose(res["train_score"], res["test_score"])
    # an estimator that does not record its training size: the splitter makes it exact
    with_cv = make_membership_scorer(Xn, y, metric="auc", random_state=0, cv=KFold(3))
    res = cross_validate(LogisticRegression(), Xn, y, cv=KFold(3), scoring=with_cv,
                         return_train_score=True)
    np.testing.assert_allclose(res["train_score"], res["test_score"])
    # ... and without it, one clear message instead of silently exchanged roles
    with pytest.raises(ValueError, match="look like the training set"):
        cross_validate(LogisticRegression(), Xn, y, cv=KFold(3), scoring=scorer,
                       return_train_score=True, error_score="raise")
