"""Private hyperparameter selection: the accountant, the search object and an audit."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy import (
    FILLogisticRegression,
    IRFILLogisticRegression,
    PrivateMulticalibrator,
    RandomStoppingSearch,
)
from sklearn_privacy.attacks import epsilon_lower_bound
from sklearn_privacy.exceptions import AuditStateUnavailableError, PrivacyWarning
from sklearn_privacy.fil import analytic_gaussian_epsilon
from sklearn_privacy.model_selection import (
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    random_stopping_epsilon,
)
from sklearn_privacy.privacy import StepClaim


# ---------------------------------------------------------------------------- accountant
def _renyi_divergence(logp, logq, order, lo=-60.0, hi=60.0):
    """D_order(P || Q) of two densities on the line by quadrature (order 1: KL)."""
    if order == 1.0:
        f = lambda x: np.exp(logp(x)) * (logp(x) - logq(x))  # noqa: E731
        return integrate.quad(f, lo, hi, points=[0.0, 1.0], limit=400)[0]
    f = lambda x: np.exp(order * logp(x) + (1 - order) * logq(x))  # noqa: E731
    return np.log(integrate.quad(f, lo, hi, points=[0.0, 1.0], limit=400)[0]) / (order - 1)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("order", [1.0, 1.5, 2.0, 8.0])
def test_laplace_rdp_matches_quadrature(eps, order):
    """Mironov's closed form against the Renyi divergence of Lap(0, 1/eps), Lap(1, 1/eps)."""
    b = 1.0 / eps
    logp = lambda x: -np.abs(x) / b - np.log(2 * b)  # noqa: E731
    logq = lambda x: -np.abs(x - 1.0) / b - np.log(2 * b)  # noqa: E731
    expected = _renyi_divergence(logp, logq, order, lo=-40 * b, hi=40 * b)
    assert laplace_rdp([order], eps)[0] == pytest.approx(expected, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("order", [1.5, 4.0])
def test_gaussian_rdp_matches_quadrature(order):
    mu = 0.7
    logp = stats.norm(0, 1).logpdf
    logq = stats.norm(mu, 1).logpdf
    expected = _renyi_divergence(logp, logq, order, lo=-30, hi=30)
    assert gaussian_rdp([order], mu)[0] == pytest.approx(expected, rel=1e-7)


def test_pure_dp_rdp_is_the_minimum_of_both_bounds():
    assert pure_dp_rdp([1.5, 1e6], 0.2).tolist() == pytest.approx([1.5 * 0.02, 0.2])


@pytest.mark.parametrize("rdp", [gaussian_rdp, laplace_rdp, pure_dp_rdp])
def test_rdp_orders_are_checked_elementwise(rdp):
    """Every order of an array must be a real number >= 1; the infinite order is exact.

    Before, only a scalar order was range-checked: an order of -2 gave a negative
    divergence (-1.0 for ``gaussian_rdp([-2], 1)``), 0.5 gave 0.25, NaN gave NaN, and
    ``laplace_rdp([inf], 1)`` returned NaN with four RuntimeWarnings instead of its
    limit ``epsilon``.
    """
    for bad in ([-2.0], [2.0, 0.5], [np.nan]):
        with pytest.raises(ValueError, match="orders must be Renyi orders >= 1"):
            rdp(bad, 1.0)
    with pytest.raises(TypeError, match="orders must hold real numbers"):
        rdp(["2"], 1.0)
    # D_inf: the max-divergence (inf for the Gaussian, epsilon for Laplace and pure DP)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d_inf = rdp([np.inf], 0.5)[0]
        assert rdp([np.inf], 0.0)[0] == 0.0  # no privacy loss at any order
    assert d_inf == (np.inf if rdp is gaussian_rdp else 0.5)
    assert rdp([2.0, np.inf], 0.5)[0] == rdp([2.0], 0.5)[0]


def test_pure_candidates_give_three_epsilon():
    """Liu & Talwar: (eps, 0)-DP candidates -> (3 eps, 0)-DP selection, for any mean."""
    for mean_runs in (3, 10, 1e4):
        assert random_stopping_epsilon(mean_runs, score_epsilon=0.2,
                                       pure_epsilon=0.1) == pytest.approx(0.6)
    # few runs: the (eps, delta) bound from Renyi DP is smaller and is reported
    assert random_stopping_epsilon(1.5, score_epsilon=0.2, pure_epsilon=0.1) < 0.5
    # the logarithmic law (eta = 0): (2 eps, 0)
    for mean_runs in (3, 10, 1e4):
        assert random_stopping_epsilon(mean_runs, score_epsilon=0.2, pure_epsilon=0.1,
                                       distribution="logarithmic") == pytest.approx(0.4)
    assert random_stopping_epsilon(1, score_epsilon=0.2, pure_epsilon=0.5) == 0.5


def test_gaussian_selection_bound_is_above_the_single_gaussian_and_grows_with_runs():
    """One run with a Gaussian candidate cannot beat the exact analytic Gaussian epsilon
    (Balle & Wang), and more runs cost more; RDP tracks log(E[K]) rather than E[K]."""
    mu = 0.2
    exact = analytic_gaussian_epsilon(sigma=1 / mu, sensitivity=1.0, delta=1e-5)
    one = random_stopping_epsilon(1, score_epsilon=1e-9, gaussian_mu=mu)
    assert exact <= one <= exact * 1.15
    totals = [random_stopping_epsilon(m, score_epsilon=0.05, gaussian_mu=mu)
              for m in (2, 10, 100, 1000)]
    assert np.all(np.diff(totals) > 0)
    assert totals[-1] < 3 * totals[0]      # 500 times more runs, well under 3x the epsilon


def _runs_law(mean_runs, distribution, k_max=4000):
    """P[K = k] for k = 1..k_max, written out from the two laws' definitions."""
    from sklearn_privacy.model_selection._accounting import runs_gamma

    gamma = runs_gamma(mean_runs, distribution)
    k = np.arange(1, k_max + 1)
    if distribution == "geometric":
        return k, gamma * (1 - gamma) ** (k - 1)
    return k, (1 - gamma) ** k / (k * np.log(1 / gamma))


def test_runs_laws_have_the_requested_mean():
    for distribution in ("geometric", "logarithmic"):
        for m in (1.5, 5.0, 30.0):
            k, pk = _runs_law(m, distribution, k_max=100_000)
            assert pk.sum() == pytest.approx(1.0, abs=1e-9)
            assert (k * pk).sum() == pytest.approx(m, rel=1e-9)


def _tnb_output_law(q, mean_runs, k_max=4000, distribution="geometric"):
    """Exact law of the best of K runs (K from ``distribution`` with mean ``mean_runs``)
    of a candidate with output law ``q`` on ordered outcomes 0 < 1 < ... (a direct sum
    over K)."""
    k, pk = _runs_law(mean_runs, distribution, k_max)
    cdf = np.cumsum(q)
    prev = np.r_[0.0, cdf[:-1]]
    return (pk[:, None] * (cdf[None, :] ** k[:, None] - prev[None, :] ** k[:, None])).sum(0)


def test_accountant_bounds_exact_selection_of_a_discrete_candidate():
    """Independent oracle: a candidate with 3 ordered outcomes whose laws on D and D' have
    likelihood ratios up to e^eps (eps-DP). The exact law of the released best, summed
    over K, has privacy loss at most 3 eps (pure theorem) and Renyi divergences below
    Papernot & Steinke's bound; releasing K too would break the 3 eps bound."""
    eps = 0.5
    q = np.array([0.6, 0.3, 0.1])
    q2 = np.array([q[0] * np.exp(-eps), 0.0, q[2] * np.exp(eps)])
    q2[1] = 1.0 - q2.sum()                   # 0.471: ratio 1.57 < e^0.5 to the 0.3 of q
    ratio = np.log(q2 / q)
    assert np.max(np.abs(ratio)) <= eps + 1e-12
    m = 20.0
    a, a2 = _tnb_output_law(q, m), _tnb_output_law(q2, m)
    assert a.sum() == pytest.approx(1.0) and a2.sum() == pytest.approx(1.0)
    loss = np.max(np.abs(np.log(a2 / a)))
    assert 0.8 < loss <= 3 * eps                            # above eps, within 3 eps
    assert random_stopping_epsilon(m, score_epsilon=0.0, pure_epsilon=eps) == 3 * eps
    # Renyi divergence of the exact laws against the theorem's RDP at a few orders
    from sklearn_privacy.model_selection._accounting import _HAT_ORDERS

    rdp = pure_dp_rdp
    rho_hat = rdp(_HAT_ORDERS, eps)
    second = np.min(2 * (1 - 1 / _HAT_ORDERS) * rho_hat + 2 * np.log(m) / _HAT_ORDERS)
    for lam in (1.5, 3.0, 10.0):
        exact = np.log(np.sum(a2 ** lam * a ** (1 - lam))) / (lam - 1)
        bound = rdp([lam], eps)[0] + second + np.log(m) / (lam - 1)
        assert exact <= bound
    # the logarithmic law: within 2 eps
    a, a2 = (_tnb_output_law(q, m, distribution="logarithmic"),
             _tnb_output_law(q2, m, distribution="logarithmic"))
    assert a.sum() == pytest.approx(1.0) and a2.sum() == pytest.approx(1.0)
    assert 0.6 < np.max(np.abs(np.log(a2 / a))) <= 2 * eps
    assert random_stopping_epsilon(m, score_epsilon=0.0, pure_epsilon=eps,
                                   distribution="logarithmic") == 2 * eps
    # publishing K: given K = 60 the best-of-60 law is far from (3 eps)-DP
    cdf, cdf2 = np.cumsum(q), np.cumsum(q2)
    top, top2 = 1 - cdf[1] ** 60, 1 - cdf2[1] ** 60
    low, low2 = cdf[0] ** 60, cdf2[0] ** 60
    assert max(abs(np.log(top2 / top)), abs(np.log(low2 / low))) > 3 * eps


@pytest.mark.parametrize("kwargs, match", [
    ({"mean_runs": 0.5}, "mean_runs"),
    ({"mean_runs": np.inf}, "mean_runs"),
    ({"score_epsilon": -1.0}, "score_epsilon"),
    ({"gaussian_mu": np.nan}, "gaussian_mu"),
    ({"delta": 0.0}, "delta"),
    ({"distribution": "poisson"}, "distribution"),
])
def test_accountant_rejects_bad_input(kwargs, match):
    base = {"mean_runs": 5, "score_epsilon": 0.1}
    with pytest.raises(ValueError, match=match):
        random_stopping_epsilon(**{**base, **kwargs})


# ---------------------------------------------------------------------------- search
def _unit_rows(n=400, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _fil(**kw):
    return FILLogisticRegression(fit_intercept=False, data_norm=1.0, sigma=0.5, **kw)


def test_claim_is_the_accountants_total_for_the_least_private_setting():
    X, y = _unit_rows()
    grid = {"alpha": [0.01, 0.1], "sigma": [0.5, 2.0]}
    search = RandomStoppingSearch(_fil(), grid, mean_runs=4, score_epsilon=0.3,
                                  validation_fraction=0.25, random_state=0).fit(X, y)
    n_train = 300
    L = 1 / (1 + np.exp(-np.sqrt(2 * np.log(2) / 0.01)))   # logistic L at alpha 0.01, R 1
    mu = 2 * L / (n_train * 0.01) / 0.5                # smallest alpha, smallest sigma
    assert search.candidate_gaussian_mu_ == pytest.approx(mu)
    assert search.n_validation_ == 100
    expected = random_stopping_epsilon(4, score_epsilon=0.3, gaussian_mu=mu, delta=1e-5)
    assert search.epsilon_ == pytest.approx(expected, rel=1e-12)
    assert search.delta_ == 1e-5
    claim = search.__sklearn_privacy_claim__()
    assert isinstance(claim, StepClaim)
    assert (claim.kind, claim.epsilon, claim.delta) == ("dp", search.epsilon_, 1e-5)
    assert "Papernot & Steinke" in claim.reason and "secret" in claim.reason
    # the released winner was trained on the training part with its own guarantee
    assert search.best_params_ in [dict(alpha=a, sigma=s) for a in grid["alpha"]
                                   for s in grid["sigma"]]
    assert search.best_estimator_.epsilon_ < np.inf
    assert search.epsilon_ > search.best_estimator_.epsilon_


def test_claim_needs_a_fitted_search():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}).__sklearn_privacy_claim__()


def test_pure_candidates_report_delta_zero():
    X, y = _unit_rows(200)
    search = RandomStoppingSearch(_multicalibrator(X, y), {"clip_proba": [0.0, 0.1]},
                                  score_epsilon=0.2, mean_runs=3, random_state=0).fit(X, y)
    assert (search.epsilon_, search.delta_) == (pytest.approx(3 * 0.2), 0.0)
    assert search.candidate_epsilon_ == 0.05
    assert "Liu & Talwar" in search.epsilon_reason_


def _multicalibrator(X, y, epsilon=0.05):
    base = LogisticRegression().fit(X[::-1], y[::-1])   # stands for a model fitted elsewhere
    return PrivateMulticalibrator(FrozenEstimator(base), mechanism="numeric_sparse",
                                  epsilon=epsilon, n_bins=4)


def test_logarithmic_number_of_runs():
    """With distribution="logarithmic" K follows P[K = k] ~ (1 - gamma)^k / k (chi-square
    over 200 seeded fits) and the pure claim is 2 eps."""
    X, y = _unit_rows(20, d=2)
    mc = _multicalibrator(X, y)
    runs = np.array([RandomStoppingSearch(mc, {"calibration_tol": [0.1]},
                                          mean_runs=3, distribution="logarithmic",
                                          score_epsilon=0.05, random_state=s).fit(X, y)
                     for s in range(200)])
    assert runs[0].epsilon_ == pytest.approx(0.1) and runs[0].delta_ == 0.0
    assert "eta = 0" in runs[0].epsilon_reason_
    counts = np.array([r.n_runs_ for r in runs])
    k, pk = _runs_law(3.0, "logarithmic")
    edges = [1, 2, 3, 5, np.inf]
    bins = list(zip(edges[:-1], edges[1:], strict=True))
    observed = np.array([np.sum((counts >= lo) & (counts < hi)) for lo, hi in bins])
    probs = np.array([pk[(k >= lo) & (k < hi)].sum() for lo, hi in bins])
    assert stats.chisquare(observed, probs * counts.size).pvalue > 1e-3


def test_number_of_runs_is_geometric_and_data_independent():
    """K ~ Geometric(1 / mean_runs) on {1, 2, ...} (chi-square over 200 seeded fits), and
    with the same seed two neighbouring data sets get the same K and split."""
    X, y = _unit_rows(20, d=2)
    base = _fil(alpha=1.0)
    runs = np.array([RandomStoppingSearch(base, {"alpha": [1.0]}, mean_runs=3,
                                          random_state=s).fit(X, y).n_runs_
                     for s in range(200)])
    assert runs.min() >= 1
    edges = [1, 2, 3, 4, 6, np.inf]
    bins = list(zip(edges[:-1], edges[1:], strict=True))
    observed = np.array([np.sum((runs >= lo) & (runs < hi)) for lo, hi in bins])
    cdf = stats.geom(1 / 3).cdf
    probs = np.array([cdf(hi - 1) - cdf(lo - 1) for lo, hi in bins])
    assert stats.chisquare(observed, probs * runs.size).pvalue > 1e-3
    assert runs.mean() == pytest.approx(3, rel=0.15)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0], 1 - y[0]
    for seed in range(5):
        a = RandomStoppingSearch(base, {"alpha": [1.0]}, mean_runs=3, random_state=seed)
        b = RandomStoppingSearch(base, {"alpha": [1.0]}, mean_runs=3, random_state=seed)
        assert a.fit(X, y).n_runs_ == b.fit(X2, y2).n_runs_


def test_transcript_and_number_of_runs_stay_out_of_the_pickle():
    X, y = _unit_rows(200)
    search = RandomStoppingSearch(_fil(alpha=0.1), {"sigma": [0.5, 1.0]}, mean_runs=3,
                                  random_state=1).fit(X, y)
    assert len(search.audit_results_["scores"]) == search.n_runs_
    assert search.best_score_ == search.audit_results_["scores"].max()
    loaded = pickle.loads(pickle.dumps(search))
    assert "_audit" not in loaded.__dict__
    with pytest.raises(AuditStateUnavailableError, match="not covered"):
        _ = loaded.n_runs_
    with pytest.raises(AuditStateUnavailableError):
        _ = loaded.audit_results_
    np.testing.assert_array_equal(loaded.predict(X), search.predict(X))
    assert loaded.epsilon_ == search.epsilon_


def test_fresh_entropy_by_default_and_candidates_do_not_share_noise(monkeypatch):
    """random_state=None: numpy's global state is neither read nor advanced, two fits
    differ, and a candidate's own fixed random_state is overwritten (clones would
    otherwise draw identical noise)."""
    X, y = _unit_rows(200)
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    base = _fil(alpha=0.1, random_state=0)
    fits = [RandomStoppingSearch(base, {"sigma": [0.5]}, mean_runs=3).fit(X, y)
            for _ in range(2)]
    assert np.array_equal(np.random.get_state()[1], state)  # noqa: NPY002
    assert fits[0].best_estimator_.random_state is None
    assert not np.allclose(fits[0].best_estimator_.coef_, fits[1].best_estimator_.coef_)
    seeded = RandomStoppingSearch(base, {"sigma": [0.5]}, mean_runs=3, random_state=7).fit(X, y)
    coefs = {tuple(np.round(seeded.best_estimator_.coef_.ravel(), 12))}
    again = RandomStoppingSearch(base, {"sigma": [0.5]}, mean_runs=3, random_state=7).fit(X, y)
    assert tuple(np.round(again.best_estimator_.coef_.ravel(), 12)) in coefs


def test_raw_adult_frame_through_a_data_independent_pipeline():
    from sklearn_privacy.datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    X = adult.data[["age", "hours_per_week", "sex", "race"]].iloc[:1500]
    y = (adult.target.iloc[:1500] == ">50K").astype(int)
    cats = [sorted(X["sex"].cat.categories), sorted(X["race"].cat.categories)]
    pre = make_column_transformer(
        (OneHotEncoder(categories=cats, handle_unknown="ignore", sparse_output=False),
         ["sex", "race"]),
        (FunctionTransformer(lambda v: np.clip(np.asarray(v, float) / 100.0, 0, 1)),
         ["age", "hours_per_week"]))
    pipe = make_pipeline(pre, FunctionTransformer(lambda v: np.c_[v, np.ones(len(v))]),
                         _fil())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        # seeded: with sigma = 0.5 on 1,500 rows a fresh draw's accuracy varies widely
        search = RandomStoppingSearch(pipe, {"fillogisticregression__alpha": [0.01, 0.1]},
                                      mean_runs=3, score_epsilon=0.5, random_state=0).fit(X, y)
    assert np.isfinite(search.epsilon_)
    assert search.predict(X.iloc[:5]).shape == (5,)
    assert search.score(X, y) > 0.6
    with pytest.raises(ValueError, match="StandardScaler"):
        RandomStoppingSearch(make_pipeline(StandardScaler(), _fil()),
                             {"fillogisticregression__alpha": [0.1]},
                             mean_runs=2).fit(X[["age", "hours_per_week"]], y)
    auto = make_pipeline(make_column_transformer((OneHotEncoder(), ["sex"])), _fil())
    with pytest.raises(ValueError, match="categories"):
        RandomStoppingSearch(auto, {"fillogisticregression__alpha": [0.1]},
                             mean_runs=2).fit(X, y)


@pytest.mark.parametrize("estimator, grid, exc, match", [
    (_fil(), {"data_norm": [1.0, None]}, ValueError, r"setting \{'data_norm': None\}.*data_norm"),
    (FILLogisticRegression(data_norm=1.0), {"alpha": [0.1]}, ValueError, "intercept"),
    (IRFILLogisticRegression(fit_intercept=False, data_norm=1.0, sigma=1.0), {"alpha": [0.1]},
     ValueError, "recomputed from the data"),
    (LogisticRegression(), {"C": [1.0]}, TypeError, "can account only"),
    (PrivateMulticalibrator(LogisticRegression(), mechanism="numeric_sparse"),
     {"calibration_tol": [0.1]}, ValueError, "FrozenEstimator"),
    (PrivateMulticalibrator(FrozenEstimator(LogisticRegression())), {"calibration_tol": [0.1]},
     ValueError, "numeric_sparse"),
    (_fil(), {"sigma": [1.0, 0.0]}, ValueError, "sigma must be a number > 0"),
    (_fil(), [], ValueError, "param_grid is empty"),
    (_fil(), {"alpha": 0.1}, TypeError, "param_grid"),
])
def test_candidates_without_a_guarantee_are_refused(estimator, grid, exc, match):
    X, y = _unit_rows(100)
    with pytest.raises(exc, match=match):
        RandomStoppingSearch(estimator, grid, mean_runs=2).fit(X, y)


def test_bad_data_and_parameters_are_refused():
    X, y = _unit_rows(100)
    with pytest.raises(ValueError, match="100 rows but y has 99"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}).fit(X, y[:-1])
    with pytest.raises(ValueError, match="mean_runs"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}, mean_runs=0.5).fit(X, y)
    with pytest.raises(ValueError, match="score_epsilon"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}, score_epsilon=0).fit(X, y)
    y_nan = y.astype(float)
    y_nan[-1] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}, mean_runs=1).fit(X, y_nan)
    with pytest.raises(ValueError, match="at least 2 rows of X"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="one score per row"):
        RandomStoppingSearch(_fil(), {"alpha": [0.1]}, mean_runs=1,
                             scoring=lambda est, X, y: 1.0).fit(X, y)
    # a non-finite per-row score counts as 0 (a failure would be decided by one row)
    nan_score = RandomStoppingSearch(
        _fil(), {"alpha": [0.1]}, mean_runs=1, score_epsilon=1e6, random_state=0,
        scoring=lambda est, X, y: np.full(len(y), np.nan)).fit(X, y)
    assert abs(nan_score.best_score_) < 1e-3


def test_scores_are_clipped_row_by_row_before_the_noise():
    """A scoring function returning values outside [0, 1] cannot raise the sensitivity:
    with score noise negligible the released score equals the clipped mean."""
    X, y = _unit_rows(100)
    wild = lambda est, X, y: np.r_[np.full(len(y) - 1, 5.0), -3.0]  # noqa: E731
    search = RandomStoppingSearch(_fil(alpha=1.0), {"sigma": [0.5]}, mean_runs=1,
                                  score_epsilon=1e9, scoring=wild, random_state=0).fit(X, y)
    n_val = search.n_validation_
    assert search.best_score_ == pytest.approx((n_val - 1) / n_val, abs=1e-6)


# ---------------------------------------------------------------------------- audit
def _neighbouring_audit(make_search, n_trials, statistic):
    """Neighbouring data sets D, D' (one row's label flipped) and ``n_trials`` seeded
    selections on each (the seeds are the audit's, never published); Clopper-Pearson
    lower bound on epsilon from ``statistic(fitted_search)`` -- the issue's
    GridSearchCV(PrivateMulticalibrator) case. A frozen public tree predicts 1/2 on every
    row but one, where it predicts 1: that row's label decides which clip_proba scores
    better."""
    public_X = np.array([[0.0]] * 4 + [[1.0]] * 2)
    base = DecisionTreeClassifier().fit(public_X, [0, 1, 0, 1, 1, 1])  # p = 1/2 or 1
    n = 200
    X = np.zeros((n, 1))
    X[0, 0] = 1.0
    y = np.tile([0, 1], n // 2)
    y[0] = 1
    y2 = y.copy()
    y2[0] = 0
    mc = PrivateMulticalibrator(FrozenEstimator(base), mechanism="numeric_sparse",
                                epsilon=0.01, n_bins=2)
    grid = {"clip_proba": [0.0, 0.45]}
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for offset, yd in ((0, y), (n_trials, y2)):
            for trial in range(n_trials):
                fitted = make_search(mc, grid, offset + trial).fit(X, yd)
                values.append(statistic(fitted))
    members = np.r_[np.zeros(n_trials, bool), np.ones(n_trials, bool)]
    bound = epsilon_lower_bound(members=members, scores=np.array(values, float),
                                random_state=0)
    return bound.epsilon_lower_bound, fitted


def _proba_of_label(est, X, y):
    return est.predict_proba(X)[np.arange(len(y)), np.asarray(y)]


def _chosen_clip(fitted):
    return fitted.best_params_["clip_proba"]


def _released_score(fitted):
    return fitted.best_score_


def _private(score_epsilon, mean_runs):
    def make(mc, grid, seed):
        return RandomStoppingSearch(mc, grid, scoring=_proba_of_label, mean_runs=mean_runs,
                                    validation_fraction=0.9, score_epsilon=score_epsilon,
                                    random_state=seed)
    return make


def test_audit_refutes_grid_search_on_the_selected_hyperparameter():
    """GridSearchCV on the private rows picks clip_proba 0 on D and 0.45 on D' every time:
    the audit's lower bound exceeds the 0.01 the selected multicalibrator reports (20
    selections on each data set; 10 of each choose the test, 10 are counted)."""
    def grid_search(mc, grid, seed):
        return GridSearchCV(mc.set_params(random_state=seed), grid, cv=4,
                            scoring=lambda est, X, y: _proba_of_label(est, X, y).mean())

    lb, fitted = _neighbouring_audit(grid_search, 20, _chosen_clip)
    assert fitted.best_estimator_.epsilon_ == 0.01
    assert lb > 0.5                                  # 50 times the reported 0.01


def test_audit_of_private_selection_stays_within_its_claim():
    """The same audit on RandomStoppingSearch: on the selected hyperparameter and on the
    released score the lower bound stays at or under ``epsilon_`` (3 x 0.1).

    Mutation check: with the Laplace noise of the score replaced by 0 (claim unchanged),
    the bound on the released score was 1.30 > 0.3 and this test failed."""
    for statistic in (_chosen_clip, _released_score):
        lb, fitted = _neighbouring_audit(_private(0.1, 3), 40, statistic)
        assert fitted.epsilon_ == pytest.approx(0.3)
        assert lb <= fitted.epsilon_


def test_audit_has_power_on_a_weakly_private_selection():
    """The audit can fail: with a score budget of 50 (nearly noiseless scores) the released
    score separates D from D' and the bound exceeds what the model alone (0.01) or the
    previous test's total (0.3) would claim, while staying under the honest total
    epsilon_ = 150."""
    lb, fitted = _neighbouring_audit(_private(50.0, 2), 40, _released_score)
    assert 0.6 < lb <= fitted.epsilon_               # refutes a claim of 0.3


@pytest.mark.slow
def test_audit_has_power_on_the_selected_hyperparameter():
    """With many runs and a score budget of 50 the choice itself tells D from D'."""
    lb, fitted = _neighbouring_audit(_private(50.0, 12), 100, _chosen_clip)
    assert 1.0 < lb <= fitted.epsilon_
