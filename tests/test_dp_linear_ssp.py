"""DPLinearRegression(method="ssp"): the sensitivities of the three statistics against
brute force over replace-one pairs, the exact composition of the Gaussian variant, the
noiseless limit against scikit-learn's Ridge, declared target intervals and the claim."""

import pickle

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from sklearn_privacy import privacy_claim
from sklearn_privacy.linear_model import DPLinearRegression
from sklearn_privacy.mechanisms import _sufficient_statistics as ssp
from sklearn_privacy.mechanisms._gaussian import analytic_gaussian_epsilon


def _sphere(rng, n, d, radius):
    X = rng.normal(size=(n, d))
    return radius * X / np.linalg.norm(X, axis=1, keepdims=True)


def _vec(G):
    return ssp._sym_to_vec(G)


def test_sensitivities_never_exceeded_over_replace_one_pairs_and_reached():
    """Random, adversarial (orthogonal rows of norm R, opposite extreme targets) and
    inside-the-ball replace-one pairs: the change of lambda_min(X^T X), of the Gram
    vector (Frobenius) and of X^T y never exceeds the stated sensitivity, and the
    adversarial pairs reach more than 99 % of each (so a bound cut by 1 % fails)."""
    rng = np.random.default_rng(0)
    R, B = 1.7, 2.5
    sens = ssp.ssp_sensitivities(R, B)
    worst = np.zeros(3)
    for trial in range(300):
        n, d = int(rng.integers(2, 8)), int(rng.integers(1, 5))
        X = _sphere(rng, n, d, R) * rng.uniform(0, 1, (n, 1)) ** (trial % 2)
        y = rng.uniform(-B, B, n)
        Xp, yp = X.copy(), y.copy()
        j = int(rng.integers(n))
        mode = trial % 3
        if mode == 0:  # orthogonal rows on the sphere, extreme opposite targets
            v = rng.normal(size=d)
            v -= (v @ X[j]) / max(X[j] @ X[j], 1e-300) * X[j]
            if d > 1 and np.linalg.norm(v) > 0:
                Xp[j] = R * v / np.linalg.norm(v)
            X[j] = R * X[j] / np.linalg.norm(X[j])
            y[j], yp[j] = B, -B
            if d == 1 or trial % 6 == 0:  # same row, opposite targets
                Xp[j] = X[j]
        else:
            Xp[j] = _sphere(rng, 1, d, R)[0] * rng.uniform(0, 1)
            yp[j] = rng.uniform(-B, B)
        a = ssp.sufficient_statistics(X, y)
        b = ssp.sufficient_statistics(Xp, yp)
        diff = np.array([abs(a[0] - b[0]), np.linalg.norm(_vec(a[1]) - _vec(b[1])),
                         np.linalg.norm(a[2] - b[2])])
        assert np.all(diff <= np.array(sens) * (1 + 1e-12)), (trial, diff, sens)
        worst = np.maximum(worst, diff / np.array(sens))
    # lambda_min: a single row of norm R against the zero row (n = 1, d = 1)
    lam = abs(ssp.sufficient_statistics(np.array([[R]]), np.zeros(1))[0]
              - ssp.sufficient_statistics(np.array([[0.0]]), np.zeros(1))[0])
    worst[0] = max(worst[0], lam / sens[0])
    assert np.all(worst > 0.99), worst


def test_gram_vector_is_an_isometry():
    """``||vec(G)|| = ||G||_F`` and the map inverts: the Gram noise's norm is its
    Frobenius norm, which the sensitivity bounds."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 5))
    G = A + A.T
    v = _vec(G)
    assert np.linalg.norm(v) == pytest.approx(np.linalg.norm(G))
    np.testing.assert_allclose(ssp._vec_to_sym(v, 5), G)


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (1.0, 1e-5), (4.0, 1e-3)])
def test_gaussian_shares_compose_to_the_requested_epsilon(epsilon, delta):
    """The three Gaussian mechanisms' ratios Delta_k / sigma_k compose (sum of squares)
    to one analytic Gaussian mechanism whose epsilon at delta is the requested one."""
    plan = ssp.ssp_plan(epsilon=epsilon, delta=delta, data_norm=1.3, target_bound=0.7,
                        n_params=4)
    pairs = zip(plan["sensitivities"], plan["scales"], strict=True)
    mu = np.sqrt(sum((s / t) ** 2 for s, t in pairs))
    assert analytic_gaussian_epsilon(delta=delta, sigma=1.0 / mu, sensitivity=1.0) == \
        pytest.approx(epsilon, rel=1e-6)


def test_pure_shares_add_up_to_epsilon():
    plan = ssp.ssp_plan(epsilon=0.8, delta=0.0, data_norm=1.3, target_bound=0.7,
                        n_params=4)
    spent = sum(s / t for s, t in zip(plan["sensitivities"], plan["scales"], strict=True))
    assert spent == pytest.approx(0.8)


def test_noiseless_limit_is_ridge():
    """At epsilon 1e12 with a fixed alpha the release is Ridge(alpha=n alpha) on the
    centred targets (the declared interval's midpoint moved into the intercept)."""
    rng = np.random.default_rng(2)
    n, d = 400, 3
    X = rng.uniform(-1, 1, (n, d))
    y = 5 + X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n)
    reg = DPLinearRegression(1e12, delta=1e-5, data_norm=3.0, alpha=1e-3,
                             target_bound=(0.0, 10.0), random_state=0).fit(X, y)
    Xa = np.hstack([X, np.ones((n, 1))])
    ref = Ridge(alpha=n * 1e-3, fit_intercept=False).fit(Xa, y - 5.0)
    np.testing.assert_allclose(reg.coef_, ref.coef_[:d], atol=1e-6)
    assert reg.intercept_ == pytest.approx(ref.coef_[d] + 5.0, abs=1e-6)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_claim_pickle_and_accuracy(delta):
    """The claim is the requested (epsilon, delta), the pickle holds no statistics, and
    at epsilon 2 on 5,000 rows the release explains most of the variance."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(5000, 2))
    y = np.clip(X @ [0.8, -0.5] + 0.1 * rng.normal(size=5000), -1, 1)
    reg = DPLinearRegression(2.0, delta=delta, data_norm=2.0, target_bound=1.0).fit(X, y)
    claim = privacy_claim(reg)
    assert (claim.epsilon, claim.delta) == (2.0, delta)
    assert "AdaSSP" in reg.epsilon_reason_
    assert reg.score(X, y) > 0.8
    state = pickle.loads(pickle.dumps(reg)).__dict__
    assert "_audit_data" not in state
    assert not hasattr(reg, "certified_distance_") and not hasattr(reg, "huber_threshold_")


def test_bad_target_bound():
    X, y = np.zeros((5, 2)), np.zeros(5)
    for bad in [(1.0, 0.0), (0.0, np.inf), (1.0, 2.0, 3.0)]:
        with pytest.raises(ValueError, match="target_bound"):
            DPLinearRegression(data_norm=1.0, target_bound=bad).fit(X, y)
    with pytest.raises(ValueError, match="target_bound is required"):
        DPLinearRegression(data_norm=1.0).fit(X, y)


def test_redraw_release_is_a_refit():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X @ [0.5, 0.2]
    reg = DPLinearRegression(1.0, data_norm=2.0, target_bound=1.0, random_state=5).fit(X, y)
    again = reg._redraw_release(7)
    refit = DPLinearRegression(1.0, data_norm=2.0, target_bound=1.0,
                               random_state=7).fit(X, y)
    np.testing.assert_array_equal(again.coef_, refit.coef_)
    assert again.intercept_ == refit.intercept_


# ------------------------------------------------------- the fast path of the solver
@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_fast_solver_path_is_certified_and_matches_plain_newton(loss, monkeypatch):
    """The path large problems take (float32 Hessian, stale Hessians, a start from a
    strided subsample), forced on small data: the returned centre meets the same
    float64 gradient threshold, and it is within the certified distance of the plain
    float64 Newton solution (an independent solve of the same objective)."""
    from scipy.optimize import minimize as sp_minimize

    from sklearn_privacy.mechanisms import _objective_perturbation as obj

    rng = np.random.default_rng(5)
    n, d = 3000, 6
    X = np.hstack([_sphere(rng, n, d, 1.0) * rng.uniform(0, 1, (n, 1)), np.ones((n, 1))])
    y = ((X[:, 0] + 0.3 * rng.normal(size=n)) > 0).astype(float) if loss == "logistic" \
        else np.clip(X[:, 0] + 0.1 * rng.normal(size=n), -1, 1)
    plan = obj.plan(loss=loss, epsilon=1.0, delta=0.0, alpha=1e-3, n=n, data_norm=1.5,
                    target_bound=1.0)
    b = obj.draw_objective_noise(rng, plan, (d + 1,))
    thr = obj.GRADIENT_RELATIVE * (plan["zeta"] + np.linalg.norm(b) / n)
    kw = dict(threshold=thr, huber_threshold=plan["huber_threshold"])
    monkeypatch.setattr(obj, "SINGLE_PRECISION_HESSIAN", 1)
    theta, gnorm, _ = obj.minimise(loss, X, y, plan["penalty"], b, n, **kw)
    assert gnorm <= thr
    g = obj.objective(loss, X, y, theta, plan["penalty"], b, n,
                      huber_threshold=plan["huber_threshold"], order=1)[1]
    assert np.linalg.norm(g) <= thr

    def f(t):
        v, gr, _ = obj.objective(loss, X, y, t, plan["penalty"], b, n,
                                 huber_threshold=plan["huber_threshold"], order=1)
        return v, gr

    ref = sp_minimize(f, np.zeros(d + 1), jac=True, method="BFGS",
                      options={"gtol": 1e-13, "maxiter": 5000}).x
    g_ref = np.linalg.norm(f(ref)[1])
    assert np.linalg.norm(theta - ref) <= (thr + g_ref) / plan["penalty"] * (1 + 1e-6)


def test_lose_to_constant_warning_reads_public_quantities_only():
    """The warning fires for 60 rows at epsilon 0.05 and not for 20,000 rows at epsilon
    1, for both mechanisms; its text shows plain numbers; and it is the same for two
    data sets of the same shape (a function of n, p, epsilon, delta and the bounds)."""
    import warnings

    from sklearn_privacy.exceptions import NoiseDominatesWarning

    rng = np.random.default_rng(6)
    for method in ("ssp", "objective"):
        X = rng.uniform(-1, 1, (60, 3))
        kw = dict(data_norm=2.0, target_bound=1.0, method=method)
        texts = []
        for y in (X[:, 0] / 2, -X[:, 1] / 2):
            with pytest.warns(NoiseDominatesWarning) as rec:
                DPLinearRegression(np.float64(0.05), **kw).fit(X, y)
            texts.append([str(w.message) for w in rec
                          if issubclass(w.category, NoiseDominatesWarning)])
        assert texts[0] == texts[1]
        assert "np.float64" not in texts[0][0] and "epsilon=0.05" in texts[0][0]
        Xl = rng.uniform(-1, 1, (20_000, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("error", NoiseDominatesWarning)
            DPLinearRegression(1.0, **kw).fit(Xl, Xl[:, 0] / 2)


def test_gaussian_release_states_its_gaussian_ratio_for_composition():
    """The Gaussian SSP release is one analytic Gaussian mechanism: its step claim
    carries that mechanism's ratio mu (so that privacy_claim composes it through
    privacy-loss distributions); the objective-perturbation release, whose Gaussian
    variant has a chi-square tail, carries none."""
    from sklearn_privacy.mechanisms._gaussian import analytic_gaussian_sigma

    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = X @ [0.5, 0.2]
    reg = DPLinearRegression(1.0, data_norm=2.0, target_bound=1.0).fit(X, y)
    claim = reg.__sklearn_privacy_claim__()
    mu = 1.0 / analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    assert claim.gaussian_mu == pytest.approx(mu)
    assert (claim.epsilon, claim.delta) == (1.0, 1e-5)
    pure = DPLinearRegression(1.0, delta=0.0, data_norm=2.0, target_bound=1.0).fit(X, y)
    assert pure.__sklearn_privacy_claim__().gaussian_mu is None
    obj_claim = DPLinearRegression(1.0, data_norm=2.0, target_bound=1.0,
                                   method="objective").fit(X, y).__sklearn_privacy_claim__()
    assert obj_claim.gaussian_mu is None
