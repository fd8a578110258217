# ruff: noqa: NPY002  (the test seeds and reads numpy's legacy global state on purpose)
"""Privacy noise with ``random_state=None``: fresh OS entropy, never numpy's global state.

For every private component, releases are drawn with numpy's global generator re-seeded
to the same value before each one. If a component drew from the global state, every
release would be identical. The test checks (a) the global state is neither read nor
advanced, and (b) the released noise, standardised, passes a two-sample
Kolmogorov-Smirnov test against fresh draws of its documented distribution (level 1e-4,
so a correct implementation fails about once in 10,000 runs).

Mutation check: with ``noise_generator(None)`` returning numpy's global ``RandomState``,
all six tests fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE
from scipy import stats
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    PrivateMulticalibrator,
)
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.mechanisms import NumericSparse

# false-alarm rate per two-sample test of fresh draws (see tests/test_mechanisms.py)
LEVEL = 1e-6
REPEATS = 60


def _data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=80)
    return X, y


def _released_noise(make, y_of, sigma):
    """Standardised release noise of REPEATS fits, each after ``np.random.seed(1)``."""
    X, y = _data()
    y = y_of(y)
    noise = []
    for _ in range(REPEATS):
        np.random.seed(1)
        before = np.random.get_state()[1].copy()
        est = make().fit(X, y)
        after = np.random.get_state()[1]
        assert np.array_equal(before, after), "fitting advanced numpy's global stream"
        theta = est._audit_engine().theta
        released = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
        noise.append((released - theta) / sigma)
    return np.concatenate(noise)


@pytest.mark.parametrize("make, y_of", [
    (lambda: FILLinearRegression(sigma=0.3, alpha=1e-2), lambda y: y),
    (lambda: FILLogisticRegression(sigma=0.3, alpha=1e-2), lambda y: (y > 0).astype(int)),
    (lambda: IRFILLinearRegression(sigma=0.3, alpha=1e-2, eta_max_iter=2), lambda y: y),
], ids=["FILLinearRegression", "FILLogisticRegression", "IRFILLinearRegression"])
def test_output_perturbation_noise_is_fresh_gaussian(make, y_of):
    z = _released_noise(make, y_of, 0.3)
    assert np.unique(z).size == z.size          # no release repeats another's noise
    fresh = np.random.default_rng(12345).standard_normal(z.size)
    assert stats.ks_2samp(z, fresh).pvalue > LEVEL


def test_numeric_sparse_answer_noise_is_fresh_laplace():
    noise = []
    for _ in range(REPEATS * 4):
        np.random.seed(1)
        before = np.random.get_state()[1].copy()
        ns = NumericSparse(epsilon=1.0, max_answers=1, threshold=-1e9, test_sensitivity=1.0,
                           answer_sensitivities=[1.0, 2.0])
        answer = ns.query(0.0, [0.0, 0.0])
        assert np.array_equal(before, np.random.get_state()[1])
        noise.append(answer / ns.answer_scales)      # standard Laplace per coordinate
    z = np.concatenate(noise)
    assert np.unique(z).size == z.size
    fresh = np.random.default_rng(54321).laplace(size=z.size)
    assert stats.ks_2samp(z, fresh).pvalue > LEVEL


@MULTICALIBRATION_ADVICE
@pytest.mark.parametrize("mechanism", ["numeric_sparse", "input_perturbation"])
def test_multicalibrator_releases_differ_under_a_fixed_global_seed(mechanism):
    from sklearn.frozen import FrozenEstimator

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=2000), rng.randint(0, 2, 2000)])
    y = (rng.uniform(size=2000) < np.where(X[:, 1] == 1, 0.8, 0.2) * (X[:, 0] > 0) + 0.1)
    base = FrozenEstimator(LogisticRegression().fit(X[:1000], y[:1000]))
    outputs = []
    for _ in range(8):
        np.random.seed(1)
        before = np.random.get_state()[1].copy()
        kw = {"epsilon": 1.0} if mechanism == "numeric_sparse" else {"epsilon": 50.0}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)   # input perturbation: no DP
            mc = PrivateMulticalibrator(base, groups=[1], calibration_tol=0.05, mechanism=mechanism,
                                        min_cell_size=20, **kw).fit(X[1000:], y[1000:])
        assert np.array_equal(before, np.random.get_state()[1])
        outputs.append(mc.predict_proba(X[:50])[:, 1].round(12).tobytes())
    # eight releases under the same global seed: fresh noise makes them differ
    assert len(set(outputs)) > 1

