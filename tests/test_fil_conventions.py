"""scikit-learn conventions of the FIL family: one fit path, coefficient shapes, ``tol``."""

import warnings

import numpy as np
import pytest
from sklearn.feature_selection import SelectFromModel
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)
from sklearn_privacy.fil._base import BaseFILEstimator

ALL = (FILLinearRegression, FILLogisticRegression, IRFILLinearRegression,
       IRFILLogisticRegression)


def _data(n=200, d=5, seed=0, classification=False):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    z = 2.0 * X[:, 0] - 1.5 * X[:, 1]  # features 2.. are noise
    if classification:
        return X, (z + rng.logistic(size=n) > 0).astype(int)
    return X, z + 0.3 * rng.normal(size=n)


# ---------------------------------------------------------------------- one fit path
def test_one_template_fit():
    """Every estimator of the family runs the base template (validation, encoding,
    weights, release) and only supplies ``_fit``/``_encode_target``."""
    for cls in ALL:
        assert cls.fit is BaseFILEstimator.fit, cls.__name__


@pytest.mark.parametrize("Est", [FILLogisticRegression, IRFILLogisticRegression])
def test_single_weighted_class_is_refused_by_every_classifier(Est):
    X, y = _data(n=40, classification=True)
    with pytest.raises(ValueError, match="one class has positive sample_weight"):
        Est().fit(X, y, sample_weight=y.astype(float))


# ---------------------------------------------------------------------- shapes
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("Est,Ref,classification", [
    (FILLogisticRegression, LogisticRegression, True),
    (IRFILLogisticRegression, LogisticRegression, True),
    (FILLinearRegression, LinearRegression, False),
    (IRFILLinearRegression, LinearRegression, False),
])
def test_coef_and_intercept_shaped_as_scikit_learn(Est, Ref, classification, fit_intercept):
    X, y = _data(classification=classification)
    est = Est(sigma=0.01, fit_intercept=fit_intercept, random_state=0).fit(X, y)
    ref = Ref(fit_intercept=fit_intercept).fit(X, y)
    assert np.shape(est.coef_) == np.shape(ref.coef_)
    assert np.shape(est.intercept_) == np.shape(ref.intercept_)
    if not fit_intercept:
        assert np.all(np.ravel(est.intercept_) == 0.0)
    # the released vector is theta + noise, in the order coef then intercept
    theta = est._audit_engine().theta
    flat = est._released_theta()
    assert flat.shape == theta.shape
    assert np.allclose(flat[:X.shape[1]], np.ravel(est.coef_), rtol=0, atol=0)
    if classification:
        np.testing.assert_allclose(est.decision_function(X),
                                   (X @ est.coef_.T + est.intercept_).ravel(), rtol=1e-13)
    else:
        np.testing.assert_allclose(est.predict(X), X @ est.coef_ + est.intercept_,
                                   rtol=1e-13)


def test_select_from_model_reads_the_released_coefficients():
    X, y = _data(d=6, classification=True)
    clf = FILLogisticRegression(sigma=0.01, random_state=0).fit(X, y)
    sfm = SelectFromModel(clf, prefit=True, threshold=-np.inf, max_features=2)
    support = sfm.get_support(indices=True)
    expected = np.sort(np.argsort(-np.abs(clf.coef_[0]))[:2])
    assert np.array_equal(support, expected)
    assert set(support) == {0, 1}  # the two informative features
    # and in a pipeline, refitting the selector's clone
    pipe = make_pipeline(SelectFromModel(FILLogisticRegression(sigma=0.01, random_state=0),
                                         threshold="mean"),
                         FILLogisticRegression(sigma=0.01, random_state=1)).fit(X, y)
    assert pipe[-1].coef_.shape == (1, pipe[0].get_support().sum())
    assert set(pipe[0].get_support(indices=True)) == {0, 1}


def test_permutation_importance_ranks_the_informative_features():
    X, y = _data(d=5, classification=True, seed=1)
    clf = FILLogisticRegression(sigma=0.01, random_state=0).fit(X, y)
    res = permutation_importance(clf, X, y, n_repeats=20, random_state=0)
    assert res.importances_mean.shape == (5,)
    imp = res.importances_mean
    assert min(imp[0], imp[1]) > 3 * np.abs(imp[2:]).max()
    # independent oracle for one column: mean accuracy drop under explicit permutations
    rng = np.random.RandomState(3)
    drops = []
    for _ in range(50):
        Xp = X.copy()
        Xp[:, 0] = Xp[rng.permutation(len(X)), 0]
        drops.append(clf.score(X, y) - clf.score(Xp, y))
    assert imp[0] == pytest.approx(np.mean(drops), abs=0.05)


# ---------------------------------------------------------------------- tol
def test_tol_is_the_newton_tolerance_in_both_logistic_estimators():
    """With ``eta_tol`` given, IRFIL's ``tol`` is the Newton tolerance of every weighted
    solve, as in FILLogisticRegression: a loose ``tol`` stops Newton early in both."""
    X, y = _data(classification=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling is warning-free
        loose = IRFILLogisticRegression(sigma=1e-9, eta_max_iter=1, tol=0.3, eta_tol=0.0,
                                        random_state=0).fit(X, y)
        tight = IRFILLogisticRegression(sigma=1e-9, eta_max_iter=1, eta_tol=0.0,
                                        random_state=0).fit(X, y)
        fil_loose = FILLogisticRegression(sigma=1e-9, tol=0.3, random_state=0).fit(X, y)
        fil_tight = FILLogisticRegression(sigma=1e-9, random_state=0).fit(X, y)
    assert fil_loose.n_iter_ < fil_tight.n_iter_
    gap_ir = np.abs(loose.coef_ - tight.coef_).max()
    gap_fil = np.abs(fil_loose.coef_ - fil_tight.coef_).max()
    assert gap_ir > 1e-6 and gap_fil > 1e-6
    # the loose fits are no longer exact minimisers; the tight ones agree to rounding
    w = tight.sample_weight_
    ref = FILLogisticRegression(sigma=1e-9, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(tight.coef_, ref.coef_, rtol=1e-8)


def test_eta_tol_is_the_reweighting_stop():
    X, y = _data()
    est = IRFILLinearRegression(eta_max_iter=50, eta_tol=1e-3, random_state=0).fit(X, y)
    cv = est.eta_history_["cv"]
    assert cv[-1] <= 1e-3 < cv[-2] and est.n_iter_ == len(cv) - 1 < 50


@pytest.mark.parametrize("Est", ALL)
def test_defaults_do_not_warn(Est):
    X, y = _data(classification=Est in (FILLogisticRegression, IRFILLogisticRegression))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Est(random_state=0).fit(X, y)


