"""Row-dependent ``sample_weight`` is data: it reaches no published constant and voids
the claim unless declared public with ``public_weights``."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.utils import compute_sample_weight

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, privacy_claim
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.privacy import neighbour_invariance
from sklearn_privacy.utils import public_weights, strip_for_release
from sklearn_privacy.utils._weights import PublicWeights


def _data(n=120, minority=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.zeros(n, dtype=int)
    y[:minority] = 1
    return X, y


def _neighbour(X, y):
    """One row replaced: a majority row becomes a minority row (balanced weights of
    every row change)."""
    Xp, yp = X.copy(), y.copy()
    Xp[-1], yp[-1] = -X[-1], 1
    return Xp, yp


ESTIMATORS = [
    lambda: FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                  alpha=0.1),
    lambda: FILLogisticRegression(epsilon=1.0, delta=0.0, fit_intercept=False,
                                  data_norm=1.0, alpha="auto"),
    lambda: FILLogisticRegression(sigma=0.5, fit_intercept=False, data_norm=1.0,
                                  alpha=0.1),
    lambda: FILLinearRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                target_bound=1.0, alpha=0.1),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_balanced_weights_reach_no_published_constant(make):
    """``sensitivity_`` and ``noise_scale_`` were ``2 L R max(w) / (W alpha)`` and its
    noise: with balanced weights ``max(w) / W = 1 / (2 n_min)``, so both encoded the
    smallest class count, and D (9 minority rows) and D' (10) were told apart from the
    pickle on every fit. Fails on the old code (the constants differ and epsilon_ was
    finite)."""
    X, y = _data()
    Xp, yp = _neighbour(X, y)
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for data in ((X, y), (Xp, yp)):
            est = make().fit(*data, sample_weight=compute_sample_weight("balanced",
                                                                        data[1]))
            fits.append(pickle.loads(pickle.dumps(strip_for_release(est))))
    a, b = fits
    assert a.sensitivity_ == b.sensitivity_
    assert a.noise_scale_ == b.noise_scale_
    for est in fits:
        assert est.epsilon_ == np.inf
        assert "without being declared public" in est.epsilon_reason_
        assert not privacy_claim(est).is_private
    # the constants are those of unit weights (a function of n only)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        unit = make().fit(X, y)
    assert a.sensitivity_ == unit.sensitivity_ and a.noise_scale_ == unit.noise_scale_


def test_declared_weights_are_used_and_keep_the_claim():
    """Declared weights enter the sensitivity (largest share of the total) and the claim
    stays finite; the declaration follows row subsets and pickling."""
    X, y = _data()
    design = np.where(np.arange(len(y)) % 2 == 0, 1.0, 3.0)
    w = public_weights(design)
    assert isinstance(w[::2], PublicWeights) and isinstance(w[np.arange(5)], PublicWeights)
    assert isinstance(pickle.loads(pickle.dumps(w)), PublicWeights)
    assert not isinstance(2 * w, PublicWeights)  # a derived weight is declared anew
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        unit = FILLogisticRegression(sigma=0.5, fit_intercept=False, data_norm=1.0,
                                     alpha=0.1).fit(X, y)
        est = FILLogisticRegression(sigma=0.5, fit_intercept=False, data_norm=1.0,
                                    alpha=0.1, classes=[0, 1]).fit(X, y, sample_weight=w)
    share = design.max() / design.sum()
    assert est.sensitivity_ == pytest.approx(unit.sensitivity_ * share * len(y), rel=1e-9)
    assert np.isfinite(est.epsilon_) and privacy_claim(est).is_private


def test_public_weights_refuses_bad_shapes():
    with pytest.raises(ValueError, match="one-dimensional"):
        public_weights(np.ones((3, 2)))


def test_neighbour_invariance_recomputes_rule_weights():
    """A callable fit parameter is recomputed on every neighbour. Weights from the
    labels, falsely declared public, are caught (``sensitivity_`` moves); the same rule
    left undeclared is invariant (the claim is inf and nothing published reads the
    weights). On the old code the reference's weights were reused for every neighbour,
    which hid both; a callable is refused there."""
    X, y = _data()
    est = FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0,
                                alpha=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        false = neighbour_invariance(
            est, X, y, rows=[len(y) - 1], kinds=["duplicate"],
            fit_params={"sample_weight": lambda X, y: public_weights(
                compute_sample_weight("balanced", y))})
        honest = neighbour_invariance(
            est, X, y, rows=[len(y) - 1], kinds=["duplicate"],
            fit_params={"sample_weight": lambda X, y: compute_sample_weight(
                "balanced", y)})
    assert any(p.endswith("sensitivity_") for p in false.paths()), false
    assert honest.is_invariant, honest
