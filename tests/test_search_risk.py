"""Random-stopping selection in the currency of attacks: its trade-off curve and a risk
target for the whole search.

The curve is checked against exact computations: the released winner of a random number
of runs of a discrete pure-DP candidate (its law in closed form), and of a Gaussian
candidate on a fine grid; a search given ``risk=`` must state a curve within it, with a
plan that does not depend on the rows.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from scipy.special import ndtr

from sklearn_privacy import DPLogisticRegression, FILLogisticRegression, privacy_claim
from sklearn_privacy.model_selection import RandomStoppingSearch
from sklearn_privacy.model_selection._accounting import (
    runs_gamma,
    selection_bound,
    selection_profile,
)
from sklearn_privacy.privacy import RiskTarget, TradeoffCurve, tradeoff_curve


def _exact_roc(p, q):
    """Neyman--Pearson ROC of ``q`` (with the row) against ``p`` (without) on a finite
    space: the vertices (fpr, tpr), cells taken by decreasing likelihood ratio."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, q / p, np.inf)
    order = np.argsort(-ratio, kind="stable")
    return (np.r_[0.0, np.cumsum(p[order])], np.r_[0.0, np.cumsum(q[order])])


def _winner_law(pmf, gamma, distribution):
    """Law of the largest of ``K`` independent draws from ``pmf`` (on 0..m), ``K`` from
    the search's law: ``P[max <= v] = E[F(v)^K]`` in closed form."""
    F = np.clip(np.cumsum(pmf), 0.0, 1.0)
    if distribution == "geometric":
        G = gamma * F / (1.0 - (1.0 - gamma) * F)
    else:   # logarithmic: E[F^K] = log(1 - (1 - gamma) F) / log(gamma)
        G = np.log1p(-(1.0 - gamma) * F) / np.log(gamma)
    return np.diff(np.r_[0.0, G])


def _clamped_geometric(center, eps, m):
    """``clip(center + Z, 0, m)`` with two-sided geometric ``Z``: exactly eps-DP for
    centres 1 apart (the clamp is post-processing)."""
    v = np.arange(-60 * int(np.ceil(1 / eps)) - m, m + 60 * int(np.ceil(1 / eps)) + 1)
    w = np.exp(-eps * np.abs(v))
    w /= w.sum()
    out = np.zeros(m + 1)
    np.add.at(out, np.clip(center + v, 0, m), w)
    return out


@pytest.mark.parametrize("distribution", ["geometric", "logarithmic"])
@pytest.mark.parametrize("eps,mean_runs", [(0.3, 5.0), (1.0, 10.0), (2.0, 3.0)])
def test_profile_curve_bounds_the_exact_selection_of_a_pure_candidate(eps, mean_runs,
                                                                      distribution):
    """Brute force: the winner of K runs of an eps-DP candidate, its exact law on D and D'
    and its exact ROC (both directions), never above the profile curve."""
    m = 40
    gamma = runs_gamma(mean_runs, distribution)
    p = _winner_law(_clamped_geometric(20, eps, m), gamma, distribution)
    q = _winner_law(_clamped_geometric(21, eps, m), gamma, distribution)
    e, d = selection_profile(mean_runs, 0.0, 0.0, eps, distribution)
    curve = TradeoffCurve.from_profile(e, d)
    assert curve.method == "profile" and curve.conservative
    worst = -np.inf
    for a, b in ((p, q), (q, p)):
        fpr, tpr = _exact_roc(a, b)
        gap = tpr - curve.max_tpr(np.clip(fpr, 0, 1))
        worst = max(worst, float(gap.max()))
    assert worst <= 1e-12
    # and it is informative: below the curve of the pure bound alone somewhere
    pure = TradeoffCurve.epsilon_delta((3.0 if distribution == "geometric" else 2.0) * eps,
                                       0.0)
    grid = np.geomspace(1e-4, 0.5, 50)
    assert np.all(curve.max_tpr(grid) <= pure.max_tpr(grid) + 1e-12)


@pytest.mark.parametrize("mu,mean_runs", [(0.5, 1.0), (0.5, 5.0), (1.0, 10.0)])
def test_profile_curve_bounds_the_selection_of_a_gaussian_candidate(mu, mean_runs):
    """The winner of K runs of a Gaussian candidate (output N(0, 1) or N(mu, 1)), its law
    on a fine grid: the ROC stays under the curve; with K = 1 the curve is never below
    the exact Gaussian curve."""
    x = np.linspace(-12, 12 + mu, 40001)
    gamma = 1.0 / mean_runs
    laws = []
    for c in (0.0, mu):
        F = ndtr(x - c)
        G = F if mean_runs == 1 else gamma * F / (1 - (1 - gamma) * F)
        laws.append(np.diff(np.r_[0.0, G, 1.0]))
    e, d = selection_profile(mean_runs, 0.0, mu, 0.0)
    curve = TradeoffCurve.from_profile(e, d)
    for a, b in ((laws[0], laws[1]), (laws[1], laws[0])):
        fpr, tpr = _exact_roc(a, b)
        assert np.max(tpr - curve.max_tpr(np.clip(fpr, 0, 1))) <= 1e-9
    if mean_runs == 1:
        grid = np.geomspace(1e-6, 1, 300)
        assert np.all(curve.max_tpr(grid) >= TradeoffCurve.gaussian(mu).max_tpr(grid)
                      - 1e-12)


def test_profile_curve_is_below_its_claim_pair_and_consistent_with_it():
    """The profile contains the reported (epsilon_, delta_) pair, so the curve is never
    above that pair's curve; its delta at epsilon_ is at most delta_ and its epsilon at
    delta_ at most epsilon_ (independent routes: curve reading vs the accountant)."""
    total, _ = selection_bound(10.0, 0.1, 0.5, 0.0, 1e-5)
    e, d = selection_profile(10.0, 0.1, 0.5, 0.0)
    curve = TradeoffCurve.from_profile(e, d, claim=(total, 1e-5))
    pair = TradeoffCurve.epsilon_delta(total, 1e-5)
    grid = np.geomspace(1e-6, 1, 200)
    assert np.all(curve.max_tpr(grid) <= pair.max_tpr(grid) + 1e-15)
    assert float(curve.max_tpr(0.01)) < 0.5 * float(pair.max_tpr(0.01))
    assert curve.delta(total) <= 1e-5 * (1 + 1e-9)
    assert curve.epsilon(1e-5) <= total * (1 + 1e-5)   # root-finding on a flat part
    # the advantage bound is the hockey stick at 0 read from the curve: never below a
    # dense evaluation of TPR - FPR
    dense = np.linspace(0, 1, 20001)
    assert curve.max_advantage() >= float(np.max(curve.max_tpr(dense) - dense)) - 1e-12
    # pickles with its profile
    again = pickle.loads(pickle.dumps(curve))
    assert float(again.max_tpr(0.01)) == float(curve.max_tpr(0.01))


def _data(n=1200, seed=0, shift=0.0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3)) + shift
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _fit(search, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search.fit(X, y)


@pytest.mark.parametrize("target", [RiskTarget(tpr=0.05, fpr=0.01),
                                    RiskTarget(tpr=0.2, fpr=0.001),
                                    RiskTarget(advantage=0.4)])
@pytest.mark.parametrize("base", [
    FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0, classes=[0, 1]),
    DPLogisticRegression(epsilon=1.0, delta=0.0, data_norm=1.0, classes=[0, 1]),
], ids=["fil-gaussian", "objective-pure"])
def test_search_at_a_risk_target_never_exceeds_it(base, target):
    X, y = _data()
    search = _fit(RandomStoppingSearch(base, {"alpha": [0.01, 0.1]}, mean_runs=4,
                                       score_epsilon=0.05, risk=target, random_state=0),
                  X, y)
    curve = privacy_claim(search, allow_seeded=True).tradeoff
    assert curve is search.tradeoff_ and curve.method == "profile"
    stated = target.stated_value(curve)
    bound = target.tpr if target.tpr is not None else target.advantage
    assert stated <= bound * (1 + 1e-9)
    assert stated >= 0.97 * bound      # the plan spends the target, up to the bisection
    assert tradeoff_curve(search.__sklearn_privacy_claim__()) is curve
    # every candidate ran at the planned budget
    assert search.best_estimator_.epsilon == pytest.approx(search.planned_epsilon_)
    # the (epsilon_, delta_) pair alone never states less
    pair = TradeoffCurve.epsilon_delta(search.epsilon_, search.delta_)
    assert target.stated_value(pair) >= stated - 1e-12


def test_search_plan_is_fixed_before_the_rows_are_read():
    """Two data sets of the same shape (values, labels and seeds all different) give the
    same plan: the candidates' budget, the claim and its curve."""
    base = FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                 classes=[0, 1])
    target = RiskTarget(tpr=0.05, fpr=0.01)
    plans = []
    for seed, shift in ((0, 0.0), (1, 3.0)):
        X, y = _data(seed=seed, shift=shift)
        s = _fit(RandomStoppingSearch(base, {"alpha": [0.01, 0.1]}, mean_runs=4,
                                      risk=target, random_state=seed), X, y)
        plans.append((s.planned_epsilon_, s.epsilon_, s.delta_,
                      float(s.tradeoff_.max_tpr(0.01)), s.candidate_gaussian_mu_))
    assert plans[0] == plans[1]


def test_search_risk_without_a_risk_target_keeps_the_candidates_budget():
    X, y = _data()
    base = DPLogisticRegression(epsilon=0.5, delta=0.0, data_norm=1.0, classes=[0, 1])
    s = _fit(RandomStoppingSearch(base, {"alpha": [0.01]}, mean_runs=3, random_state=0),
             X, y)
    assert s.planned_epsilon_ is None and s.candidate_epsilon_ == 0.5
    # the curve is the profile's, never above the claimed pair's
    pair = TradeoffCurve.epsilon_delta(s.epsilon_, s.delta_)
    assert float(s.tradeoff_.max_tpr(0.01)) <= float(pair.max_tpr(0.01))


def test_search_risk_errors():
    X, y = _data(200)
    target = RiskTarget(tpr=0.05, fpr=0.01)
    base = FILLogisticRegression(fit_intercept=False, data_norm=1.0, sigma=1.0, alpha=0.1)
    with pytest.raises(ValueError, match="no epsilon parameter or sets its noise by sigma"):
        _fit(RandomStoppingSearch(base, {"alpha": [0.1]}, risk=target), X, y)
    base = DPLogisticRegression(delta=0.0, data_norm=1.0, classes=[0, 1])
    with pytest.raises(ValueError, match="remove it from param_grid"):
        _fit(RandomStoppingSearch(base, {"epsilon": [0.1, 1.0]}, risk=target), X, y)
    with pytest.raises(ValueError, match="score_epsilon"):
        _fit(RandomStoppingSearch(base, {"alpha": [0.1]}, score_epsilon=5.0,
                                  risk=RiskTarget(tpr=0.011, fpr=0.01)), X, y)
    with pytest.raises((TypeError, ValueError), match="risk"):
        _fit(RandomStoppingSearch(base, {"alpha": [0.1]}, risk=0.05), X, y)


def test_search_risk_reaches_the_final_step_of_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data()
    pipe = make_pipeline(FunctionTransformer(),
                         DPLogisticRegression(delta=0.0, data_norm=1.0, classes=[0, 1]))
    target = RiskTarget(tpr=0.05, fpr=0.01)
    s = _fit(RandomStoppingSearch(pipe, {"dplogisticregression__alpha": [0.01, 0.1]},
                                  mean_runs=3, risk=target, random_state=0), X, y)
    assert s.best_estimator_[-1].epsilon == pytest.approx(s.planned_epsilon_)
    assert float(s.tradeoff_.max_tpr(0.01)) <= 0.05 * (1 + 1e-9)
