"""Audit state through scikit-learn's parallel workflows, and nowhere else.

The estimators that ``cross_validate(..., n_jobs=2, return_estimator=True)`` and a
parallel ``GridSearchCV`` fit in joblib's worker processes come back auditable (the
audit state travels in the process pool's own pickler only), with the same etas as a
serial fit; every other pickle and the published object hold none of it (byte checks);
``fil.audit(model, X, y)`` restores it through the estimator's own fit.

Seen failing before the change: the first test raised ``AuditStateUnavailableError`` on
``eta_`` of every returned estimator.
"""

import io
import pickle

import joblib
import numpy as np
import pytest
from _expected_warnings import FIL_NOISE_DOMINATES
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLogisticRegression,
    fil,
)
from sklearn_privacy.exceptions import AuditStateUnavailableError, PrivacyWarning
from sklearn_privacy.utils import strip_for_release


def _data(classification=True, n=240, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    z = X @ np.linspace(1.0, -1.0, d) + 0.3 * rng.normal(size=n)
    return X, ((z > 0).astype(int) if classification else z)


def _float_bytes(a):
    return {np.float64(v).tobytes() for v in np.ravel(np.asarray(a, dtype=float))} - {
        np.float64(0.0).tobytes()}


ESTIMATORS = [
    (FILLogisticRegression, dict(sigma=0.5, alpha=1e-2), True),
    (FILLinearRegression, dict(sigma=0.5, alpha=1e-2), False),
    (IRFILLogisticRegression, dict(sigma=0.5, alpha=1e-2, eta_max_iter=3), True),
]


@pytest.mark.parametrize("Est,kw,classification", ESTIMATORS,
                         ids=[e[0].__name__ for e in ESTIMATORS])
def test_cross_validate_in_two_processes_returns_auditable_estimators(Est, kw,
                                                                       classification):
    X, y = _data(classification)
    cv = KFold(3, shuffle=True, random_state=0)
    est = Est(**kw, random_state=0)
    par = cross_validate(est, X, y, cv=cv, n_jobs=2, return_estimator=True)
    ser = cross_validate(est, X, y, cv=cv, n_jobs=1, return_estimator=True)
    for p, s, (train, _) in zip(par["estimator"], ser["estimator"], cv.split(X), strict=True):
        np.testing.assert_allclose(p.eta_, s.eta_, rtol=1e-12, atol=0)
        np.testing.assert_allclose(fil.eta(p, rows=[0, 1]), fil.eta(s, rows=[0, 1]),
                                   rtol=1e-12, atol=0)
        # and against an independent refit on the fold's training rows
        ref = Est(**kw, random_state=0).fit(X[train], y[train])
        np.testing.assert_allclose(p.eta_, ref.eta_, rtol=1e-12, atol=0)
        np.testing.assert_allclose(p.coef_, ref.coef_, rtol=1e-12, atol=1e-15)


def test_parallel_grid_search_estimators_are_auditable():
    X, y = _data()
    grid = {"sigma": [0.3, 1.0]}
    par = GridSearchCV(FILLogisticRegression(alpha=1e-2, random_state=0), grid, cv=3,
                       n_jobs=2).fit(X, y)
    ref = FILLogisticRegression(alpha=1e-2, random_state=0, **par.best_params_).fit(X, y)
    np.testing.assert_allclose(par.best_estimator_.eta_, ref.eta_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fil.eta(par.best_estimator_), fil.eta(ref), rtol=1e-12)
    # a nested parallel CV of the search returns auditable searches too
    out = cross_validate(GridSearchCV(FILLogisticRegression(alpha=1e-2, random_state=0),
                                      grid, cv=2), X, y, cv=2, n_jobs=2,
                         return_estimator=True)
    for search in out["estimator"]:
        assert search.best_estimator_.eta_.shape == (X.shape[0] // 2,)


@pytest.mark.parametrize("Est,kw,classification", ESTIMATORS,
                         ids=[e[0].__name__ for e in ESTIMATORS])
def test_default_pickles_and_the_release_hold_no_audit_state(Est, kw, classification):
    """Byte check: no training value, exact-minimiser or Hessian entry in ``pickle``,
    ``joblib.dump`` or the stripped release -- also for an estimator that came back
    from a worker process (the pool's reducer is not the default pickler)."""
    X, y = _data(classification)
    est = cross_validate(Est(**kw, random_state=0), X, y, cv=2, n_jobs=2,
                         return_estimator=True)["estimator"][0]
    engine = est._audit_engine()             # it came back auditable
    secret = (_float_bytes(engine.X) | _float_bytes(engine.theta) | _float_bytes(engine.H)
              | _float_bytes(engine.H_inv))
    if not classification:
        secret |= _float_bytes(engine.y)
    buf = io.BytesIO()
    joblib.dump(est, buf)
    with pytest.warns(PrivacyWarning, match="random_state=0 set to None"):
        released = strip_for_release(est)
    for blob in (pickle.dumps(est), buf.getvalue(), pickle.dumps(released)):
        leaked = [s for s in secret if s in blob]
        assert not leaked, f"{len(leaked)} secret float64 values in a dump"
        # the detector works: the released parameters are in it
        assert np.float64(np.ravel(est.coef_)[0]).tobytes() in blob
    with pytest.raises(AuditStateUnavailableError, match="fil.audit"):
        _ = pickle.loads(pickle.dumps(est)).eta_
    with pytest.raises(AuditStateUnavailableError):
        _ = released.eta_


@pytest.mark.parametrize("Est,kw,classification", ESTIMATORS,
                         ids=[e[0].__name__ for e in ESTIMATORS])
def test_fil_audit_restores_the_audit_state_of_a_loaded_estimator(Est, kw, classification):
    X, y = _data(classification)
    est = Est(**kw, random_state=0).fit(X, y)
    loaded = pickle.loads(pickle.dumps(est))
    back = fil.audit(loaded, X, y)
    np.testing.assert_allclose(back.eta_, est.eta_, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(back.coef_, est.coef_)       # the release is untouched
    with pytest.raises(AuditStateUnavailableError):
        _ = loaded.eta_                                          # the input is not modified
    with pytest.raises(ValueError, match="sigma"):
        fil.audit(loaded, X, y, sigma=kw["sigma"] * 2)


def test_fil_audit_refuses_other_rows_for_irfil():
    X, y = _data()
    est = IRFILLogisticRegression(sigma=0.5, alpha=1e-2, eta_max_iter=3,
                                  random_state=0).fit(X, y)
    loaded = pickle.loads(pickle.dumps(est))
    with pytest.raises(ValueError, match="not the rows this model was fitted on"):
        fil.audit(loaded, X[::-1][:200], y[::-1][:200])


@FIL_NOISE_DOMINATES
@pytest.mark.parametrize("delta", [1e-5, 0.0], ids=["gaussian", "laplace-norm"])
@pytest.mark.parametrize("Est", [FILLogisticRegression, FILLinearRegression])
def test_fil_audit_restores_an_epsilon_release(Est, delta):
    """A loaded epsilon-release could not be audited: the refit set sigma next to
    epsilon ("sigma and epsilon both set the noise"). It now plans its own noise, and the
    restored eta equals the original's."""
    classification = Est is FILLogisticRegression
    X, y = _data(classification)
    kw = dict(target_bound=3.0) if not classification else {}
    est = Est(epsilon=1.0, delta=delta, data_norm=1.0, intercept_scaling=1.0, alpha=0.1,
              random_state=0, **kw).fit(X, y)
    assert est.noise_ == ("gaussian" if delta else "laplace-norm")
    back = fil.audit(pickle.loads(pickle.dumps(est)), X, y)
    np.testing.assert_allclose(back.eta_, est.eta_, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(back.coef_, est.coef_)


@pytest.mark.parametrize("Est,kw,classification", ESTIMATORS,
                         ids=[e[0].__name__ for e in ESTIMATORS])
def test_fil_audit_warns_when_the_release_is_not_noise_around_the_given_rows(
        Est, kw, classification):
    """Restoring a loaded estimator checked only the schema, classes and IRFIL weights:
    other rows of the same shape (here the labels flipped) gave the etas of another
    model without a word. The released parameters are now tested as a noise draw around
    the minimiser on the rows given (chi-squared, p < 1e-9 warns); the training rows
    pass."""
    import warnings

    from sklearn_privacy.exceptions import StatisticalWarning

    X, y = _data(classification)
    est = Est(**{**kw, "sigma": 0.02}, random_state=0).fit(X, y)
    loaded = pickle.loads(pickle.dumps(est))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatisticalWarning)
        fil.audit(loaded, X, y)
    other = (1 - y) if classification else -y
    with pytest.warns(StatisticalWarning, match=r"noise scales from the exact minimiser"):
        fil.audit(loaded, X, other)
