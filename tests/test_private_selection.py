"""Private selection over every DP estimator of the package and the DP constant models:
every run counts, no draw-dependent warning, fit parameters routed, and the Renyi curve
of Gaussian objective perturbation checked against the exact divergence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from scipy.special import expit, logsumexp
from sklearn.pipeline import Pipeline

from sklearn_privacy import FILLogisticRegression, RandomStoppingSearch, privacy_claim
from sklearn_privacy.dummy import DPDummyClassifier, DPDummyRegressor
from sklearn_privacy.exceptions import ConvergenceWarning, PrivacyWarning
from sklearn_privacy.linear_model import DPLinearRegression, DPLogisticRegression
from sklearn_privacy.mechanisms import _objective_perturbation as obj
from sklearn_privacy.model_selection import random_stopping_epsilon
from sklearn_privacy.utils import public_weights


def _unit_rows(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


# ------------------------------------------------------------ the Renyi curve (oracle)
def _release_log_density(theta, X, y, lam, s, n):
    """Exact log density of the 1-D objective-perturbation release (logistic loss, no
    intercept, Gaussian b of standard deviation s): nu(b(theta)) |db/dtheta|."""
    z = np.outer(theta, X)
    grad = (expit(z) - y) @ X + n * lam * theta          # n G_0'(theta)
    hess = (expit(z) * expit(-z)) @ (X * X) + n * lam    # n G_0''(theta)
    return -0.5 * (grad / s) ** 2 - np.log(s * np.sqrt(2 * np.pi)) + np.log(hess)


@pytest.mark.parametrize("order", [1.5, 20.0])
def test_gaussian_objective_rdp_bounds_the_exact_divergence(order):
    """The curve of ``gaussian_objective_rdp`` against the Renyi divergence of the exact
    release densities of D and D' (one saturated row flipped), by quadrature over the
    one-dimensional release, at the plan's own penalty and noise."""
    n, R, eps, delta = 12, 1.0, 1.0, 1e-5
    rng = np.random.default_rng(0)
    X = rng.uniform(-R, R, n)
    y = (X > 0).astype(float)
    Xp, yp = X.copy(), y.copy()
    X[0], y[0], Xp[0], yp[0] = R, 0.0, -R, 0.0
    plan = obj.plan(loss="logistic", epsilon=eps, delta=delta, alpha=0.05, n=n,
                    data_norm=R)
    lam, s = plan["penalty"], plan["noise_scale"]
    theta = np.linspace(-400, 400, 160_001)
    lp = _release_log_density(theta, X, y, lam, s, n)
    lq = _release_log_density(theta, Xp, yp, lam, s, n)
    h = theta[1] - theta[0]
    exact = max(
        (logsumexp(order * lp + (1 - order) * lq) + np.log(h)) / (order - 1),
        (logsumexp(order * lq + (1 - order) * lp) + np.log(h)) / (order - 1))
    bound = obj.gaussian_objective_rdp(np.array([order]), epsilon=eps, delta=delta, dim=2)[0]
    assert 0 < exact <= bound


def test_chi_moment_generating_bound_is_an_upper_bound():
    """Against scipy's quadrature of E[exp(t chi_k)] (independent of the grid sum)."""
    from scipy import integrate, stats

    for t, k in [(0.3, 2), (2.0, 2), (5.0, 4), (0.01, 6)]:
        ref = integrate.quad(lambda r, t=t, k=k: np.exp(t * r) * stats.chi.pdf(r, k), 0, 80,
                             points=[t + np.sqrt(k)], limit=200)[0]
        got = obj._log_chi_mgf(np.array([t]), k)[0]
        assert np.log(ref) <= got <= np.log(ref) + 0.02


# ------------------------------------------------------------ candidates
@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.NoiseDominatesWarning")
@pytest.mark.parametrize("estimator,grid,pure", [
    (DPLogisticRegression(delta=0.0, data_norm=1.5, classes=[0, 1]),
     {"epsilon": [0.5, 1.0]}, True),
    (DPLogisticRegression(delta=1e-6, data_norm=1.5, classes=[0, 1]),
     {"alpha": [0.01, 1.0]}, False),
    (DPDummyClassifier(epsilon=0.5, classes=[0, 1]), {"epsilon": [0.5]}, True),
])
def test_search_accepts_objective_perturbation_and_the_constant(estimator, grid, pure):
    """Fails on the old code: any DP linear-model candidate raised TypeError."""
    X, y = _unit_rows(300)
    search = RandomStoppingSearch(estimator, grid, mean_runs=3, score_epsilon=0.5).fit(X, y)
    eps_q = max(np.atleast_1d(grid.get("epsilon", [estimator.epsilon])))
    if pure:  # Liu & Talwar's 3 eps, or the Renyi bound where it is smaller
        assert search.epsilon_ <= 3 * max(eps_q, 0.5) + 1e-12
    else:
        assert search.delta_ == 1e-5
        # more than the candidate alone, less than a naive three-fold composition
        assert 1.0 < search.epsilon_ < 3 * 1.0 + 1.0
    assert privacy_claim(search).is_private


def test_search_over_a_model_and_the_constant_in_one_grid():
    """Selection among the candidates *and* the constant (a pipeline step swapped in);
    on labels that are pure noise with a 0.75 majority, the constant wins most searches."""
    rng = np.random.default_rng(1)
    n = 400
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.uniform(size=n) < 0.25).astype(int)
    pipe = Pipeline([("model", DPLogisticRegression(epsilon=0.2, delta=0.0,
                                                    data_norm=1.5, classes=[0, 1]))])
    grid = [{"model__alpha": [0.001]},
            {"model": [DPDummyClassifier(epsilon=0.2, classes=[0, 1])]}]
    wins = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(8):
            search = RandomStoppingSearch(pipe, grid, mean_runs=4, score_epsilon=1.0,
                                          random_state=seed).fit(X, y)
            wins += isinstance(search.best_estimator_[-1], DPDummyClassifier)
    assert wins >= 5
    assert search.epsilon_ <= 3 * 1.0 + 1e-12  # the score's budget dominates


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.NoiseDominatesWarning")
def test_search_over_private_boosting_and_the_constant():
    """Private boosting is a candidate (it was refused with TypeError): pure, it is
    accounted exactly as a pure candidate of the same epsilon (the constant's search
    states the same total); Gaussian, at its exact mu; and on pure-noise labels with a
    0.75 majority the constant, swapped in by the grid, wins most searches."""
    from sklearn_privacy.additive import DPBoostingClassifier
    from sklearn_privacy.mechanisms._gaussian import analytic_gaussian_sigma
    from sklearn_privacy.model_selection._candidates import _check_candidate

    rng = np.random.default_rng(2)
    n = 400
    X = rng.uniform(0, 1, size=(n, 3))
    y = (rng.uniform(size=n) < 0.25).astype(int)
    boost = DPBoostingClassifier(epsilon=0.5, delta=0.0, bounds=(0, 1), classes=[0, 1])
    search = RandomStoppingSearch(boost, {"max_bins": [4, 8]}, mean_runs=3,
                                  score_epsilon=0.5, random_state=0).fit(X, y)
    const = RandomStoppingSearch(DPDummyClassifier(epsilon=0.5, classes=[0, 1]),
                                 {"epsilon": [0.5]}, mean_runs=3, score_epsilon=0.5,
                                 random_state=0).fit(X, y)
    assert search.epsilon_ == const.epsilon_ and search.delta_ == const.delta_ == 0.0
    assert not privacy_claim(search).is_private          # seeded: not a release
    fresh = RandomStoppingSearch(boost, {"max_bins": [4, 8]}, mean_runs=3,
                                 score_epsilon=0.5).fit(X, y)
    claim = privacy_claim(fresh)
    assert claim.is_private and claim.epsilon == search.epsilon_
    gauss = boost.set_params(delta=1e-5)
    assert _check_candidate(gauss, n) == (1.0 / analytic_gaussian_sigma(0.5, 1e-5, 1.0),
                                          0.0, None)
    pipe = Pipeline([("model", DPBoostingClassifier(epsilon=0.2, delta=0.0, bounds=(0, 1),
                                                    classes=[0, 1]))])
    grid = [{"model__max_bins": [8]},
            {"model": [DPDummyClassifier(epsilon=0.2, classes=[0, 1])]}]
    wins = sum(isinstance(RandomStoppingSearch(pipe, grid, mean_runs=4, score_epsilon=1.0,
                                               random_state=seed).fit(X, y)
                          .best_estimator_[-1], DPDummyClassifier) for seed in range(8))
    assert wins >= 5


def _lying(cls):
    """A subclass whose fitted ``epsilon_`` is twice its parameter: a training that
    spends more than the search accounted for."""
    class Lying(cls):
        def fit(self, X, y):
            super().fit(X, y)
            self.epsilon_ = 2 * self.epsilon_
            return self
    Lying.__name__ = f"Lying{cls.__name__}"
    return Lying


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.NoiseDominatesWarning")
@pytest.mark.parametrize("make", [
    lambda cls: cls(epsilon=0.5, delta=0.0, bounds=(0, 1), classes=[0, 1]),
    lambda cls: cls(epsilon=0.5, delta=1e-5, bounds=(0, 1), classes=[0, 1]),
])
def test_search_refuses_a_boosting_candidate_that_spends_more_than_accounted(make):
    """Every fitted candidate is checked against the accounting before its score counts:
    the honest boosting candidate passes, one whose fitted epsilon_ is twice its
    parameter makes the search raise (the check reads parameters and the fitted claim,
    never the rows)."""
    from sklearn_privacy.additive import DPBoostingClassifier

    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    grid = {"max_bins": [4]}
    RandomStoppingSearch(make(DPBoostingClassifier), grid, mean_runs=2,
                         score_epsilon=0.5, random_state=0).fit(X, y)
    with pytest.raises(RuntimeError, match="not its parameters"):
        RandomStoppingSearch(make(_lying(DPBoostingClassifier)), grid, mean_runs=2,
                             score_epsilon=0.5, random_state=0).fit(X, y)


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.PrivacyWarning")
def test_starved_solver_publishes_on_both_neighbours():
    """A one-setting grid whose solver is starved (``max_iter=1``) publishes on D and on
    D' alike, with the same claim. Fails on the old code: uncertified runs were redrawn
    and the search raised after 100 of them, on data sets where certification failed."""
    X, y = _unit_rows(150)
    Xp, yp = X.copy(), y.copy()
    Xp[0], yp[0] = -X[0], 1 - y[0]
    for est in (FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                      alpha=0.01, max_iter=1, classes=[0, 1]),
                DPLogisticRegression(epsilon=1.0, data_norm=1.5, max_iter=1,
                                     classes=[0, 1])):
        claims = set()
        for data in ((X, y), (Xp, yp)):
            search = RandomStoppingSearch(est, {"max_iter": [1]}, mean_runs=2,
                                          random_state=3).fit(*data)
            assert np.isfinite(search.best_estimator_.epsilon_)
            claims.add((search.epsilon_, search.delta_, search.epsilon_reason_))
        assert len(claims) == 1


def test_no_warning_depends_on_the_draws():
    """The old code re-emitted the candidates' warnings, so which warnings appeared told
    which settings were drawn (here: a setting whose noise dominates warns, the other
    does not). Now the search emits none; they are kept in the audit state."""
    X, y = _unit_rows(200)
    est = DPLogisticRegression(delta=0.0, data_norm=1.5, classes=[0, 1])
    seen = set()
    for seed in range(6):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search = RandomStoppingSearch(est, {"epsilon": [0.01, 50.0]}, mean_runs=1,
                                          random_state=seed).fit(X, y)
        seen.add(tuple(sorted({(w.category.__name__, str(w.message)) for w in caught})))
        assert isinstance(search.audit_results_["warnings"], list)
    assert seen == {()}


def test_fit_params_are_routed_and_weights_must_be_public():
    """Fails on the old code: fit took no parameters (TypeError)."""
    X, y = _unit_rows(300)
    est = FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                alpha=0.1, classes=[0, 1])
    w = np.where(np.arange(300) % 2 == 0, 1.0, 2.0)
    with pytest.raises(ValueError, match="not declared public"):
        RandomStoppingSearch(est, {"alpha": [0.1]}, mean_runs=1).fit(X, y,
                                                                     sample_weight=w)
    search = RandomStoppingSearch(est, {"alpha": [0.1]}, mean_runs=1,
                                  random_state=0).fit(X, y, sample_weight=public_weights(w))
    best = search.best_estimator_
    assert np.isfinite(best.epsilon_)
    # the weighted sensitivity (largest weight's share of the training rows' total)
    unit = RandomStoppingSearch(est, {"alpha": [0.1]}, mean_runs=1,
                                random_state=0).fit(X, y).best_estimator_
    assert best.sensitivity_ > unit.sensitivity_
    with sklearn.config_context(enable_metadata_routing=True):
        routed = FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                       alpha=0.1, classes=[0, 1]).set_fit_request(
            sample_weight=True)
        search = RandomStoppingSearch(routed, {"alpha": [0.1]}, mean_runs=1,
                                      random_state=0).fit(X, y,
                                                          sample_weight=public_weights(w))
        assert search.best_estimator_.sensitivity_ == best.sensitivity_


def test_n_jobs_does_not_change_the_release_and_verbose_prints(capsys):
    X, y = _unit_rows(300)
    est = DPLogisticRegression(delta=0.0, epsilon=1.0, data_norm=1.5, classes=[0, 1])
    kw = dict(mean_runs=4, random_state=5)
    one = RandomStoppingSearch(est, {"alpha": [0.01, 0.1]}, **kw).fit(X, y)
    from joblib import parallel_config

    with parallel_config(backend="threading"):  # processes take seconds to start
        two = RandomStoppingSearch(est, {"alpha": [0.01, 0.1]}, n_jobs=2, verbose=1,
                                   **kw).fit(X, y)
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)
    assert one.best_params_ == two.best_params_ and one.best_score_ == two.best_score_
    out = capsys.readouterr().out
    assert out.count("[RandomStoppingSearch] run") == two.n_runs_


# ------------------------------------------------------------ the constant models
@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.PrivacyWarning")
def test_dummy_regressor_noise_has_the_stated_scale():
    """Laplace of scale 2 B / (n eps): its standard deviation sqrt(2) times that, over
    400 seeded releases (oracle: the Laplace law)."""
    n, B, eps = 50, 2.0, 1.0
    X, y = np.zeros((n, 1)), np.linspace(-1, 1, n)
    seeded = DPDummyRegressor(epsilon=eps, target_bound=B,
                              random_state=np.random.default_rng(2))
    vals = np.array([seeded.fit(X, y).constant_ for _ in range(400)])
    scale = 2 * B / (n * eps)
    assert np.std(vals) == pytest.approx(np.sqrt(2) * scale, rel=0.15)
    assert abs(np.mean(vals)) < 4 * scale / np.sqrt(400) * np.sqrt(2)
    assert DPDummyRegressor(target_bound=B).fit(X, y).noise_scale_ == scale
    with pytest.raises(ValueError, match="target_bound is required"):
        DPDummyRegressor().fit(X, y)


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.PrivacyWarning")
def test_dummy_regressor_takes_a_declared_range():
    """``target_bound=(low, high)``: targets clipped to it, Laplace of scale (high - low) /
    (n eps) (its standard deviation over 2000 seeded releases, far from the range's
    ends), the release inside the range; a number B is (-B, B); malformed ranges are
    refused naming the parameter."""
    n, eps = 40, 1.0
    X = np.zeros((n, 1))
    y = np.concatenate([np.full(n - 1, 185.0), [1e6]])      # one value above the range
    reg = DPDummyRegressor(epsilon=eps, target_bound=(25.0, 345.0),
                           random_state=np.random.default_rng(0))
    vals = np.array([reg.fit(X, y).constant_ for _ in range(2000)])
    scale = 320.0 / (n * eps)
    assert reg.noise_scale_ == scale
    assert np.std(vals) == pytest.approx(np.sqrt(2) * scale, rel=0.08)
    clipped_mean = (185.0 * (n - 1) + 345.0) / n           # the far value counts as 345
    assert abs(np.median(vals) - clipped_mean) < 0.1 * scale
    edge = DPDummyRegressor(epsilon=0.01, target_bound=(25.0, 345.0),
                            random_state=np.random.default_rng(1))
    spread = np.array([edge.fit(X, y).constant_ for _ in range(200)])
    assert spread.min() == 25.0 and spread.max() == 345.0  # clipped to the range
    assert "[25.0, 345.0]" in reg.epsilon_reason_
    assert (DPDummyRegressor(target_bound=2.0).fit(X, y).noise_scale_
            == DPDummyRegressor(target_bound=(-2.0, 2.0)).fit(X, y).noise_scale_)
    for bad in [(3.0, 1.0), (0.0, np.inf), (1.0, 2.0, 3.0), ("a", 1.0)]:
        with pytest.raises(ValueError, match="target_bound"):
            DPDummyRegressor(target_bound=bad).fit(X, y)


def test_dummy_classifier_claims_and_label_sets():
    X = np.zeros((100, 2))
    y = np.r_[np.zeros(70), np.ones(30)].astype(int)
    declared = DPDummyClassifier(epsilon=1.0, classes=[0, 1, 2]).fit(X, y)
    assert privacy_claim(declared).is_private
    assert declared.class_prior_.shape == (3,) and declared.predict(X[:2]).tolist() == [0, 0]
    undeclared = DPDummyClassifier(epsilon=1.0).fit(X, y)
    assert not privacy_claim(undeclared).is_private
    # a label outside the declared classes counts in no class (the fit does not fail)
    outside = DPDummyClassifier(classes=[0, 1]).fit(X, np.r_[y[:-1], 5])
    assert outside._labels_outside_classes == 1 and outside.class_prior_.shape == (2,)
    # the noisy counts: replace-one moves two counts by one, Laplace(2 / eps) each
    draws = np.array([DPDummyClassifier(epsilon=1.0, classes=[0, 1]).fit(X, y)
                      .class_prior_[0] for _ in range(300)])
    # delta method: d p0 / d count = (0.3, -0.7) / 100, each count's variance 2 (2)^2
    assert np.std(draws) == pytest.approx(np.sqrt(8 * (0.3**2 + 0.7**2)) / 100, rel=0.2)


def test_random_stopping_epsilon_unchanged_for_pure_candidates():
    assert random_stopping_epsilon(10, score_epsilon=0.1, pure_epsilon=0.5) == \
        pytest.approx(1.5)


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.NoiseDominatesWarning")
def test_dp_linear_regression_candidate():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.clip(X @ [0.8, -0.5] + 0.1 * rng.normal(size=300), -1, 1)
    search = RandomStoppingSearch(
        DPLinearRegression(delta=0.0, data_norm=2.0, target_bound=1.0),
        [{"alpha": [0.01, 0.1]}], mean_runs=2, random_state=0,
        scoring=lambda est, X, y: 1.0 - np.abs(est.predict(X) - y) / 2.0).fit(X, y)
    assert search.epsilon_ <= 3.0 + 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        assert isinstance(search.best_estimator_, DPLinearRegression)


@pytest.mark.filterwarnings("ignore::sklearn_privacy.exceptions.PrivacyWarning")
@pytest.mark.parametrize("labels", [2, 3])
def test_starved_fil_fit_is_certified_binary_and_multinomial(labels):
    """``max_iter=1`` gives the claim of the default settings and a centre within the
    certified distance of the fully converged one (same noise seed). Fails on the old
    code (``epsilon_ = inf``)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.digitize(X[:, 0], [-0.3, 0.3]) if labels == 3 else (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=1.0, fit_intercept=False, data_norm=1.0, alpha=0.01, random_state=0,
              classes=list(range(labels)))
    with pytest.warns(ConvergenceWarning, match="Newton's method did not"):
        starved = FILLogisticRegression(max_iter=1, **kw).fit(X, y)
    full = FILLogisticRegression(**kw).fit(X, y)
    assert starved.epsilon_ == full.epsilon_ == 1.0
    gap = np.linalg.norm(starved.coef_ - full.coef_)
    assert gap <= 2 * full.certified_distance_ + 1e-15
