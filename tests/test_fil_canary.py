"""Canary audit of the (epsilon, delta)-DP view of the FIL releases.

The pair ``D, D'`` is chosen on the exact minimisers only (never on releases): one row
is replaced by a canary on the ``data_norm`` sphere with the opposite label (least
squares: the opposite extreme target), the direction and the row picked to maximise the
minimiser's movement, and the test statistic is the projection of the released
coefficients on ``theta_D' - theta_D`` (the likelihood-ratio statistic of two Gaussians
with the same covariance, hence the most powerful test for this pair). The audit at a
true epsilon must stay below the claim; the same mechanism with its noise cut tenfold
(but reporting the same ``epsilon_``) must be caught.

Large epsilons need many releases: with ``N`` evaluation releases per side and no error
the Clopper-Pearson bound is about ``log(N / 3.7)``, so ``epsilon > 8`` needs
``N > 11,000``. The releases are drawn with ``canary_audit(refit=False)`` (one fit per
data set, then the estimator's own release code per seed), which the first tests show
to be bitwise the same as refitting.
"""

import functools

import numpy as np
import pytest
from _expected_warnings import SEED_INSTANCE
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.attacks import canary_audit
from sklearn_privacy.fil import analytic_gaussian_epsilon

DELTA = 1e-5
R = 1.0  # data_norm
B = 1.0  # target_bound


class _CutNoise:
    """A broken mechanism: releases with sigma / 10 but reports (accounts) sigma."""

    def _release(self, theta):
        sigma = self.sigma
        self.sigma = sigma / 10.0
        try:
            super()._release(theta)
        finally:
            self.sigma = sigma
        self._sigma_fit = float(sigma)


class _TenfoldLessNoise(_CutNoise, FILLogisticRegression):
    pass


class _TenfoldLessNoiseLinear(_CutNoise, FILLinearRegression):
    pass


def _data(n=100, d=4, seed=0, regression=False):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    X *= R / np.linalg.norm(X, axis=1, keepdims=True)  # rows on the data_norm sphere
    score = X[:, 0] + 0.3 * rng.normal(size=n)
    y = np.clip(score, -B, B) if regression else (score > 0).astype(int)
    return X, y


def _exact(est, X, y):
    fitted = clone(est).set_params(sigma=1.0, random_state=0).fit(X, y)
    return fitted._audit_engine().theta, fitted


def _worst_pair(est, X, y, regression=False):
    """(index, canary x, canary y, unit direction, shift, sensitivity).

    First-order search: the canary ``R u`` (``u`` a +- eigenvector of the Hessian, or the
    opposite of a row's direction) with the opposite label replaces row ``j``; the pair
    maximising ``|| H^{-1} (g(canary) - g(row j)) ||`` is kept and its exact shift is
    measured by refitting ``D'``.
    """
    theta, fitted = _exact(est, X, y)
    H = fitted._audit_engine().H
    _, V = np.linalg.eigh(H)
    units = np.vstack([V.T, -V.T, -X / np.linalg.norm(X, axis=1, keepdims=True)])
    z_rows = X @ theta
    if regression:
        g_rows = (z_rows - y)[:, None] * X
        labels = np.array([-B, B])
    else:
        g_rows = (1.0 / (1.0 + np.exp(-z_rows)) - y)[:, None] * X
        labels = np.array([0, 1])
    best = (-1.0, None)
    for label in labels:
        zc = R * units @ theta
        resid = zc - label if regression else 1.0 / (1.0 + np.exp(-zc)) - label
        g_canary = (resid * R)[:, None] * units  # (n_units, d)
        # flipped: only rows whose label differs from the canary's
        rows = np.flatnonzero(y != label) if not regression else np.flatnonzero(
            np.sign(y) != np.sign(label))
        diff = g_canary[:, None, :] - g_rows[None, rows, :]
        moves = np.linalg.norm(np.linalg.solve(H, diff.reshape(-1, X.shape[1]).T), axis=0)
        k = int(np.argmax(moves))
        if moves[k] > best[0]:
            best = (moves[k], (int(rows[k % rows.size]), R * units[k // rows.size], label))
    j, x_new, y_new = best[1]
    Xp, yp = X.copy(), y.copy()
    Xp[j], yp[j] = x_new, y_new
    theta_p, fitted_p = _exact(est, Xp, yp)
    shift = theta_p - theta
    return (j, x_new, y_new, shift / np.linalg.norm(shift), float(np.linalg.norm(shift)),
            fitted.sensitivity_)


def _projection(est, direction):
    return float(np.ravel(est.coef_) @ direction)


def _audit(cls, template, X, y, epsilon, n_releases, regression=False, seed=0):
    j, x_new, y_new, v, shift, sens = _worst_pair(template, X, y, regression)
    sigma = clone(template).fit(X, y).sigma_for_epsilon(epsilon, DELTA)
    est = cls(**{**template.get_params(), "sigma": sigma})
    res = canary_audit(est, X, y, j, x_new, y_new,
                       attack=functools.partial(_projection, direction=v),
                       n_releases=n_releases, delta=DELTA, known_fraction=0.1, refit=False,
                       random_state=seed)
    return res, shift, sens, sigma


# ------------------------------------------------------------------ the fast path is exact
@pytest.mark.parametrize("est", [
    FILLogisticRegression(classes=[0, 1], sigma=0.3, alpha=1.0, fit_intercept=False, data_norm=R),
    FILLinearRegression(sigma=0.3, alpha=1.0, fit_intercept=False, data_norm=R,
                        target_bound=B),
    FILLogisticRegression(sigma=0.3, alpha=0.1),  # intercept, no DP claim: hook still exact
])
def test_redraw_release_is_bitwise_a_refit(est):
    X, y = _data(regression=isinstance(est, FILLinearRegression))
    fitted = clone(est).set_params(random_state=0).fit(X, y)
    coef0 = fitted.coef_.copy()
    for seed in (1, 7, 12345):
        redrawn = fitted._redraw_release(seed)
        refit = clone(est).set_params(random_state=seed).fit(X, y)
        np.testing.assert_array_equal(redrawn.coef_, refit.coef_)
        np.testing.assert_array_equal(redrawn.intercept_, refit.intercept_)
        assert redrawn.epsilon_ == refit.epsilon_
        assert type(redrawn) is type(est)
        assert not np.array_equal(redrawn.coef_, coef0)
    np.testing.assert_array_equal(fitted.coef_, coef0)  # the fitted model is untouched
    assert fitted.random_state == 0


def _manual_refits(est, X, y, j, x_new, y_new, stat, n_releases, random_state):
    """The statistics of real refits with the seeds canary_audit(refit=False) uses."""
    from sklearn_privacy.utils import child_seeds, noise_generator
    seeds = child_seeds(noise_generator(random_state), 2 * n_releases)
    Xp, yp = X.copy(), y.copy()
    Xp[j], yp[j] = x_new, y_new
    out = []
    for k, s in enumerate(seeds):
        A, b = (X, y) if k < n_releases else (Xp, yp)
        rs = np.random.default_rng(int(s))
        out.append(stat(clone(est).set_params(random_state=rs).fit(A, b)))
    return np.array(out[:n_releases]), np.array(out[n_releases:])


@SEED_INSTANCE
@pytest.mark.parametrize("cls", [FILLogisticRegression, _TenfoldLessNoise])
def test_canary_audit_without_refit_equals_refitting(cls):
    X, y = _data()
    est = cls(sigma=0.05, alpha=1.0, fit_intercept=False, data_norm=R, classes=[0, 1])
    j, x_new, y_new, v, _, _ = _worst_pair(est, X, y)
    stat = functools.partial(_projection, direction=v)
    fast = canary_audit(est, X, y, j, x_new, y_new, refit=False, attack=stat,
                        n_releases=30, random_state=3)
    orig, repl = _manual_refits(est, X, y, j, x_new, y_new, stat, 30, 3)
    np.testing.assert_array_equal(fast.statistics_original, orig)
    np.testing.assert_array_equal(fast.statistics_replaced, repl)
    assert fast.claimed_epsilon == clone(est).fit(X, y).epsilon_ < np.inf
    # and the refit path of canary_audit sees the same distributions (other seeds)
    slow = canary_audit(est, X, y, j, x_new, y_new, refit=True, attack=stat,
                        n_releases=30, random_state=3)
    assert slow.claimed_epsilon == fast.claimed_epsilon
    spread = 10 * est.sigma / 10 ** (cls is _TenfoldLessNoise)
    assert abs(slow.statistics_original.mean() - orig.mean()) < spread / np.sqrt(30)
    assert abs(slow.statistics_replaced.mean() - repl.mean()) < spread / np.sqrt(30)


def test_refit_false_needs_the_hook():
    X, y = _data()
    with pytest.raises(TypeError, match="_redraw_release"):
        canary_audit(LogisticRegression(), X, y, 0, X[1], 1, refit=False, n_releases=4)
    with pytest.raises(TypeError, match="refit"):
        canary_audit(FILLogisticRegression(), X, y, 0, X[1], 1, refit="no", n_releases=4)


# ------------------------------------------------------------------ the audit itself
def test_worst_pair_moves_the_minimiser_by_a_large_share_of_the_sensitivity():
    X, y = _data()
    est = FILLogisticRegression(classes=[0, 1], alpha=1.0, fit_intercept=False, data_norm=R)
    *_, shift, sens = _worst_pair(est, X, y)
    # never more than the bound; with |sigmoid(z) - y| near 1/2 at a small minimiser the
    # attainable movement is about half of it
    assert 0.4 * sens < shift <= sens


# n_releases per data set: enough for the bound of the broken mechanism to clear the claim
# (epsilon 8 needs >~ 11,000 evaluation releases per side; see the module docstring)
CASES = [(0.5, 2_000), (2.0, 2_000),
         pytest.param(8.0, 30_000, marks=pytest.mark.slow)]  # ~8 s quiet, ~18 s loaded


@pytest.mark.parametrize("epsilon, n_releases", CASES)
def test_fil_logistic_canary_audit(epsilon, n_releases):
    X, y = _data()
    template = FILLogisticRegression(classes=[0, 1], alpha=1.0, fit_intercept=False, data_norm=R,
                                     delta=DELTA)
    honest, shift, sens, sigma = _audit(FILLogisticRegression, template, X, y, epsilon,
                                        n_releases)
    assert honest.claimed_epsilon == pytest.approx(epsilon, rel=1e-9)
    assert honest.claimed_delta == DELTA  # the fitted delta_ states the claim
    assert honest.bound.delta == DELTA
    assert honest.epsilon_lower_bound < epsilon
    assert not honest.violates_claim
    # the exact epsilon of this pair (sensitivity = the measured shift) bounds it too
    assert honest.epsilon_lower_bound <= analytic_gaussian_epsilon(delta=DELTA, sigma=sigma,
                                                                   sensitivity=shift)
    broken, *_ = _audit(_TenfoldLessNoise, template, X, y, epsilon, n_releases)
    assert broken.claimed_epsilon == pytest.approx(epsilon, rel=1e-9)
    assert broken.epsilon_lower_bound > epsilon
    assert broken.violates_claim


def test_fil_linear_canary_audit():
    X, y = _data(regression=True)
    template = FILLinearRegression(alpha=1.0, fit_intercept=False, data_norm=R,
                                   target_bound=B, delta=DELTA)
    honest, shift, sens, sigma = _audit(FILLinearRegression, template, X, y, 2.0, 2_000,
                                        regression=True)
    assert 0 < shift <= sens
    assert honest.claimed_epsilon == pytest.approx(2.0, rel=1e-9)
    assert honest.epsilon_lower_bound < 2.0
    broken, *_ = _audit(_TenfoldLessNoiseLinear, template, X, y, 2.0, 2_000,
                        regression=True)
    assert broken.epsilon_lower_bound > 2.0


def test_fil_logistic_canary_audit_epsilon_8_fast():
    """Fast variant of the epsilon = 8 case (the full one is marked slow).

    2,000 releases cannot certify epsilon > 8 (the bound is capped near
    log(1800 / 3.7) = 6.2), but they show the test separates the broken mechanism
    perfectly -- every evaluation release is classified correctly, so the bound sits at
    the Clopper-Pearson cap and grows as log(n_releases) -- while the honest mechanism
    leaves errors on both sides.
    """
    X, y = _data()
    template = FILLogisticRegression(classes=[0, 1], alpha=1.0, fit_intercept=False, data_norm=R,
                                     delta=DELTA)
    honest, *_ = _audit(FILLogisticRegression, template, X, y, 8.0, 2_000)
    broken, *_ = _audit(_TenfoldLessNoise, template, X, y, 8.0, 2_000)
    assert honest.epsilon_lower_bound < 8.0
    b = broken.bound
    assert b.false_positives == 0 and b.true_positives == b.n_positive == 1_800
    cap = np.log((1 - DELTA - (1 - 0.025 ** (1 / 1_800))) / (1 - 0.025 ** (1 / 1_800)))
    assert broken.epsilon_lower_bound == pytest.approx(cap, rel=1e-6)
    hb = honest.bound
    assert hb.false_positives > 0 and hb.true_positives < hb.n_positive


def test_audit_reads_the_claimed_delta_from_the_fitted_model():
    """The audit states the claim at the estimator's delta, not at delta = 0.

    Fails if the estimators stop recording ``delta_`` (the audit then reports 0).
    """
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    est = FILLogisticRegression(classes=[0, 1], sigma=0.5, fit_intercept=False,
                                data_norm=1.0, delta=1e-6, alpha=1.0).fit(X, y)
    assert est.delta_ == 1e-6
    result = canary_audit(est, X, y, 0, -X[0], 1 - y[0], n_releases=50, random_state=0,
                          attack=lambda e: float(e.coef_.ravel() @ X[0]))
    assert result.claimed_delta == 1e-6
    assert result.claimed_epsilon == est.epsilon_
