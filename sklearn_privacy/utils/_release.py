"""Remove data-dependent audit state from a fitted model before publishing it."""

from __future__ import annotations

import copy
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from ..exceptions import PrivacyWarning

# Attributes in which scikit-learn estimators keep training rows verbatim; ``predict``
# reads them, so they cannot be removed.
_ROW_ATTRIBUTES = (
    "support_vectors_",  # SVC, NuSVC, SVR, NuSVR, OneClassSVM
    "_fit_X",  # KNeighbors*, RadiusNeighbors*, NearestNeighbors, LocalOutlierFactor
    "X_train_",  # GaussianProcessRegressor, and GaussianProcessClassifier's inner model
    "X_fit_",  # KernelPCA, KernelRidge
    "X_",  # LabelPropagation, LabelSpreading
)


#: Data-dependent attributes of this package's estimators that ``predict`` never reads,
#: keyed by public class name (subclasses inherit the entry). Names, not classes, so that
#: ``utils`` imports none of the estimator subpackages (they all import ``utils``);
#: ``tests/test_imports.py`` checks that every key is a public class of the package.
AUDIT_ATTRIBUTES = {
    "IRFILLinearRegression": ("sample_weight_", "eta_history_"),
    "IRFILLogisticRegression": ("sample_weight_", "eta_history_"),
    "WERMClassifier": ("sample_weight_",),
    "PrivateMulticalibrator": ("history_", "largest_cell_size_", "largest_cell_sizes_",
                               "validation_errors_"),
}


def _audit_attributes(est):
    """The :data:`AUDIT_ATTRIBUTES` of ``est``'s class or of a package base class."""
    names = []
    for cls in type(est).__mro__:
        if cls.__module__.split(".")[0] == "sklearn_privacy":
            names.extend(AUDIT_ATTRIBUTES.get(cls.__name__, ()))
    return names


def _walk(obj, path, seen, out):
    """Every estimator reachable from ``obj`` (attributes, lists, tuples, dicts)."""
    if isinstance(obj, BaseEstimator):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        out.append((path, obj))
        for key, value in list(vars(obj).items()):
            _walk(value, f"{path}.{key}", seen, out)
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            _walk(value, f"{path}[{i}]", seen, out)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _walk(value, f"{path}[{key!r}]", seen, out)
    elif isinstance(obj, np.ndarray) and obj.dtype == object:
        for i, value in enumerate(obj.ravel()):
            if isinstance(value, BaseEstimator | list | tuple | dict):
                _walk(value, f"{path}[{i}]", seen, out)


def _estimators(estimator):
    found: list = []
    _walk(estimator, type(estimator).__name__, set(), found)
    return found


def _stored_rows(path, est):
    """Names of attributes of ``est`` holding training rows verbatim."""
    from sklearn.kernel_approximation import Nystroem

    names = [name for name in _ROW_ATTRIBUTES
             if getattr(est.__dict__.get(name), "size", 0)]
    if isinstance(est, Nystroem) and "components_" in est.__dict__:
        names.append("components_")  # a sample of training rows
    return [f"{path} ({type(est).__name__}) stores training rows in {name}"
            for name in names]


def _release_state(est):
    """Reduce ``est`` to what its pickle would hold (e.g. drop FIL audit state)."""
    if type(est).__getstate__ is BaseEstimator.__getstate__:
        return
    state = est.__getstate__()
    if isinstance(state, dict):
        est.__dict__.clear()
        est.__setstate__(state)


def strip_for_release(estimator, *, inplace: bool = False,
                      allow_training_rows: bool = False):
    """A copy of a fitted model without the data-dependent state ``predict`` does not need.

    Walks the estimator and every estimator it holds (pipeline steps, column
    transformers, ``estimator_``, ``estimators_``, ``best_estimator_`` of a search,
    ...) and removes:

    * the audit state of the FIL estimators (training rows, exact minimiser, Hessian):
      what their pickle already leaves out, now also gone from the in-memory object;
    * ``sample_weight_`` and ``eta_history_`` of the IRFIL estimators;
    * ``sample_weight_`` of :class:`~sklearn_privacy.WERMClassifier` (it reveals the
      group of every training row);
    * ``history_`` of :class:`~sklearn_privacy.PrivateMulticalibrator` (its exact,
      non-private cell errors).

    Predictions are unchanged. What remains is what ``predict`` reads: the released
    parameters, and the fitted state of any other estimator (scalers' means, encoders'
    categories, tree thresholds, network weights, WERM's group sizes, the multicalibrator's
    ``updates_``), which is data-dependent too; only the FIL release is protected by a
    privacy analysis. See the user guide page "What a fitted model holds".

    Some estimators keep training rows themselves and cannot predict without them
    (support vectors of an SVC, every row of a nearest-neighbours model, a Gaussian
    process's training inputs, ...). Stripping cannot help there: by default the call
    refuses such a model.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator, pipeline or meta-estimator (e.g. a fitted ``GridSearchCV``,
        or its ``best_estimator_``).
    inplace : bool, default=False
        Strip ``estimator`` itself instead of a deep copy.
    allow_training_rows : bool, default=False
        Return the stripped model even if an estimator in it stores training rows, with
        a :class:`~sklearn_privacy.exceptions.PrivacyWarning`, instead of raising.

    Returns
    -------
    stripped : estimator
        The stripped deep copy (``estimator`` itself when ``inplace=True``).

    Raises
    ------
    TypeError
        If ``estimator`` is not a scikit-learn estimator.
    ValueError
        If an estimator in the model stores training rows and ``allow_training_rows`` is
        False; the message names where.

    Warns
    -----
    PrivacyWarning
        When such rows are kept because ``allow_training_rows=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import WERMClassifier
    >>> from sklearn_privacy.utils import strip_for_release
    >>> X = np.random.RandomState(0).normal(size=(100, 2))
    >>> y, group = (X[:, 0] > 0).astype(int), np.arange(100) % 2
    >>> clf = WERMClassifier(LogisticRegression(), w=0.3).fit(X, y, sample_group=group)
    >>> public = strip_for_release(clf)
    >>> hasattr(clf, "sample_weight_"), hasattr(public, "sample_weight_")
    (True, False)
    >>> bool(np.array_equal(public.predict(X), clf.predict(X)))
    True
    """
    if not isinstance(estimator, BaseEstimator):
        raise TypeError(
            "estimator must be a scikit-learn estimator (a fitted model, Pipeline or search); "
            f"got {type(estimator).__name__}."
        )
    for name, value in (("inplace", inplace), ("allow_training_rows", allow_training_rows)):
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"{name} must be True or False; got {value!r}.")
    rows = [msg for path, est in _estimators(estimator) for msg in _stored_rows(path, est)]
    if rows:
        message = (
            "; ".join(rows) + ". predict needs these rows, so they cannot be stripped and "
            "publishing the model publishes them."
        )
        if not allow_training_rows:
            raise ValueError(
                message + " Use a model that does not store rows, or pass "
                "allow_training_rows=True to strip the rest anyway."
            )
        warnings.warn(message, PrivacyWarning, stacklevel=2)
    out = estimator if inplace else copy.deepcopy(estimator)
    for _, est in _estimators(out):
        _release_state(est)
        for name in _audit_attributes(est):
            est.__dict__.pop(name, None)
    return out
