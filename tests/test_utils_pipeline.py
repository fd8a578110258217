"""feature_columns: columns of the final step derived from an original input feature."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    PolynomialFeatures,
    StandardScaler,
)

from sklearn_privacy.utils import feature_columns


@pytest.fixture(scope="module")
def frame():
    rng = np.random.RandomState(0)
    n = 40
    return pd.DataFrame({
        "age": rng.normal(40, 10, n),
        "race": pd.Categorical(rng.choice(["Asian", "Black", "Other", "White"], n)),
        "sex": rng.choice(["F", "M"], n),
        "hours": rng.normal(40, 5, n),
        "income": rng.normal(size=n),
    }), rng.normal(size=n)


@pytest.mark.parametrize("verbose", [True, False])
@pytest.mark.parametrize("remainder", ["passthrough", "drop"])
def test_column_transformer_onehot_and_scaler(frame, verbose, remainder):
    df, y = frame
    ct = ColumnTransformer([("num", StandardScaler(), ["age", "hours"]),
                            ("cat", OneHotEncoder(), ["race", "sex"])],
                           remainder=remainder, verbose_feature_names_out=verbose)
    pipe = make_pipeline(ct, LinearRegression()).fit(df, y)
    # hand-computed: [age, hours | race x4 | sex x2 | income (passthrough)]
    assert feature_columns(pipe, "age").tolist() == [0]
    assert feature_columns(pipe, "hours").tolist() == [1]
    assert feature_columns(pipe, "race").tolist() == [2, 3, 4, 5]
    assert feature_columns(pipe, "sex").tolist() == [6, 7]
    assert feature_columns(pipe, 1).tolist() == [2, 3, 4, 5]  # position in the raw frame
    if remainder == "passthrough":
        assert feature_columns(pipe, "income").tolist() == [8]
    else:
        with pytest.raises(ValueError, match="dropped"):
            feature_columns(pipe, "income")
    names = ct.get_feature_names_out()
    if verbose:
        assert list(names[feature_columns(pipe, "race")]) == [
            "cat__race_Asian", "cat__race_Black", "cat__race_Other", "cat__race_White"]


@pytest.mark.parametrize("drop, race_cols, sex_cols", [
    ("first", [1, 2, 3], [4]), ("if_binary", [1, 2, 3, 4], [5])])
def test_onehot_drop(frame, drop, race_cols, sex_cols):
    df, y = frame
    ct = ColumnTransformer([("num", MinMaxScaler(), ["age"]),
                            ("cat", OneHotEncoder(drop=drop, handle_unknown="ignore"),
                             ["race", "sex"])])
    pipe = make_pipeline(ct, LinearRegression()).fit(df, y)
    assert feature_columns(pipe, "race").tolist() == race_cols
    assert feature_columns(pipe, "sex").tolist() == sex_cols


def test_nested_pipelines_imputer_and_function_transformer(frame):
    df, y = frame
    df = df.copy()
    df.loc[::7, "age"] = np.nan
    num = Pipeline([("imp", SimpleImputer(add_indicator=True)),
                    ("log", FunctionTransformer(np.abs, feature_names_out="one-to-one")),
                    ("sc", StandardScaler())])
    ct = ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["sex"]),
                            ("num", num, ["hours", "age"])])
    pipe = Pipeline([("pre", Pipeline([("ct", ct)])), ("final", LinearRegression())])
    pipe.fit(df, y)
    # [sex_F, sex_M | hours, age, missingindicator_age]
    assert feature_columns(pipe, "sex").tolist() == [0, 1]
    assert feature_columns(pipe, "hours").tolist() == [2]
    assert feature_columns(pipe, "age").tolist() == [3, 4]
    assert pipe[:-1].transform(df).shape[1] == 5


def test_untraceable_steps(frame):
    df, y = frame
    num = ["age", "hours", "income"]
    pca = make_pipeline(ColumnTransformer([("n", PCA(2), num),
                                           ("c", OneHotEncoder(), ["race"])]),
                        LinearRegression()).fit(df, y)
    # race does not enter the PCA: traceable; age does: refused
    assert feature_columns(pca, "race").tolist() == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="cannot trace.*PCA"):
        feature_columns(pca, "age")
    poly = make_pipeline(ColumnTransformer([("n", "passthrough", num)]),
                         PolynomialFeatures(2), LinearRegression()).fit(df, y)
    with pytest.raises(ValueError, match="PolynomialFeatures"):
        feature_columns(poly, "age")
    with pytest.raises(ValueError, match="not a column"):
        feature_columns(pca, "zip")
    with pytest.raises(TypeError, match="'feature' parameter of feature_columns"):
        feature_columns(pca, ["race", "sex"])


def test_plain_estimator_and_arrays():
    X = np.random.RandomState(0).normal(size=(20, 3))
    y = X[:, 0]
    est = LinearRegression().fit(X, y)
    assert feature_columns(est, 2).tolist() == [2]
    pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    assert feature_columns(pipe, 1).tolist() == [1]
    with pytest.raises(ValueError, match="without column names"):
        feature_columns(pipe, "x1")
