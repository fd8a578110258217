"""scikit-learn's estimator checks over every estimator of the package."""

import inspect

import numpy as np
import pytest
from _expected_warnings import MULTICALIBRATION_ADVICE
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import sklearn_privacy


def _instances():
    # Output-perturbed estimators: the checks compare predictions across fits and
    # demand near-perfect training scores, so they use a tiny noise scale and a
    # fixed seed (as scikit-learn does for its own randomized estimators). A fixed
    # seed makes the release non-private; it is for testing only.
    from sklearn_privacy import (
        FILLinearRegression,
        FILLogisticRegression,
        FILPoissonRegressor,
        IRFILLinearRegression,
        IRFILLogisticRegression,
        IRFILPoissonRegressor,
        PrivateMulticalibrator,
        RandomStoppingSearch,
        WERMClassifier,
    )
    from sklearn_privacy.additive import DPBoostingClassifier, DPBoostingRegressor
    from sklearn_privacy.dummy import DPDummyClassifier, DPDummyRegressor
    from sklearn_privacy.linear_model import DPLinearRegression, DPLogisticRegression
    from sklearn_privacy.multicalibration._weak_base import GradientDescentLogisticRegression
    from sklearn_privacy.preprocessing import (
        BoundedScaler,
        DPQuantileScaler,
        DPRowNormClipper,
        DPStandardScaler,
        PublicSchema,
    )

    return [
        FILLinearRegression(sigma=1e-8, random_state=0),
        FILLogisticRegression(sigma=1e-8, random_state=0),
        FILPoissonRegressor(sigma=1e-8, alpha=1e-3, random_state=0),
        IRFILLinearRegression(sigma=1e-8, eta_max_iter=3, random_state=0),
        IRFILLogisticRegression(sigma=1e-8, eta_max_iter=3, random_state=0),
        IRFILPoissonRegressor(sigma=1e-8, alpha=1e-3, eta_max_iter=3, random_state=0),
        WERMClassifier(),
        PrivateMulticalibrator(random_state=0),
        PrivateMulticalibrator(mechanism="numeric_sparse", random_state=0),
        GradientDescentLogisticRegression(fit_intercept=True),
        FILLinearRegression(sigma=1e-8, intercept_scaling=1.0, random_state=0),
        FILLogisticRegression(sigma=1e-8, intercept_scaling=1.0, random_state=0),
        BoundedScaler((-5.0, 5.0)),
        BoundedScaler((-5.0, 5.0), fill_value=0.0),
        PublicSchema({0: (-5.0, 5.0)}),   # the checks' extra columns are dropped
        DPStandardScaler((-5.0, 5.0), random_state=0),
        DPQuantileScaler((-5.0, 5.0), epsilon=1e6, random_state=0),
        DPRowNormClipper(max_norm=100.0, epsilon=1e6, random_state=0),
        DPLinearRegression(epsilon=1e20, delta=0.0, data_norm=100.0, target_bound=10.0,
                           alpha=1e-3, method="objective", random_state=0),
        # objective perturbation at an epsilon so large that the (pure, Gamma-norm) noise
        # is negligible; the Gaussian variant's noise falls only as 1 / sqrt(epsilon)
        DPLogisticRegression(epsilon=1e20, delta=0.0, data_norm=1e3, alpha=1e-3,
                             random_state=0),
        DPLinearRegression(epsilon=1e20, delta=0.0, data_norm=100.0, target_bound=10.0,
                           alpha=1e-3, random_state=0),
        # boosting at a negligible noise; the checks' data lie within (-5, 5) mostly
        DPBoostingClassifier(epsilon=1e12, delta=0.0, bounds=(-5.0, 5.0), max_iter=10,
                             random_state=0),
        DPBoostingRegressor(epsilon=1e12, delta=0.0, bounds=(-5.0, 5.0), max_iter=10,
                            target_bound=100.0, random_state=0),
        RandomStoppingSearch(
            FILLogisticRegression(sigma=1e-8, fit_intercept=False, data_norm=1e3),
            {"alpha": [1e-3]}, mean_runs=1, validation_fraction=0.1, random_state=0),
        DPDummyClassifier(epsilon=1e20, random_state=0),
        DPDummyRegressor(epsilon=1e20, target_bound=1e6, random_state=0),
    ]


INSTANCES = _instances()


def _upstream_binarization_is_order_dependent(estimator):
    # scikit-learn 1.6 builds the binary target of its sample-weight-equivalence check
    # from the first label of each (differently shuffled) copy of the data, so the two
    # fits it compares see different labels. Detect that behaviour rather than pinning
    # versions.
    from sklearn_privacy.utils.fixes import enforce_estimator_tags_y

    y = np.array([0, 1, 2])
    a = enforce_estimator_tags_y(estimator, y.copy())
    if a is None:
        return False
    b = enforce_estimator_tags_y(estimator, y[::-1].copy())[::-1]
    return not np.array_equal(a == a[0], b == a[0])


# expected in scikit-learn's checks: they fit PrivateMulticalibrator's base on its
# calibration rows, on data too small for a correctable cell (both asserted in
# test_multicalibration*.py), and feed labels with NaN through array-api-compat's cast
@MULTICALIBRATION_ADVICE
@pytest.mark.filterwarnings(
    "ignore:mechanism='numeric_sparse' with a base estimator fitted on the calibration "
    "rows:sklearn_privacy.exceptions.PrivacyWarning")
@pytest.mark.filterwarnings(
    "ignore:invalid value encountered in cast:RuntimeWarning:sklearn.externals")
@parametrize_with_checks(INSTANCES)
def test_sklearn_compatible_estimator(estimator, check):
    name = getattr(check, "func", check).__name__
    if (
        name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")
        and _upstream_binarization_is_order_dependent(estimator)
    ):
        pytest.xfail("scikit-learn's check relabels the two fits differently (fixed upstream)")
    check(estimator)


def test_every_public_estimator_is_checked():
    public = {
        name
        for name in sklearn_privacy.__all__
        if inspect.isclass(getattr(sklearn_privacy, name))
        and issubclass(getattr(sklearn_privacy, name), BaseEstimator)
    }
    checked = {type(est).__name__ for est in INSTANCES}
    missing = public - checked
    assert not missing, f"estimators without common checks: {sorted(missing)}"
    assert public, "no public estimator found"


def _prose(doc):
    """A docstring without its Examples section (whose import lines mention the package)."""
    import re

    return re.split(r"\n\s*Examples\n\s*-{8}", doc or "")[0]


#: What each part of the honesty statement must match (case-insensitive).
GUARANTEE_PATTERNS = {
    "threat model": r"threat model",
    "what holds": r"guarantee",
    "what does not hold": r"not guaranteed|does not guarantee|no formal privacy guarantee|"
                          r"no guarantee holds",
}


@pytest.mark.parametrize("est", [e for e in INSTANCES if type(e).__name__ !=
                                 "GradientDescentLogisticRegression"],
                         ids=lambda e: type(e).__name__)
def test_docstring_states_guarantee(est):
    """Privacy honesty: every privacy estimator's docstring prose (Examples excluded) names
    its threat model, what is guaranteed and what is not.

    Mutation check: replacing FILLinearRegression's docstring by a one-line summary plus
    an Examples section importing ``sklearn_privacy`` (which passed the previous check,
    ``"privacy" in doc``) fails here. The weak base ``GradientDescentLogisticRegression``
    is a plain classifier and is left out.
    """
    import re

    doc = _prose(type(est).__doc__)
    missing = [part for part, pat in GUARANTEE_PATTERNS.items()
               if not re.search(pat, doc, flags=re.I)]
    assert not missing, f"{type(est).__name__} docstring does not state: {missing}"


def test_docstring_guarantee_check_rejects_an_import_line():
    """The check itself: an Examples-only mention of the package does not pass."""
    import re

    doc = "A model.\n\n    Examples\n    --------\n    >>> from sklearn_privacy import X\n"
    assert not re.search(GUARANTEE_PATTERNS["threat model"], _prose(doc), flags=re.I)
    assert "privacy" in doc  # what the previous check accepted
