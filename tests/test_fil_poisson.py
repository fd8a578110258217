"""FILPoissonRegressor: objective convention, etas against refits, errors, DP view.

Oracles: scikit-learn's own ``PoissonRegressor`` (same minimiser under the documented
penalty mapping), central finite differences of exact refits (the Jacobian of the
minimiser with respect to every coordinate of ``x_i`` and the count ``y_i``), and the
explicit dense Jacobians with an SVD.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _expected_warnings import IRFIL_REWEIGHTING
from _fil_dense_oracle import dense_eta, dense_jacobians
from sklearn.linear_model import PoissonRegressor

from sklearn_privacy import FILPoissonRegressor
from sklearn_privacy._glm._core import POISSON
from sklearn_privacy.fil import eta


def _counts(n=120, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = rng.poisson(np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1] + 0.5)).astype(float)
    return X, y


def _theta(est):
    return np.r_[est.coef_, est.intercept_] if est.fit_intercept else est.coef_.copy()


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_same_minimiser_as_sklearn_poisson_regressor(fit_intercept, weighted):
    """PoissonRegressor(alpha=a) == FILPoissonRegressor(alpha=a), also with weights."""
    X, y = _counts(n=200)
    sw = np.random.RandomState(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    ref = PoissonRegressor(alpha=0.05, fit_intercept=fit_intercept, solver="newton-cholesky",
                           tol=1e-14, max_iter=1000).fit(X, y, sample_weight=sw)
    fil = FILPoissonRegressor(sigma=1e-300, alpha=0.05, fit_intercept=fit_intercept,
                              random_state=0).fit(X, y, sample_weight=sw)
    exact = fil._audit_engine().theta
    ref_theta = np.r_[ref.coef_, ref.intercept_] if fit_intercept else ref.coef_
    np.testing.assert_allclose(exact, ref_theta, rtol=1e-8, atol=1e-10)


def _refit_theta(X, y, sw, alpha, fit_intercept):
    est = FILPoissonRegressor(sigma=1.0, alpha=alpha, fit_intercept=fit_intercept,
                              tol=1e-15, random_state=0)
    return est.fit(X, y, sample_weight=sw)._audit_engine().theta


@pytest.mark.parametrize("fit_intercept,weighted", [(True, False), (False, True)])
def test_etas_match_finite_differences_of_refits(fit_intercept, weighted):
    """J_i by central differences on every x_i coordinate and on y_i; eta to 1e-6."""
    X, y = _counts(n=60, d=3, seed=2)
    sw = np.random.RandomState(3).uniform(0.5, 2.0, size=y.size) if weighted else None
    alpha, sigma = 0.02, 0.7
    est = FILPoissonRegressor(sigma=sigma, alpha=alpha, fit_intercept=fit_intercept,
                              tol=1e-15, random_state=0).fit(X, y, sample_weight=sw)
    h = 1e-5
    for i in (0, 7, int(np.argmax(y))):
        cols = []
        for j in range(X.shape[1] + 1):
            Xp, Xm, yp, ym = X.copy(), X.copy(), y.copy(), y.copy()
            if j < X.shape[1]:
                Xp[i, j] += h
                Xm[i, j] -= h
            else:
                yp[i] += h
                ym[i] -= h
            cols.append((_refit_theta(Xp, yp, sw, alpha, fit_intercept)
                         - _refit_theta(Xm, ym, sw, alpha, fit_intercept)) / (2 * h))
        J_fd = np.column_stack(cols)
        eta_fd = np.linalg.norm(J_fd, 2) / sigma
        np.testing.assert_allclose(est.eta_[i], eta_fd, rtol=1e-6)
        # the label's column alone and one feature alone
        np.testing.assert_allclose(est.eta(rows=[i], columns="label"),
                                   np.linalg.norm(J_fd[:, -1]) / sigma, rtol=1e-6)
        np.testing.assert_allclose(est.eta(rows=[i], columns=[0]),
                                   np.linalg.norm(J_fd[:, 0]) / sigma, rtol=1e-6)


def test_etas_match_dense_svd_oracle_and_sparse_input():
    X, y = _counts(n=150, d=5, seed=4)
    X[np.abs(X) < 0.7] = 0.0
    est = FILPoissonRegressor(sigma=0.3, alpha=0.01, random_state=0).fit(X, y)
    theta = est._audit_engine().theta
    J = dense_jacobians(X, y, theta, loss=POISSON, alpha=0.01, fit_intercept=True)
    np.testing.assert_allclose(est.eta_, dense_eta(J, 0.3), rtol=1e-9)
    whole = np.linalg.norm(J.transpose(1, 0, 2).reshape(J.shape[1], -1), 2) / 0.3
    np.testing.assert_allclose(est.eta(), whole, rtol=1e-9)
    sparse = FILPoissonRegressor(sigma=0.3, alpha=0.01, random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.eta_, est.eta_, rtol=1e-9)
    fim = est.fisher_information(rows=[3], columns=[0, 1, "label"])
    np.testing.assert_allclose(np.sqrt(np.linalg.eigvalsh(fim).max()),
                               est.eta(rows=[3], columns=[0, 1, "label"]), rtol=1e-9)


def test_sigma_for_eta_and_no_dp_guarantee():
    X, y = _counts()
    est = FILPoissonRegressor(sigma=1.0, alpha=0.01, random_state=0).fit(X, y)
    s = est.sigma_for_eta(0.25)
    assert est.set_params(sigma=s).fit(X, y).eta_.max() == pytest.approx(0.25, rel=1e-9)
    assert est.epsilon_ == np.inf and est.sensitivity_ == np.inf
    assert "not" in est.epsilon_reason_ and "exp(z) - y" in est.epsilon_reason_
    with pytest.raises(ValueError, match="sigma_for_epsilon: no DP guarantee"):
        est.sigma_for_epsilon(1.0)


def test_release_noise_and_prediction():
    X, y = _counts()
    a = FILPoissonRegressor(sigma=0.1, alpha=0.01, random_state=3).fit(X, y)
    b = FILPoissonRegressor(sigma=0.1, alpha=0.01, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    theta = a._audit_engine().theta
    assert 0 < np.abs(_theta(a) - theta).max() < 1.0  # the release is perturbed
    np.testing.assert_allclose(a.predict(X), np.exp(X @ a.coef_ + a.intercept_))
    restored = pickle.loads(pickle.dumps(a))
    assert "_audit" not in restored.__dict__
    np.testing.assert_array_equal(restored.predict(X), a.predict(X))


def test_bad_targets_raise_clear_errors():
    X, y = _counts(n=30)
    with pytest.raises(ValueError, match="non-negative targets"):
        FILPoissonRegressor().fit(X, np.where(np.arange(30) == 4, -1.0, y))
    with pytest.raises(ValueError, match="every target with positive sample_weight is 0"):
        FILPoissonRegressor().fit(X, np.zeros(30))
    w = (y == 0).astype(float)  # only zero counts carry weight
    with pytest.raises(ValueError, match="positive count"):
        FILPoissonRegressor().fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="y"):
        FILPoissonRegressor().fit(X, np.r_[y[:-1], np.nan])


def test_unpenalised_without_a_minimiser_is_refused():
    """A column non-zero only on zero counts drives its coefficient to -inf."""
    X, y = _counts(n=60)
    y[:10] = 0.0
    X[:, 3] = 0.0
    X[:10, 3] = 1.0
    with pytest.raises(ValueError, match="Poisson minimiser does not exist|singular"):
        FILPoissonRegressor(alpha=0.0).fit(X, y)
    FILPoissonRegressor(alpha=1e-3).fit(X, y)  # a penalty makes it well posed


def test_pipeline_eta_with_column_names():
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.RandomState(0)
    df = pd.DataFrame({"age": rng.normal(50, 10, 200),
                       "region": rng.choice(["north", "south", "east"], 200)})
    y = rng.poisson(np.exp(0.02 * (df["age"] - 50) + (df["region"] == "south")))
    pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
                                                 (OneHotEncoder(), ["region"])),
                         FILPoissonRegressor(sigma=0.5, alpha=0.01, random_state=0))
    pipe.fit(df, y)
    region = eta(pipe, columns="region", per_example=True)
    np.testing.assert_allclose(region, pipe[-1].eta(columns=[1, 2, 3], per_example=True))
    assert np.all(region <= pipe[-1].eta_ * (1 + 1e-12))


def test_make_count_data_follows_its_documented_model():
    """A fit on many simulated rows recovers the documented log-mean coefficients."""
    from sklearn_privacy.datasets import make_count_data

    counts = make_count_data(40_000, random_state=0)
    data = counts.data
    age = data[:, 0].astype(float)
    female = (data[:, 1] == "female").astype(float)
    regions = ["south", "east", "west"]  # north is the reference level
    X = np.column_stack([age - 50, female] + [(data[:, 2] == r).astype(float) for r in regions]
                        + [data[:, 3].astype(float), data[:, 4].astype(float)])
    est = FILPoissonRegressor(sigma=1e-12, alpha=0.0, random_state=0).fit(X, counts.target)
    truth = [counts.coef["age"], counts.coef["sex=female"]] + [
        counts.coef[f"region={r}"] for r in regions] + [counts.coef["chronic"],
                                                        counts.coef["smoker"]]
    np.testing.assert_allclose(est.coef_, truth, atol=0.05)
    assert est.intercept_ == pytest.approx(counts.coef["intercept"], abs=0.05)
    # same seed, same table; overdispersion adds variance at the same mean
    again = make_count_data(40_000, random_state=0)
    np.testing.assert_array_equal(again.target, counts.target)
    wide = make_count_data(40_000, overdispersion=1.0, random_state=0).target
    assert wide.var() > 1.5 * counts.target.var()
    assert abs(wide.mean() - counts.target.mean()) < 0.1 * counts.target.mean()


@pytest.mark.parametrize("kwargs,match", [({"n_samples": 0}, "n_samples"),
                                          ({"n_samples": 2.5}, "n_samples"),
                                          ({"overdispersion": -1.0}, "overdispersion")])
def test_make_count_data_bad_arguments(kwargs, match):
    from sklearn_privacy.datasets import make_count_data

    with pytest.raises(ValueError, match=match):
        make_count_data(**kwargs)


def test_dask_input_is_refused_clearly():
    da = pytest.importorskip("dask.array")
    X, y = _counts(n=40)
    with pytest.raises(TypeError, match="does not take dask collections"):
        FILPoissonRegressor().fit(da.from_array(X, chunks=20), y)


@IRFIL_REWEIGHTING
def test_irfil_poisson_equalises_eta_and_matches_a_weighted_refit():
    """IRFIL on the Poisson loss: eta equalised; the release is the weighted FIL fit."""
    from sklearn_privacy import IRFILPoissonRegressor

    X, y = _counts(n=150, d=3, seed=5)
    plain = FILPoissonRegressor(sigma=1.0, alpha=0.02, random_state=0).fit(X, y)
    fair = IRFILPoissonRegressor(sigma=1.0, alpha=0.02, eta_max_iter=12, random_state=0).fit(X, y)
    cv = fair.eta_history_["cv"]
    assert cv[0] == pytest.approx(plain.eta_.std() / plain.eta_.mean(), rel=1e-9)
    assert cv[-1] < 1e-3 * cv[0]
    assert fair.sample_weight_.sum() == pytest.approx(150.0)
    # oracle: the plain estimator fitted with the final weights gives the same etas
    ref = FILPoissonRegressor(sigma=1.0, alpha=0.02, random_state=0).fit(
        X, y, sample_weight=fair.sample_weight_)
    np.testing.assert_allclose(fair.eta_, ref.eta_, rtol=1e-8)
    assert fair.epsilon_ == np.inf
    # an attribute (the label) equalised instead
    label = IRFILPoissonRegressor(sigma=1.0, alpha=0.02, eta_max_iter=12,
                                  sensitive_features="label",
                                  random_state=0).fit(X, y)
    e = label.eta(columns="label", per_example=True)
    assert e.std() / e.mean() < 1e-2
