"""Worst-case neighbours of the FIL DP view: the search attains the (sharper) bounds."""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.attacks import canary_audit, worst_case_neighbours


def _theta(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = clone(est).set_params(sigma=1.0, random_state=0).fit(X, y)
    return f._audit_engine().theta, f.sensitivity_


def _adversarial(loss, alpha=1e4):
    n, R, B = 5, 1.3, 2.0
    X = np.zeros((n, 1))
    X[0, 0] = R
    y = np.zeros(n)
    if loss == "squared":
        y[0] = B
        return FILLinearRegression(fit_intercept=False, data_norm=R, target_bound=B,
                                   alpha=alpha), X, y
    y = y.astype(int)
    y[1] = 1
    return FILLogisticRegression(fit_intercept=False, data_norm=R, alpha=alpha), X, y


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_search_attains_the_bound_on_adversarial_data(loss):
    est, X, y = _adversarial(loss)
    pair = worst_case_neighbours(est, X, y, random_state=0)
    # the pair's move, recomputed by independent exact refits
    Xp, yp = X.copy(), y.copy()
    Xp[pair.index] = pair.x_replacement
    yp[pair.index] = pair.y_replacement
    (t0, sens), (t1, _) = _theta(est, X, y), _theta(est, Xp, yp)
    assert np.linalg.norm(t1 - t0) == pytest.approx(pair.movement, rel=1e-9)
    assert pair.sensitivity == sens
    assert 0.98 < pair.ratio <= 1.0 + 1e-9
    assert np.linalg.norm(pair.x_replacement) == pytest.approx(est.data_norm)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_search_beats_random_pairs_and_never_exceeds_the_bound(loss):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if loss == "squared":
        y = np.clip(X @ [0.8, -0.5, 0.2] + 0.1 * rng.normal(size=120), -1, 1)
        est = FILLinearRegression(fit_intercept=False, data_norm=1.0, target_bound=1.0,
                                  alpha=2.0)
        labels = [-1.0, 1.0]
    else:
        y = (X[:, 0] > 0).astype(int)
        est = FILLogisticRegression(fit_intercept=False, data_norm=1.0, alpha=2.0)
        labels = [0, 1]
    pair = worst_case_neighbours(est, X, y, random_state=0)
    t0, sens = _theta(est, X, y)
    random_best = 0.0
    for _ in range(25):
        i = rng.integers(120)
        Xp, yp = X.copy(), y.copy()
        x = rng.normal(size=3)
        Xp[i] = x / np.linalg.norm(x)
        yp[i] = labels[rng.integers(2)]
        random_best = max(random_best, np.linalg.norm(_theta(est, Xp, yp)[0] - t0) / sens)
    assert random_best < pair.ratio <= 1.0 + 1e-9


@pytest.mark.statistical
def test_pair_statistic_drives_canary_audit_towards_the_claim():
    est, X, y = _adversarial("squared")
    pair = worst_case_neighbours(est, X, y, random_state=0)
    sigma = clone(est).set_params(sigma=1.0).fit(X, y).sigma_for_epsilon(4.0)
    res = canary_audit(clone(est).set_params(sigma=sigma), X, y, pair.index,
                       pair.x_replacement, pair.y_replacement, attack=pair.statistic(),
                       n_releases=20_000, refit=False, random_state=0)
    assert res.claimed_epsilon == pytest.approx(4.0)
    # a tight pair and the optimal statistic: a large share of the claim, never above it
    assert 0.5 * 4.0 < res.epsilon_lower_bound <= 4.0


def test_bad_input():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(TypeError, match="'estimator' parameter of worst_case_neighbours"):
        worst_case_neighbours(object(), X, y)
    with pytest.raises(TypeError, match="searches the DP view"):
        worst_case_neighbours(LogisticRegression(), X, y)
    with pytest.raises(ValueError, match="needs data_norm"):
        worst_case_neighbours(FILLogisticRegression(fit_intercept=False), X, y)
    with pytest.raises(ValueError, match="'n_refits' parameter of worst_case_neighbours"):
        worst_case_neighbours(FILLogisticRegression(fit_intercept=False, data_norm=1.0),
                              X, y, n_refits=0)


def test_multinomial_model_is_refused_clearly():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.arange(60) % 3
    with pytest.raises(ValueError, match="binary and least-squares FIL models"):
        worst_case_neighbours(FILLogisticRegression(fit_intercept=False, data_norm=1.0), X, y)


def _logistic_problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X @ [1.0, -0.5, 0.3] + 0.3 * rng.normal(size=150) > 0).astype(int)
    return FILLogisticRegression(data_norm=1.0, alpha=0.5), X, y


@pytest.mark.parametrize("backend", ["threading", pytest.param("loky", marks=pytest.mark.slow)])
def test_n_jobs_gives_the_serial_pair_and_verbose_counts_the_work(backend, capsys):
    """Two workers (threads, or joblib's worker processes) return the pair of the serial
    search, bit for bit: the starts and the refits are independent tasks collected in
    order."""
    est, X, y = _logistic_problem()
    kw = dict(n_starts=4, n_steps=15, n_refits=5, random_state=7)
    one = worst_case_neighbours(est, X, y, n_jobs=1, **kw)
    assert capsys.readouterr().out == ""                    # verbose=0: silent
    with joblib.parallel_config(backend=backend):
        two = worst_case_neighbours(est, X, y, n_jobs=2, verbose=1, **kw)
    out = capsys.readouterr().out
    assert (two.index, two.y_replacement, two.n_refits) == (one.index, one.y_replacement, 5)
    np.testing.assert_array_equal(two.x_replacement, one.x_replacement)
    np.testing.assert_array_equal(two.theta_replaced, one.theta_replaced)
    assert two.movement == one.movement
    # 4 starts and their opposites, for each of the two labels; then 5 refits
    assert "[worst_case_neighbours] done 16 of 16 ascents" in out
    assert "[worst_case_neighbours] done 5 of 5 exact refits" in out
    assert out.count("exact refits") == 5


def test_verbose_two_prints_every_task(capsys):
    est, X, y = _logistic_problem()
    worst_case_neighbours(est, X, y, n_starts=2, n_steps=5, n_refits=2, verbose=2,
                          random_state=0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["[worst_case_neighbours] done 1 of 8 ascents",
                         "[worst_case_neighbours] done 2 of 8 ascents"]
    assert len(lines) == 8 + 2


def test_a_search_whose_every_refit_fails_says_so(monkeypatch):
    """Every exact refit refused (as when each replacement removes the last row of a
    class): a ValueError that says so, where the search used to end in an AttributeError
    on ``None``."""
    from sklearn_privacy.attacks import _worst_case

    est, X, y = _logistic_problem()
    monkeypatch.setattr(_worst_case, "_refit_theta", lambda *args: None)
    with pytest.raises(ValueError, match="no candidate replacement could be refitted"):
        worst_case_neighbours(est, X, y, n_starts=2, n_steps=3, n_refits=2, random_state=0)
