"""FIL/IRFIL hardening: no silent wrong figure (aliasing, stopping rules, row order,
conditioning, scaling, extreme sigma, bad input), noise from the package generator."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from _expected_warnings import SEED_INSTANCE
from _fil_dense_oracle import dense_jacobians
from sklearn.exceptions import ConvergenceWarning

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)
from sklearn_privacy._glm._core import LOGISTIC, SQUARED, SingularHessianError
from sklearn_privacy.exceptions import NumericalPrecisionWarning

ESTIMATORS = [FILLinearRegression, FILLogisticRegression, IRFILLinearRegression,
              IRFILLogisticRegression]


def _data(n=120, d=4, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    z = X @ rng.normal(size=d) + 0.3
    if classification:
        return X, (z + rng.logistic(size=n) > 0).astype(int)
    return X, z + 0.3 * rng.normal(size=n)


def _is_classifier(Est):
    return issubclass(Est, FILLogisticRegression)


def _fit_data(Est, **kw):
    return _data(classification=_is_classifier(Est), **kw)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


# ---------------------------------------------------------------------- 1. noise source
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_release_noise_comes_from_the_package_generator(Est, monkeypatch):
    from sklearn_privacy.fil import _base

    calls = []
    original = _base.noise_generator

    def spy(random_state):
        calls.append(random_state)
        return original(random_state)

    monkeypatch.setattr(_base, "noise_generator", spy)
    X, y = _fit_data(Est)
    Est(random_state=None).fit(X, y)
    Est(random_state=3).fit(X, y)
    assert calls == [None, 3]


@SEED_INSTANCE
@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_fresh_noise_ignores_and_keeps_numpy_global_state(Est):
    X, y = _fit_data(Est)
    np.random.seed(1)  # noqa: NPY002 (the global state is the subject)
    a = Est(random_state=None).fit(X, y).coef_
    after = np.random.random()  # noqa: NPY002
    np.random.seed(1)  # noqa: NPY002 (the global state is the subject)
    b = Est(random_state=None).fit(X, y).coef_
    assert not np.allclose(a, b)
    assert np.random.random() == after  # noqa: NPY002 (global stream not advanced)
    # a generator instance is used as given
    c = Est(random_state=np.random.default_rng(5)).fit(X, y).coef_
    d = Est(random_state=np.random.default_rng(5)).fit(X, y).coef_
    assert np.array_equal(c, d)


# ---------------------------------------------------------------------- 2. aliasing
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_audit_state_does_not_alias_caller_data(Est):
    X, y = _fit_data(Est)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = y.astype(np.float64)
    w = np.linspace(0.5, 2.0, len(y))
    est = Est(sigma=0.5, random_state=0).fit(X, y, sample_weight=w)
    ref = Est(sigma=0.5, random_state=0).fit(X.copy(), y.copy(), sample_weight=w.copy())
    rows = ref._audit_engine().dense_rows([0, 1])
    # mutate every caller array after fit, before the (lazy) audit
    X *= 2.0
    y[:] = y[::-1].copy()
    w *= 3.0
    assert _rel(est.eta_, ref.eta_) <= 1e-12
    assert est.eta() == pytest.approx(ref.eta(), rel=1e-12)
    assert np.array_equal(est._audit_engine().dense_rows([0, 1]), rows)
    assert np.allclose(est.fisher_information(rows=[0, 1]), ref.fisher_information(rows=[0, 1]),
                       rtol=1e-12, atol=0)


def test_no_second_copy_when_validation_already_copied():
    X, y = _data()
    est = FILLinearRegression(random_state=0)
    # an int array is converted (copied) by validate_data; the engine keeps that array
    Xi = np.round(X * 10).astype(np.int64)
    est.fit(Xi, y)
    stored = est._audit_engine().X
    assert stored.dtype == np.float64 and stored.flags.owndata
    # a float64 array is copied
    est.fit(X, y)
    assert not np.shares_memory(est._audit_engine().X, X)


def test_per_subset_cache_is_bounded():
    from sklearn_privacy.fil._eta._engine import _CACHE_MAX_SUBSETS

    X, y = _data(d=12)
    est = FILLinearRegression(random_state=0).fit(X, y)
    for j in range(12):
        for k in range(j + 1, 12):
            est.eta(columns=[j, k], per_example=True)
    assert len(est._audit_engine()._cache) <= _CACHE_MAX_SUBSETS
    # evicted entries are recomputed, identical
    a = est.eta(columns=[0, 1], per_example=True)
    est._audit_engine()._cache.clear()
    assert np.array_equal(a, est.eta(columns=[0, 1], per_example=True))


# ---------------------------------------------------------------------- 3. Newton
def _newton_data(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = 2.0 * rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + rng.logistic(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e6])
def test_newton_minimiser_is_invariant_to_weight_scale(scale):
    # before the fix, weights 1e-12 stopped Newton at iteration 2, coefficients off by 0.8
    X, y = _newton_data()
    ref = FILLogisticRegression(alpha=1e-2, random_state=0).fit(X, y)
    est = FILLogisticRegression(alpha=1e-2, random_state=0).fit(
        X, y, sample_weight=np.full(len(y), scale))
    t_ref, t = ref._audit_engine().theta, est._audit_engine().theta
    assert np.max(np.abs(t - t_ref)) <= 1e-10 * np.max(np.abs(t_ref))
    assert est.n_iter_ == ref.n_iter_
    # the etas (weights enter J_i and H) scale consistently: omega H^-1 is invariant
    assert _rel(est.eta_, ref.eta_) <= 1e-8


def test_newton_stopping_on_non_uniform_small_weights():
    X, y = _newton_data(seed=1)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    ref = FILLogisticRegression(alpha=1e-3, random_state=0).fit(X, y, sample_weight=w)
    est = FILLogisticRegression(alpha=1e-3, random_state=0).fit(X, y, sample_weight=w * 1e-9)
    assert _rel(est._audit_engine().theta, ref._audit_engine().theta) <= 1e-10


def test_non_converged_newton_warns():
    X, y = _data(n=200, d=5, classification=True)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        FILLogisticRegression(alpha=1e-2, max_iter=1, random_state=0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        IRFILLogisticRegression(alpha=1e-2, max_iter=1, eta_max_iter=1, random_state=0).fit(X, y)


# ---------------------------------------------------------------------- 4. rows
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_rows_keep_the_callers_order_and_duplicates(Est):
    X, y = _fit_data(Est)
    est = Est(sigma=0.5, random_state=0).fit(X, y)
    eta = est.eta_
    got = est.eta(rows=[7, 2, 2], per_example=True)
    assert got.shape == (3,)
    assert np.array_equal(got, eta[[7, 2, 2]])
    got = est.eta(rows=[5, -1], columns=[0], per_example=True)
    assert np.array_equal(got, est.eta(columns=[0], per_example=True)[[5, len(y) - 1]])
    # constrained per-example and secular routes too
    assert np.array_equal(est.eta(rows=[9, 3], columns=[0, 1], constrained=True,
                                  per_example=True),
                          est.eta(columns=[0, 1], constrained=True, per_example=True)[[9, 3]])


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_fim_follows_row_order_and_refuses_duplicates(Est):
    X, y = _fit_data(Est)
    est = Est(sigma=0.5, random_state=0).fit(X, y)
    F = est.fisher_information(rows=[4, 1], columns=[0, 2])
    G = est.fisher_information(rows=[1, 4], columns=[0, 2])
    perm = [2, 3, 0, 1]
    assert np.allclose(F, G[np.ix_(perm, perm)], rtol=1e-12, atol=0)
    u = np.arange(4.0)
    op = est.fisher_information(rows=[4, 1], columns=[0, 2], dense=False)
    assert np.allclose(op @ u, F @ u, rtol=1e-10)
    for call in (lambda: est.fisher_information(rows=[2, 2]),
                 lambda: est.eta(rows=[7, 2, 2]),
                 lambda: est.eta(rows=[3, -len(y) + 3])):
        with pytest.raises(ValueError, match="rows.*duplicate"):
            call()
    with pytest.raises(ValueError, match="rows"):
        est.eta(rows=[])
    with pytest.raises(ValueError, match="rows"):
        est.eta(rows=[0.5])


def test_engine_rows_keeps_order_for_the_attacks():
    X, y = _data()
    eng = FILLinearRegression(random_state=0).fit(X, y)._audit_engine()
    assert eng._rows([7, 2, 2, -1]).tolist() == [7, 2, 2, len(y) - 1]
    assert eng._rows(None).tolist() == list(range(len(y)))
    assert eng._rows(3).tolist() == [3]
    assert eng.dense_rows([7, 2]).shape == (2, X.shape[1])
    assert np.array_equal(eng.dense_rows([7, 2]), X[[7, 2]])
    assert np.array_equal(eng.dense_columns([3, 1]), X[:, [3, 1]])


# ---------------------------------------------------------------------- 5. numerics
def test_predict_proba_keeps_tiny_probabilities():
    X, y = _data(classification=True)
    clf = FILLogisticRegression(sigma=1e-6, random_state=0).fit(X, y)
    z = 40.0
    x = np.zeros((1, X.shape[1]))
    x[0, 0] = (z - clf.intercept_[0]) / clf.coef_[0, 0]
    proba = clf.predict_proba(x)
    assert proba[0, 0] == pytest.approx(np.exp(-40.0), rel=1e-6)
    assert proba[0, 1] == 1.0
    assert np.allclose(np.log(proba), clf.predict_log_proba(x), rtol=1e-10)


def _exact_eta_linear(X, y, alpha=0.0):
    """Per-example eta of ridge regression (intercept, unit weights) in exact rationals,
    rounded to float64 only for the final 3x3-ish eigenvalue problem."""
    n, d = X.shape
    Xt = [[Fraction(float(v)) for v in row] + [Fraction(1)] for row in X]
    yt = [Fraction(float(v)) for v in y]
    p = d + 1
    H = [[sum(Xt[i][a] * Xt[i][b] for i in range(n)) for b in range(p)] for a in range(p)]
    for a in range(d):
        H[a][a] += n * Fraction(alpha)
    # exact inverse by Gauss-Jordan
    aug = [H[a][:] + [Fraction(int(a == b)) for b in range(p)] for a in range(p)]
    for c in range(p):
        piv = next(r for r in range(c, p) if aug[r][c] != 0)
        aug[c], aug[piv] = aug[piv], aug[c]
        f = aug[c][c]
        aug[c] = [v / f for v in aug[c]]
        for r in range(p):
            if r != c and aug[r][c] != 0:
                g = aug[r][c]
                aug[r] = [vr - g * vc for vr, vc in zip(aug[r], aug[c], strict=True)]
    Hi = [row[p:] for row in aug]
    rhs = [sum(Xt[i][a] * yt[i] for i in range(n)) for a in range(p)]
    theta = [sum(Hi[a][b] * rhs[b] for b in range(p)) for a in range(p)]
    w = theta[:d]
    out = []
    for i in range(n):
        z = sum(Xt[i][a] * theta[a] for a in range(p))
        l1 = z - yt[i]
        a_i = [sum(Hi[a][b] * Xt[i][b] for b in range(p)) for a in range(p)]
        J = [[-(a_i[r] * w[c] + l1 * Hi[r][c]) for c in range(d)] + [a_i[r]] for r in range(p)]
        JJ = np.array([[float(sum(J[r][k] * J[s][k] for k in range(d + 1))) for s in range(p)]
                       for r in range(p)])
        out.append(np.sqrt(np.linalg.eigvalsh(JJ)[-1]))
    return np.array(out)


def _collinear(cond_target, n=30, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    e = rng.normal(size=n)
    # x1 = x0 + t e: cond(H) ~ 1 / t^2
    t = 1.0 / np.sqrt(cond_target)
    X = np.column_stack([x0, x0 + t * e])
    y = x0 + 0.5 * e + 0.1 * rng.normal(size=n)
    return X, y


def test_ill_conditioned_hessian_warns_and_well_conditioned_does_not():
    X, y = _collinear(1e12)
    with pytest.warns(NumericalPrecisionWarning, match="condition"):
        est = FILLinearRegression(alpha=0.0, random_state=0).fit(X, y)
    # the figure the warning quotes is an honest bound on the error observed
    exact = _exact_eta_linear(X, y)
    err = _rel(est.eta_ * est.noise_scale_, exact)
    assert err <= est._audit_engine().eta_error_bound
    X, y = _collinear(1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalPrecisionWarning)
        est = FILLinearRegression(alpha=0.0, random_state=0).fit(X, y)
    assert _rel(est.eta_, _exact_eta_linear(X, y)) <= 1e-10


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_badly_scaled_features_are_solved_in_the_users_parametrisation(loss):
    rng = np.random.default_rng(0)
    n = 300
    income = rng.uniform(1e3, 2e7, n)
    Z = np.column_stack([income / 1e7, rng.integers(0, 2, n), rng.normal(size=n)])
    z = Z @ [1.0, -1.0, 0.5]
    S = np.array([1e7, 1.0, 1.0])  # X = Z * S
    X = Z * S
    if loss is SQUARED:
        y = z + 0.3 * rng.normal(size=n)
        Est = FILLinearRegression
    else:
        y = (z + rng.logistic(size=n) > 0.2).astype(float)
        Est = FILLogisticRegression
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalPrecisionWarning)
        est = Est(alpha=0.0, random_state=0).fit(X, y)
    # oracle: the well-scaled problem, mapped back. theta_X = S^-1 theta_Z (alpha = 0), and
    # J_X = dtheta_X/d(x, y) = S^-1 J_Z diag(S^-1, 1)
    ref = Est(alpha=0.0, random_state=0).fit(Z, y)
    tz = ref._audit_engine().theta
    Sp = np.r_[S, 1.0]
    assert _rel(est._audit_engine().theta, tz / Sp) <= 1e-8
    JZ = dense_jacobians(Z, y, tz, loss=loss, alpha=0.0, fit_intercept=True)
    JX = JZ / Sp[None, :, None] / np.r_[S, 1.0][None, None, :]
    eta_ref = np.array([np.linalg.norm(J, 2) for J in JX])
    assert _rel(est.eta_, eta_ref) <= 1e-8


def test_scale_diagnosis_names_standardisation():
    rng = np.random.default_rng(0)
    n = 50
    X = np.column_stack([rng.normal(size=n) * 1e9, rng.normal(size=n),
                         rng.normal(size=n)])
    X[:, 2] = X[:, 1] * 1e-9 + X[:, 0] * 1e-18 * 0  # collinear and badly scaled
    y = rng.normal(size=n)
    with pytest.raises(SingularHessianError, match="differ in scale by ~1e"):
        FILLinearRegression(alpha=0.0).fit(X, y)


@pytest.mark.parametrize("sigma", [1e-300, 1e300])
@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_extreme_sigma_gives_right_answer_or_names_sigma(Est, sigma):
    X, y = _fit_data(Est)
    ref = Est(sigma=1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            est = Est(sigma=sigma, random_state=0).fit(X, y)
        except ValueError as exc:
            assert "sigma" in str(exc)
            return
        for value, unit in ((lambda e: e.eta_, 1.0),
                            (lambda e: e.eta(), 1.0),
                            (lambda e: e.eta(rows=[0, 1], columns=[0], per_example=True), 1.0),
                            (lambda e: e.fisher_information(rows=[0, 1]), 2.0),
                            (lambda e: e.fisher_information(rows=[0, 1], dense=False)
                             @ np.ones(2 * (X.shape[1] + 1)), 2.0)):
            try:
                got = value(est)
            except ValueError as exc:
                assert "sigma" in str(exc)
                continue
            want = value(ref)
            assert np.all(np.isfinite(got))
            assert np.allclose(got * sigma**unit if unit == 1.0 else got * sigma * sigma,
                               want, rtol=1e-10, atol=0)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_bad_inputs_name_the_parameter(Est):
    X, y = _fit_data(Est)
    est = Est(sigma=0.5, random_state=0)
    cases = [
        (lambda: est.fit(X[:0], y[:0]), "sample"),
        (lambda: est.fit(X, y, sample_weight=np.r_[np.nan, np.ones(len(y) - 1)]),
         "sample_weight"),
        (lambda: est.fit(X, y, sample_weight=np.ones(len(y) - 1)), "sample_weight|samples"),
        (lambda: est.fit(X, np.where(np.arange(len(y)) == 0, np.nan, y)), "NaN"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()
    est.fit(X, y)
    for bad, match in (([0.5], "rows"), ([[0, 1]], "rows"), (np.ones(3, bool), "rows"),
                       ([len(y)], "rows")):
        with pytest.raises(ValueError, match=match):
            est.eta(rows=bad, per_example=True)
    with pytest.raises(ValueError, match="target_eta"):
        est.sigma_for_eta(np.nan)


def test_zero_variance_column_without_penalty_is_a_clear_error():
    X, y = _data()
    X[:, 1] = 3.0
    with pytest.raises(SingularHessianError, match="constant columns"):
        FILLinearRegression(alpha=0.0).fit(X, y)
    FILLinearRegression(alpha=1e-3).fit(X, y)


def test_one_row_linear_fit_is_exact():
    X, y = _data(n=1)
    est = FILLinearRegression(sigma=1.0, alpha=0.5, random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.eta_))
    J = dense_jacobians(X, y.astype(float), est._audit_engine().theta, loss=SQUARED,
                        alpha=0.5, fit_intercept=True)
    assert _rel(est.eta_, [np.linalg.norm(J[0], 2)]) <= 1e-10


def test_eta_describes_the_released_model_after_set_params():
    X, y = _data()
    est = FILLinearRegression(sigma=0.5, random_state=0).fit(X, y)
    eta = est.eta_.copy()
    est.set_params(sigma=50.0)  # not refitted: the release still has sigma = 0.5
    assert np.array_equal(est.eta_, eta)
    assert est.eta() == pytest.approx(float(np.sqrt(est._audit_engine().group_sq_norm()))
                                      / 0.5, rel=1e-12)
    est.fit(X, y)
    assert np.allclose(est.eta_ * 100.0, eta, rtol=1e-12)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_mixed_column_names_are_blamed_on_X_not_y(Est):
    """A frame with int and str column names fails scikit-learn's name check; the
    message used to be prefixed ``y:`` (X alone passed ``check_array``)."""
    import pandas as pd

    X, y = _fit_data(Est)
    frame = pd.DataFrame(X, columns=["a", 1, "c", "d"])
    est = Est(sigma=0.5, random_state=0)
    with pytest.raises(TypeError, match=r"^Feature names are only supported.*X\.columns"):
        est.fit(frame, y)
    assert not hasattr(est, "n_features_in_")  # the check left no fitted attribute
    with pytest.raises(ValueError, match=r"\by\b"):  # a bad y is still blamed on y
        est.fit(X, np.r_[y[:-1], np.nan])


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_audit_flags_must_be_booleans(Est):
    """``eta(per_example="yes")`` used to return the per-example etas (a truthy string),
    ``constrained="no"`` to constrain; the methods now refuse what is not a bool, as
    the functions of ``sklearn_privacy.fil`` do."""
    X, y = _fit_data(Est)
    est = Est(sigma=0.5, random_state=0).fit(X, y)
    for call, name in [
        (lambda: est.eta(per_example="yes"), "per_example"),
        (lambda: est.eta(per_example=1), "per_example"),
        (lambda: est.eta(columns=[0, 1], constrained="no"), "constrained"),
        (lambda: est.fisher_information(rows=[0], dense="yes"), "dense"),
        (lambda: est.sigma_for_eta(1.0, constrained="no"), "constrained"),
    ]:
        with pytest.raises(TypeError, match=f"^{name} must be True or False"):
            call()
    assert np.array_equal(est.eta(per_example=np.bool_(True)), est.eta_)
    assert est.fisher_information(rows=[0], dense=None).shape == (X.shape[1] + 1,) * 2


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_sigma_for_epsilon_names_a_bad_target_first(Est):
    """epsilon='1', 0, inf or NaN and delta outside [0, 1) used to be reported as "no
    DP guarantee: data_norm is None" (the estimator's reason came first); the targets are
    now checked first, and a good target still gets that reason."""
    X, y = _fit_data(Est)
    est = Est(sigma=0.5, random_state=0).fit(X, y)
    for bad in ("1", 0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="^epsilon must be a finite number > 0"):
            est.sigma_for_epsilon(bad)
    for bad in (-0.1, 1.0, np.nan, "x"):
        with pytest.raises(ValueError, match=r"^delta must be a number in \[0, 1\)"):
            est.sigma_for_epsilon(1.0, bad)
    with pytest.raises(ValueError, match="no DP guarantee: data_norm is None"):
        est.sigma_for_epsilon(1.0)


def test_boolean_series_rows_follow_the_training_rows_not_their_position():
    """A mask as a pandas Series: aligned on the training frame's index when ``X`` is
    given (a sorted or shuffled mask gives the rows it names), read by position when its
    index is 0..n-1, refused otherwise (it was read by position, naming other rows)."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_privacy import fil
    X, y = _data(n=80)
    frame = pd.DataFrame(X, columns=list("abcd"), index=np.arange(80)[::-1] + 1000)
    frame["race"] = np.where(X[:, 3] > 0, "a", "b")          # a raw string column
    pipe = make_pipeline(make_column_transformer((StandardScaler(), list("abc")),
                                                 (OneHotEncoder(), ["race"])),
                         FILLinearRegression(sigma=1.0, random_state=0))
    pipe.fit(frame, y)
    mask = pd.Series(frame["a"].to_numpy() > 0.5, index=frame.index)
    expected = fil.eta(pipe, rows=mask.to_numpy(), per_example=True, X=frame)
    shuffled = mask.sample(frac=1.0, random_state=0)
    got = fil.eta(pipe, rows=shuffled, per_example=True, X=frame)
    np.testing.assert_array_equal(got, expected)
    assert fil.eta(pipe, rows=shuffled, X=frame) == fil.eta(pipe, rows=mask.to_numpy(),
                                                            X=frame)
    np.testing.assert_array_equal(
        fil.fisher_information(pipe, rows=shuffled, X=frame),
        fil.fisher_information(pipe, rows=mask.to_numpy(), X=frame))
    # positional read of the shuffled mask would select other rows
    assert not np.array_equal(shuffled.to_numpy(), mask.to_numpy())
    with pytest.raises(ValueError, match=r"rows: a boolean pandas Series .*reindex"):
        pipe[-1].eta(rows=shuffled, per_example=True)
    plain = pd.Series(mask.to_numpy())                   # index 0..n-1: by position
    np.testing.assert_array_equal(pipe[-1].eta(rows=plain, per_example=True),
                                  pipe[-1].eta(rows=mask.to_numpy(), per_example=True))


def test_unknown_column_of_a_pipeline_is_blamed_on_columns():
    """fil.eta(pipe, columns=<not an input column>) names ``columns`` (the parameter the
    user passed), through the raw view and the features' view alike."""
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_privacy import fil
    X, y = _data(n=60)
    frame = pd.DataFrame(X, columns=["age", "hours", "c", "d"])
    pipe = make_pipeline(StandardScaler(), FILLinearRegression(sigma=1.0, random_state=0))
    pipe.fit(frame, y)
    with pytest.raises(ValueError, match=r"^columns: 'ag' is not a column .*\['age'\]\.$"):
        fil.eta(pipe, columns="ag", wrt="features", X=frame)
    with pytest.raises(ValueError, match=r"^columns: 'ag' is neither .* Close: \['age'\]\.$"):
        fil.eta(pipe, columns="ag", wrt="raw", X=frame)
