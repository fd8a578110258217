"""Data-independent and DP preprocessing; the penalised intercept of the FIL DP view."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, privacy_claim
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.fil import (
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
)
from sklearn_privacy.preprocessing import BoundedScaler, DPStandardScaler
from sklearn_privacy.preprocessing._dp_scaler import joint_sensitivity


# ------------------------------------------------------------------ BoundedScaler
def test_bounded_scaler_clips_and_maps_every_column_onto_the_range():
    X = np.array([[0.0, -50.0], [5.0, 10.0], [20.0, 30.0], [np.nan, 0.0]])
    # NaN takes the middle of the column's bounds by default (a rule, never a refusal)
    np.testing.assert_allclose(BoundedScaler([(0, 10), (-10, 30)]).fit(X).transform(X)[3],
                               [0.0, -0.5])
    sc = BoundedScaler([(0, 10), (-10, 30)], feature_range=(0, 1), fill_value=7.5).fit(X)
    out = sc.transform(X)
    expected = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.75, 0.25]])
    np.testing.assert_allclose(out, expected)
    np.testing.assert_allclose(sc.inverse_transform(out[:3]),
                               np.clip(X[:3], [0, -10], [10, 30]))
    # nothing learned from the rows: refitting on other rows changes nothing
    other = BoundedScaler([(0, 10), (-10, 30)], feature_range=(0, 1),
                          fill_value=7.5).fit(X[::-1] * 7)
    # +-inf are clipped to the bounds under a declared fill value
    inf = sc.transform(np.array([[np.inf, -np.inf]]))
    np.testing.assert_array_equal(inf, [[1.0, 0.0]])
    np.testing.assert_array_equal(other.transform(X), out)


def test_bounded_scaler_on_a_frame_with_bounds_by_name():
    df = pd.DataFrame({"age": [17.0, 50.0, 95.0], "hours": [1.0, 40.0, 99.0]})
    sc = BoundedScaler({"hours": (0, 100), "age": (17, 90)}).fit(df)
    np.testing.assert_allclose(sc.lower_, [17, 0])
    np.testing.assert_allclose(sc.transform(df)[:, 0], [-1.0, 2 * 33 / 73 - 1, 1.0])
    assert list(sc.get_feature_names_out()) == ["age", "hours"]
    assert privacy_claim(sc).epsilon == 0.0


@pytest.mark.parametrize("bounds, match", [
    ((1, 1), "low must be < high"),
    ([(0, 1)] * 3, "one \\(low, high\\) pair or 2 pairs"),
    ({"a": (0, 1)}, "no column names"),
    ((0, np.inf), "finite"),
    ("wide", "bounds"),
    ([("a", "b"), ("c", "d")], "must hold numbers"),
])
def test_bounded_scaler_refuses_bad_bounds(bounds, match):
    with pytest.raises(ValueError, match=match):
        BoundedScaler(bounds).fit(np.zeros((3, 2)))


def test_bounded_scaler_dict_must_cover_exactly_the_columns():
    df = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.raises(ValueError, match=r"missing \['b'\], unknown \['c'\]"):
        BoundedScaler({"a": (0, 1), "c": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="feature_range"):
        BoundedScaler((0, 1), feature_range=(1, 0)).fit(df)


# ------------------------------------------------------------------ DPStandardScaler
def _bounded_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(17, 90, n), rng.uniform(0, 100, n)])


def test_dp_standard_scaler_sensitivity_by_brute_force_on_neighbours():
    """Replacing one row moves the noiseless mean by at most w/n per column and the
    second moment by at most w^2/(4n); a corner-to-corner replacement attains both.

    The same seed gives the same noise on both data sets, so the differences of the
    released statistics are the differences of the noiseless ones.
    """
    bounds = [(17, 90), (0, 100)]
    w = np.array([73.0, 100.0])
    n = 50
    rng = np.random.default_rng(1)
    worst_mean, worst_moment = np.zeros(2), np.zeros(2)
    for trial in range(60):
        X = _bounded_data(n, seed=trial)
        Xp = X.copy()
        j = rng.integers(n)
        # extreme and random replacements, some far outside the bounds
        Xp[j] = (rng.choice([-1e6, 17, 90, 1e6], size=2) if trial % 2
                 else rng.uniform(-200, 300, size=2))
        if trial == 0:   # corner to corner, from the midpoint
            X[j], Xp[j] = [53.5, 50.0], [90.0, 100.0]
        a = DPStandardScaler(bounds, epsilon=1.0, random_state=trial).fit(X)
        b = DPStandardScaler(bounds, epsilon=1.0, random_state=trial).fit(Xp)
        worst_mean = np.maximum(worst_mean, np.abs(a.mean_ - b.mean_))
        worst_moment = np.maximum(worst_moment, np.abs(a.second_moment_ - b.second_moment_))
    assert np.all(worst_mean <= w / n * (1 + 1e-9))
    assert np.all(worst_moment <= w ** 2 / (4 * n) * (1 + 1e-9))
    # the bound on the second moment is attained (midpoint -> corner)
    np.testing.assert_allclose(worst_moment, w ** 2 / (4 * n), rtol=1e-9)
    assert np.all(worst_mean >= 0.49 * w / n)


def test_dp_standard_scaler_gaussian_calibration_is_exact():
    """mu from the calibration, the noise scales from mu, and the empirical noise."""
    X = _bounded_data(200)
    eps, delta = 0.7, 1e-6
    sc = DPStandardScaler([(17, 90), (0, 100)], epsilon=eps, delta=delta,
                          random_state=0).fit(X)
    w, n = np.array([73.0, 100.0]), 200
    s_mean, s_moment = sc.noise_scale_
    # the joint sensitivity of the noise-scaled pair is mu (brute-forced in
    # test_dp_scaler_joint_sensitivity_matches_brute_force); an even split of mu between
    # the blocks would account for more, hypot(...) = mu / 0.80 here
    mu = joint_sensitivity([17, 0], [90, 100], n, s_mean, s_moment)
    assert mu == pytest.approx(sc.gaussian_mu_, rel=1e-12)
    split = np.hypot(np.linalg.norm(w / n) / s_mean, np.linalg.norm(w ** 2 / (4 * n)) / s_moment)
    assert 0.78 < mu / split < 0.82
    # the Gaussian mechanism with sensitivity mu and unit noise is (eps, delta)-DP, exactly
    assert analytic_gaussian_delta(eps, sigma=1.0, sensitivity=mu) == pytest.approx(delta,
                                                                                 rel=1e-6)
    claim = privacy_claim(DPStandardScaler([(17, 90), (0, 100)], epsilon=eps,
                                           delta=delta).fit(X))
    assert claim.epsilon == eps and claim.delta == delta
    # the noise actually drawn has that scale (400 fresh fits, seeds 0..399)
    means = np.array([DPStandardScaler([(17, 90), (0, 100)], epsilon=eps, delta=delta,
                                       random_state=s).fit(X).mean_ for s in range(400)])
    assert np.std(means[:, 0]) == pytest.approx(s_mean, rel=0.15)


def test_dp_standard_scaler_laplace_is_pure_dp():
    X = _bounded_data(300)
    sc = DPStandardScaler([(17, 90), (0, 100)], epsilon=2.0, mechanism="laplace",
                          random_state=0).fit(X)
    w, n = np.array([73.0, 100.0]), 300
    # the split's scales (epsilon / 2 for each block) times the exact joint L1
    # sensitivity over the split's (below 1): the release's joint L1 sensitivity is epsilon
    shrink = sc.noise_scale_[0] / (w.sum() / n / 1.0)
    assert 0.7 < shrink < 1.0
    assert sc.noise_scale_[1] == pytest.approx((w ** 2).sum() / (4 * n) / 1.0 * shrink)
    assert joint_sensitivity([17, 0], [90, 100], n, *sc.noise_scale_, norm="l1") == \
        pytest.approx(2.0, rel=1e-12)
    assert sc.delta_ == 0.0 and sc.gaussian_mu_ is None
    step = sc.__sklearn_privacy_claim__()
    assert (step.kind, step.epsilon, step.delta) == ("dp", 2.0, 0.0)


def test_dp_standard_scaler_is_accurate_on_many_rows_and_takes_frames():
    rng = np.random.default_rng(0)
    # 200,000 rows: at epsilon 1 with bounds (0, 100) the DP noise on the second moment
    # moves the scale of "hours" by about 0.5 % (about 5 % at 20,000 rows), well inside the
    # tolerances below for a fresh draw
    n = 200_000
    df = pd.DataFrame({"age": rng.normal(40, 10, n), "hours": rng.normal(40, 5, n)})
    sc = DPStandardScaler({"age": (0, 100), "hours": (0, 100)}, epsilon=1.0).fit(df)
    np.testing.assert_allclose(sc.mean_, [40, 40], atol=0.2)
    np.testing.assert_allclose(sc.scale_, [10, 5], rtol=0.05)
    Z = sc.transform(df)
    assert abs(Z.mean()) < 0.05 and list(sc.get_feature_names_out()) == ["age", "hours"]
    np.testing.assert_allclose(sc.inverse_transform(Z), df.clip(0, 100).to_numpy(),
                               rtol=1e-7, atol=1e-9)


def test_dp_standard_scaler_fresh_noise_without_a_seed():
    X = _bounded_data(100)
    a = DPStandardScaler((0, 100)).fit(X).mean_
    b = DPStandardScaler((0, 100)).fit(X).mean_
    assert np.all(a != b)


def test_dp_standard_scaler_refuses_bad_parameters():
    X = _bounded_data(10)
    with pytest.raises(ValueError, match="epsilon"):
        DPStandardScaler((0, 100), epsilon=0).fit(X)
    with pytest.raises(ValueError, match="mechanism"):
        DPStandardScaler((0, 100), mechanism="exponential").fit(X)
    with pytest.raises(ValueError, match="low must be < high"):
        DPStandardScaler((100, 0)).fit(X)


# ------------------------------------------------------------------ intercept_scaling
def _logistic_data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2
    y = (X[:, 0] - X[:, 1] + 0.3 + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls, y_kind", [(FILLogisticRegression, "clf"),
                                         (FILLinearRegression, "reg")])
def test_intercept_scaling_equals_a_constant_column_without_intercept(cls, y_kind, sparse):
    """Oracle: fit_intercept=False on X with a constant column of value s appended."""
    X, y = _logistic_data()
    kw = {"target_bound": 2.0} if y_kind == "reg" else {}
    if y_kind == "reg":
        y = X @ [1.0, -0.5, 0.2] + 0.4
    s = 0.5
    Xs = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        got = cls(sigma=0.1, alpha=0.05, intercept_scaling=s, data_norm=1.0, random_state=3,
                  **kw).fit(Xs, y)
        ref = cls(sigma=0.1, alpha=0.05, fit_intercept=False, data_norm=1.0, random_state=3,
                  **kw).fit(np.hstack([X, np.full((len(X), 1), s)]), y)
    np.testing.assert_allclose(np.ravel(got.coef_), np.ravel(ref.coef_)[:3], rtol=1e-10)
    assert float(np.ravel(got.intercept_)[0]) == pytest.approx(
        s * float(np.ravel(ref.coef_)[3]), rel=1e-10)
    assert got.sensitivity_ == ref.sensitivity_ and got.epsilon_ == ref.epsilon_ < np.inf
    assert "intercept_scaling" in got.epsilon_reason_
    # the audit leaves the constant column out: features and label only
    cols = [0, 1, 2, 4]
    np.testing.assert_allclose(got.eta_, ref.eta(columns=cols, per_example=True), rtol=1e-8)
    np.testing.assert_allclose(got.eta(columns=[3], per_example=True),
                               ref.eta(columns=[4], per_example=True), rtol=1e-8)
    assert got.fisher_information(rows=[0]).shape == (4, 4)
    np.testing.assert_allclose(got._released_theta(), np.ravel(ref.coef_), rtol=1e-10)
    assert got.score(Xs, y) == pytest.approx(ref.score(np.hstack([X, np.full((300, 1), s)]),
                                                       y))


def test_intercept_scaling_makes_the_dp_view_finite_with_an_intercept():
    """Regression: an intercept always made epsilon_ inf (it was unpenalised)."""
    X, y = _logistic_data()
    plain = FILLogisticRegression(alpha=0.1, data_norm=2.0).fit(X, y)
    assert plain.epsilon_ == np.inf and "intercept_scaling" in plain.epsilon_reason_
    scaled = FILLogisticRegression(alpha=0.1, data_norm=2.0, intercept_scaling=1.0).fit(X, y)
    assert np.isfinite(scaled.epsilon_)
    assert scaled.intercept_[0] != 0.0


def test_default_intercept_is_unchanged_bit_for_bit():
    X, y = _logistic_data()
    a = FILLogisticRegression(random_state=0).fit(X, y)
    b = FILLogisticRegression(random_state=0, intercept_scaling=None).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    # fit_intercept=False ignores intercept_scaling
    c = FILLogisticRegression(fit_intercept=False, intercept_scaling=3.0, random_state=0)
    d = FILLogisticRegression(fit_intercept=False, random_state=0)
    np.testing.assert_array_equal(c.fit(X, y).coef_, d.fit(X, y).coef_)


def test_intercept_scaling_is_validated_and_refused_for_dask():
    X, y = _logistic_data(40)
    with pytest.raises(ValueError, match="intercept_scaling"):
        FILLogisticRegression(intercept_scaling=-1.0).fit(X, y)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="intercept_scaling is not supported for dask"):
        FILLogisticRegression(intercept_scaling=1.0).fit(da.from_array(X, chunks=20),
                                                         da.from_array(y, chunks=20))


# ------------------------------------------------------------------ argument order
def test_analytic_gaussian_functions_share_one_argument_order():
    """(epsilon, delta, sigma, sensitivity) minus the computed one; the former positional
    analytic_gaussian_epsilon takes keywords only, so no call in another order is read."""
    sigma = analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    eps = analytic_gaussian_epsilon(delta=1e-5, sigma=sigma, sensitivity=2.0)
    assert eps == pytest.approx(1.0, rel=1e-9)
    assert analytic_gaussian_delta(1.0, sigma, 2.0) == pytest.approx(1e-5, rel=1e-6)
    with pytest.raises(TypeError, match="positional"):
        analytic_gaussian_epsilon(sigma, 2.0, 1e-5)
    with pytest.raises(TypeError, match="sensitivity"):
        analytic_gaussian_epsilon(delta=1e-5, sigma=1.0)


def test_white_box_attack_refuses_a_model_with_intercept_scaling():
    from sklearn_privacy.attacks import whitebox_inversion
    X, y = _logistic_data(60)
    model = FILLogisticRegression(intercept_scaling=1.0).fit(X, y)
    with pytest.raises(ValueError, match="intercept_scaling"):
        whitebox_inversion(model, sensitive_features=[0], candidates=[[0.0], [1.0]])


def test_dp_scaler_clip_gives_the_row_norm_a_data_independent_bound():
    """With the guide's data_norm = sqrt(10) (three numeric columns assumed in [-1, 1]),
    a DPStandardScaler's standardised age / education / hours exceed it on many rows,
    and the FIL step rescales a number of rows that changes with the noise on every fit.
    clip=1 puts every output in [-1, 1]: no row exceeds the bound, whatever the noise."""
    from sklearn_privacy.datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    bounds = {"age": (15, 100), "education_num": (1, 16), "hours_per_week": (0, 100)}
    X = adult.data[list(bounds)].iloc[:4320]
    over = []
    for seed in range(5):
        Z = DPStandardScaler(bounds, epsilon=0.1, random_state=seed).fit_transform(X)
        # six one-hot ones and the intercept column make up the rest of sqrt(10)
        over.append(int(np.sum(np.sum(Z**2, axis=1) + 7.0 > 10.0 + 1e-12)))
    assert min(over) > 300 and max(over) > min(over)
    for seed in range(5):
        Z = DPStandardScaler(bounds, epsilon=0.1, random_state=seed,
                             clip=1.0).fit_transform(X)
        assert np.abs(Z).max() <= 1.0 and np.all(np.sum(Z**2, axis=1) + 7.0 <= 10.0)
    plain = DPStandardScaler(bounds, epsilon=0.1, random_state=0).fit(X)
    clipped = DPStandardScaler(bounds, epsilon=0.1, random_state=0, clip=1.0).fit(X)
    assert np.array_equal(plain.mean_, clipped.mean_)          # post-processing only
    with pytest.raises(ValueError, match="clip"):
        DPStandardScaler(bounds, clip=-1.0).fit(X)


def test_public_schema_maps_nullable_missing_values_like_nan():
    """pd.NA in a nullable string column raised "boolean value of NA is ambiguous" (the
    categorical rule compared it with the declared categories); pd.NA in every nullable
    dtype now follows the rule of a missing value, exactly as NaN in a plain column."""
    from sklearn_privacy.preprocessing import PublicSchema

    schema = PublicSchema({"age": (0, 100), "n": {"bounds": (0, 10), "fill": 3},
                           "job": ["a", "b"], "grade": [1, 2], "flag": ["True", "False"]})
    plain = pd.DataFrame({"age": [20.0, np.nan, 50.0], "n": [1.0, np.nan, 12.0],
                          "job": ["a", np.nan, "z"], "grade": [1.0, np.nan, 2.0],
                          "flag": ["True", np.nan, "False"]})
    nullable = plain.astype({"age": "Float64", "n": "Int64", "job": "string",
                             "grade": "Int64", "flag": "string"})
    nullable["job"] = nullable["job"].astype("category")
    want = schema.fit(plain).transform(plain)
    got = schema.fit(nullable).transform(nullable)
    pd.testing.assert_frame_equal(got, want)
    assert got["job"].tolist() == ["a", "(unknown)", "(unknown)"]
    np.testing.assert_array_equal(got["n"], [1.0, 3.0, 10.0])


def test_public_schema_bounds_and_categories_for_name_the_column():
    """bounds_for("zz") raised KeyError, categories_for(["age"]) AttributeError, and
    bounds_for(["job"]) returned the categories as if they were bounds."""
    from sklearn_privacy.preprocessing import PublicSchema

    schema = PublicSchema({"age": (0, 100), "job": ["a", "b"]})
    assert schema.bounds_for() == [(0.0, 100.0)]
    assert schema.bounds_for("age") == schema.bounds_for(["age"]) == [(0.0, 100.0)]
    assert [c.tolist() for c in schema.categories_for("job")] == [["a", "b"]]
    with pytest.raises(ValueError, match=r"names: \['zz'\] are not declared columns"):
        schema.bounds_for(["zz"])
    with pytest.raises(ValueError, match=r"names: \['job'\] are not declared numeric"):
        schema.bounds_for(["job"])
    with pytest.raises(ValueError, match=r"names: \['age'\] are not declared categorical"):
        schema.categories_for(["age"])


def test_scalers_read_a_column_that_is_not_numeric_by_the_numeric_rule():
    """A string column reached BoundedScaler / DPStandardScaler as numpy's bare "could
    not convert string to float: 'a'"; then it was refused with a message naming X. But
    one stray string makes a number column ``object``, so the refusal told a neighbour
    from its data set: now every entry is read by PublicSchema's numeric rule (a string
    that is not a number is missing and takes the middle of the bounds)."""
    frame = pd.DataFrame({"age": [20.0, 30.0, 40.0], "job": ["a", "b", "7"]})
    numbers = pd.DataFrame({"age": [20.0, 30.0, 40.0], "job": [50.0, 50.0, 7.0]})
    for scaler in (BoundedScaler(bounds=(0, 100)), DPStandardScaler(bounds=(0, 100))):
        fitted = scaler.fit(frame)
        np.testing.assert_array_equal(fitted.transform(frame), fitted.transform(numbers))
        fitted = scaler.fit(frame[["age"]])
        np.testing.assert_array_equal(
            fitted.transform(frame[["age"]].assign(age="n/a")),
            fitted.transform(pd.DataFrame({"age": [50.0, 50.0, 50.0]})))


def test_public_schema_keeps_the_values_of_a_frame_with_any_index():
    """Regression: ``transform`` built each output column as a Series on a fresh range
    index and aligned it to the frame's index, so a frame indexed from 20000 (a test split
    of a larger frame) came out all NaN. Seen failing before the fix."""
    import pandas as pd

    from sklearn_privacy.preprocessing import PublicSchema

    raw = pd.DataFrame({"x": [1.0, 5.0, 9.0], "c": ["a", "b", "zz"]}, index=[20000, 7, -3])
    out = PublicSchema({"x": (0, 10), "c": ["a", "b"]}).fit(raw).transform(raw)
    assert list(out.index) == [20000, 7, -3]
    assert out["x"].tolist() == [1.0, 5.0, 9.0]
    assert out["c"].tolist() == ["a", "b", "(unknown)"]
