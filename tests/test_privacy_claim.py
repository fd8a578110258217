"""The privacy claim of a published object: recognition, composition, audits, property."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    PrivateMulticalibrator,
    WERMClassifier,
    privacy_claim,
)
from sklearn_privacy.attacks import canary_audit
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.fil import analytic_gaussian_delta, analytic_gaussian_epsilon
from sklearn_privacy.preprocessing import BoundedScaler, DPStandardScaler
from sklearn_privacy.privacy import PrivacyClaim, StepClaim
from sklearn_privacy.privacy._attributes import _attribute_check_disabled
from sklearn_privacy.privacy._compose import compose

LEVELS = ["a", "b", "c"]
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.PrivacyWarning")


def _xy(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _fil(sigma=0.5, **kw):
    base = {"alpha": 0.1, "data_norm": 1.0, "fit_intercept": False, "classes": [0, 1]}
    return FILLogisticRegression(sigma=sigma, **{**base, **kw})


def _sigma_for_epsilon(template, X, y, epsilon):
    return clone(template).fit(X, y).sigma_for_epsilon(epsilon)


# ----------------------------------------------------------------- issue 21, item 1
def test_fitted_scaler_before_a_dp_model_voids_the_claim_and_the_audit_agrees():
    """Regression: the pipeline reported the model's epsilon_ (1.0) and canary_audit
    'refuted' it (lower bound 4.2); the claim of the published pipeline is inf."""
    X, y = _xy()
    model = _fil()
    model.set_params(sigma=_sigma_for_epsilon(model, X, y, 1.0))
    pipe = make_pipeline(StandardScaler(), model).fit(X, y)
    assert pipe[-1].epsilon_ == pytest.approx(1.0)   # the step's own claim keeps its meaning
    claim = privacy_claim(pipe)
    assert claim.epsilon == math.inf and not claim.is_private
    assert claim.reasons[0].startswith("pipeline[0] standardscaler: mean_ and var_")
    res = canary_audit(make_pipeline(StandardScaler(), model), X, y, 0, [1e4, 0.0], 1,
                       n_releases=80, random_state=0)
    assert res.claimed_epsilon == math.inf and not res.violates_claim
    assert res.epsilon_lower_bound > 1.0       # the leak is real: a finite claim would fall
    assert "standardscaler" in str(res)


@MULTICALIBRATION_ADVICE
def test_fitted_scaler_before_the_private_multicalibrator_voids_the_claim():
    X, y = _xy(200)
    base = LogisticRegression().fit(*_xy(200, seed=1))
    mc = PrivateMulticalibrator(FrozenEstimator(base), mechanism="numeric_sparse",
                                epsilon=0.1)
    alone = privacy_claim(clone(mc).fit(X, y))
    assert alone.epsilon == pytest.approx(0.1) or alone.epsilon == 0.0
    claim = privacy_claim(make_pipeline(StandardScaler(), mc).fit(X, y))
    assert claim.epsilon == math.inf
    assert "standardscaler" in claim.reasons[0]


class _MisdeclaredScaler(StandardScaler):
    """A StandardScaler that (wrongly) declares itself data-independent."""

    def __sklearn_privacy_claim__(self):
        return StepClaim("", "StandardScaler", "data_independent", 0.0, 0.0, "a lie")

    def __sklearn_privacy_attributes__(self):   # the same lie about its attributes
        return dict.fromkeys(("mean_", "var_", "scale_", "n_samples_seen_"), "constant")


def test_the_audit_refutes_a_misdeclared_step_and_not_the_honest_one():
    """The end-to-end audit can fail: the same pipeline with a scaler that claims to be
    data-independent is refuted by the worst-case raw row; with declared bounds it is not.
    """
    X, y = _xy()
    model = _fil()
    model.set_params(sigma=_sigma_for_epsilon(model, X, y, 1.0))
    lying = make_pipeline(_MisdeclaredScaler(), model)
    assert privacy_claim(clone(lying).fit(X, y)).epsilon == pytest.approx(1.0)
    res = canary_audit(lying, X, y, 0, [1e4, 0.0], 1, n_releases=100, random_state=0)
    assert res.claimed_epsilon == pytest.approx(1.0) and res.violates_claim
    honest = make_pipeline(BoundedScaler((-3, 3)), model)
    ok = canary_audit(honest, X, y, 0, [1e4, 0.0], 1, n_releases=100, random_state=0)
    assert ok.claimed_epsilon == pytest.approx(1.0) and not ok.violates_claim


# ----------------------------------------------------------------- recognition
def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(0, 5, n),
                       "cat": rng.choice(LEVELS, n)})
    return df, (df["x1"] > 0).astype(int).to_numpy()


def _ct(num, cat, remainder="drop"):
    return ColumnTransformer([("num", num, ["x1"]), ("cat", cat, ["cat"])],
                             remainder=remainder, sparse_threshold=0)


OHE_GIVEN = OneHotEncoder(categories=[LEVELS], handle_unknown="ignore", sparse_output=False)


@pytest.mark.parametrize("step, kind, words", [
    (OHE_GIVEN, "data_independent", "categories given"),
    (OneHotEncoder(sparse_output=False), "non_private", "categories='auto'"),
    (OneHotEncoder(categories=[LEVELS], sparse_output=False), "non_private",
     "handle_unknown='error'"),
    (OneHotEncoder(categories=[LEVELS], handle_unknown="infrequent_if_exist",
                   min_frequency=5, sparse_output=False), "non_private", "min_frequency"),
    (OrdinalEncoder(categories=[LEVELS], handle_unknown="use_encoded_value",
                    unknown_value=-1), "data_independent", "categories given"),
    (Pipeline([("imp", SimpleImputer(strategy="constant", fill_value="a")),
               ("ohe", OHE_GIVEN)]), "data_independent", "strategy='constant'"),
    (Pipeline([("imp", SimpleImputer(strategy="most_frequent")), ("ohe", OHE_GIVEN)]),
     "non_private", "learns statistics_"),
    (OrdinalEncoder(), "non_private", "categories='auto'"),
])
def test_categorical_steps(step, kind, words):
    df, y = _frame()
    pipe = make_pipeline(_ct(BoundedScaler((-3, 3)), step), _fil()).fit(df, y)
    steps = privacy_claim(pipe).steps
    names = [s.name for s in steps]
    assert names[0] == "pipeline[0] columntransformer[0] num"
    cat_steps = [s for s in steps if "columntransformer[1] cat" in s.name]
    assert any(s.kind == kind for s in cat_steps), cat_steps
    assert any(words in s.reason for s in cat_steps), cat_steps


@pytest.mark.parametrize("step", [
    FunctionTransformer(np.tanh), Normalizer(), Binarizer(), PolynomialFeatures(2),
    SplineTransformer(knots=np.linspace(-3, 3, 4)[:, None].repeat(2, axis=1)),
    BoundedScaler((-3, 3)), "passthrough",
])
def test_data_independent_numeric_steps_keep_the_claim(step):
    X, y = _xy()
    model = _fil()
    pipe = make_pipeline(step, model).fit(X, y)
    claim = privacy_claim(pipe)
    assert claim.is_private, claim
    assert claim.epsilon == pytest.approx(pipe[-1].epsilon_)
    assert claim.steps[0].kind == "data_independent"


@pytest.mark.parametrize("step, words", [
    (StandardScaler(), "mean_ and var_"),
    (SplineTransformer(), "knots='uniform'"),
    (LinearRegression(), "no claim is known for LinearRegression"),
])
def test_fitted_numeric_steps_void_the_claim(step, words):
    X, y = _xy()
    if isinstance(step, LinearRegression):
        pipe = FeatureUnion([("a", Normalizer()), ("b", make_pipeline(
            FunctionTransformer(np.abs), StandardScaler()))]).fit(X, y)
        claim = privacy_claim(pipe)
        assert claim.reasons[0].startswith("featureunion[1] b[1] standardscaler")
        claim = privacy_claim(step.fit(X, y))
    else:
        claim = privacy_claim(make_pipeline(step, _fil()).fit(X, y))
    assert claim.epsilon == math.inf and words in claim.reasons[0]


def test_column_transformer_remainder_is_walked():
    df, y = _frame()
    ok = make_pipeline(ColumnTransformer([("cat", OHE_GIVEN, ["cat"])],
                                         remainder=BoundedScaler((-5, 5)),
                                         sparse_threshold=0), _fil())
    assert privacy_claim(ok.fit(df, y)).is_private
    bad = make_pipeline(ColumnTransformer([("cat", OHE_GIVEN, ["cat"])],
                                          remainder=StandardScaler(),
                                          sparse_threshold=0), _fil())
    reasons = privacy_claim(bad.fit(df, y)).reasons
    assert "remainder" in reasons[0]
    # the attribute walk names the same object: no declaration of StandardScaler's state
    assert len(reasons) == 2 and "transformers_[1][1]" in reasons[1]
    assert "StandardScaler" in reasons[1]


def test_searches_selected_on_the_private_rows_are_not_private():
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV
    X, y = _xy(120)
    grid = {"alpha": [0.1, 1.0]}
    for search in (GridSearchCV(_fil(), grid, cv=2),
                   RandomizedSearchCV(_fil(), grid, n_iter=2, cv=2, random_state=0),
                   HalvingGridSearchCV(_fil(), grid, cv=2, random_state=0)):
        claim = privacy_claim(search.fit(X, y))
        name = type(search).__name__
        assert claim.epsilon == math.inf
        assert claim.reasons[0] == (f"{name.lower()}: {name} selected its best_estimator_ "
                                    "/ best_params_ by scores computed on the private "
                                    "rows, without a guarantee; tune on public data or "
                                    "use a private selection")
        # the attribute walk: the search's own state, and the winner's provenance
        if name != "HalvingGridSearchCV":     # not in the registry: unknown, hence inf
            assert any(".best_params_:" in r for r in claim.reasons)
        assert privacy_claim(search.best_estimator_).reasons[-1].endswith(
            "fit_provenance_: FILLogisticRegression was fitted inside "
            f"{name} on the same rows: its hyperparameters were chosen (or could be) by "
            "scores computed on the private rows, which its own claim does not cover; fix "
            "them without the private rows, or publish the private selection itself "
            "(RandomStoppingSearch)")


def test_frozen_estimator_is_data_independent_with_its_condition_stated():
    X, y = _xy()
    frozen = FrozenEstimator(LogisticRegression().fit(*_xy(seed=5)))
    claim = privacy_claim(frozen)
    assert claim.epsilon == 0.0 and claim.composition == "none"
    assert "fitted on other data" in claim.steps[0].reason


def test_wrappers_and_target_transformers():
    X, y = _xy()
    calibrated = CalibratedClassifierCV(_fil(), cv=2).fit(X, y)
    assert "no claim is known for CalibratedClassifierCV" in privacy_claim(calibrated).reasons[0]
    yr = X @ [1.0, -1.0]
    reg = FILLinearRegression(alpha=0.5, data_norm=3.0, target_bound=3.0, fit_intercept=False)
    ok = TransformedTargetRegressor(reg, func=np.tanh, inverse_func=np.arctanh).fit(X, yr)
    assert privacy_claim(ok).is_private
    bad = TransformedTargetRegressor(reg, transformer=StandardScaler()).fit(X, yr)
    assert "transformer_ (of y)" in privacy_claim(bad).reasons[0]
    assert "WERM" in privacy_claim(WERMClassifier().fit(X, y)).reasons[0]


def test_one_vs_rest_composes_its_gaussian_models_exactly():
    """Oracle: K Gaussian releases of mu each are sqrt(K) mu-GDP (Dong, Roth & Su)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    ovr = OneVsRestClassifier(_fil(sigma=0.3)).fit(X, y)
    # the label set of a one-vs-rest wrapper is found in y: not declared, so inf
    assert any("label_binarizer_" in r for r in privacy_claim(ovr).reasons)
    with _attribute_check_disabled():           # the composition of the K releases
        claim = privacy_claim(ovr)
    dp = [s for s in claim.steps if s.kind == "dp"]
    assert len(dp) == 3 and claim.composition == "gaussian"
    mu = math.sqrt(sum(s.gaussian_mu ** 2 for s in dp))
    assert claim.delta == pytest.approx(3e-5)
    assert analytic_gaussian_delta(claim.epsilon, sigma=1.0, sensitivity=mu) == \
        pytest.approx(3e-5, rel=1e-6)
    assert claim.epsilon < sum(s.epsilon for s in dp)
    assert "label set" in dp[0].reason and "declared classes" in dp[0].reason


def test_seeded_noise_voids_the_claim_unless_the_audit_picks_the_seeds():
    X, y = _xy()
    for seed in (0, np.random.RandomState(0), np.random.default_rng(0)):
        claim = privacy_claim(_fil(random_state=seed).fit(X, y))
        assert claim.epsilon == math.inf
        assert "random_state is set" in claim.reasons[0]
        assert privacy_claim(_fil(random_state=seed).fit(X, y), allow_seeded=True).is_private
    seeded_scaler = make_pipeline(DPStandardScaler((-3, 3), random_state=1), _fil()).fit(X, y)
    assert "pipeline[0] dpstandardscaler" in privacy_claim(seeded_scaler).reasons[0]


@MULTICALIBRATION_ADVICE
def test_multicalibrator_composes_with_a_dp_base_fitted_on_the_same_rows():
    X, y = _xy(200)
    base = _fil(sigma=0.3)
    mc = PrivateMulticalibrator(base, mechanism="numeric_sparse", epsilon=0.5,
                                n_bins=2).fit(X, y)
    assert mc.epsilon_ == math.inf          # the step alone, as documented
    claim = privacy_claim(mc)
    assert [s.name for s in claim.steps] == ["privatemulticalibrator",
                                             "privatemulticalibrator.estimator_"]
    assert claim.epsilon == pytest.approx(0.5 + mc.estimator_.epsilon_)
    lr = PrivateMulticalibrator(LogisticRegression(), mechanism="numeric_sparse").fit(X, y)
    assert "LogisticRegression" in privacy_claim(lr).reasons[0]
    none = PrivateMulticalibrator(FrozenEstimator(LogisticRegression().fit(X, y))).fit(X, y)
    assert "mechanism=None" in privacy_claim(none).reasons[0]


# ----------------------------------------------------------------- composition
def test_compose_rules_against_their_oracles():
    g1 = StepClaim("g1", "G", "dp", 2.0, 1e-6, "", gaussian_mu=0.5)
    g2 = StepClaim("g2", "G", "dp", 1.5, 1e-6, "", gaussian_mu=0.4)
    lap = StepClaim("lap", "L", "dp", 0.3, 0.0, "")
    free = StepClaim("f", "F", "data_independent", 0.0, 0.0, "")
    c = compose([g1, g2, lap, free])
    mu = math.hypot(0.5, 0.4)
    assert c.composition == "gaussian" and c.delta == pytest.approx(2e-6)
    assert c.epsilon == pytest.approx(
        analytic_gaussian_epsilon(delta=2e-6, sigma=1.0, sensitivity=mu) + 0.3, rel=1e-12)
    assert c.epsilon < 2.0 + 1.5 + 0.3
    basic = compose([g1, lap])           # one Gaussian step: nothing to gain
    assert (basic.composition, basic.epsilon, basic.delta) == ("basic", 2.3, 1e-6)
    assert compose([free]).epsilon == 0.0
    bad = compose([g1, StepClaim("x", "X", "non_private", math.inf, 0.0, "why")])
    assert bad.epsilon == math.inf and bad.reasons == ["x: why"]


def test_claim_objects_validate_and_print_one_line_per_step():
    with pytest.raises(ValueError, match="kind must be one of"):
        StepClaim("a", "A", "private", 1.0, 0.0, "")
    with pytest.raises(ValueError, match="non_private step has epsilon=inf"):
        StepClaim("a", "A", "non_private", 1.0, 0.0, "")
    with pytest.raises(ValueError, match="gaussian_mu"):
        StepClaim("a", "A", "data_independent", 0.0, 0.0, "", gaussian_mu=1.0)
    X, y = _xy()
    claim = privacy_claim(make_pipeline(BoundedScaler((-3, 3)), _fil()).fit(X, y))
    text = str(claim)
    assert isinstance(claim, PrivacyClaim) and repr(claim) == text
    assert len(text.splitlines()) == 4 and text.startswith("PrivacyClaim: (")
    assert text.splitlines()[-1].startswith("  assumes: neighbouring data sets differ")
    assert "hyperparameter was chosen without the private rows" in text
    assert claim.assumptions[1].startswith("the schema (column names, dtypes")
    with pytest.raises(NotFittedError):
        privacy_claim(make_pipeline(BoundedScaler((-3, 3)), _fil()))
    with pytest.raises(TypeError, match="'model' parameter of privacy_claim"):
        privacy_claim(np.zeros(3))
    with pytest.raises(TypeError, match="allow_seeded"):
        privacy_claim(_fil().fit(X, y), allow_seeded="yes")


# ----------------------------------------------------------------- property
def _raw_frame(rng, n):
    return pd.DataFrame({"x1": rng.normal(0, 2, n), "x2": rng.uniform(-10, 10, n),
                         "cat": rng.choice(LEVELS, n)})


def _random_pipeline(rng):
    """A random pipeline of supported steps; returns it and whether it holds a DP scaler."""
    numeric = [
        lambda: BoundedScaler((-4, 4)),
        lambda: BoundedScaler({"x1": (-4, 4), "x2": (-10, 10)}, feature_range=(0, 1)),
        lambda: make_pipeline(FunctionTransformer(np.tanh), Normalizer()),
        lambda: DPStandardScaler({"x1": (-4, 4), "x2": (-10, 10)}, epsilon=0.5,
                                 random_state=7),
        lambda: DPStandardScaler((-10, 10), epsilon=1.0, mechanism="laplace",
                                 random_state=7),
    ]
    k = int(rng.integers(len(numeric)))
    cat = OneHotEncoder(categories=[LEVELS], handle_unknown="ignore", sparse_output=False)
    ct = ColumnTransformer([("num", numeric[k](), ["x1", "x2"]), ("cat", cat, ["cat"])],
                           sparse_threshold=0)
    alpha = float(rng.choice([0.01, 0.1, 1.0]))
    norm = float(rng.choice([0.5, 1.0, 3.0]))
    scaling = [None, 0.5, 1.0][int(rng.integers(3))]
    intercept = {"fit_intercept": scaling is not None, "intercept_scaling": scaling}
    if rng.random() < 0.5:
        final = FILLogisticRegression(sigma=1.0, alpha=alpha, data_norm=norm,
                                      classes=[0, 1], **intercept)
    else:
        final = FILLinearRegression(sigma=1.0, alpha=alpha, data_norm=norm,
                                    target_bound=2.0, **intercept)
    steps = [ct] + ([Normalizer()] if rng.random() < 0.3 else []) + [final]
    return make_pipeline(*steps), k >= 3


def test_property_exact_refits_of_neighbours_move_at_most_the_sensitivity():
    """Over random pipelines of data-independent / DP steps and a FIL DP-view model, and
    neighbouring raw frames (one row replaced, often by an extreme or unknown value):

    * data-independent preprocessing fitted on D' transforms exactly as fitted on D;
    * the exact minimiser of the final step moves by at most its ``sensitivity_`` (given
      the release of a DP scaler, i.e. the second mechanism of an adaptive composition);
    * the DP scaler's noiseless statistics move by at most their sensitivities;
    * the composed claim is finite and at least each DP step's own epsilon.
    """
    rng = np.random.default_rng(2024)
    worst = 0.0
    for case in range(24):
        pipe, has_dp = _random_pipeline(rng)
        n = int(rng.integers(30, 80))
        D = _raw_frame(rng, n)
        y = (D["x1"] > 0).astype(int).to_numpy()
        if isinstance(pipe[-1], FILLinearRegression):
            y = D["x1"].to_numpy()
        Dp, yp = D.copy(), y.copy()
        j = int(rng.integers(n))
        extreme = rng.random() < 0.6
        Dp.iloc[j] = [float(rng.choice([-1e6, 1e6])) if extreme else rng.normal(),
                      float(rng.choice([-1e9, 1e9])) if extreme else rng.uniform(-10, 10),
                      str(rng.choice(LEVELS + ["unseen"]))]
        yp[j] = 1 - y[j] if y.dtype.kind == "i" else float(rng.choice([-1e6, 1e6]))
        a = clone(pipe).fit(D, y)
        b = clone(pipe).fit(Dp, yp)
        claim = privacy_claim(a, allow_seeded=True)
        assert claim.is_private, claim
        dp = [s for s in claim.steps if s.kind == "dp"]
        assert claim.epsilon <= sum(s.epsilon for s in dp) * (1 + 1e-12)
        # no composition is more private than its most leaky Gaussian part at that delta
        for s in dp:
            if s.gaussian_mu is not None:
                assert claim.epsilon >= analytic_gaussian_epsilon(
                    delta=claim.delta, sigma=1.0, sensitivity=s.gaussian_mu) * (1 - 1e-9)
        pre_a, pre_b = a[:-1], b[:-1]
        if not has_dp:
            np.testing.assert_array_equal(pre_a.transform(Dp), pre_b.transform(Dp))
        else:
            sa = a[0].named_transformers_["num"]
            sb = b[0].named_transformers_["num"]
            w = sa.upper_ - sa.lower_
            assert np.all(np.abs(sa.mean_ - sb.mean_) <= w / n * (1 + 1e-9))
            assert np.all(np.abs(sa.second_moment_ - sb.second_moment_)
                          <= w ** 2 / (4 * n) * (1 + 1e-9))
        # the final step on D' given the preprocessing released on D
        final_b = clone(pipe[-1]).fit(pre_a.transform(Dp), yp)
        theta_a = a[-1]._audit_engine().theta
        theta_b = final_b._audit_engine().theta
        sens = a[-1].sensitivity_
        assert np.isfinite(sens) and final_b.sensitivity_ == sens
        moved = float(np.linalg.norm(theta_a - theta_b))
        assert moved <= sens * (1 + 1e-7), (case, moved, sens)
        worst = max(worst, moved / sens)
    assert worst > 0.05      # the pairs are not all trivial


# ----------------------------------------------------------------- audited recipes
def _adult_subset(n):
    from sklearn_privacy.datasets import load_adult
    adult = load_adult(raw=True, as_frame=True)
    X = adult.data[["age", "hours_per_week", "sex", "race"]].iloc[:n].reset_index(drop=True)
    return X, np.asarray(adult.target, dtype=object)[:n]


def _recipe(sigma, dp_scaler):
    num = (DPStandardScaler({"age": (17, 90), "hours_per_week": (1, 99)}, epsilon=0.5)
           if dp_scaler else BoundedScaler({"age": (17, 90), "hours_per_week": (1, 99)}))
    cats = OneHotEncoder(categories=[["Female", "Male"],
                                     ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black",
                                      "Other", "White"]],
                         handle_unknown="ignore", sparse_output=False)
    ct = ColumnTransformer([("num", num, ["age", "hours_per_week"]),
                            ("cat", cats, ["sex", "race"])], sparse_threshold=0)
    return make_pipeline(ct, FILLogisticRegression(sigma=sigma, alpha=0.05, data_norm=3.0,
                                                   intercept_scaling=1.0,
                                                   classes=["<=50K", ">50K"]))


@pytest.mark.parametrize("dp_scaler", [False, True])
def test_audit_of_the_end_to_end_recipe_stays_under_its_claim(dp_scaler):
    X, y = _adult_subset(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        probe = _recipe(1.0, dp_scaler).fit(X, y)
        sigma = probe[-1].sigma_for_epsilon(1.0)
        fitted = _recipe(sigma, dp_scaler).fit(X, y)
    claim = privacy_claim(fitted)
    assert claim.is_private
    expected = 1.0 + (0.5 if dp_scaler else 0.0)
    assert claim.epsilon <= expected + 1e-9
    extreme = pd.DataFrame({"age": [1e6], "hours_per_week": [-1e6], "sex": ["Male"],
                            "race": ["Other"]})
    res = canary_audit(_recipe(sigma, dp_scaler), X, y, 0, extreme, y[y != y[0]][0],
                       n_releases=60, random_state=1)
    assert res.claimed_epsilon == pytest.approx(claim.epsilon, rel=1e-9)
    assert not res.violates_claim


def _projection(est, direction):
    return float(np.ravel(est.coef_) @ direction)


def test_audit_of_the_dp_view_guide_workflow_stays_under_its_claim():
    """The DP-view page's recipe (constant column, data_norm=3, epsilon 1) against a
    worst-case canary on the data_norm sphere, with the wrong label."""
    import functools
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 4))
    y = (X[:, 0] - X[:, 1] + rng.logistic(size=2000) > 0).astype(int)
    X = np.hstack([X, np.ones((2000, 1))]) / 3.0
    clf = FILLogisticRegression(alpha=0.05, fit_intercept=False, data_norm=3.0,
                                classes=[0, 1]).fit(X, y)
    template = clone(clf).set_params(sigma=clf.sigma_for_epsilon(1.0))
    theta = clf._audit_engine().theta
    canary = -3.0 * theta / np.linalg.norm(theta)       # on the sphere, against the model
    Xp = X.copy()
    Xp[0] = canary
    yp = y.copy()
    yp[0] = 1
    shift = clone(clf).fit(Xp, yp)._audit_engine().theta - theta
    assert np.linalg.norm(shift) > 0.3 * clf.sensitivity_    # a strong pair
    stat = functools.partial(_projection, direction=shift / np.linalg.norm(shift))
    res = canary_audit(template, X, y, 0, canary, 1, attack=stat, refit=False,
                       n_releases=2000, random_state=0)
    assert res.claimed_epsilon == pytest.approx(1.0) and res.claimed_delta == 1e-5
    assert res.epsilon_lower_bound <= 1.0 and not res.violates_claim


def _first_probability(est, row):
    return float(est.predict_proba(row)[0, 1])


@MULTICALIBRATION_ADVICE
def test_audit_of_the_multicalibration_guide_workflow_stays_under_its_claim():
    """The own-data page: a frozen base fitted on other rows, groups on raw columns,
    NumericSparse with epsilon 1, calibrated on a raw Adult frame."""
    import functools

    from sklearn_privacy.multicalibration import ColumnPredicate
    adult = load_adult_raw()
    X = adult.data[["age", "hours_per_week", "race", "sex"]]
    y = np.asarray(adult.target, dtype=object)
    base = make_pipeline(
        ColumnTransformer([("num", StandardScaler(), ["age", "hours_per_week"]),
                           ("cat", OneHotEncoder(handle_unknown="ignore"), ["race", "sex"])]),
        LogisticRegression()).fit(X.iloc[:2000], y[:2000])        # other rows
    Xc, yc = X.iloc[2000:2400].reset_index(drop=True), y[2000:2400]
    black = ColumnPredicate("race", "==", "Black")
    female = ColumnPredicate("sex", "==", "Female")
    mc = PrivateMulticalibrator(FrozenEstimator(base), groups=[black, female],
                                mechanism="numeric_sparse", epsilon=1.0, n_bins=2)
    fitted = clone(mc).fit(Xc, yc)
    assert privacy_claim(fitted).epsilon <= 1.0
    canary = Xc.iloc[[0]].assign(race="Black", sex="Female")
    stat = functools.partial(_first_probability, row=canary)
    res = canary_audit(mc, Xc, yc, 0, canary, ">50K" if yc[0] == "<=50K" else "<=50K",
                       attack=stat, n_releases=80, random_state=0)
    assert res.claimed_epsilon <= 1.0 and res.claimed_delta == 0.0
    assert not res.violates_claim


def load_adult_raw():
    from sklearn_privacy.datasets import load_adult
    return load_adult(raw=True, as_frame=True)
