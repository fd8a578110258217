"""What is released is what the claim covers.

Regression tests for the certified minimiser (``certified_distance_``), the data-dependent
metadata left out of releases (``n_iter_``, a search's scores and scorers, seeds),
``strip_for_release`` walking every object, shared noise generators, and the small
defects around them (data values in messages, caller's arrays rescaled, dask targets,
polars groups).
"""

import pickle
import re
import warnings

import numpy as np
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KernelDensity, KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import SVC

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLogisticRegression,
    PrivateMulticalibrator,
)
from sklearn_privacy.attacks import make_membership_scorer
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.mechanisms import NumericSparse
from sklearn_privacy.mechanisms._output_perturbation import analytic_gaussian_epsilon
from sklearn_privacy.utils import public_weights, strip_for_release
from sklearn_privacy.utils._groups import ColumnPredicate


def _sphere(rng, n, d, radius=1.0):
    """Rows drawn uniformly in the ball of the given radius (norm <= radius)."""
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * radius * rng.uniform(0.2, 1.0, size=(n, 1))


def _logistic_problem(n=2000, d=64, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d)) / 8
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _exact_logistic(X, y, alpha):
    """Independent exact minimiser of (1/n) sum l + (alpha/2)||theta||^2 (plain Newton)."""
    n, d = X.shape
    theta = np.zeros(d)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(X @ theta)))
        g = X.T @ (p - y) / n + alpha * theta
        H = (X.T * (p * (1 - p))) @ X / n + alpha * np.eye(d)
        step = np.linalg.solve(H, g)
        theta = theta - step
        if np.max(np.abs(step)) < 1e-15:
            break
    return theta


def _passthrough(X, scorer=None):
    return X


def _centre(est):
    """The released centre (the parameters before the noise), from the audit state."""
    return est._audit_engine().theta


def _found(values, blob):
    """Fraction of the float64 values (not 0 or 1) whose bytes occur in the pickle."""
    values = set(np.asarray(values, dtype=np.float64).ravel().tolist()) - {0.0, 1.0}
    little, big = np.dtype("<f8"), np.dtype(">f8")
    hits = [np.array(v, little).tobytes() in blob or np.array(v, big).tobytes() in blob
            for v in values]
    return sum(hits) / len(hits)


# ------------------------------------------------------------- certified minimiser


@pytest.mark.parametrize("kwargs", [{"max_iter": 1}, {"tol": 1.0}])
def test_starved_solver_is_certified_by_the_accelerated_phase(kwargs):
    """A solver stopped early (``max_iter=1``, a loose ``tol``) is finished by
    accelerated gradient steps to a step count fixed by public quantities: the claim is
    that of the default settings and the centre is within ``certified_distance_`` of the
    exact minimiser. Fails on the old code, where such a fit had ``epsilon_ = inf`` (and
    whether it did depended on the rows)."""
    X, y = _logistic_problem()
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.01, sigma=0.5,
                                **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter=1 also warns about convergence
        est.fit(X, y)
    ref = clone(est).set_params(max_iter=100, tol=1e-12).fit(X, y)
    assert np.isfinite(est.epsilon_) and est.epsilon_ == ref.epsilon_
    assert est.certified_distance_ == ref.certified_distance_ < np.inf
    exact = _exact_logistic(np.asarray(X) / np.maximum(
        1.0, np.linalg.norm(X, axis=1, keepdims=True)), y, 0.01)
    assert np.linalg.norm(_centre(est) - exact) <= est.certified_distance_ + 1e-12


@pytest.mark.parametrize("n,d,alpha,weights", [(60, 3, 0.5, False), (400, 10, 0.05, False),
                                               (3000, 20, 1e-3, False),
                                               (400, 10, 0.05, True)])
def test_default_certificate_is_negligible(n, d, alpha, weights):
    rng = np.random.RandomState(n)
    X = _sphere(rng, n, d)
    y = (X[:, 0] + 0.2 * rng.normal(size=n) > 0).astype(int)
    # declared public (row-dependent weights void the claim)
    sw = public_weights(rng.uniform(0.5, 2.0, n) if weights else np.ones(n))
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=alpha, sigma=0.1)
    est.fit(X, y, sample_weight=sw)
    share = sw.max() / sw.sum()
    L = 1 / (1 + np.exp(-np.sqrt(2 * np.log(2) / alpha)))   # sigmoid(R ||theta*||max), R = 1
    sens = 2 * L * share / alpha
    assert est.sensitivity_ == pytest.approx(sens, rel=1e-14)
    # tau = L R max(1e-12 max(w)/W, 2**-46), a function of public quantities only
    tau = L * max(1e-12 * share, 2.0**-46)
    assert est.certified_distance_ == pytest.approx(tau / alpha, rel=1e-14)
    assert 2 * est.certified_distance_ / sens <= max(1e-12, 1.5e-14 / share)
    assert est.epsilon_ == analytic_gaussian_epsilon(
        delta=1e-5, sigma=0.1, sensitivity=est.sensitivity_ + 2 * est.certified_distance_)
    assert est.epsilon_ == pytest.approx(
        analytic_gaussian_epsilon(delta=1e-5, sigma=0.1, sensitivity=sens), rel=1e-10)


def test_certified_distance_bounds_the_distance_to_the_exact_minimiser():
    rng = np.random.RandomState(1)
    X = _sphere(rng, 500, 8)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=500) > 0).astype(int)
    exact = _exact_logistic(X, y, 0.1)
    for kwargs in ({}, {"tol": 1.0}, {"tol": 1e-3}):
        est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.1,
                                    **kwargs).fit(X, y)
        if np.isfinite(est.certified_distance_):
            assert np.linalg.norm(_centre(est) - exact) <= est.certified_distance_


def test_neighbours_of_a_certified_release_stay_within_the_enlarged_sensitivity():
    """Exact refits of neighbouring data sets (one row replaced by an adversarial row on
    the sphere, label flipped) never move beyond ``sensitivity_ + certified_distance_``
    from the certified centre (an exact minimiser is its own certificate)."""
    rng = np.random.RandomState(2)
    n, d, alpha = 80, 4, 0.05
    X = _sphere(rng, n, d)
    y = (X[:, 0] > 0).astype(int)
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=alpha).fit(X, y)
    assert np.isfinite(est.epsilon_)
    bound = est.sensitivity_ + est.certified_distance_
    moves = []
    for i in rng.choice(n, 12, replace=False):
        for sign in (1.0, -1.0):
            X2, y2 = X.copy(), y.copy()
            u = rng.normal(size=d)
            X2[i] = sign * u / np.linalg.norm(u)
            y2[i] = 1 - y[i]
            moves.append(np.linalg.norm(_centre(est) - _exact_logistic(X2, y2, alpha)))
    assert max(moves) <= bound
    assert max(moves) > 0.1 * est.sensitivity_  # the neighbours are not trivial


def test_least_squares_is_certified_too():
    rng = np.random.RandomState(3)
    X = _sphere(rng, 300, 5)
    y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=300)
    est = FILLinearRegression(fit_intercept=False, data_norm=1.0, target_bound=3.0,
                              alpha=0.1, sigma=0.5).fit(X, y)
    assert np.isfinite(est.epsilon_) and 0 < est.certified_distance_ < 1e-10


def test_dask_fit_has_the_same_certificate():
    da = pytest.importorskip("dask.array")
    X, y = _logistic_problem(n=600, d=8)
    ref = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.05).fit(X, y)
    Xd, yd = da.from_array(X, chunks=(150, 8)), da.from_array(y, chunks=150)
    est = clone(ref).fit(Xd, yd)
    assert est.certified_distance_ == ref.certified_distance_ < np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        early = clone(ref).set_params(max_iter=1).fit(Xd, yd)
        dense_early = clone(ref).set_params(max_iter=1).fit(X, y)
    # a solver stopped early finishes to the public step count, on dask as in memory
    assert early.epsilon_ == dense_early.epsilon_ == ref.epsilon_ < np.inf
    assert early.certified_distance_ == ref.certified_distance_


# ------------------------------------------------ the release holds what is covered


def test_n_iter_is_audit_state():
    """``n_iter_`` is data-dependent (neighbouring data sets can need different numbers
    of Newton steps): neither the pickle nor strip_for_release keeps it."""
    X, y = _logistic_problem(n=300, d=5)
    for est in (FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.01),
                IRFILLogisticRegression(eta_max_iter=2, eta_tol=0.5)):
        est.fit(X, y)
        assert hasattr(est, "n_iter_")
        assert not hasattr(pickle.loads(pickle.dumps(est)), "n_iter_")
        assert not hasattr(strip_for_release(est), "n_iter_")
        assert b"n_iter_" not in pickle.dumps(strip_for_release(est))


def test_n_iter_separates_neighbours():
    """The leak that makes n_iter_ audit state: one replaced row changes it."""
    rng = np.random.RandomState(4)
    X = _sphere(rng, 60, 3)
    y = (X[:, 0] > 0).astype(int)
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=1e-3)
    counts = {est.fit(X, y).n_iter_}
    for i in range(20):
        X2 = X.copy()
        X2[i] = -X2[i] / np.linalg.norm(X2[i])
        counts.add(clone(est).fit(X2, y).n_iter_)
    assert len(counts) > 1


@pytest.mark.parametrize("make,where", [
    (lambda X, y: CalibratedClassifierCV(SVC(), cv=2).fit(X, y),
     r"calibrated_classifiers_\[0\]\.estimator \(SVC\).*support_vectors_"),
    (lambda X, y: CalibratedClassifierCV(KNeighborsClassifier(), cv=2).fit(X, y),
     r"calibrated_classifiers_\[0\]\.estimator \(KNeighborsClassifier\).*_fit_X"),
    (lambda X, y: KernelDensity().fit(X), r"KernelDensity\.tree_ \(KDTree\)"),
    (lambda X, y: KNeighborsClassifier(algorithm="ball_tree").fit(X, y),
     r"_tree \(BallTree\)"),
])
def test_strip_refuses_rows_anywhere_in_the_model(make, where):
    rng = np.random.RandomState(5)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = make(X, y)
    # the pickle holds training rows: stripping must not pretend otherwise
    assert _found(X, pickle.dumps(model)) > 0.3
    with pytest.raises(ValueError, match=where):
        strip_for_release(model)
    with pytest.warns(PrivacyWarning, match=where):
        strip_for_release(model, allow_training_rows=True)


def test_strip_removes_irfil_state_inside_a_calibrated_wrapper():
    X, y = _logistic_problem(n=300, d=4)
    cal = CalibratedClassifierCV(IRFILLogisticRegression(eta_max_iter=2, sigma=0.1),
                                 cv=2).fit(X, y)
    inner = cal.calibrated_classifiers_[0].estimator
    weights = inner.sample_weight_
    assert _found(weights, pickle.dumps(cal)) > 0.5
    out = strip_for_release(cal)
    stripped = out.calibrated_classifiers_[0].estimator
    assert not hasattr(stripped, "sample_weight_") and not hasattr(stripped,
                                                                  "eta_history_")
    assert hasattr(inner, "sample_weight_")  # the original is untouched
    assert _found(weights, pickle.dumps(out)) == 0
    np.testing.assert_array_equal(out.predict_proba(X), cal.predict_proba(X))


def test_strip_removes_scores_and_data_holding_scorers_of_a_search():
    X, y = _logistic_problem(n=200, d=4)
    scoring = {"accuracy": "accuracy", "advantage": make_membership_scorer(X, y, random_state=0)}
    search = GridSearchCV(FILLogisticRegression(alpha=0.01), {"sigma": [0.1, 1.0]},
                          scoring=scoring, refit="accuracy", cv=KFold(2)).fit(X, y)
    assert _found(X, pickle.dumps(search)) > 0.9  # the membership scorer holds X
    with pytest.warns(PrivacyWarning, match=r"GridSearchCV\.scoring"):
        out = strip_for_release(search)
    blob = pickle.dumps(out)
    assert _found(X, blob) == 0 and _found(y.astype(float) + 0.5, blob) == 0
    for name in ("cv_results_", "best_score_", "scorer_"):
        assert not hasattr(out, name) and hasattr(search, name)
    assert out.scoring is None and search.scoring is scoring
    np.testing.assert_array_equal(out.predict_proba(X), search.predict_proba(X))
    # a string scoring is kept
    plain = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=KFold(2)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert strip_for_release(plain).scoring is None is plain.scoring


def test_strip_refuses_a_scorer_holding_data_outside_a_search():
    X, y = _logistic_problem(n=100, d=3)
    holder = FunctionTransformer(_passthrough, kw_args={"scorer": make_membership_scorer(X, y,
                                                                                         random_state=0)})
    pipe = make_pipeline(holder, LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match=r"kw_args\['scorer'\].*scorer holding data"):
        strip_for_release(pipe)


def test_strip_clears_random_state():
    X, y = _logistic_problem(n=200, d=4)
    gen = np.random.default_rng()
    with pytest.warns(PrivacyWarning, match="Generator instance"):
        fitted = make_pipeline(FILLogisticRegression(random_state=gen)).fit(X, y)
    seeded = FILLogisticRegression(random_state=123).fit(X, y)
    for model in (fitted, seeded):
        with pytest.warns(PrivacyWarning, match=r"random_state=(Generator|123) set to None"
                                                r".*not private even with the seed removed"):
            out = strip_for_release(model)
        blob = pickle.dumps(out)
        assert b"PCG64" not in blob and b"bit_generator" not in blob
        assert all(v is None for k, v in out.get_params().items()
                   if k.endswith("random_state"))
        np.testing.assert_array_equal(out.predict(X), model.predict(X))
    with warnings.catch_warnings():  # nothing to clear: no warning
        warnings.simplefilter("error")
        strip_for_release(FILLogisticRegression().fit(X, y))


# ------------------------------------------------------------------- randomness


def test_clones_with_a_generator_share_noise_loudly():
    X, y = _logistic_problem(n=200, d=4)
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.1, sigma=1.0,
                                random_state=np.random.default_rng())
    fits = []
    for _ in range(2):
        with pytest.warns(PrivacyWarning, match="every clone draws the same noise"):
            fits.append(clone(est).fit(X, y))
    # the hazard itself: two clones, one noise draw
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    for f in fits:
        assert "not private as published" in f.epsilon_reason_
        assert "Generator instance" in f.epsilon_reason_
    # None: fresh noise for every clone, no warning, and the reason says what is assumed
    fresh = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = clone(fresh).fit(X, y), clone(fresh).fit(X, y)
    assert not np.array_equal(a.coef_, b.coef_)
    assert "epsilon_ assumes fresh noise: random_state=None" in a.epsilon_reason_


def test_int_seed_stays_usable_and_is_named():
    X, y = _logistic_problem(n=200, d=4)
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=0.1,
                                random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = clone(est).fit(X, y), clone(est).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert np.isfinite(a.epsilon_)  # epsilon_ is the per-step guarantee with fresh noise
    assert "random_state was set to an int seed" in a.epsilon_reason_
    assert "random_state=0" not in a.epsilon_reason_   # the seed outlives a stripped param


@MULTICALIBRATION_ADVICE
def test_multicalibrator_warns_on_shared_noise():
    X, y = _logistic_problem(n=400, d=3)
    base = FrozenEstimator(LogisticRegression().fit(X, y))
    mc = PrivateMulticalibrator(base, mechanism="numeric_sparse", epsilon=1.0,
                                random_state=np.random.RandomState(0))
    with pytest.warns(PrivacyWarning, match="RandomState instance"):
        mc.fit(X, y)
    with warnings.catch_warnings():  # no noise drawn: no PrivacyWarning
        warnings.simplefilter("error", PrivacyWarning)
        # (the non-private fit may warn that small cells fit noise: a UserWarning)
        PrivateMulticalibrator(base, calibration_tol=0.05, min_cell_size=5,
                               random_state=np.random.RandomState(0)).fit(X, y)


# ------------------------------------------------------------- smaller defects


def test_privacy_warnings_hold_counts_not_values():
    rng = np.random.RandomState(6)
    X = rng.normal(size=(50, 3))
    X[7] = [123.456789, 0.0, 0.0]
    y = X[:, 1].copy()
    y[9] = 98765.4321
    est = FILLinearRegression(data_norm=1.0, target_bound=3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    text = " ".join(str(w.message) for w in caught)
    # no value of a row, no count, and no warning whose firing depends on one row: the
    # counts are in the private channel (in memory, never pickled)
    assert "data_norm" not in text and "target_bound" not in text
    assert "123.45" not in text and "98765" not in text
    assert est._bounding_counts["rows_scaled"] > 0 and est._bounding_counts[
        "targets_clipped"] > 0


def test_numeric_sparse_errors_do_not_show_answers():
    ns = NumericSparse(1.0, 2, 0.5, test_sensitivity=1.0, answer_sensitivities=[1.0])
    with pytest.raises(ValueError) as info:
        ns.query(0.25, [0.3141592, np.inf])
    assert "0.314" not in str(info.value)
    with pytest.raises(ValueError, match="answer_values must be finite") as info:
        ns.query(0.25, [np.nan])
    with pytest.raises(TypeError) as info:
        ns.query(0.25, ["0.2718281"])
    assert "0.2718" not in str(info.value)


def test_multicalibrator_label_mismatch_shows_no_label():
    X, y = _logistic_problem(n=100, d=3)
    base = FrozenEstimator(LogisticRegression().fit(X, np.where(y == 1, 7, 3)))
    with pytest.raises(ValueError, match="classes differ") as info:
        PrivateMulticalibrator(base).fit(X, y)
    assert not re.search(r"\[\s*[0-9]", str(info.value))


def test_data_norm_never_rescales_the_callers_array():
    xr = pytest.importorskip("xarray")
    rng = np.random.RandomState(7)
    X = rng.normal(size=(60, 3)) * 3
    y = (X[:, 0] > 0).astype(int)
    big = rng.normal(size=(60, 6)) * 3
    for data in (xr.DataArray(X.copy()), big[:, ::2], big.reshape(120, 3)[:60]):
        values = np.asarray(data)
        before = values.copy()
        est = FILLogisticRegression(data_norm=1.0, fit_intercept=False,
                                    alpha=0.1).fit(data, y)
        assert est._bounding_counts["rows_scaled"] > 0
        np.testing.assert_array_equal(values, before)
        eta = est.eta_.copy()
        values *= 2.0  # the caller changes its array: the audit state must not see it
        est.__dict__.pop("_eta_cache", None)
        np.testing.assert_array_equal(est.eta_, eta)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("kwargs", [{}, {"target_bound": 2.0}])
def test_non_finite_dask_targets_are_refused(bad, kwargs):
    da = pytest.importorskip("dask.array")
    rng = np.random.RandomState(8)
    X = rng.normal(size=(40, 3))
    y = X[:, 0].copy()
    y[5] = bad
    with pytest.raises(ValueError, match=r"^y contains NaN or infinity"):
        FILLinearRegression(**kwargs).fit(da.from_array(X, chunks=10),
                                           da.from_array(y, chunks=10))
    with pytest.raises(ValueError, match="y"):  # in memory too, never clipped
        FILLinearRegression(**kwargs).fit(X, y)


def test_polars_frame_with_named_groups_in_the_multicalibrator():
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(9)
    n = 400
    cols = {"age": rng.uniform(20, 70, n), "x": rng.normal(size=n),
            "sex": rng.randint(0, 2, n)}
    y = (cols["x"] + rng.normal(size=n) > 0).astype(int)
    groups = [ColumnPredicate("sex", "==", 1), ColumnPredicate("age", ">", 45.0)]
    kwargs = dict(groups=groups, alpha=0.05, min_cell_size=5)
    got = PrivateMulticalibrator(**kwargs).fit(pl.DataFrame(cols), y)
    ref = PrivateMulticalibrator(**kwargs).fit(pd.DataFrame(cols), y)
    assert got.updates_ == ref.updates_ and len(ref.updates_) > 0
    np.testing.assert_allclose(got.predict_proba(pl.DataFrame(cols)),
                               ref.predict_proba(pd.DataFrame(cols)))


@pytest.mark.slow  # loky workers take 10-25 s to start on a loaded machine
def test_parallel_workers_print_no_data_and_respect_the_parents_filters(capfd):
    from sklearn.model_selection import cross_validate

    rng = np.random.RandomState(6)
    X = rng.normal(size=(60, 3))
    X[7] = [123.456789, 0.0, 0.0]
    y = X[:, 1].copy()
    y[9] = 98765.4321
    est = FILLinearRegression(data_norm=1.0, target_bound=3.0)
    # workers started by an earlier test write to the stderr they were started with,
    # out of capfd's reach: start fresh ones
    from joblib.externals.loky import get_reusable_executor
    get_reusable_executor().shutdown(wait=True)
    cross_validate(est, X, y, cv=2, n_jobs=2)
    out, err = capfd.readouterr()
    assert "data_norm" not in err  # the bounding is silent (its count is private)
    assert "123.45" not in out + err and "98765" not in out + err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        cross_validate(est, X, y, cv=2, n_jobs=2)
    out, err = capfd.readouterr()
    assert "PrivacyWarning" not in out + err
