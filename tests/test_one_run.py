"""One-run privacy audit (Steinke, Nasr & Jagielski 2023): bound, validity, power, inputs."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.attacks import (
    one_run_audit,
    one_run_audit_scores,
    one_run_epsilon_bound,
    one_run_p_value,
)
from sklearn_privacy.fil import analytic_gaussian_sigma


def _p_value_loop(m, r, v, eps, delta):
    """The paper's p-value written as a plain loop over i (an independent oracle)."""
    q = math.exp(eps) / (1 + math.exp(eps))
    beta = sum(math.comb(r, k) * q**k * (1 - q) ** (r - k) for k in range(v, r + 1))
    alpha, acc = 0.0, 0.0
    for i in range(1, v + 1):
        acc += math.comb(r, v - i) * q ** (v - i) * (1 - q) ** (r - v + i)
        alpha = max(alpha, acc / i)
    return min(beta + 2 * m * delta * alpha, 1.0)


@pytest.mark.parametrize("r,v,eps,delta", [(40, 30, 0.5, 0.0), (40, 30, 0.5, 1e-3),
                                           (60, 55, 2.0, 1e-4), (25, 0, 1.0, 1e-2)])
def test_p_value_matches_the_loop(r, v, eps, delta):
    got = one_run_p_value(r, v, eps, delta=delta, n_canaries=100)
    assert got == pytest.approx(_p_value_loop(100, r, v, eps, delta), rel=1e-10, abs=1e-15)


def test_p_value_at_zero_epsilon_is_a_fair_coin():
    assert one_run_p_value(100, 60, 0.0) == pytest.approx(binom.sf(59, 100, 0.5), rel=1e-12)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_bound_is_the_root_of_the_p_value(delta):
    r, v, m, conf = 500, 420, 1000, 0.95
    eps = one_run_epsilon_bound(r, v, n_canaries=m, delta=delta, confidence=conf)
    assert eps > 0
    p = lambda e: one_run_p_value(r, v, e, delta=delta, n_canaries=m)  # noqa: E731
    assert p(eps - 1e-6) < 1 - conf <= p(eps + 1e-6)
    # a Bonferroni correction over more tests can only lower the bound
    assert one_run_epsilon_bound(r, v, n_canaries=m, delta=delta, n_tests=10) < eps


def _randomised_response(m, eps, rng):
    members = rng.random(m) < 0.5
    keep = rng.random(m) < math.exp(eps) / (1 + math.exp(eps))
    return members, np.where(keep, members, ~members).astype(float)


def test_bound_exceeds_the_true_epsilon_at_most_at_the_stated_rate():
    # randomised response on each canary's bit is exactly eps-DP; the 95 % bound may exceed
    # eps in at most 5 % of runs (binomial tolerance: 3 standard deviations)
    eps, runs = 1.0, 300
    rng = np.random.default_rng(0)
    above = 0
    for _ in range(runs):
        members, out = _randomised_response(400, eps, rng)
        res = one_run_audit_scores(members, out, k_plus=200, k_minus=200, random_state=rng)
        above += res.epsilon_lower_bound > eps
    assert above <= runs * 0.05 + 3 * math.sqrt(runs * 0.05 * 0.95)


def test_grid_search_is_paid_for():
    # choosing the guess counts after seeing the scores is Bonferroni-corrected: scores
    # that carry no information give a positive 95 % bound in at most 5 % of runs
    rng = np.random.default_rng(1)
    runs = []
    for _ in range(60):
        scores = rng.standard_normal(2000)    # drawn first: the order of the earlier runs
        runs.append(one_run_audit_scores(rng.random(2000) < 0.5, scores, random_state=rng))
    assert runs[0].n_tests > 1
    positive = sum(r.epsilon_lower_bound > 0 for r in runs)
    assert positive <= 60 * 0.05 + 3 * math.sqrt(60 * 0.05 * 0.95)


def test_randomised_response_with_many_canaries_reaches_half_of_epsilon():
    rng = np.random.default_rng(2)
    members, out = _randomised_response(10_000, 4.0, rng)
    res = one_run_audit_scores(members, out, random_state=0)
    assert 2.0 <= res.epsilon_lower_bound <= 4.0


@pytest.mark.parametrize("eps", [2.0, 4.0])
def test_gaussian_mechanism_bound_stays_under_its_epsilon(eps):
    delta, m = 1e-6, 10_000
    sigma = analytic_gaussian_sigma(eps, delta, 1.0)
    rng = np.random.default_rng(3)
    bounds = []
    for _ in range(4):
        members = rng.random(m) < 0.5
        res = one_run_audit_scores(members, members + sigma * rng.standard_normal(m),
                                   delta=delta,
                                   random_state=rng)
        bounds.append(res.epsilon_lower_bound)
    assert max(bounds) <= eps
    assert min(bounds) >= 0.3 * eps     # about 0.4-0.5 of eps (the one-run gap)


def _adult(n=2000):
    from sklearn_privacy.datasets import load_adult

    d = load_adult()
    return d.data[:n], d.target[:n]


def test_overfit_random_forest_shows_a_clearly_positive_bound():
    X, y = _adult()
    res = one_run_audit(RandomForestClassifier(n_estimators=30, random_state=0), X, y,
                        n_canaries=400, random_state=0)
    assert res.epsilon_lower_bound > 2.0
    assert res.n_correct >= 0.95 * res.n_guesses
    assert not np.isfinite(res.claimed_epsilon) and not res.violates_claim
    assert "not refuted" not in res.statement      # nothing was claimed
    assert res.members.sum() + (~res.members).sum() == 400


def _dp_fil(X, sigma, cls=FILLogisticRegression, **kw):
    if issubclass(cls, FILLogisticRegression):
        kw.setdefault("classes", [0, 1])         # the public label set
    return cls(fit_intercept=False, data_norm=1.0, alpha=0.01, sigma=sigma, **kw)


def test_fil_release_at_its_claim_is_not_refuted_and_a_lie_is():
    X, y = _adult()
    X = X / np.max(np.linalg.norm(X, axis=1))
    sigma = _dp_fil(X, 1.0).fit(X, y).sigma_for_epsilon(1.0)
    for seed in range(3):
        res = one_run_audit(_dp_fil(X, sigma), X, y, canaries="fil_worst", attack="whitebox",
                            random_state=seed)
        assert res.n_canaries == X.shape[1]          # one canary per feature
        assert np.isfinite(res.claimed_epsilon) and res.claimed_epsilon <= 1.0
        assert res.delta == res.claimed_delta > 0
        assert res.epsilon_lower_bound <= res.claimed_epsilon and not res.violates_claim

    class Liar(FILLogisticRegression):
        """Reports epsilon = 1 while adding a hundredth of the noise it needs."""

        def fit(self, X, y, sample_weight=None):
            super().fit(X, y, sample_weight)
            self.epsilon_ = 1.0
            return self

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = one_run_audit(Liar(fit_intercept=False, data_norm=1.0, alpha=0.01,
                                 sigma=sigma / 100, classes=[0, 1]), X, y,
                            canaries="fil_worst",
                            attack="whitebox", delta=1e-5, random_state=0)
    assert res.violates_claim and res.epsilon_lower_bound > 1.5
    assert "refuted" in res.statement and "not refuted" not in res.statement


def test_fil_least_squares_whitebox_runs_and_respects_its_claim():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 8))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ rng.normal(size=8), -1, 1)
    est = FILLinearRegression(fit_intercept=False, data_norm=1.0, target_bound=1.0,
                              alpha=0.05, sigma=0.05)
    res = one_run_audit(est, X, y, canaries="fil_worst", attack="whitebox", random_state=0)
    assert res.n_canaries == 8 and np.isfinite(res.claimed_epsilon)
    assert res.epsilon_lower_bound <= res.claimed_epsilon


def test_reference_calibration_and_parallel_backends_agree(capsys):
    X, y = _adult(800)
    kw = dict(n_canaries=100, n_reference_models=2, random_state=5)
    est = LogisticRegression(max_iter=500)
    a = one_run_audit(est, X, y, n_jobs=1, **kw)
    assert capsys.readouterr().out == ""
    b = one_run_audit(est, X, y, n_jobs=2, verbose=1, **kw)
    out = capsys.readouterr().out
    assert "[one_run_audit] done 1 of 2 reference models fitted" in out
    assert "[one_run_audit] done 2 of 2 reference models fitted" in out
    # the same seeds in any backend; worker processes may round the last bit differently
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(a.members, b.members)
    assert a.epsilon_lower_bound == pytest.approx(b.epsilon_lower_bound, abs=1e-9)
    assert "calibrated by 2 reference models" in a.attack


def test_raw_frame_pipeline_with_given_canaries():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_privacy.datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    X = adult.data[["age", "hours_per_week", "race", "sex"]].iloc[:1500]
    y = (adult.target.iloc[:1500] == ">50K").to_numpy()
    pipe = make_pipeline(
        make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["race", "sex"]),
                                remainder=StandardScaler()),
        LogisticRegression(max_iter=500))
    Xc = adult.data[["age", "hours_per_week", "race", "sex"]].iloc[2000:2100]
    yc = ~(adult.target.iloc[2000:2100] == ">50K").to_numpy()      # mislabelled on purpose
    res = one_run_audit(pipe, X, y, canaries="given", X_canaries=Xc, y_canaries=yc,
                        random_state=0)
    assert isinstance(Xc, pd.DataFrame) and res.n_canaries == 100
    assert 0.0 <= res.epsilon_lower_bound < 2.0       # a linear model barely memorises
    # mislabelled copies of the frame's own rows work on frames too
    res2 = one_run_audit(pipe, X, y, n_canaries=200, random_state=0)
    assert res2.n_canaries == 200


@pytest.mark.parametrize("kwargs,match", [
    ({"canaries": "nope"}, "'canaries' parameter of one_run_audit must be a str among"),
    ({"attack": "nope"}, "'attack' parameter of one_run_audit must be a str among"),
    ({"n_canaries": 0}, "'n_canaries' parameter of one_run_audit must be an int in the range"),
    ({"n_reference_models": -1}, "'n_reference_models' parameter of one_run_audit"),
    ({"canaries": "given"}, "needs X_canaries and y_canaries"),
    ({"attack": "whitebox"}, "needs a FIL estimator"),
    ({"k_plus": 0, "k_minus": 0}, "makes no guess"),
    ({"k_plus": 90, "k_minus": 20, "n_canaries": 100}, "exceeds the 100 canaries"),
    ({"confidence": 1.5}, "'confidence' parameter of one_run_audit"),
    ({"delta": 1.0}, "'delta' parameter of one_run_audit"),
    ({"k_plus": -1}, "'k_plus' parameter of one_run_audit"),
])
def test_bad_input_is_refused_clearly(kwargs, match):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=match):
        one_run_audit(LogisticRegression(), X, y, random_state=0, **kwargs)


def test_bad_counts_and_scores_are_refused():
    with pytest.raises(ValueError, match="cannot exceed"):
        one_run_p_value(10, 11, 1.0)
    with pytest.raises(ValueError, match="n_canaries is required"):
        one_run_p_value(10, 5, 1.0, delta=1e-5)
    with pytest.raises(ValueError, match="members must be 1-D with one entry per entry of scores"):
        one_run_audit_scores(np.zeros(4, dtype=bool), np.zeros(5))
    with pytest.raises(ValueError, match="NaN|finite"):
        one_run_audit_scores(np.array([True, False]), np.r_[np.nan, 0.0])


def test_more_guesses_than_canaries_is_refused():
    """At most one guess per canary: ``n_guesses > n_canaries`` is a mistake in the counts.

    Before, it was accepted, and with ``delta > 0`` the ``2 * n_canaries * delta`` term
    was computed with the smaller count, so the lower bound came out larger than the
    counts justify (4.06 for 1,000 guesses said to come from 10 canaries, 3.22 with the
    1,000 canaries they need).
    """
    assert one_run_epsilon_bound(1000, 990, n_canaries=1000, delta=1e-3) == pytest.approx(
        3.215, abs=1e-3)
    for fn, args in ((one_run_epsilon_bound, (1000, 990)),
                     (one_run_p_value, (1000, 990, 1.0))):
        with pytest.raises(ValueError, match=r"n_guesses \(1000\) cannot exceed n_canaries"):
            fn(*args, n_canaries=10, delta=1e-3)
        with pytest.raises(ValueError, match="n_canaries"):
            fn(*args, n_canaries=10)


def test_docstring_describes_the_guess_grid_it_uses():
    """The docstring listed a grid (1 %, 3 %, 10 %, 30 %, 100 %) the audit did not use;
    it now lists every fraction of the grid, and the grid's size is the Bonferroni
    count of the result."""
    import re

    from sklearn_privacy.attacks import _one_run, one_run_audit_scores

    doc = _one_run.one_run_audit_scores.__doc__
    listed = [float(v) / 100 for v in re.findall(r"(\d+(?:\.\d+)?) %",
                                                 doc.split("grid")[1].split("--")[1])]
    assert listed == list(_one_run._FRACTIONS)
    res = one_run_audit_scores(np.arange(1000) % 2 == 0, np.arange(1000.0), random_state=0)
    assert res.n_tests == len(_one_run._candidates(1000, None, None)) == 17
    assert "add/remove" in _one_run.one_run_audit.__doc__
    assert "replace-one" in _one_run.one_run_audit.__doc__


def test_given_canaries_with_other_columns_are_named():
    """Before: numpy's "all the input array dimensions except for the concatenation axis
    must match exactly" when the canaries were stacked under X."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="X_canaries has 3 columns but X has 4"):
        one_run_audit(LogisticRegression(), X, y, canaries="given", X_canaries=X[:20, :3],
                      y_canaries=y[:20], random_state=0)


def test_per_row_fit_params_are_refused_by_name():
    """The audit trains on X plus canaries, so a weight per row of X has no canary entries.

    Before: "sample_weight.shape == (200,), expected (224,)!" from scikit-learn.
    """
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"fit_params\['sample_weight'\] has one entry per "
                                         "row of X"):
        one_run_audit(LogisticRegression(), X, y, n_canaries=50, random_state=0,
                      fit_params={"sample_weight": np.ones(200)})


def test_unseeded_estimator_is_fitted_from_the_audits_random_state():
    """An estimator with ``random_state=None`` gets its seed from the audit's randomness.

    Before, ``clone(estimator)`` was fitted as is: the forest drew from numpy's global
    state (which the audit then advanced), so ``random_state=0`` did not reproduce the
    audit (bounds 1.72 and 1.79 on two identical calls). An explicit seed of the estimator
    is kept.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)

    def run(estimator):
        return one_run_audit(estimator, X, y, n_canaries=100, random_state=0)

    np.random.seed(0)  # noqa: NPY002 (the global state is the subject)
    before = np.random.get_state()  # noqa: NPY002
    a = run(RandomForestClassifier(n_estimators=5))
    after = np.random.get_state()  # noqa: NPY002
    assert np.array_equal(before[1], after[1]) and before[2:] == after[2:]
    b = run(RandomForestClassifier(n_estimators=5))
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound
    # an explicit seed is the caller's algorithm: kept, not replaced
    c, d = run(RandomForestClassifier(n_estimators=5, random_state=3)), run(
        RandomForestClassifier(n_estimators=5, random_state=4))
    assert not np.array_equal(c.scores, d.scores)
