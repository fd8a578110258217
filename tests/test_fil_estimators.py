"""FILLinearRegression / FILLogisticRegression: fit, release, audit, safety, errors."""

import copy
import io
import pickle

import joblib
import numpy as np
import pytest
from _fil_dense_oracle import dense_jacobians
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy._glm._core import LOGISTIC, SQUARED
from sklearn_privacy.exceptions import AuditStateUnavailableError


def _regression(n=80, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.5 + 0.3 * rng.normal(size=n)


def _classification(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + rng.normal(size=n) > 0).astype(int)
    return X, y


def _exact(est):
    return est._audit_engine().theta


def test_minimisers_match_scikit_learn():
    X, y = _regression()
    n, alpha = len(y), 0.02
    lin = FILLinearRegression(sigma=1.0, alpha=alpha, random_state=0).fit(X, y)
    ridge = Ridge(alpha=n * alpha, tol=1e-12).fit(X, y)
    assert np.allclose(_exact(lin)[:-1], ridge.coef_, rtol=1e-10)
    assert _exact(lin)[-1] == pytest.approx(ridge.intercept_, rel=1e-10)

    Xc, yc = _classification()
    log = FILLogisticRegression(sigma=1.0, alpha=alpha, random_state=0).fit(Xc, yc)
    ref = LogisticRegression(C=1.0 / (len(yc) * alpha), tol=1e-12, max_iter=10_000).fit(Xc, yc)
    assert np.allclose(_exact(log)[:-1], ref.coef_.ravel(), rtol=1e-6, atol=1e-8)
    assert _exact(log)[-1] == pytest.approx(ref.intercept_[0], rel=1e-6)


@pytest.mark.parametrize("Est,data", [(FILLinearRegression, _regression),
                                      (FILLogisticRegression, _classification)])
def test_release_is_minimiser_plus_gaussian_noise(Est, data):
    X, y = data()
    sigma = 0.3
    est = Est(sigma=sigma, random_state=42).fit(X, y)
    released = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
    noise = np.random.RandomState(42).standard_normal(released.size)
    assert np.allclose(released, _exact(est) + sigma * noise, rtol=0, atol=1e-12)
    # fresh entropy by default: two fits differ, and the noise has scale sigma
    draws = np.array([
        np.r_[np.ravel(e.coef_), np.ravel(e.intercept_)] - _exact(e)
        for e in (Est(sigma=sigma).fit(X, y) for _ in range(200))
    ])
    assert not np.allclose(draws[0], draws[1])
    assert draws.std() == pytest.approx(sigma, rel=0.1)
    assert abs(draws.mean()) < 0.05


@pytest.mark.parametrize("Est,data,loss", [(FILLinearRegression, _regression, SQUARED),
                                           (FILLogisticRegression, _classification, LOGISTIC)])
def test_eta_matches_dense_oracle_and_scales_with_sigma(Est, data, loss):
    X, y = data()
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    est = Est(sigma=0.5, alpha=0.01, random_state=0).fit(X, y, sample_weight=sw)
    y01 = y.astype(float) if loss is SQUARED else (y == est.classes_[1]).astype(float)
    J = dense_jacobians(X, y01, _exact(est), loss=loss, alpha=0.01, fit_intercept=True,
                        sample_weight=sw)
    ref = np.array([np.linalg.norm(Ji, 2) for Ji in J]) / 0.5
    assert np.max(np.abs(est.eta_ - ref) / ref) <= 1e-10
    # per-example eta through the companion method equals eta_
    assert np.allclose(est.eta(per_example=True), est.eta_, rtol=1e-12)
    # whole data set and a group
    Jall = np.concatenate(list(J), axis=1)
    assert est.eta() == pytest.approx(np.linalg.norm(Jall, 2) / 0.5, rel=1e-10)
    # the label column alone
    lab = np.array([np.linalg.norm(Ji[:, -1]) for Ji in J]) / 0.5
    assert np.allclose(est.eta(columns=[X.shape[1]], per_example=True), lab, rtol=1e-10)
    # eta scales as 1 / sigma, the minimiser does not move
    est2 = Est(sigma=2.0, alpha=0.01, random_state=0).fit(X, y, sample_weight=sw)
    assert np.allclose(est2.eta_ * 4.0, est.eta_, rtol=1e-12)
    assert np.allclose(_exact(est2), _exact(est))
    F = est.fisher_information(rows=[0, 1], columns=[0, 1])
    JS = np.concatenate([J[0][:, :2], J[1][:, :2]], axis=1)
    assert np.allclose(F, JS.T @ JS / 0.25, rtol=1e-10, atol=1e-14)


def test_fisher_information_is_an_operator_for_large_subsets():
    from scipy.sparse.linalg import LinearOperator, eigsh

    X, y = _classification(n=600, d=4)  # 600 rows x 5 values = 3000 > 2048
    est = FILLogisticRegression(sigma=0.5, alpha=0.01, random_state=0).fit(X, y)
    op = est.fisher_information()
    assert isinstance(op, LinearOperator) and op.shape == (3000, 3000)
    # its top eigenvalue is the squared eta of the whole data set
    top = eigsh(op, k=1, which="LA", return_eigenvectors=False, tol=1e-12)[0]
    assert np.sqrt(top) == pytest.approx(est.eta(), rel=1e-8)
    small = est.fisher_information(rows=np.arange(400))  # 2000 values: dense
    assert isinstance(small, np.ndarray) and small.shape == (2000, 2000)
    u = np.random.default_rng(0).normal(size=2000)
    part = est.fisher_information(rows=np.arange(400), dense=False)
    assert np.allclose(part @ u, small @ u, rtol=1e-10, atol=1e-12)


def test_sigma_for_eta():
    X, y = _classification()
    est = FILLogisticRegression(sigma=1.0, alpha=0.01, random_state=0).fit(X, y)
    for stat, fn in (("max", np.max), ("mean", np.mean)):
        s = est.sigma_for_eta(0.25, aggregate=stat)
        refit = FILLogisticRegression(sigma=s, alpha=0.01, random_state=0).fit(X, y)
        assert fn(refit.eta_) == pytest.approx(0.25, rel=1e-10)
    with pytest.raises(ValueError, match="target_eta"):
        est.sigma_for_eta(0.0)
    with pytest.raises(ValueError, match="aggregate"):
        est.sigma_for_eta(1.0, aggregate="median")


def _float_bytes(values):
    return {np.float64(v).tobytes() for v in np.ravel(values)}


@pytest.mark.parametrize("Est,data", [(FILLinearRegression, _regression),
                                      (FILLogisticRegression, _classification)])
def test_dumps_hold_no_training_values_and_no_exact_minimiser(Est, data):
    X, y = data()
    est = Est(sigma=0.1, random_state=0).fit(X, y)
    _ = est.eta_  # populate the cache too
    exact = _exact(est)
    engine = est._audit_engine()
    # training rows, the exact minimiser, the Hessian (it holds X^T X) and its inverse
    secret = (_float_bytes(X) | _float_bytes(exact) | _float_bytes(engine.H)
              | _float_bytes(engine.H_inv))
    secret.discard(np.float64(0.0).tobytes())
    if Est is FILLinearRegression:
        secret |= _float_bytes(y)
    buf = io.BytesIO()
    joblib.dump(est, buf)
    for blob in (pickle.dumps(est), buf.getvalue()):
        leaked = [s for s in secret if s in blob]
        assert not leaked, f"{len(leaked)} secret float64 values found in the dump"
        # sanity of the detector: the released parameters are in the dump
        assert np.float64(np.ravel(est.coef_)[0]).tobytes() in blob
    loaded = pickle.loads(pickle.dumps(est))
    assert np.array_equal(loaded.predict(X), est.predict(X))
    for access in (lambda e: e.eta_, lambda e: e.eta(), lambda e: e.fisher_information([0]),
                   lambda e: e.sigma_for_eta(1.0)):
        with pytest.raises(AuditStateUnavailableError, match="never serialised"):
            access(loaded)
    assert not hasattr(loaded, "eta_")
    # an in-memory deep copy is not a release: it keeps the audit state
    assert np.array_equal(copy.deepcopy(est).eta_, est.eta_)


def test_grid_search_over_sigma_in_pipeline():
    X, y = _classification(n=200)
    pipe = Pipeline([("scale", StandardScaler()),
                     ("clf", FILLogisticRegression(alpha=0.01, random_state=0))])
    grid = GridSearchCV(pipe, {"clf__sigma": [1e-3, 1.0, 30.0]}, cv=3).fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert grid.best_params_["clf__sigma"] in (1e-3, 1.0)
    assert scores[0] > scores[2]  # heavy noise destroys accuracy
    assert grid.best_estimator_[-1].eta_.shape == (200,)


def test_mnist01_class0_leaks_more_than_class1():
    from sklearn_privacy.datasets import load_mnist01

    data = load_mnist01(n_components=20, scale_to_unit_ball=True, random_state=0)
    X, y = data.data_train, data.target_train
    lin = FILLinearRegression(sigma=1.0, alpha=0.0, random_state=0).fit(X, 2.0 * y - 1.0)
    log = FILLogisticRegression(sigma=1.0, alpha=1e-3, random_state=0).fit(X, y)
    for est in (lin, log):
        assert est.eta_[y == 0].mean() > est.eta_[y == 1].mean()


BAD_X = [
    (np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 1.0]]), "NaN"),
    (np.array([[0.0, np.inf], [1.0, 2.0], [3.0, 1.0]]), "infinity"),
    (np.array([1.0, 2.0, 3.0]), "2D array"),
]


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
@pytest.mark.parametrize("X,match", BAD_X)
def test_bad_X(Est, X, match):
    with pytest.raises(ValueError, match=match):
        Est().fit(X, [0, 1, 1][: len(X)])


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_bad_y_and_lengths_and_weights(Est):
    X, _ = _classification(n=20)
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Est().fit(X, y[:-1])
    with pytest.raises(ValueError, match="NaN"):
        Est().fit(X, np.where(y == 1, np.nan, 0.0))
    with pytest.raises(ValueError, match="infinity"):
        Est().fit(X, np.where(y == 1, np.inf, 0.0))
    with pytest.raises(ValueError, match="non-negative"):
        Est().fit(X, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="non-zero|all weights are zero"):
        Est().fit(X, y, sample_weight=np.zeros(20))
    est = Est(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        est.eta(rows=[25])
    with pytest.raises(ValueError, match="out of range"):
        est.eta(columns=[X.shape[1] + 1], per_example=True)


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
@pytest.mark.parametrize("param,value", [("sigma", 0.0), ("sigma", -1.0), ("alpha", -0.1)])
def test_bad_hyperparameters(Est, param, value):
    X, y = _classification(n=20)
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        Est(**{param: value}).fit(X, y)


def test_classifier_target_errors():
    X, _ = _classification(n=30)
    with pytest.raises(ValueError, match="at least 2 classes"):
        FILLogisticRegression().fit(X, np.zeros(30))
    assert FILLogisticRegression().fit(X, np.arange(30) % 3).coef_.shape == (3, X.shape[1])
    with pytest.raises(ValueError, match="Unknown label type"):
        FILLogisticRegression().fit(X, np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match="one class has positive sample_weight"):
        FILLogisticRegression().fit(X, np.arange(30) % 2,
                                    sample_weight=(np.arange(30) % 2).astype(float))


def test_singular_hessian_suggests_a_penalty():
    X, y = _regression(n=30, d=3)
    X = np.hstack([X, X[:, :1]])  # duplicated column
    with pytest.raises(ValueError, match="alpha > 0"):
        FILLinearRegression(alpha=0.0).fit(X, y)
    FILLinearRegression(alpha=1e-3).fit(X, y)  # a penalty fixes it
    Xs = np.r_[np.c_[np.ones(10), np.ones(10)], -np.c_[np.ones(10), np.ones(10)]]
    Xs += np.random.default_rng(0).normal(scale=0.01, size=Xs.shape)
    ys = np.r_[np.ones(10), np.zeros(10)]  # linearly separable
    with pytest.raises(ValueError, match="alpha > 0"):
        FILLogisticRegression(alpha=0.0).fit(Xs, ys)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
def test_fit_and_audit_leave_the_data_untouched(Est, fit_intercept):
    X, y = _regression() if Est is FILLinearRegression else _classification()
    X0, y0 = X.copy(), y.copy()
    w = np.linspace(0.5, 2.0, len(y))
    est = Est(sigma=0.1, fit_intercept=fit_intercept, random_state=0).fit(X, y, sample_weight=w)
    est.eta(columns=[0, 1], per_example=True)
    est.fisher_information(rows=[0, 1])
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    # the Hessian is the weighted Gram matrix plus the penalty, built from the same data
    Xt = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    engine = est._audit_engine()
    expected = (Xt * (w * engine.l2)[:, None]).T @ Xt
    reg = w.sum() * est._alpha_value() * np.r_[np.ones(X.shape[1]), np.zeros(int(fit_intercept))]
    np.testing.assert_allclose(engine.H, expected + np.diag(reg), rtol=1e-12, atol=1e-12)
