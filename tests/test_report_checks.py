"""PrivacyReport on the models people publish: the DP recipe with a penalised intercept,
the worst-case audit of pipelines, structural disclosure checks, the low-FPR tail and the
machine-readable record."""

import warnings

import numpy as np
import pytest

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.report import PrivacyReport


def _bounded(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(2 * n, d)) / np.sqrt(2 * d)
    y = (X[:, 0] + 0.1 * rng.normal(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _dp_penalised_intercept():
    return FILLogisticRegression(epsilon=2.0, data_norm=1.0, intercept_scaling=0.5,
                                 alpha=0.05, classes=[0, 1])


@pytest.mark.parametrize("n_canaries", [100, 0])
def test_penalised_intercept_dp_release_is_audited_without_crash(n_canaries):
    """A bare FILLogisticRegression with intercept_scaling on a numpy array: the one-run
    white-box scores built canary rows without the constant column (7-vs-6 shape mismatch)
    and the worst-case search treated the constant column as a free feature. Both raised
    ValueError on the old code; the audits now run and stay below the claim."""
    X, y, Xp, yp = _bounded()
    est = _dp_penalised_intercept().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(est, X, y, Xp, yp, n_canaries=n_canaries,
                                           canary_releases=300, random_state=0)
    audits = next(s for s in rep.sections if s.key == "audits")
    labels = [k for k, _ in audits.table]
    assert any(k.startswith("canary audit") for k in labels)
    assert (n_canaries > 0) == any(k.startswith("one-run audit") for k in labels)
    assert 0.0 <= rep.summary["empirical_epsilon"] <= 2.0 + 1e-9


def test_worst_case_pair_with_penalised_intercept_keeps_the_constant_column():
    """The replacement row has the user's columns only, lies in the data_norm ball once the
    constant column is appended, and moves the minimiser at most the sensitivity (the old
    code raised a broadcast ValueError)."""
    from sklearn_privacy.attacks import worst_case_neighbours

    X, y, _, _ = _bounded()
    est = _dp_penalised_intercept()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = worst_case_neighbours(est, X, y, random_state=0)
    assert pair.x_replacement.shape == (X.shape[1],)
    assert np.linalg.norm(np.r_[pair.x_replacement, 0.5]) <= 1.0 + 1e-9
    assert 0.3 < pair.ratio <= 1.0 + 1e-9
