"""LiRA and RMIA read the exact logit, not log(predict_proba), in both tails.

scikit-learn's ``LogisticRegression.predict_log_proba`` is ``log(predict_proba)``: a row
whose class-1 probability rounds to 1.0 has ``log p_0 = log 0``, so the LiRA statistic of
confident class-1 rows used to saturate at 708.4 (the float64 log floor) while class-0
rows stayed exact. Oracle: the logit ``X @ coef_ + intercept_`` computed by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from sklearn_privacy.attacks import lira, rmia
from sklearn_privacy.attacks._lira import _statistic
from sklearn_privacy.attacks._reference import LOGIT_CAP
from sklearn_privacy.attacks._rmia import _log_true_class_proba

LOG_FLOOR = -np.log(np.finfo(float).tiny)  # 708.4


def _separable(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2)) * 8.0
    y = (X[:, 0] > 0).astype(int)
    return X, y


def test_binary_lira_and_rmia_statistics_equal_the_exact_logit():
    X, y = _separable()
    clf = LogisticRegression(C=1e4, max_iter=10_000).fit(X[:20], y[:20])
    logit = X @ clf.coef_.ravel() + clf.intercept_[0]
    signed = np.where(y == 1, logit, -logit)  # log p_y - log p_other
    # the reproducer: confident class-1 rows saturate through predict_log_proba
    with np.errstate(divide="ignore"):
        old = clf.predict_log_proba(X)[np.arange(40), y] - np.maximum(
            clf.predict_log_proba(X)[np.arange(40), 1 - y], -LOG_FLOOR)
    assert np.sum(np.isclose(old, LOG_FLOOR)) >= 5
    res_l = lira(clf, X, y, np.arange(20), n_reference_models=4, random_state=0)
    np.testing.assert_allclose(res_l.target_statistics, signed, rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(res_l.target_statistics) < 700)
    assert np.all(np.abs(res_l.shadow_statistics) < 700)
    res_r = rmia(clf, X, y, np.arange(20), n_reference_models=4, random_state=0)
    np.testing.assert_allclose(res_r.target_statistics, -np.logaddexp(0.0, -signed),
                               rtol=1e-12, atol=1e-300)
    assert np.all(res_r.target_statistics > -700)


def test_multinomial_statistics_equal_log_softmax_of_the_decision():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(60, 3)) * 6.0
    y = np.argmax(X, axis=1)
    clf = LogisticRegression(C=1e4, max_iter=10_000).fit(X, y)
    lp = log_softmax(X @ clf.coef_.T + clf.intercept_, axis=1)
    rows = np.arange(60)
    others = lp.copy()
    others[rows, y] = -np.inf
    expected = lp[rows, y] - np.logaddexp.reduce(others, axis=1)
    np.testing.assert_allclose(_statistic(clf, X, y), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_log_true_class_proba(clf, X, y), lp[rows, y], rtol=1e-10,
                               atol=1e-12)


def test_models_without_a_logit_are_clamped_symmetrically():
    """GaussianNB has no decision_function: its saturated rows of either class get the
    same cap, never the log floor."""
    rng = np.random.RandomState(2)
    y = np.r_[np.zeros(100, int), np.ones(100, int)]
    X = rng.normal(size=(200, 2)) + 100.0 * (2 * y[:, None] - 1)  # p_other underflows to 0
    nb = GaussianNB().fit(X, y)
    stat = _statistic(nb, X, y)
    assert np.all(np.abs(stat) <= LOGIT_CAP + 1e-12)
    assert np.isclose(stat.max(), LOGIT_CAP)  # confident rows reach the cap ...
    flipped = _statistic(nb, X, 1 - y)
    assert np.isclose(flipped.min(), -LOGIT_CAP)  # ... and the wrong labels the other one
    assert np.all(_log_true_class_proba(nb, X, 1 - y) >= np.log(2.0**-53) - 1e-12)


@pytest.mark.parametrize("attack", [lira, rmia])
def test_decision_function_not_a_logit_is_not_used(attack):
    """A decision_function that is not the logit of predict_proba (e.g. a margin) is
    ignored: the statistic then comes from the probabilities."""

    class Margin(LogisticRegression):
        def decision_function(self, X):
            return 3.0 * super().decision_function(X)

    X, y = _separable()
    clf = Margin(max_iter=1000).fit(X[:20], y[:20])
    p = clf.predict_proba(X)[np.arange(40), y]
    got = _statistic(clf, X, y)
    with np.errstate(divide="ignore"):
        expected = np.clip(np.log(p) - np.log1p(-p), -LOGIT_CAP, LOGIT_CAP)
    finite = p < 1 - 1e-12
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-6)
