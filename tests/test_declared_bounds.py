"""with_declared_bounds: data_norm and intercept_scaling read off the declared
preprocessing, never off the rows; checked against the largest encoded row norm over
brute-force corner rows, and the fit's claim stays finite."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.linear_model import (
    DPLinearRegression,
    DPLogisticRegression,
    with_declared_bounds,
)
from sklearn_privacy.preprocessing import BoundedScaler, PublicSchema

SCHEMA = PublicSchema({"age": (17, 90), "hours": (0, 99), "job": ["a", "b", "c"],
                       "sex": ["f", "m"]}, classes=[0, 1])


def _corner_rows():
    """Every combination of bound / category (and an unknown category)."""
    rows = itertools.product([17, 90], [0, 99], ["a", "b", "c", "zz"], ["f", "m", "x"])
    return pd.DataFrame(list(rows), columns=["age", "hours", "job", "sex"])


def test_schema_encoder_bound_is_the_largest_encoded_norm():
    """k = 4 declared columns: F = 2, intercept_scaling 1 = 0.5 F, data_norm sqrt(5) =
    sqrt(1.25 k); the largest norm of an encoded corner row plus the constant column
    equals data_norm (the bound is tight, and never exceeded)."""
    model = with_declared_bounds(make_pipeline(SCHEMA, SCHEMA.make_encoder(),
                                               DPLogisticRegression(1.0, classes=[0, 1])))
    est = model[-1]
    assert est.data_norm == pytest.approx(math.sqrt(1.25 * 4))
    assert est.intercept_scaling == pytest.approx(0.5 * math.sqrt(4))
    raw = _corner_rows()
    enc = model[:-1].fit(raw).transform(raw)
    norms = np.sqrt((np.asarray(enc) ** 2).sum(axis=1) + est.intercept_scaling ** 2)
    assert norms.max() == pytest.approx(est.data_norm)


def test_feature_range_and_one_hot_parts_add_up():
    ct = ColumnTransformer([
        ("num", BoundedScaler([(0, 10), (0, 5)], feature_range=(0, 2)), [0, 1]),
        ("cat", OneHotEncoder(categories=[["u", "v"]], handle_unknown="ignore"), [2]),
    ])
    model = with_declared_bounds(make_pipeline(
        ct, DPLinearRegression(target_bound=1.0, fit_intercept=False)))
    assert model[-1].data_norm == pytest.approx(math.sqrt(2 * 4 + 1))


def test_user_value_is_kept_and_fil_estimator_gets_a_penalised_intercept():
    kept = with_declared_bounds(make_pipeline(SCHEMA, SCHEMA.make_encoder(),
                                              DPLogisticRegression(data_norm=7.0)))
    assert kept[-1].data_norm == 7.0 and kept[-1].intercept_scaling == 1.0
    fil = with_declared_bounds(make_pipeline(SCHEMA, SCHEMA.make_encoder(),
                                             FILLogisticRegression(epsilon=1.0)))
    assert fil[-1].intercept_scaling == pytest.approx(1.0)


def test_undeclared_steps_are_refused_with_the_step_name():
    with pytest.raises(ValueError, match="'standardscaler'.*Pass data_norm"):
        with_declared_bounds(make_pipeline(StandardScaler(), DPLogisticRegression()))
    with pytest.raises(ValueError, match="no encoder after PublicSchema"):
        with_declared_bounds(make_pipeline(SCHEMA, DPLogisticRegression()))
    with pytest.raises(ValueError, match="declared categories"):
        with_declared_bounds(make_pipeline(OneHotEncoder(), DPLogisticRegression()))


def test_recipe_fits_with_a_finite_claim():
    rng = np.random.default_rng(0)
    n = 400
    raw = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.integers(0, 100, n),
                        "job": rng.choice(["a", "b", "c"], n),
                        "sex": rng.choice(["f", "m"], n)})
    y = (raw["age"] > 40).astype(int).to_numpy()
    model = with_declared_bounds(make_pipeline(
        SCHEMA, SCHEMA.make_encoder(), DPLogisticRegression(4.0, classes=[0, 1])))
    model.fit(raw, y)
    claim = privacy_claim(model)
    assert claim.is_private and claim.epsilon == 4.0
