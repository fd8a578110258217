"""Native multinomial FILLogisticRegression: fit, release, FIL and DP view.

Oracles: scikit-learn's multinomial LogisticRegression (the minimiser), central finite
differences of exact refits (the Jacobian), dense per-example Jacobians with an SVD (the
structured engine), the binary path (K = 2 after the parametrisation change) and
adversarial neighbouring refits (the sensitivity).
"""

import functools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privacy import FILLogisticRegression, IRFILLogisticRegression
from sklearn_privacy._glm._core import LOGISTIC, fit_minimiser
from sklearn_privacy._glm._multinomial import (
    fit_multinomial,
    helmert_basis,
    multinomial_minimiser,
    one_hot,
)
from sklearn_privacy.attacks import canary_audit, whitebox_inversion
from sklearn_privacy.exceptions import AuditStateUnavailableError
from sklearn_privacy.fil import eta
from sklearn_privacy.fil._eta._engine import FILEngine
from sklearn_privacy.fil._eta._multinomial import MultinomialFILEngine
from sklearn_privacy.utils import noise_generator

N, D, K = 200, 5, 3
ALPHA = 1e-2


def _data(n=N, d=D, k=K, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = rng.randint(k, size=n)
    X[:, :k] += 0.8 * np.eye(k)[y][:, : min(k, d)] if d >= k else 0.0
    return X, y


def _weights(n=N, seed=1):
    return np.random.RandomState(seed).uniform(0.3, 3.0, size=n)


def _engine(X, y, *, alpha=ALPHA, fit_intercept=True, sw=None, k=K):
    sw = np.ones(len(y)) if sw is None else sw
    theta, _, H = fit_multinomial(X, one_hot(y, k), alpha=alpha,
                                  fit_intercept=fit_intercept, sample_weight=sw)
    return MultinomialFILEngine(X, y, theta, n_classes=k, alpha=alpha,
                                fit_intercept=fit_intercept, sample_weight=sw, hessian=H)


# ------------------------------------------------------------------ the minimiser
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_sklearn_multinomial(fit_intercept, weighted):
    X, y = _data()
    sw = _weights() if weighted else None
    total = N if sw is None else sw.sum()
    ours = FILLogisticRegression(sigma=1e-300, alpha=ALPHA, fit_intercept=fit_intercept,
                                 random_state=0).fit(X, y, sample_weight=sw)
    ref = LogisticRegression(C=1.0 / (total * ALPHA), solver="newton-cholesky", tol=1e-12,
                             max_iter=1000, fit_intercept=fit_intercept).fit(
        X, y, sample_weight=sw)
    theta = ours._audit_engine().theta.reshape(K, -1)
    np.testing.assert_allclose(theta[:, :D], ref.coef_, atol=1e-8, rtol=0)
    if fit_intercept:
        np.testing.assert_allclose(theta[:, D], ref.intercept_, atol=1e-8, rtol=0)
        assert abs(theta[:, D].sum()) < 1e-12  # the symmetric intercepts
    assert ours.coef_.shape == (K, D) and ours.intercept_.shape == (K,)
    np.testing.assert_allclose(theta[:, :D].sum(axis=0), 0.0, atol=1e-12)


def test_polishing_from_an_inexact_solver():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rough = LogisticRegression(C=1.0 / (N * ALPHA), tol=1e-2, max_iter=5).fit(X, y)
    start = np.column_stack([rough.coef_, rough.intercept_ + 3.0]).ravel()  # any offset
    theta, moved = multinomial_minimiser(X, y, start, n_classes=K, alpha=ALPHA,
                                         fit_intercept=True)
    exact = FILLogisticRegression(alpha=ALPHA, random_state=0).fit(X, y)
    np.testing.assert_allclose(theta, exact._audit_engine().theta, atol=1e-10)
    sym = start.reshape(K, -1) - start.reshape(K, -1).mean(axis=0)
    assert moved == pytest.approx(np.linalg.norm(theta - sym.ravel()))
    assert moved > 1e-4  # the rough solver was not at the minimiser


def test_predictions_and_shapes():
    X, y = _data()
    labels = np.array(["cat", "dog", "eel"])[y]
    clf = FILLogisticRegression(sigma=1e-3, alpha=ALPHA, random_state=0).fit(X, labels)
    proba = clf.predict_proba(X)
    dec = clf.decision_function(X)
    assert dec.shape == (N, K) and proba.shape == (N, K)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(dec, X @ clf.coef_.T + clf.intercept_)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba)
    assert list(clf.classes_) == ["cat", "dog", "eel"]
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[dec.argmax(axis=1)])
    assert clf.score(X, labels) > 0.45  # chance: 1/3


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_noise_on_every_released_number(fit_intercept):
    X, y = _data()
    sigma = 0.7
    clf = FILLogisticRegression(sigma=sigma, alpha=ALPHA, fit_intercept=fit_intercept,
                                random_state=42).fit(X, y)
    theta = clf._audit_engine().theta
    q = D + int(fit_intercept)
    noise = noise_generator(42).standard_normal(K * q)
    np.testing.assert_array_equal(clf._released_theta(), theta + sigma * noise)
    if not fit_intercept:
        np.testing.assert_array_equal(clf.intercept_, np.zeros(K))


def test_binary_path_is_unchanged_bit_for_bit():
    """Two classes: the same exact minimiser, release and etas as the binary machinery."""
    rng = np.random.RandomState(3)
    X = rng.normal(size=(150, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(int)
    clf = FILLogisticRegression(sigma=0.5, alpha=ALPHA, random_state=5).fit(X, y)
    theta, _, hess = fit_minimiser(X, y.astype(float), loss=LOGISTIC, alpha=ALPHA,
                                   fit_intercept=True, sample_weight=np.ones(150),
                                   tol=1e-12, max_iter=100, return_hessian=True)
    engine = FILEngine(X, y.astype(float), theta, loss=LOGISTIC, alpha=ALPHA,
                       fit_intercept=True, sample_weight=np.ones(150), hessian=hess)
    noise = noise_generator(5).standard_normal(5)
    np.testing.assert_array_equal(clf.coef_, (theta + 0.5 * noise)[None, :4])
    np.testing.assert_array_equal(clf.intercept_, [(theta + 0.5 * noise)[4]])
    np.testing.assert_array_equal(clf.eta_, np.sqrt(engine.per_example_sq_norms()) / 0.5)
    assert clf.decision_function(X).shape == (150,)
    assert isinstance(clf._audit_engine(), FILEngine)


# ------------------------------------------------------------------ the Jacobian
def _fd_jacobian(X, y, i, *, fit_intercept, sw, eps=1e-5):
    """Central differences of exact refits on x_i and on the label's Helmert coords."""
    Y = one_hot(y, K)
    kw = dict(alpha=ALPHA, fit_intercept=fit_intercept, sample_weight=sw, tol=1e-15)
    theta0 = fit_multinomial(X, Y, **kw)[0]
    cols = []
    for j in range(D):
        Xp, Xm = X.copy(), X.copy()
        Xp[i, j] += eps
        Xm[i, j] -= eps
        cols.append(fit_multinomial(Xp, Y, theta_init=theta0, **kw)[0]
                    - fit_multinomial(Xm, Y, theta_init=theta0, **kw)[0])
    Q = helmert_basis(K)
    for c in range(K - 1):
        Yp, Ym = Y.copy(), Y.copy()
        Yp[i] += eps * Q[:, c]
        Ym[i] -= eps * Q[:, c]
        cols.append(fit_multinomial(X, Yp, theta_init=theta0, **kw)[0]
                    - fit_multinomial(X, Ym, theta_init=theta0, **kw)[0])
    return np.column_stack(cols) / (2 * eps)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_eta_equals_finite_difference_jacobian_of_refits(fit_intercept, weighted):
    X, y = _data()
    sw = _weights() if weighted else np.ones(N)
    sigma = 0.25
    clf = FILLogisticRegression(sigma=sigma, alpha=ALPHA, fit_intercept=fit_intercept,
                                random_state=0).fit(X, y, sample_weight=sw)
    engine = clf._audit_engine()
    for i in (0, 17, int(np.argmax(clf.eta_))):
        J = _fd_jacobian(X, y, i, fit_intercept=fit_intercept, sw=sw)
        dense = engine.jacobian_columns([i], np.arange(D + 1))[0]
        np.testing.assert_allclose(dense, J, rtol=0, atol=1e-6 * np.abs(J).max())
        assert clf.eta_[i] == pytest.approx(np.linalg.norm(J, 2) / sigma, rel=1e-6)
        # attribute-level: one feature, the label
        assert clf.eta(rows=[i], columns=[1], per_example=True)[0] == pytest.approx(
            np.linalg.norm(J[:, 1]) / sigma, rel=1e-6)
        assert clf.eta(rows=[i], columns="label", per_example=True)[0] == pytest.approx(
            np.linalg.norm(J[:, D:], 2) / sigma, rel=1e-6)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_structured_engine_equals_dense_oracle(fit_intercept):
    X, y = _data(n=120, d=6, k=4, seed=2)
    sw = _weights(120)
    eng = _engine(X, y, fit_intercept=fit_intercept, sw=sw, k=4)
    J = eng.jacobian_columns(np.arange(120), np.arange(7))
    dense = np.array([np.linalg.norm(j, 2) ** 2 for j in J])
    np.testing.assert_allclose(eng.per_example_sq_norms(), dense, rtol=1e-9)
    # feature subsets, the label, a constrained one-hot pair, chosen rows
    for cols in ([0, 3], [2], [6], [1, 6]):
        sel = eng._selector(np.array(cols), False)
        ref = np.array([np.linalg.norm(j @ sel, 2) ** 2 for j in J])
        np.testing.assert_allclose(eng.per_example_sq_norms(cols), ref, rtol=1e-9)
    Qc = helmert_basis(3)
    ref = np.array([np.linalg.norm(j[:, [0, 1, 2]] @ Qc, 2) ** 2 for j in J])
    np.testing.assert_allclose(eng.per_example_sq_norms([0, 1, 2], constrained=True), ref,
                               rtol=1e-10)
    np.testing.assert_allclose(eng.per_example_sq_norms(rows=[5, -1, 5]),
                               dense[[5, 119, 5]], rtol=1e-10)
    # a set: all columns of rows 3, 8, 9
    JS = np.hstack([J[i] for i in (3, 8, 9)])
    assert eng.group_sq_norm([3, 8, 9]) == pytest.approx(np.linalg.norm(JS, 2) ** 2,
                                                         rel=1e-10)
    F = eng.fim([3, 8], [0, 6], sigma=0.5)
    F_op = eng.fim([3, 8], [0, 6], sigma=0.5, dense=False)
    JS = np.hstack([J[i][:, [0, 6, 7, 8]] for i in (3, 8)])
    np.testing.assert_allclose(F, JS.T @ JS / 0.25, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(F_op @ np.eye(F.shape[0]), F, rtol=1e-10, atol=1e-14)


def test_two_classes_through_the_multinomial_path_equal_the_binary_path():
    """With K = 2 and the symmetric parametrisation Theta = [-u/2; u/2], the softmax
    objective at alpha is the binary objective of u at alpha / 2. The release of Theta at
    sigma carries u / sqrt(2) with noise sigma, so the feature columns of the Jacobian are
    the binary ones / sqrt(2); a unit change of the label's Helmert coordinate changes
    the 0/1 label by 1 / sqrt(2), so the label column is the binary one / 2."""
    rng = np.random.RandomState(4)
    X = rng.normal(size=(150, 4))
    y = (X[:, 0] - X[:, 2] + rng.normal(size=150) > 0).astype(int)
    sw = _weights(150)
    for fit_intercept in (True, False):
        multi = _engine(X, y, fit_intercept=fit_intercept, sw=sw, k=2)
        binary = clone(FILLogisticRegression(alpha=ALPHA / 2, fit_intercept=fit_intercept)
                       ).fit(X, y, sample_weight=sw)._audit_engine()
        Theta = multi.theta.reshape(2, -1)
        np.testing.assert_allclose(Theta[1] - Theta[0], binary.theta, atol=1e-10)
        feats = np.arange(4)
        np.testing.assert_allclose(multi.per_example_sq_norms(feats),
                                   binary.per_example_sq_norms(feats) / 2, rtol=1e-8)
        np.testing.assert_allclose(multi.per_example_sq_norms([4]),
                                   binary.per_example_sq_norms([4]) / 4, rtol=1e-8)
        Jm = multi.jacobian_columns(np.arange(150), np.arange(5))
        Jb = binary.jacobian_columns(np.arange(150), feats, True)
        Jb = Jb * np.r_[np.full(4, 1 / np.sqrt(2)), 0.5]
        np.testing.assert_allclose(np.linalg.norm(Jm, axis=(1, 2)),
                                   np.linalg.norm(Jb, axis=(1, 2)), rtol=1e-8)


# ------------------------------------------------------------------ the audit API
def test_audit_api_with_names_pipelines_and_pickles():
    rng = np.random.RandomState(0)
    df = pd.DataFrame({"age": rng.normal(40, 10, 240),
                       "colour": rng.choice(["red", "green", "blue"], 240),
                       "height": rng.normal(170, 8, 240)})
    y = np.where(df["age"] > 45, "old", np.where(df["colour"] == "red", "red", "other"))
    pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age", "height"]),
                                                 (OneHotEncoder(), ["colour"])),
                         FILLogisticRegression(sigma=0.1, alpha=ALPHA, random_state=0))
    pipe.fit(df, y)
    clf = pipe[-1]
    assert clf.coef_.shape == (3, 5)
    direct = clf.eta(columns=[2, 3, 4], per_example=True, constrained=True)
    np.testing.assert_allclose(eta(pipe, columns="colour", per_example=True,
                                   constrained=True), direct)
    assert np.all(clf.eta(columns="label", per_example=True) <= clf.eta_ * (1 + 1e-12))
    sigma = clf.sigma_for_eta(0.5)
    assert clone(clf).set_params(sigma=sigma).fit(pipe[0].transform(df), y).eta_.max() \
        == pytest.approx(0.5)
    fim = clf.fisher_information(rows=[0, 1], columns=[0, "label"])
    assert fim.shape == (2 * (1 + 2), 2 * (1 + 2))
    loaded = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(loaded.predict_proba(df), pipe.predict_proba(df))
    with pytest.raises(AuditStateUnavailableError):
        _ = loaded[-1].eta_


def test_errors_are_clear():
    X, y = _data()
    sw = np.ones(N)
    sw[y == 2] = 0.0
    with pytest.raises(ValueError, match="no positive sample_weight"):
        FILLogisticRegression().fit(X, y, sample_weight=sw)
    clf = FILLogisticRegression(alpha=ALPHA, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="already constrained"):
        clf.eta(columns=[0, "label"], constrained=True, per_example=True)
    Xb = X.copy()
    Xb[:, 0] = X[:, 0] > 0
    clf = FILLogisticRegression(alpha=ALPHA, random_state=0).fit(Xb, y)
    with pytest.raises(ValueError, match="method='refit'"):
        whitebox_inversion(clf, sensitive_features=[0], method="woodbury")
    with pytest.raises(ValueError, match="at least 2 classes"):
        FILLogisticRegression().fit(X, np.zeros(N))


def test_whitebox_inversion_multinomial_refits():
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=(120, 3)), rng.randint(0, 2, size=120)])
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(120, 3)), axis=1)
    clf = FILLogisticRegression(sigma=1e-4, alpha=ALPHA, random_state=0).fit(X, y)
    res = whitebox_inversion(clf, sensitive_features=[3], rows=np.arange(10), n_draws=3,
                             random_state=0)
    assert res.accuracy == 1.0  # tiny noise: the MAP attack recovers the binary attribute


def test_irfil_multiclass_equalises():
    X, y = _data()
    ir = IRFILLogisticRegression(sigma=0.1, alpha=ALPHA, eta_max_iter=4, random_state=0).fit(X, y)
    cv = ir.eta_history_["cv"]
    assert cv[-1] < 0.05 * cv[0]
    assert ir.coef_.shape == (K, D)
    assert ir.epsilon_ == np.inf


# ------------------------------------------------------------------ the DP view
R_NORM = 1.0


def _sphere_data(n=80, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.argmax(X[:, :K] + 0.3 * rng.normal(size=(n, K)), axis=1)
    return X, y


def test_dp_rules_and_sensitivity_value():
    X, y = _sphere_data()
    with_b = FILLogisticRegression(alpha=0.5, data_norm=R_NORM, random_state=0).fit(X, y)
    assert with_b.epsilon_ == np.inf and "intercept" in with_b.epsilon_reason_
    clf = FILLogisticRegression(alpha=0.5, data_norm=R_NORM, fit_intercept=False,
                                random_state=0).fit(X, y)
    assert clf.sensitivity_ == pytest.approx(2 * np.sqrt(2) * R_NORM / (80 * 0.5))
    assert "sqrt(2)" in clf.epsilon_reason_
    sigma = clf.sigma_for_epsilon(1.0)
    assert clone(clf).set_params(sigma=sigma).fit(X, y).epsilon_ == pytest.approx(1.0)


def _worst_neighbours(X, y, alpha, n_top=6):
    """Replacement rows (on the data_norm sphere, any label) that move the exact
    minimiser most, by a first-order search over every row, label and many directions;
    the top candidates are then refitted exactly."""
    eng = _engine(X, y, alpha=alpha, fit_intercept=False, sw=np.ones(len(y)))
    W = eng.Theta
    rng = np.random.RandomState(1)
    units = np.vstack([np.eye(X.shape[1]), -np.eye(X.shape[1]),
                       W / np.linalg.norm(W, axis=1, keepdims=True),
                       -W / np.linalg.norm(W, axis=1, keepdims=True), -X,
                       rng.normal(size=(200, X.shape[1]))])
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    cand = R_NORM * units
    Pc = np.exp(cand @ W.T)
    Pc /= Pc.sum(axis=1, keepdims=True)
    g_rows = np.einsum("ik,ij->ikj", eng.R, X).reshape(len(y), -1)
    out = []
    for label in range(K):
        g_c = np.einsum("ck,cj->ckj", Pc - np.eye(K)[label], cand).reshape(len(cand), -1)
        diff = g_c[:, None, :] - g_rows[None, :, :]
        moves = np.linalg.norm(diff.reshape(-1, g_c.shape[1]) @ eng.H_inv, axis=1)
        for flat in np.argsort(moves)[-n_top:]:
            out.append((int(flat % len(y)), cand[flat // len(y)], label))
    return eng.theta, out


def test_adversarial_neighbours_never_exceed_the_sensitivity():
    X, y = _sphere_data()
    alpha = 0.2
    clf = FILLogisticRegression(alpha=alpha, data_norm=R_NORM, fit_intercept=False,
                                random_state=0).fit(X, y)
    theta, pairs = _worst_neighbours(X, y, alpha)
    worst = 0.0
    for j, x_new, y_new in pairs:
        Xp, yp = X.copy(), y.copy()
        Xp[j], yp[j] = x_new, y_new
        theta_p = fit_multinomial(Xp, one_hot(yp, K), alpha=alpha, fit_intercept=False,
                                  sample_weight=np.ones(len(y)))[0]
        worst = max(worst, np.linalg.norm(theta_p - theta))
    assert worst <= clf.sensitivity_
    assert worst > 0.25 * clf.sensitivity_  # the search finds strong neighbours


class _TenfoldLessNoise(FILLogisticRegression):
    """A broken mechanism: releases with sigma / 10 but accounts for sigma."""

    def _release(self, theta):
        sigma = self.sigma
        self.sigma = sigma / 10.0
        try:
            super()._release(theta)
        finally:
            self.sigma = sigma
        self._sigma_fit = float(sigma)


def _projection(est, direction):
    return float(np.ravel(est.coef_) @ direction)


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_canary_audit_stays_below_the_claim(epsilon):
    X, y = _sphere_data()
    alpha = 0.2
    template = FILLogisticRegression(alpha=alpha, data_norm=R_NORM, fit_intercept=False,
                                     classes=np.unique(y))   # the public label set
    theta, pairs = _worst_neighbours(X, y, alpha, n_top=2)
    best = None
    for j, x_new, y_new in pairs:
        Xp, yp = X.copy(), y.copy()
        Xp[j], yp[j] = x_new, y_new
        shift = fit_multinomial(Xp, one_hot(yp, K), alpha=alpha, fit_intercept=False,
                                sample_weight=np.ones(len(y)))[0] - theta
        if best is None or np.linalg.norm(shift) > np.linalg.norm(best[3]):
            best = (j, x_new, y_new, shift)
    j, x_new, y_new, shift = best
    v = shift / np.linalg.norm(shift)
    sigma = clone(template).fit(X, y).sigma_for_epsilon(epsilon, 1e-5)
    stat = functools.partial(_projection, direction=v)
    kw = dict(attack=stat, n_releases=4000, delta=1e-5, known_fraction=0.1,
              refit=False, random_state=0)
    est = clone(template).set_params(sigma=sigma)
    res = canary_audit(est, X, y, j, x_new, y_new, **kw)
    assert res.claimed_epsilon == pytest.approx(epsilon)
    assert res.epsilon_lower_bound <= epsilon
    broken = _TenfoldLessNoise(**{**template.get_params(), "sigma": sigma})
    caught = canary_audit(broken, X, y, j, x_new, y_new, **kw)
    assert caught.epsilon_lower_bound > epsilon


# ------------------------------------------------------------------ one-vs-rest
def test_one_vs_rest_releases_add_their_fisher_information():
    from _fil_dense_oracle import dense_jacobians
    from sklearn.multiclass import OneVsRestClassifier

    from sklearn_privacy.fil import EtaDisplay, fisher_information

    X, y = _data(n=90)
    sigmas = [0.5, 1.0, 2.0]
    ovr = OneVsRestClassifier(FILLogisticRegression(alpha=ALPHA, random_state=0)).fit(X, y)
    for est, s in zip(ovr.estimators_, sigmas, strict=True):  # different noise per release
        est.set_params(sigma=s).fit(X, (y == est.classes_[1]).astype(int))
    Q = helmert_basis(K)
    stacked = []
    for k, (est, s) in enumerate(zip(ovr.estimators_, sigmas, strict=True)):
        eng = est._audit_engine()
        J = dense_jacobians(X, eng.y, eng.theta, loss=LOGISTIC, alpha=ALPHA,
                            fit_intercept=True)  # independent oracle: explicit inverse
        stacked.append(np.concatenate([J[:, :, :D], J[:, :, D:] * Q[k]], axis=2) / s)
    J = np.concatenate(stacked, axis=1)  # (n, 3 (d + 1), d + K - 1)
    ref = np.array([np.linalg.norm(j, 2) for j in J])
    np.testing.assert_allclose(eta(ovr, per_example=True), ref, rtol=1e-9)
    JS = np.hstack([J[i] for i in (2, 5, 7)])
    assert eta(ovr, rows=[2, 5, 7]) == pytest.approx(np.linalg.norm(JS, 2), rel=1e-9)
    F = fisher_information(ovr, rows=[2, 5], columns=[1, "label"])
    JS = np.hstack([J[i][:, [1, D, D + 1]] for i in (2, 5)])
    np.testing.assert_allclose(F, JS.T @ JS, rtol=1e-9, atol=1e-14)
    # bounds: the largest single release <= together <= root of the sum of squares
    single = np.array([e.eta(columns=np.arange(D), per_example=True)
                       for e in ovr.estimators_])
    both = eta(ovr, columns=np.arange(D), per_example=True)
    assert np.all(both >= single.max(axis=0) * (1 - 1e-12))
    assert np.all(both <= np.sqrt((single**2).sum(axis=0)) * (1 + 1e-12))
    with pytest.raises(TypeError, match="fits more than two classes natively"):
        EtaDisplay.from_estimator(ovr)


def test_one_vs_rest_of_two_classes_is_the_single_release():
    from sklearn.multiclass import OneVsRestClassifier

    X, y = _data(k=2)
    ovr = OneVsRestClassifier(FILLogisticRegression(sigma=0.3, alpha=ALPHA,
                                                    random_state=0)).fit(X, y)
    assert len(ovr.estimators_) == 1
    np.testing.assert_allclose(eta(ovr, per_example=True), ovr.estimators_[0].eta_,
                               rtol=1e-9)


def test_sparse_input_gives_the_dense_results():
    import scipy.sparse as sp

    X, y = _data()
    X[np.abs(X) < 0.7] = 0.0
    dense = FILLogisticRegression(sigma=0.2, alpha=ALPHA, random_state=0).fit(X, y)
    sparse = FILLogisticRegression(sigma=0.2, alpha=ALPHA, random_state=0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.eta_, dense.eta_, rtol=1e-9)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)),
                               dense.predict_proba(X), rtol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_membership_scores_and_ill_conditioning_warning():
    from sklearn_privacy.attacks import membership_scores
    from sklearn_privacy.exceptions import NumericalPrecisionWarning

    X, y = _data()
    clf = FILLogisticRegression(sigma=0.01, alpha=ALPHA, random_state=0).fit(X, y)
    p_true = membership_scores(clf, X, y, attack="confidence")
    np.testing.assert_allclose(p_true, clf.predict_proba(X)[np.arange(N), y])
    Xc = np.column_stack([X, X[:, 0] + 1e-7 * np.random.RandomState(0).normal(size=N)])
    with pytest.warns(NumericalPrecisionWarning, match="ill-conditioned"):
        FILLogisticRegression(alpha=1e-12, random_state=0).fit(Xc, y)


def test_certified_top_eigenvalues():
    from sklearn_privacy.fil._eta._multinomial import top_eigenvalues

    rng = np.random.RandomState(0)
    A = rng.normal(size=(300, 40, 40))
    G = A @ A.transpose(0, 2, 1)
    G[:50] = np.eye(40)  # a repeated top eigenvalue
    G[50:100, :, :] *= 1e-200  # tiny scale
    B = rng.normal(size=(100, 40, 2))  # rank 2, close top pair
    G[100:200] = B @ B.transpose(0, 2, 1)
    G[200:] += 1e3 * np.eye(40)  # clustered spectra: Lanczos cannot certify, falls back
    ref = np.linalg.eigvalsh(G)[:, -1]
    out = top_eigenvalues(G)
    assert np.all(out <= ref * (1 + 1e-14))  # a Rayleigh quotient: never above
    assert np.all(out >= ref * (1 - 1e-12))  # the certificates' margin (LANCZOS_RTOL)


def test_eta_display_by_class():
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.fil import EtaDisplay

    X, y = _data()
    labels = np.array(["cat", "dog", "eel"])[y]
    clf = FILLogisticRegression(sigma=0.1, alpha=ALPHA, random_state=0).fit(X, labels)
    disp = EtaDisplay.from_estimator(clf, by_class=True)
    texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert all(any(name in t for t in texts) for name in ("cat", "dog", "eel"))
