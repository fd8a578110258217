"""Under a finite claim nothing a user sees depends on one row: provenance fails closed,
bounding a row is silent, and the documented schema pipeline fits every neighbour.

Each test failed on the code before these fixes, as its docstring says.
"""

import pickle
import warnings

import numpy as np
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE, STRIP_RESETS_SEED

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.linear_model import DPLinearRegression, DPLogisticRegression
from sklearn_privacy.preprocessing import DPStandardScaler
from sklearn_privacy.utils import strip_for_release
from sklearn_privacy.utils._provenance import FitProvenance, provenance_problem

pd = pytest.importorskip("pandas")


def _xy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (X[:, 0] > 0).astype(int)


DP_MODELS = [
    lambda **kw: DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=[0, 1], **kw),
    lambda **kw: FILLogisticRegression(epsilon=1.0, data_norm=1.5, alpha=0.1,
                                       fit_intercept=False, classes=[0, 1], **kw),
    lambda **kw: DPStandardScaler(bounds=(-1, 1), epsilon=1.0, **kw),
]


# ------------------------------------------------------------------ provenance (38.5)
@STRIP_RESETS_SEED
@pytest.mark.parametrize("make", DP_MODELS, ids=["objective", "fil", "dp_scaler"])
def test_provenance_fails_closed(make):
    """Failed on the old code: a seeded DPLogisticRegression whose ``fit_provenance_`` was
    deleted after ``strip_for_release`` claimed epsilon = 1.0 (a missing record read as
    fresh noise), and a record copied from a fresh fit or replaced by a string vouched
    for it too; its seed was printed in ``epsilon_reason_``. Now each makes the claim
    inf with the reason."""
    X, y = _xy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeded = make(random_state=0).fit(X, y)
        fresh = make().fit(X, y)
    assert privacy_claim(fresh).is_private and provenance_problem(fresh) is None
    stripped = strip_for_release(seeded)
    assert not privacy_claim(stripped).is_private
    assert "random_state=0" not in str(getattr(stripped, "epsilon_reason_", ""))

    deleted = strip_for_release(seeded)
    del deleted.fit_provenance_
    foreign = strip_for_release(seeded)
    foreign.fit_provenance_ = fresh.fit_provenance_            # same class, other release
    replaced = strip_for_release(seeded)
    replaced.fit_provenance_ = "fresh noise"
    other_class = strip_for_release(seeded)
    other_class.fit_provenance_ = FitProvenance("os_entropy", owner="x.Other")
    expected = {"deleted": "has no fit_provenance_", "foreign": "another release",
                "replaced": "replaced by a str", "other_class": "recorded for a Other"}
    for name, model in [("deleted", deleted), ("foreign", foreign),
                        ("replaced", replaced), ("other_class", other_class)]:
        claim = privacy_claim(model)
        assert not claim.is_private, name
        assert any(expected[name] in r for r in claim.reasons), (name, claim.reasons)
        assert pickle.loads(pickle.dumps(model)) is not None


def test_a_subclass_that_never_records_provenance_has_no_claim():
    """Failed on the old code: the subclass's claim was 1.0 although nothing recorded how
    it was fitted (it was seeded)."""

    class Quiet(DPLogisticRegression):
        def fit(self, X, y):
            super().fit(X, y)
            del self.fit_provenance_
            return self

    X, y = _xy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = strip_for_release(Quiet(epsilon=1.0, data_norm=1.5, classes=[0, 1],
                                        random_state=0).fit(X, y))
    claim = privacy_claim(model)
    assert not claim.is_private and "has no fit_provenance_" in claim.reasons[0]


def test_a_record_survives_pickling_and_stripping_and_compares_without_noise():
    X, y = _xy()
    a = DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=[0, 1]).fit(X, y)
    b = DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=[0, 1]).fit(X, y)
    loaded = pickle.loads(pickle.dumps(strip_for_release(a)))
    assert provenance_problem(loaded) is None and privacy_claim(loaded).is_private
    # two fits differ only in their noise: their records are equal (the digest of the
    # released values is not compared), so the invariance harness sees no difference
    assert a.fit_provenance_ == b.fit_provenance_
    assert a.fit_provenance_.release != b.fit_provenance_.release
    a.coef_ = a.coef_ * 2.0                                   # changed after the fit
    assert "another release" in provenance_problem(a)


# -------------------------------------------------------- events of one row (38.6)
def _warnings_of(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fit()
    return model, sorted((w.category.__name__, str(w.message)) for w in caught)


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(epsilon=1.0, data_norm=1.0, fit_intercept=False,
                                 classes=[0, 1]),
    lambda: DPLinearRegression(epsilon=1.0, data_norm=1.0, target_bound=1.0,
                               fit_intercept=False),
    lambda: FILLogisticRegression(epsilon=1.0, data_norm=1.0, alpha=0.1,
                                  fit_intercept=False, classes=[0, 1]),
], ids=["objective_logistic", "objective_least_squares", "fil"])
def test_bounding_one_row_is_silent(make):
    """Failed on the old code: the PrivacyWarning "Rows of X have an L2 norm above
    data_norm" (and "Targets exceed target_bound") fired on D', where one row is outside
    the bound, and not on D: which warnings a fit emits told the two apart. Now both fits
    emit the same warnings; the counts are in the private channel, never pickled."""
    X, y = _xy(200)
    X = 0.99 * X                                   # every row of D inside the bound
    X_prime, y_prime = X.copy(), y.astype(float).copy()
    X_prime[0] = [30.0, 0.0, 0.0]
    y_prime[0] = 1.0 if "Logistic" in type(make()).__name__ else 50.0
    if "Logistic" in type(make()).__name__:
        y_prime = y_prime.astype(int)
    a, seen_a = _warnings_of(lambda: make().fit(X, y))
    b, seen_b = _warnings_of(lambda: make().fit(X_prime, y_prime))
    assert seen_a == seen_b
    assert a._bounding_counts["rows_scaled"] == 0 < b._bounding_counts["rows_scaled"]
    assert "_bounding_counts" not in pickle.loads(pickle.dumps(b)).__dict__
    assert privacy_claim(a).is_private and privacy_claim(b).is_private


def test_dp_standard_scaler_fits_a_neighbour_with_a_missing_value():
    """Failed on the old code: DPStandardScaler raised "Input X contains NaN" on D' (one
    missing entry) and fitted D. Now a missing entry takes the middle of its bounds (a
    row-wise rule, inside the bounds the sensitivity assumes), a stray string likewise."""
    rng = np.random.default_rng(5)
    D = pd.DataFrame({"a": rng.uniform(0, 1, 60), "b": rng.uniform(0, 1, 60)})
    D.index = rng.permutation(500)[:60]
    D_prime = D.astype(object)
    D_prime.iloc[3, 0] = np.nan
    D_prime.iloc[4, 1] = "n/a"
    a, seen_a = _warnings_of(lambda: DPStandardScaler(bounds=(0, 1)).fit(D))
    b, seen_b = _warnings_of(lambda: DPStandardScaler(bounds=(0, 1)).fit(D_prime))
    assert seen_a == seen_b and privacy_claim(b).is_private
    out = b.transform(D_prime)
    np.testing.assert_allclose(out[3, 0], (0.5 - b.mean_[0]) / b.scale_[0])
    np.testing.assert_allclose(out[4, 1], (0.5 - b.mean_[1]) / b.scale_[1])


@MULTICALIBRATION_ADVICE
def test_a_stripped_multicalibrator_keeps_its_claim():
    """``strip_for_release`` removes ``history_`` (declared DP output): less output, not
    another release, so the record still vouches for the stripped copy."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy import PrivateMulticalibrator

    X, y = _xy(400, seed=3)
    base = FrozenEstimator(LogisticRegression().fit(X[:200], y[:200]))
    mc = PrivateMulticalibrator(base, mechanism="numeric_sparse", epsilon=1.0).fit(
        X[200:], y[200:])
    stripped = strip_for_release(mc)
    assert "history_" not in vars(stripped)
    assert provenance_problem(stripped) is None and privacy_claim(stripped).is_private
