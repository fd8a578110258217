"""A label outside the declared classes, under a finite claim: no fit fails on it.

The declared rule (``sklearn_privacy.utils._validation.void_outside_labels``): such a
row stays in the data set (``n`` unchanged) and contributes nothing to the release; the
count goes to the private channel ``_labels_outside_classes``. Each DP classifier that
takes ``classes=`` is checked three ways: D and D' (one label replaced by one outside
the classes) both fit with nothing observable differing (the fuzz harness); the release
on D' equals, draw for draw, an independent computation without that row's contribution
and with ``n`` fixed; and the count stays out of every pickle. Every test here but the
one that keeps the refusal without a DP view failed on the old code, where such a label
made ``fit`` raise.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _expected_warnings import MULTICALIBRATION_ADVICE
from scipy.optimize import minimize
from scipy.special import log_softmax
from sklearn.base import clone

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.additive import DPBoostingClassifier
from sklearn_privacy.dummy import DPDummyClassifier
from sklearn_privacy.linear_model import DPLogisticRegression
from sklearn_privacy.model_selection import RandomStoppingSearch
from sklearn_privacy.privacy import neighbour_invariance
from sklearn_privacy.utils import strip_for_release

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn_privacy.exceptions.PrivacyWarning")

CLASSES = ["no", "yes"]


def _rows(n=80, seed=0, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    labels = np.array(["a", "b", "c"] if k == 3 else CLASSES)
    y = labels[(X[:, 0] > 0).astype(int) + (k == 3) * (X[:, 1] > 0.4)]
    return X, y.astype(object), list(labels)


def _outside(y, j=5, value="__new_label__"):
    y2 = np.asarray(y, dtype=object).copy()
    y2[j] = value
    return y2


ESTIMATORS = {
    "dp_logistic": lambda c: DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=c),
    "dp_logistic_pure": lambda c: DPLogisticRegression(epsilon=1.0, delta=0.0,
                                                       data_norm=1.5, classes=c),
    "fil_logistic": lambda c: FILLogisticRegression(sigma=1.0, alpha=0.1,
                                                    fit_intercept=False, data_norm=1.0,
                                                    classes=c),
    "fil_logistic_scaled_intercept": lambda c: FILLogisticRegression(
        epsilon=1.0, intercept_scaling=1.0, data_norm=1.5, classes=c),
    "boosting": lambda c: DPBoostingClassifier(epsilon=1.0, bounds=(-1, 1), classes=c),
    "dummy": lambda c: DPDummyClassifier(epsilon=1.0, classes=c),
}


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_a_label_outside_the_classes_changes_nothing_observable(name, k):
    """The harness's ``new_label`` neighbours (and a duplicate, for contrast): every
    neighbour fits, and no attribute, warning, printed text or repr differs."""
    if name == "fil_logistic_scaled_intercept" and k == 3:
        pytest.skip("intercept_scaling is for two classes")
    X, y, labels = _rows(60, 1, k)
    est = ESTIMATORS[name](labels)
    assert privacy_claim(clone(est).fit(X, y)).is_private
    report = neighbour_invariance(est, X, y, rows=[0, 7], kinds=["new_label", "duplicate"])
    assert report.n_neighbours == 4 and report.refused == [], report
    assert report.is_indistinguishable, report


@pytest.mark.parametrize("value", ["__new_label__", None, np.nan, 2.5, "yes "])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_any_label_value_fits_and_goes_to_the_private_count(name, value):
    X, y, labels = _rows()
    with warnings.catch_warnings(record=True) as on_d:
        warnings.simplefilter("always")
        a = ESTIMATORS[name](labels).fit(X, y)
    with warnings.catch_warnings(record=True) as on_d2:
        warnings.simplefilter("always")
        b = ESTIMATORS[name](labels).fit(X, _outside(y, 5, value))
    # no warning says a row was outside (the public ones are the same)
    assert [str(w.message) for w in on_d2] == [str(w.message) for w in on_d]
    assert a._labels_outside_classes == 0 and b._labels_outside_classes == 1
    assert list(b.classes_) == labels
    assert privacy_claim(b).epsilon == privacy_claim(a).epsilon < np.inf
    for published in (pickle.loads(pickle.dumps(b)), strip_for_release(b)):
        assert "_labels_outside_classes" not in published.__dict__
    assert repr(a) == repr(b)


def test_pandas_labels_with_missing_values():
    X, y, labels = _rows()
    ys = pd.Series(_outside(y, 3, pd.NA), index=np.arange(100, 180))
    ys.iloc[9] = None
    for name in ("dp_logistic", "fil_logistic", "boosting", "dummy"):
        est = ESTIMATORS[name](labels).fit(pd.DataFrame(X, columns=list("abc")), ys)
        assert est._labels_outside_classes == 2
    cat = pd.Series(pd.Categorical(_outside(y, 3, "maybe")))
    assert ESTIMATORS["dp_logistic"](labels).fit(X, cat)._labels_outside_classes == 1


def test_without_a_dp_view_a_label_outside_is_still_refused():
    """No finite claim (no ``data_norm``; an unpenalised intercept): today's refusal."""
    X, y, labels = _rows()
    for est in (FILLogisticRegression(sigma=1.0, fit_intercept=False, classes=labels),
                FILLogisticRegression(sigma=1.0, data_norm=1.0, classes=labels)):
        with pytest.raises(ValueError, match="outside the declared classes"):
            est.fit(X, _outside(y))


# ---------------------------------------------------------- brute-force oracles
def _objective_oracle(est, X, y_idx, drop, K):
    """The perturbed objective of ``est``'s fit minimised by scipy, without row ``drop``
    and with the sum still divided by the full ``n``; the same noise draws."""
    from sklearn_privacy.linear_model._estimators import _draw
    from sklearn_privacy.utils import noise_generator

    *_, the_plan = est._audit_data
    n = X.shape[0]
    Xa = np.hstack([X, np.ones((n, 1))])
    keep = np.arange(n) != drop
    Xk, yk = Xa[keep], y_idx[keep]
    p = Xa.shape[1] * (K if K > 2 else 1)
    b, _, _, residual = _draw(the_plan, p, n, noise_generator(est.random_state))
    lam = the_plan["penalty"]

    def G(t):
        if K > 2:
            T = t.reshape(K, -1)
            logp = log_softmax(Xk @ T.T, axis=1)
            P = np.exp(logp)
            P[np.arange(yk.size), yk] -= 1.0
            value = -logp[np.arange(yk.size), yk].sum()
            grad = (P.T @ Xk).ravel()
        else:
            z = Xk @ t
            value = np.sum(np.logaddexp(0.0, z) - yk * z)
            grad = Xk.T @ (1.0 / (1.0 + np.exp(-z)) - yk)
        return (value / n + 0.5 * lam * t @ t + b @ t / n,
                grad / n + lam * t + b / n)

    res = minimize(G, np.zeros(p), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-13, "ftol": 1e-15, "maxiter": 10_000})
    return res.x + residual


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_dp_logistic_release_is_the_objective_without_the_row(k, sparse):
    X, y, labels = _rows(70, 2, k)
    j = 11
    y2 = _outside(y, j)
    Xin = sp.csr_matrix(X) if sparse else X
    est = DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=labels,
                               random_state=4).fit(Xin, y2)
    y_idx = np.searchsorted(labels, np.where(np.arange(70) == j, labels[0], y))
    theta = _objective_oracle(est, X, y_idx, j, k)
    released = np.column_stack([est.coef_, est.intercept_]).ravel()
    np.testing.assert_allclose(released, theta, atol=1e-6)
    # the row's features do not matter either: the release is the same draw for draw
    X3 = X.copy()
    X3[j] = [0.6, -0.6, 0.5]
    other = clone(est).fit(X3, y2)
    np.testing.assert_allclose(other.coef_, est.coef_, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("k", [2, 3])
def test_fil_release_is_the_fit_without_the_row_at_the_same_penalty(k):
    """The output-perturbation objective ``sum_i l_i + n alpha / 2 ||w||^2`` without row
    j and with n fixed is the FIL fit on the other n - 1 rows at ``alpha n / (n - 1)``
    (the same noise draw for the same seed)."""
    X, y, labels = _rows(70, 3, k)
    j, n, alpha = 20, 70, 0.1
    kw = dict(sigma=0.5, fit_intercept=False, data_norm=1.0, classes=labels, random_state=2)
    est = FILLogisticRegression(alpha=alpha, **kw).fit(X, _outside(y, j))
    keep = np.arange(n) != j
    ref = FILLogisticRegression(alpha=alpha * n / (n - 1), **kw).fit(X[keep], y[keep])
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-11)
    assert est.sensitivity_ == clone(est).fit(X, y).sensitivity_   # n public, unchanged


def test_fil_on_dask_applies_the_same_rule():
    da = pytest.importorskip("dask.array")
    X, _, _ = _rows(80, 5)
    y = (X[:, 0] > 0).astype(float)
    y[[4, 50]] = [7.0, np.nan]
    kw = dict(sigma=1.0, alpha=0.1, fit_intercept=False, data_norm=1.0, classes=[0, 1],
              random_state=0)
    dense = FILLogisticRegression(**kw).fit(X, y)
    lazy = FILLogisticRegression(**kw).fit(da.from_array(X, chunks=(30, 3)),
                                           da.from_array(y, chunks=30))
    np.testing.assert_allclose(lazy.coef_, dense.coef_, rtol=1e-12)
    assert lazy._labels_outside_classes == dense._labels_outside_classes == 2
    assert lazy.epsilon_ == dense.epsilon_ < np.inf


def test_dummy_counts_leave_the_row_out():
    X, y, labels = _rows(90, 6)
    j = 30
    est = DPDummyClassifier(epsilon=1.0, classes=labels, random_state=5).fit(
        X, _outside(y, j))
    keep = np.arange(90) != j
    ref = DPDummyClassifier(epsilon=1.0, classes=labels, random_state=5).fit(
        X[keep], y[keep])
    np.testing.assert_array_equal(est.class_prior_, ref.class_prior_)


@pytest.mark.parametrize("k", [2, 3])
def test_boosting_statistics_leave_the_row_out(k):
    """Totals, count and residual histograms without the row: the same release as the
    fit on the other rows (n enters only through a clip at 1 / (2n) of the noisy class
    shares, inactive here)."""
    X, y, labels = _rows(120, 7, k)
    j = 44
    kw = dict(epsilon=2.0, bounds=(-1, 1), classes=labels, max_bins=4, random_state=3)
    est = DPBoostingClassifier(**kw).fit(X, _outside(y, j))
    keep = np.arange(120) != j
    ref = DPBoostingClassifier(**kw).fit(X[keep], y[keep])
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-12)
    for a, b in zip(est.term_scores_, ref.term_scores_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(est.bin_counts_, ref.bin_counts_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_private_selection_over_candidates_with_a_label_outside():
    """RandomStoppingSearch over DP candidates: D and D' (one label outside the classes)
    both publish, with the same transcript under common random numbers."""
    X, y, labels = _rows(80, 8)
    search = RandomStoppingSearch(
        DPLogisticRegression(epsilon=1.0, data_norm=1.5, classes=labels),
        {"alpha": [0.01, 1.0]}, mean_runs=1.0, score_epsilon=1.0)
    report = neighbour_invariance(search, X, y, rows=[3], kinds=["new_label"],
                                  common_random_numbers=11)
    assert report.refused == [] and report.is_indistinguishable, report


@MULTICALIBRATION_ADVICE
def test_private_multicalibrator_takes_the_frozen_base_label_set():
    """Under NumericSparse with a frozen base (a finite claim), the label set is the
    base's: a label outside it (or a calibration set with one class only) fits, the row
    is a member of no cell, and the updates are those without it, draw for draw."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy import PrivateMulticalibrator

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=400), rng.randint(0, 2, 400)])
    y = (rng.uniform(size=400) < 0.3 + 0.4 * X[:, 1]).astype(int)
    base = FrozenEstimator(LogisticRegression().fit(X[:200], y[:200]))
    kw = dict(groups=[1], mechanism="numeric_sparse", epsilon=4.0, random_state=1)
    Xc, yc = X[200:], y[200:].astype(float)
    y2 = yc.copy()
    y2[[3, 17]] = [5.0, np.nan]
    mc = PrivateMulticalibrator(base, **kw).fit(Xc, y2)
    assert mc._labels_outside_classes == 2 and np.isfinite(mc.epsilon_)
    assert "_labels_outside_classes" not in pickle.loads(pickle.dumps(mc)).__dict__
    keep = np.ones(200, bool)
    keep[[3, 17]] = False
    ref = PrivateMulticalibrator(base, **kw).fit(Xc[keep], yc[keep])
    np.testing.assert_allclose(mc.predict_proba(X[:50]), ref.predict_proba(X[:50]))
    PrivateMulticalibrator(base, **kw).fit(Xc, np.zeros(200))     # one class present
