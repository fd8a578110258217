"""Every warning of the package is a SklearnPrivacyWarning reported at the user's line.

For each public entry point that warns, the recorded warning's ``filename`` must be this
test file (not a module of the package, of scikit-learn or of joblib), also when the call
goes through ``cross_validate``, a ``Pipeline`` or a search. Before the change the
multicalibrator's and the scorer's warnings were plain ``UserWarning``, and a warning of a
fit run by ``cross_validate`` pointed at a line inside scikit-learn.
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, PrivateMulticalibrator, fil
from sklearn_privacy.attacks import (
    canary_audit,
    lira,
    make_membership_scorer,
    one_run_audit,
    refit_under_leakage_bound,
    rmia,
)
from sklearn_privacy.exceptions import (
    ConvergenceWarning,
    NumericalPrecisionWarning,
    PrivacyWarning,
    SklearnPrivacyWarning,
    StatisticalWarning,
)
from sklearn_privacy.utils import strip_for_release


def _xy(n=120, d=3, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(n, d))
    return X, (X[:, 0] + rng.normal(size=n) > 0).astype(int)


def _big_rows():
    # a fit warning that depends on the parameters only (the noise swamps the model at
    # this epsilon): rows above data_norm are scaled silently, one row deciding it
    X, y = _xy()
    return (FILLinearRegression(epsilon=0.01, data_norm=1.0, target_bound=10.0,
                                fit_intercept=False, random_state=0), X, y.astype(float))


def _collinear():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    return np.column_stack([x, x + 1e-5 * rng.normal(size=50)]), x


def _multicalibrator_small_cells():
    X, y = _xy(n=300, seed=1)
    groups = [lambda Z: Z[:, 1] > 2.5]               # a small group
    return PrivateMulticalibrator(LogisticRegression(), groups, min_cell_size=2,
                                  calibration_tol=0.01, random_state=0).fit(X, y)


def _refit_infeasible():
    X, y = _xy(n=200)
    scoring = {"acc": "accuracy",
               "mia": make_membership_scorer(X, y, attack="loss", metric="advantage",
                                             random_state=0)}
    GridSearchCV(LogisticRegression(), {"C": [1.0, 100.0]}, scoring=scoring,
                 refit=refit_under_leakage_bound("acc", "mia", -1.0, on_infeasible="warn"),
                 cv=KFold(2)).fit(X, y)


def _attack(name):
    # the attacks fit the user's estimator through validate_params, joblib and
    # _fit_context: its fit warning (the noise swamps the model) must still name the call
    # here
    est, X, y = _big_rows()
    y = (y > 0).astype(int)
    members = np.arange(len(y)) < len(y) // 2
    if name == "canary_audit":
        return canary_audit(est, X, y.astype(float), 0, X[1], 1.0, n_releases=4,
                            random_state=0)
    if name == "canary_audit(refit=False)":
        return canary_audit(est, X, y.astype(float), 0, X[1], 1.0, n_releases=4,
                            refit=False, random_state=0)
    clf = FILLogisticRegression(epsilon=0.01, data_norm=1.0, fit_intercept=False,
                                classes=[0, 1], random_state=0)
    if name == "one_run_audit":
        return one_run_audit(clf, X, y, n_canaries=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the target's own fit is not the attack
        target = clf.fit(X[members], y[members])
    attack = lira if name == "lira" else rmia
    return attack(target, X, y, members, n_reference_models=4, random_state=0)


CASES = {
    "fit (data_norm)": (lambda: _big_rows()[0].fit(*_big_rows()[1:]), PrivacyWarning),
    "fit (ill-conditioned)": (lambda: FILLinearRegression(alpha=0.0, random_state=0).fit(
        *_collinear()), NumericalPrecisionWarning),
    "fit (shared generator)": (lambda: FILLogisticRegression(
        random_state=np.random.RandomState(0)).fit(*_xy()), PrivacyWarning),
    "fit (not converged)": (lambda: FILLogisticRegression(max_iter=1, random_state=0).fit(
        *_xy()), ConvergenceWarning),
    "cross_validate": (lambda: cross_validate(_big_rows()[0], *_big_rows()[1:], cv=2),
                       PrivacyWarning),
    "Pipeline.fit": (lambda: make_pipeline(FunctionTransformer(), _big_rows()[0]).fit(
        *_big_rows()[1:]), PrivacyWarning),
    "strip_for_release": (lambda: strip_for_release(
        FILLogisticRegression(random_state=0).fit(*_xy())), PrivacyWarning),
    "PrivateMulticalibrator.fit": (_multicalibrator_small_cells, StatisticalWarning),
    "fil.audit": (lambda: fil.audit(LogisticRegression(max_iter=1).fit(*_xy()), *_xy(),
                                    sigma=1.0), StatisticalWarning),
    "refit_under_leakage_bound": (_refit_infeasible, PrivacyWarning),
    **{f"attacks.{name}": (lambda name=name: _attack(name), PrivacyWarning)
       for name in ("canary_audit", "canary_audit(refit=False)", "one_run_audit", "lira",
                    "rmia")},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_warning_points_at_the_callers_line(name):
    call, category = CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = [w for w in caught if issubclass(w.category, SklearnPrivacyWarning)]
    assert any(issubclass(w.category, category) for w in ours), (
        name, [(w.category.__name__, str(w.message)[:60]) for w in caught])
    for w in ours:
        assert w.filename == __file__, (name, w.category.__name__, w.filename, w.lineno)


def test_package_warnings_share_one_base():
    for cls in (PrivacyWarning, NumericalPrecisionWarning, StatisticalWarning,
                ConvergenceWarning):
        assert issubclass(cls, SklearnPrivacyWarning) and issubclass(cls, UserWarning)
    import sklearn.exceptions
    assert issubclass(ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
