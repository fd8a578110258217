"""What a fitted model's pickle holds, and strip_for_release."""

import pickle
import warnings

import numpy as np
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE, STRIP_RESETS_SEED
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from sklearn_privacy import (
    FILLogisticRegression,
    IRFILLogisticRegression,
    PrivateMulticalibrator,
    WERMClassifier,
)
from sklearn_privacy.attacks import membership_inference
from sklearn_privacy.exceptions import AuditStateUnavailableError, PrivacyWarning
from sklearn_privacy.utils import strip_for_release


def _data(n=200, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _found(values, blob):
    """Fraction of the given float64 values (not 0 or 1) whose bytes occur in the pickle.

    numpy arrays store float64 little-endian; pickle stores Python floats big-endian.
    """
    values = set(np.asarray(values, dtype=np.float64).ravel().tolist()) - {0.0, 1.0}
    little, big = np.dtype("<f8"), np.dtype(">f8")
    hits = [np.array(v, little).tobytes() in blob or np.array(v, big).tobytes() in blob
            for v in values]
    return sum(hits) / len(hits)


def _werm(inner=None, seed=1):
    X, y = _data()
    g = np.arange(len(y)) % 2
    sw = np.random.RandomState(seed).uniform(0.5, 2.0, len(y))  # distinct per-row weights
    clf = WERMClassifier(inner if inner is not None else LogisticRegression(), w=0.3)
    return clf.fit(X, y, data_source=g, sample_weight=sw), X, y


# ---------------------------------------------------------------- what a pickle holds


@MULTICALIBRATION_ADVICE
def test_pickles_hold_what_the_release_page_says():
    X, y = _data()
    # FIL: the released parameters only, no training value
    fil = FILLogisticRegression(sigma=0.1, random_state=0).fit(X, y)
    blob = pickle.dumps(fil)
    assert _found(X, blob) == 0 and _found(fil.coef_, blob) == 1
    # IRFIL: the data-dependent sample_weight_ and eta_history_ are in the pickle
    irfil = IRFILLogisticRegression(sigma=0.1, eta_max_iter=2, store_eta=True,
                                    random_state=0).fit(X, y)
    blob = pickle.dumps(irfil)
    assert _found(X, blob) == 0
    assert _found(irfil.sample_weight_, blob) == 1
    assert _found(irfil.eta_history_["eta"], blob) == 1
    # WERM: sample_weight_ (the group of every row) and the inner estimator's state
    werm, X, y = _werm()
    blob = pickle.dumps(werm)
    assert _found(werm.sample_weight_, blob) == 1 and _found(X, blob) == 0
    svc, X, y = _werm(SVC())
    blob = pickle.dumps(svc)
    sv = svc.estimator_.support_vectors_
    assert len(sv) > 10 and _found(sv, blob) == 1  # training rows, verbatim
    knn = KNeighborsClassifier().fit(X, y)
    assert _found(X, pickle.dumps(knn)) == 1  # every training row
    # PrivateMulticalibrator: history_ holds exact (non-private) cell errors
    mc = PrivateMulticalibrator(calibration_tol=0.01, min_cell_size=5).fit(X, y)
    errors = [h["max_cell_error_seen"] for h in mc.history_]
    assert max(errors) > 0 and _found(errors, pickle.dumps(mc)) == 1
    # attack results: the per-row scores of the attacked rows
    res = membership_inference(LogisticRegression().fit(X[:100], y[:100]), X, y,
                               np.arange(len(y)) < 100, random_state=0)
    assert _found(res.scores_members, pickle.dumps(res)) == 1


# ---------------------------------------------------------------- strip_for_release


def _assert_same_predictions(a, b, X):
    for method in ("predict", "predict_proba", "decision_function"):
        if hasattr(a, method):
            np.testing.assert_array_equal(getattr(a, method)(X), getattr(b, method)(X))


@MULTICALIBRATION_ADVICE
@STRIP_RESETS_SEED
def test_strip_removes_data_dependent_state_and_keeps_predictions():
    X, y = _data()
    irfil = IRFILLogisticRegression(sigma=0.1, eta_max_iter=2, store_eta=True,
                                    random_state=0).fit(X, y)
    werm, _, _ = _werm()
    mc = PrivateMulticalibrator(calibration_tol=0.01, min_cell_size=5).fit(X, y)
    for est, removed in ((irfil, ("sample_weight_", "eta_history_")),
                         (werm, ("sample_weight_",)),
                         (mc, ("history_",))):
        secret = getattr(est, removed[0])
        if removed[0] == "history_":
            # without noise, an updated cell's shift is its exact error: updates_ (which
            # predict replays) repeats some of history_'s values; test the others
            shifts = {u[2] for u in est.updates_}
            secret = [h["max_cell_error_seen"] for h in secret
                      if h["max_cell_error_seen"] not in shifts]
            assert secret
        out = strip_for_release(est)
        assert out is not est
        for name in removed:
            assert not hasattr(out, name), name
            assert hasattr(est, name), name  # the original is untouched
        _assert_same_predictions(out, est, X)
        assert _found(secret, pickle.dumps(out)) == 0
        # a stripped model pickles and still predicts after loading
        _assert_same_predictions(pickle.loads(pickle.dumps(out)), est, X)
    # FIL audit state: gone from the copy, kept on the original
    out = strip_for_release(irfil)
    with pytest.raises(AuditStateUnavailableError):
        out.eta_  # noqa: B018
    assert irfil.eta_.shape == (len(y),)


@MULTICALIBRATION_ADVICE
@STRIP_RESETS_SEED
def test_strip_walks_pipelines_and_searches():
    X, y = _data()
    g = np.arange(len(y)) % 2
    pipe = make_pipeline(StandardScaler(), WERMClassifier(LogisticRegression(), w=0.3))
    pipe.fit(X, y, wermclassifier__data_source=g)
    grid = GridSearchCV(WERMClassifier(LogisticRegression()), {"w": [0.2, 0.7]},
                        cv=KFold(2)).fit(X, y, data_source=g)
    nested = PrivateMulticalibrator(
        IRFILLogisticRegression(sigma=0.1, eta_max_iter=1, random_state=0), calibration_tol=0.01,
        min_cell_size=5).fit(X, y)
    for est, inner in ((pipe, lambda e: e[-1]), (grid, lambda e: e.best_estimator_),
                       (grid.best_estimator_, lambda e: e),
                       (nested, lambda e: e.estimator_)):
        out = strip_for_release(est)
        _assert_same_predictions(out, est, X)
        assert not hasattr(inner(out), "sample_weight_")
        assert hasattr(inner(est), "sample_weight_")
    assert not hasattr(strip_for_release(nested), "history_")


@STRIP_RESETS_SEED
def test_strip_inplace():
    X, y = _data()
    irfil = IRFILLogisticRegression(sigma=0.1, eta_max_iter=1, random_state=0).fit(X, y)
    before = irfil.predict_proba(X)
    assert strip_for_release(irfil, inplace=True) is irfil
    assert not hasattr(irfil, "sample_weight_")
    with pytest.raises(AuditStateUnavailableError):
        irfil.eta_  # noqa: B018
    np.testing.assert_array_equal(irfil.predict_proba(X), before)


@pytest.mark.parametrize(
    "make,where",
    [
        (lambda: _werm(SVC())[0], r"estimator_.*SVC.*support_vectors_"),
        (lambda: make_pipeline(StandardScaler(), KNeighborsClassifier()).fit(*_data()),
         r"KNeighborsClassifier.*_fit_X"),
    ],
)
def test_strip_refuses_models_that_store_training_rows(make, where):
    est = make()
    with pytest.raises(ValueError, match=where):
        strip_for_release(est)
    with pytest.warns(PrivacyWarning, match=where):
        out = strip_for_release(est, allow_training_rows=True)
    X, _ = _data()
    _assert_same_predictions(out, est, X)


def test_strip_bad_input():
    with pytest.raises(TypeError, match="estimator"):
        strip_for_release(np.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # an unfitted estimator has nothing to strip
        assert isinstance(strip_for_release(LogisticRegression()), LogisticRegression)
