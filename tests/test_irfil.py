import pickle
import warnings

import numpy as np
import pytest
from _expected_warnings import IRFIL_REWEIGHTING, SEED_INSTANCE

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)
from sklearn_privacy._experiments import LAMBDA_GRID, exact_accuracy, fit_mnist01_models
from sklearn_privacy._glm._core import LOGISTIC, SQUARED, fit_minimiser
from sklearn_privacy.fil import _base


def _data(n=120, d=4, seed=0, classification=False):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.3, 2.0, size=(n, 1))
    z = X @ rng.normal(size=d)
    if classification:
        return X, (z + rng.logistic(size=n) > 0).astype(float)
    return X, z + 0.3 * rng.normal(size=n)


@pytest.fixture(scope="module")
def mnist_models():
    return fit_mnist01_models(sigma=1.0, random_state=0)


def test_mnist01_irfil_equalises_eta(mnist_models):
    data, models = mnist_models
    X, y = data.data_train, data.target_train
    Xte, yte = data.data_test, data.target_test
    lin = IRFILLinearRegression(sigma=1.0, alpha=0.0, eta_max_iter=10, random_state=0)
    lin.fit(X, 2.0 * y - 1.0)
    h = lin.eta_history_
    assert h["cv"][0] == pytest.approx(0.35, abs=0.02)
    assert h["cv"][-1] <= 1e-3
    assert h["max"][0] == pytest.approx(1.20, abs=0.02)
    assert h["max"][-1] == pytest.approx(0.51, abs=0.01)
    # the history describes the models: entry 0 is the plain FIL fit, the last the release
    assert h["max"][0] == pytest.approx(models["linear"][0].eta_.max(), rel=1e-10)
    assert h["max"][-1] == pytest.approx(lin.eta_.max(), rel=1e-12)
    plain_acc = exact_accuracy(models["linear"][0], Xte, yte)
    assert abs(exact_accuracy(lin, Xte, yte) - plain_acc) <= 0.01

    # the paper's rule: the largest lambda whose training accuracy equals the linear
    # model's to two significant digits (checked here against the grid directly)
    lam = models["logistic"][1]

    def acc2(alpha):
        est = FILLogisticRegression(alpha=alpha, random_state=0).fit(X, y)
        return f"{exact_accuracy(est, X, y):.2g}"

    target = f"{exact_accuracy(models['linear'][0], X, y):.2g}"
    k = LAMBDA_GRID.index(lam)
    assert acc2(lam) == target
    assert all(acc2(larger) != target for larger in LAMBDA_GRID[:k])
    log = IRFILLogisticRegression(sigma=1.0, alpha=lam, eta_max_iter=10, random_state=0).fit(X, y)
    assert log.eta_history_["cv"][0] > 0.3
    assert log.eta_history_["cv"][-1] <= 1e-3
    assert log.eta_history_["max"][-1] < 0.5 * log.eta_history_["max"][0]
    assert abs(exact_accuracy(log, Xte, yte) - exact_accuracy(models["logistic"][0], Xte, yte)) \
        <= 0.01


@pytest.mark.parametrize("Est,loss,classification",
                         [(IRFILLinearRegression, SQUARED, False),
                          (IRFILLogisticRegression, LOGISTIC, True)])
def test_weighted_jacobian_matches_finite_differences(Est, loss, classification):
    X, y = _data(classification=classification)
    est = Est(sigma=1.0, alpha=1e-2, eta_max_iter=4, random_state=0).fit(X, y)
    omega = est.sample_weight_
    assert not np.allclose(omega, 1.0)  # weights really differ
    engine = est._audit_engine()
    h = 1e-5
    for i in (0, 17, 63):
        J = engine.jacobian_columns(np.array([i]), np.arange(X.shape[1]), not classification)[0]
        cols = X.shape[1] + (0 if classification else 1)
        fd = np.empty((X.shape[1] + 1, cols))
        for j in range(cols):
            thetas = []
            for sign in (1, -1):
                Xp, yp = X.copy(), y.copy()
                if j < X.shape[1]:
                    Xp[i, j] += sign * h
                else:
                    yp[i] += sign * h
                theta, _ = fit_minimiser(Xp, yp, loss=loss, alpha=1e-2, fit_intercept=True,
                                         sample_weight=omega, tol=1e-14)
                thetas.append(theta)
            fd[:, j] = (thetas[0] - thetas[1]) / (2 * h)
        assert np.allclose(J, fd, rtol=1e-6, atol=1e-6 * np.abs(J).max())


@pytest.mark.parametrize("Est,classification",
                         [(IRFILLinearRegression, False), (IRFILLogisticRegression, True)])
def test_converged_fit_has_equal_eta(Est, classification):
    X, y = _data(classification=classification, seed=1)
    est = Est(sigma=0.5, alpha=1e-2, eta_max_iter=200, eta_tol=1e-12, random_state=0).fit(X, y)
    assert est.n_iter_ < 200
    assert est.eta_.std() / est.eta_.mean() <= 1e-12
    # independent check: a plain FIL fit with the final weights has the same etas
    Plain = FILLinearRegression if not classification else FILLogisticRegression
    plain = Plain(sigma=0.5, alpha=1e-2, random_state=0).fit(X, y, sample_weight=est.sample_weight_)
    assert np.allclose(plain.eta_, est.eta_, rtol=1e-10)
    assert est.sample_weight_.sum() == pytest.approx(len(y))


def test_integer_weights_equal_duplicated_rows():
    X, y = _data(n=60)
    sw = np.ones(60)
    sw[:10] = 2
    Xd, yd = np.vstack([X, X[:10]]), np.concatenate([y, y[:10]])
    a = IRFILLinearRegression(alpha=1e-2, eta_max_iter=6, random_state=0).fit(
        X, y, sample_weight=sw)
    b = IRFILLinearRegression(alpha=1e-2, eta_max_iter=6, random_state=0).fit(Xd, yd)
    assert np.allclose(a._audit_engine().theta, b._audit_engine().theta, rtol=1e-10)
    assert np.allclose(a.eta_history_["cv"], b.eta_history_["cv"], rtol=1e-8)
    # the weight of a doubled row is the sum of its two copies' weights
    assert np.allclose(a.sample_weight_[:10], b.sample_weight_[:10] + b.sample_weight_[60:])
    # zero weight rows stay at zero
    sw0 = np.ones(60)
    sw0[5] = 0
    c = IRFILLinearRegression(alpha=1e-2, eta_max_iter=3, random_state=0).fit(
        X, y, sample_weight=sw0)
    assert c.sample_weight_[5] == 0 and c.sample_weight_.sum() == pytest.approx(59)


def test_iwpc_attribute_level_irfil():
    from sklearn_privacy.datasets import load_iwpc

    d = load_iwpc()
    est = IRFILLinearRegression(sigma=1.0, alpha=1e-2, eta_max_iter=10,
                                sensitive_features=d.attribute_columns,
                                random_state=0).fit(d.data, d.target)
    h = est.eta_history_
    assert h["std"][0] / h["std"][-1] >= 100
    direct = est.eta(columns=d.attribute_columns, per_example=True)
    assert direct.std() == pytest.approx(h["std"][-1], rel=1e-8)
    con = IRFILLinearRegression(sigma=1.0, alpha=1e-2, eta_max_iter=10,
                                sensitive_features=d.attribute_columns,
                                constrained=True, random_state=0).fit(d.data, d.target)
    assert con.eta_history_["std"][0] / con.eta_history_["std"][-1] >= 100


def test_tol_stops_early_and_store_eta():
    X, y = _data()
    est = IRFILLinearRegression(eta_max_iter=50, eta_tol=1e-3, store_eta=True,
                                random_state=0).fit(X, y)
    assert est.n_iter_ < 50 and est.eta_history_["cv"][-1] <= 1e-3
    assert est.eta_history_["cv"][-2] > 1e-3
    assert est.eta_history_["eta"].shape == (est.n_iter_ + 1, len(y))
    assert np.allclose(est.eta_history_["eta"][-1], est.eta_)


@SEED_INSTANCE
@pytest.mark.parametrize("Est,classification",
                         [(IRFILLinearRegression, False), (IRFILLogisticRegression, True)])
def test_noise_is_drawn_once(Est, classification):
    X, y = _data(classification=classification)
    rng = np.random.RandomState(3)
    est = Est(sigma=0.7, alpha=1e-2, eta_max_iter=5, random_state=rng).fit(X, y)
    theta = est._audit_engine().theta
    released = np.append(est.coef_, est.intercept_)
    reference = np.random.RandomState(3)
    # the release is theta + sigma * (the first p draws of the generator) ...
    assert np.allclose(released - theta, 0.7 * reference.standard_normal(theta.size),
                       rtol=0, atol=1e-12)
    # ... and nothing else was drawn from it
    assert rng.standard_normal() == reference.standard_normal()


def test_logistic_refits_are_warm_started(monkeypatch):
    X, y = _data(classification=True, n=400)
    calls = []
    original = _base.fit_minimiser

    def recording(*args, **kwargs):
        out = original(*args, **kwargs)
        theta, n_newton = out[:2]
        calls.append((kwargs.get("theta_init"), theta.copy(), n_newton))
        return out

    monkeypatch.setattr(_base, "fit_minimiser", recording)
    est = IRFILLogisticRegression(alpha=1e-2, eta_max_iter=6, random_state=0).fit(X, y)
    assert len(calls) == est.n_iter_ + 1 == 7
    assert calls[0][0] is None
    for prev, cur in zip(calls[:-1], calls[1:], strict=True):
        assert np.array_equal(cur[0], prev[1])  # starts from the previous minimiser
    # late iterations change the weights little, so warm starts need fewer Newton steps
    assert calls[-1][2] < calls[0][2]
    # the warm start does not change the minimiser: a cold fit with the same weights agrees
    cold, _ = original(X, y, loss=LOGISTIC, alpha=1e-2, fit_intercept=True,
                       sample_weight=est.sample_weight_)
    assert np.allclose(cold, calls[-1][1], rtol=1e-10, atol=1e-12)


def test_history_matches_direct_statistics():
    X, y = _data()
    est = IRFILLinearRegression(sigma=0.5, alpha=1e-2, eta_max_iter=4, store_eta=True,
                                random_state=0).fit(X, y)
    h = est.eta_history_
    assert set(h) == {"mean", "std", "max", "min", "cv", "eta"}
    assert all(h[k].shape == (5,) for k in ("mean", "std", "max", "min", "cv"))
    # entry 0 is the plain FIL model, entry t the fit with the weights after t updates
    plain = FILLinearRegression(sigma=0.5, alpha=1e-2, random_state=0).fit(X, y)
    assert np.allclose(h["eta"][0], plain.eta_, rtol=1e-12)
    for t in range(5):
        e = h["eta"][t]
        assert h["mean"][t] == pytest.approx(e.mean(), rel=1e-12)
        assert h["std"][t] == pytest.approx(e.std(), rel=1e-10)
        assert h["max"][t] == pytest.approx(e.max(), rel=1e-12)
        assert h["cv"][t] == pytest.approx(e.std() / e.mean(), rel=1e-10)
    # the weights follow the update rule omega <- n (omega / eta) / sum(omega / eta)
    omega = np.ones(len(y))
    for t in range(4):
        omega = len(y) * (omega / h["eta"][t]) / np.sum(omega / h["eta"][t])
    assert np.allclose(est.sample_weight_, omega, rtol=1e-10)


def test_release_drops_audit_state_keeps_weights():
    X, y = _data()
    est = IRFILLinearRegression(eta_max_iter=3, random_state=0).fit(X, y)
    loaded = pickle.loads(pickle.dumps(est))
    assert np.array_equal(loaded.coef_, est.coef_)
    with pytest.raises(AttributeError, match="never serialised"):
        _ = loaded.eta_
    blob = pickle.dumps(est)
    assert est._audit_engine().theta.tobytes() not in blob
    assert X[:3].tobytes() not in blob


@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
def test_bad_input(Est):
    X, y = _data(classification=True)
    with pytest.raises(ValueError, match="eta_max_iter"):
        Est(eta_max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        Est(sensitive_features=[0, X.shape[1] + 1]).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        Est(sensitive_features=[-1]).fit(X, y)
    with pytest.raises(TypeError, match="integer indices or column names"):
        Est(sensitive_features=[0.5]).fit(X, y)
    with pytest.raises(ValueError, match="constrained=True needs sensitive_features"):
        Est(constrained=True).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        Est().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="non-zero|all weights are zero"):
        Est().fit(X, y, sample_weight=np.zeros(len(y)))


@IRFIL_REWEIGHTING
def test_weight_concentration_warns_and_bounds_limit_it():
    """Equalising the race eta on Adult drives the weights of whole groups to zero and
    makes some people's whole-row eta grow by orders of magnitude, without a word; the
    fit now warns with the figures, and weight_bounds keeps every weight within the
    bounds (checked directly), the total unchanged and the growth small."""
    from sklearn_privacy.datasets import load_adult
    from sklearn_privacy.exceptions import PrivacyWarning

    a = load_adult()
    X, y = np.asarray(a.data, dtype=float), np.asarray(a.target)
    race = a.sensitive_features["race"]
    idx = np.random.default_rng(0).choice(len(X), 400, replace=False)
    X = X[idx] / np.linalg.norm(X[idx], axis=1).max()
    y = y[idx]
    kw = dict(sigma=1e-3, alpha=1e-3, sensitive_features=race, eta_max_iter=10, random_state=0)
    with pytest.warns(PrivacyWarning, match="whole-row eta grew"):
        free = IRFILLogisticRegression(**kw).fit(X, y)
    plain = FILLogisticRegression(sigma=1e-3, alpha=1e-3, random_state=0).fit(X, y)
    assert free.max_eta_ratio_ == pytest.approx(free.eta_.max() / plain.eta_.max(),
                                                rel=1e-6)
    assert free.max_eta_ratio_ > 10
    w = free.sample_weight_
    assert free.effective_sample_size_ == pytest.approx(w.sum() ** 2 / np.sum(w**2))
    assert free.max_weight_share_ == pytest.approx(w.max() / w.sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        bounded = IRFILLogisticRegression(weight_bounds=(0.1, 10), **kw).fit(X, y)
    # the bounds stop the concentration; the attribute-mode check still reports that
    # the race eta was not equalised within them
    assert not any("concentrates" in str(w.message) for w in caught)
    wb = bounded.sample_weight_
    assert wb.sum() == pytest.approx(400)
    assert wb.min() >= 0.1 * (1 - 1e-6) and wb.max() <= 10 * (1 + 1e-6)
    assert bounded.max_eta_ratio_ < 10 < free.max_eta_ratio_
    with pytest.raises(ValueError, match="weight_bounds"):
        IRFILLogisticRegression(weight_bounds=(2.0, 10.0)).fit(X, y)
    with pytest.raises(ValueError, match="weight_bounds"):
        IRFILLogisticRegression(weight_bounds=("a", 1)).fit(X, y)
