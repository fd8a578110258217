"""Remove data-dependent audit state from a fitted model before publishing it."""

from __future__ import annotations

import copy
import functools
import types
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from ..exceptions import PrivacyWarning
from ._warnings import warn_user
from .fixes import scorer_base, search_cv_base, validate_params

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
    "DPLinearRegression": ("n_iter_", "certified_distance_"),
    "DPLogisticRegression": ("n_iter_", "certified_distance_"),
    "IRFILLinearRegression": ("sample_weight_", "eta_history_", "effective_sample_size_",
                              "max_weight_share_", "max_eta_ratio_"),
    "IRFILLogisticRegression": ("sample_weight_", "eta_history_", "effective_sample_size_",
                                "max_weight_share_", "max_eta_ratio_"),
    "IRFILPoissonRegressor": ("sample_weight_", "eta_history_", "effective_sample_size_",
                              "max_weight_share_", "max_eta_ratio_"),
    "WERMClassifier": ("sample_weight_",),
    "PrivateMulticalibrator": ("history_", "largest_cell_size_", "largest_cell_sizes_",
                               "validation_errors_"),
}


def _audit_attributes(est):
    """The :data:`AUDIT_ATTRIBUTES` of ``est``'s class or of a package base class, and
    the names a class lists in its own ``_strip_on_release`` tuple."""
    names = list(getattr(type(est), "_strip_on_release", ()))
    for cls in type(est).__mro__:
        if cls.__module__.split(".")[0] == "sklearn_privacy":
            names.extend(AUDIT_ATTRIBUTES.get(cls.__name__, ()))
    return names


#: Leaf types of the walk: values that hold no object worth visiting.
_LEAVES = (str, bytes, bytearray, int, float, complex, bool, type(None), np.generic, type,
           types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType)
#: Modules whose objects are data containers, not model state to walk (pandas frames,
#: scipy sparse matrices, dask collections); numpy arrays are handled apart.
_DATA_MODULES = ("pandas", "scipy", "dask", "polars", "xarray", "pyarrow")


def _children(obj):
    """``(suffix, child)`` of every value ``obj`` holds (attributes, items, elements)."""
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return [(f"[{i}]", v) for i, v in enumerate(obj.ravel())]
        return []
    if isinstance(obj, list | tuple | set | frozenset):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, functools.partial):
        return ([(".func", obj.func)] + [(f".args[{i}]", v) for i, v in enumerate(obj.args)]
                + [(f".keywords[{k!r}]", v) for k, v in obj.keywords.items()])
    state = getattr(obj, "__dict__", None)
    return [(f".{k}", v) for k, v in state.items()] if isinstance(state, dict) else []


def _walk(obj, path, seen, out):
    """Every object reachable from ``obj`` through attributes, items and elements.

    Not only estimators: scikit-learn keeps fitted models inside plain objects too
    (``CalibratedClassifierCV.calibrated_classifiers_`` holds ``_CalibratedClassifier``
    objects whose ``estimator`` is the fitted base model), and scorers keep data.
    """
    if isinstance(obj, _LEAVES) or id(obj) in seen:
        return
    seen.add(id(obj))
    out.append((path, obj))
    if type(obj).__module__.split(".")[0] in _DATA_MODULES:
        return  # data: visited, not walked into
    for suffix, value in _children(obj):
        _walk(value, path + suffix, seen, out)


def _objects(estimator):
    found: list = []
    _walk(estimator, type(estimator).__name__, set(), found)
    return found


def _estimators(estimator):
    return [(path, obj) for path, obj in _objects(estimator)
            if isinstance(obj, BaseEstimator)]


def _stored_rows(path, obj):
    """Where ``obj`` holds training rows verbatim (messages; empty when it holds none)."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.neighbors import BallTree, KDTree

    if isinstance(obj, KDTree | BallTree):  # KernelDensity.tree_, KNeighbors*._tree
        return [f"{path} ({type(obj).__name__}) stores the training rows it indexes"]
    if not isinstance(obj, BaseEstimator):
        return []
    names = [name for name in _ROW_ATTRIBUTES
             if getattr(obj.__dict__.get(name), "size", 0)]
    if isinstance(obj, Nystroem) and "components_" in obj.__dict__:
        names.append("components_")  # a sample of training rows
    return [f"{path} ({type(obj).__name__}) stores training rows in {name}"
            for name in names]


def _holds_data(obj):
    """Whether an object holds array-like data anywhere inside it."""
    for _, value in _objects(obj)[1:]:
        if isinstance(value, np.ndarray) and value.dtype != object and value.size > 1:
            return True
        if (type(value).__module__.split(".")[0] in _DATA_MODULES
                and getattr(value, "shape", None) is not None):
            return True
    return False


#: Fitted attributes of a search object that are statistics of the training rows and that
#: prediction (through ``best_estimator_``) never reads.
_SEARCH_ATTRIBUTES = ("cv_results_", "best_score_", "scorer_")


def _strip_search(search, path, notes):
    """Remove a search's per-candidate scores and any scorer holding data."""
    for name in _SEARCH_ATTRIBUTES:
        search.__dict__.pop(name, None)
    scoring = search.__dict__.get("scoring")
    if scoring is not None and not _string_scoring(scoring):
        search.scoring = None
        notes.append(f"{path}.scoring (a callable scorer, which can hold data) was set "
                     "to None")


def _string_scoring(scoring):
    if isinstance(scoring, str):
        return True
    if isinstance(scoring, list | tuple | set):
        return all(isinstance(s, str) for s in scoring)
    if isinstance(scoring, dict):
        return all(isinstance(s, str) for s in scoring.values())
    return False


def _release_state(est):
    """Reduce ``est`` to what its pickle would hold (e.g. drop FIL audit state)."""
    if type(est).__getstate__ is BaseEstimator.__getstate__:
        return
    state = est.__getstate__()
    if isinstance(state, dict):
        est.__dict__.clear()
        est.__setstate__(state)


@validate_params(
    {"estimator": [BaseEstimator], "inplace": ["boolean"], "allow_training_rows": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def strip_for_release(estimator, *, inplace: bool = False,
                      allow_training_rows: bool = False):
    """A copy of a fitted model without the data-dependent state ``predict`` does not need.

    Walks every object the model holds -- attributes of any object, not only of
    estimators (pipeline steps, column transformers, ``estimator_``, ``estimators_``,
    ``best_estimator_`` of a search, the fitted models inside
    ``CalibratedClassifierCV.calibrated_classifiers_``, ...) -- and removes:

    * the audit state of the FIL estimators (training rows, exact minimiser, Hessian)
      and their ``n_iter_`` (a data-dependent iteration count): what their pickle
      already leaves out, now also gone from the in-memory object;
    * ``sample_weight_`` and ``eta_history_`` of the IRFIL estimators;
    * ``sample_weight_`` of :class:`~sklearn_privacy.WERMClassifier` (it reveals the
      group of every training row);
    * ``history_`` of :class:`~sklearn_privacy.PrivateMulticalibrator` (its exact,
      non-private cell errors);
    * of a search (``GridSearchCV``, ...): ``cv_results_``, ``best_score_`` (per-fold
      scores are statistics of the training rows) and ``scorer_``; a ``scoring`` that is
      not a string (or list/dict of strings) is set to ``None``, since a callable scorer
      can hold rows (e.g. :func:`~sklearn_privacy.attacks.make_membership_scorer`). The
      stripped search predicts through ``best_estimator_`` but cannot ``score``;
    * every ``random_state`` that is not ``None``, set to ``None`` (with a
      :class:`~sklearn_privacy.exceptions.PrivacyWarning` naming where): a
      ``RandomState``/``Generator`` instance holds the stream the noise came from, and a
      seed lets anyone redraw it. Clearing it from the copy does **not** make a release
      private whose noise came from a fixed seed (a guessable seed is as good as a
      published one): fit the released model with ``random_state=None``. The
      ``fit_provenance_`` each estimator of the package recorded at fit (the kind of its
      ``random_state`` then, a selection on the rows it ran inside, its certificate) is
      kept, so :func:`~sklearn_privacy.privacy_claim` of the stripped copy of a seeded
      model is still ``inf``;
    * the polish distances of :func:`~sklearn_privacy.fil.audit` (``polish_distance_``,
      ``polish_relative_``: exact statistics of the rows) and any attribute a class lists
      in its ``_strip_on_release`` tuple.

    Predictions are unchanged. What remains is what ``predict`` reads: the released
    parameters, and the fitted state of any other estimator (scalers' means, encoders'
    categories, tree thresholds, network weights, WERM's group sizes, the multicalibrator's
    ``updates_``), which is data-dependent too; only the DP steps are protected by a
    privacy analysis. See the user guide page "What a fitted model holds".

    Some objects keep training rows themselves and cannot predict without them (support
    vectors of an SVC, every row of a nearest-neighbours model and its KD/ball tree, a
    kernel density's tree, a Gaussian process's training inputs, ...), wherever they sit
    (e.g. inside ``CalibratedClassifierCV``). Stripping cannot help there: by default the
    call refuses such a model. It also refuses a model in which a scorer holding data
    remains outside a search's ``scoring``.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator, pipeline or meta-estimator (e.g. a fitted ``GridSearchCV``,
        or its ``best_estimator_``).
    inplace : bool, default=False
        Strip ``estimator`` itself instead of a deep copy.
    allow_training_rows : bool, default=False
        Return the stripped model even if an object in it stores training rows, with
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
        If an object in the model stores training rows and ``allow_training_rows`` is
        False, or a scorer holding data remains; the message names where.

    Warns
    -----
    PrivacyWarning
        When such rows are kept because ``allow_training_rows=True``, and when a
        ``random_state`` or a callable ``scoring`` is cleared.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import WERMClassifier
    >>> from sklearn_privacy.utils import strip_for_release
    >>> X = np.random.RandomState(0).normal(size=(100, 2))
    >>> y, group = (X[:, 0] > 0).astype(int), np.arange(100) % 2
    >>> clf = WERMClassifier(LogisticRegression(), w=0.3).fit(X, y, data_source=group)
    >>> public = strip_for_release(clf)
    >>> hasattr(clf, "sample_weight_"), hasattr(public, "sample_weight_")
    (True, False)
    >>> bool(np.array_equal(public.predict(X), clf.predict(X)))
    True
    """
    _check_stored_rows(estimator, allow_training_rows)
    out = estimator if inplace else copy.deepcopy(estimator)
    notes: list = []
    seeded = _strip_estimators(out, notes)
    _check_no_scorer_data(out)
    _warn_notes(notes, seeded)
    return out


def _check_stored_rows(estimator, allow_training_rows):
    """Refuse (or, if allowed, warn about) training rows that ``predict`` needs."""
    rows = [msg for path, obj in _objects(estimator) for msg in _stored_rows(path, obj)]
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
        warn_user(message, PrivacyWarning, stacklevel=2)


def _strip_estimators(out, notes):
    """Strip every estimator of ``out`` in place; returns the seeds it set to None."""
    BaseSearchCV = search_cv_base()
    seeded: list = []
    for path, est in _estimators(out):
        _release_state(est)
        for name in _audit_attributes(est):
            est.__dict__.pop(name, None)
        if isinstance(est, BaseSearchCV):
            _strip_search(est, path, notes)
        if est.__dict__.get("random_state") is not None and "random_state" in (
                est.get_params(deep=False)):
            seeded.append(f"{path}.random_state={_short(est.random_state)}")
            est.random_state = None
    return seeded


def _check_no_scorer_data(out):
    """Refuse a stripped model that still holds a scorer with data."""
    scorers = [path for path, obj in _objects(out) if _is_scorer(obj) and _holds_data(obj)]
    if scorers:
        raise ValueError(
            f"{', '.join(scorers)}: a scorer holding data (e.g. the rows of a membership "
            "scorer) is part of the model, and publishing the model publishes it. Remove "
            "it before releasing the model.")


def _warn_notes(notes, seeded):
    """One PrivacyWarning with what was stripped that the user must know about."""
    if seeded:
        notes.append(
            f"{', '.join(seeded)} set to None; a release whose noise was drawn from a "
            "fixed seed or a shared generator is not private even with the seed removed "
            "(refit with random_state=None before publishing)")
    if notes:
        warn_user("strip_for_release: " + "; ".join(notes) + ".", PrivacyWarning,
                  stacklevel=2)


def _short(value):
    return type(value).__name__ if not isinstance(value, Integral) else repr(value)


def _is_scorer(obj):
    """A scorer: scikit-learn's scorer objects, this package's attack scorers, partials."""
    return (isinstance(obj, scorer_base() | functools.partial)
            or (callable(obj) and not isinstance(obj, BaseEstimator)
                and type(obj).__module__.startswith("sklearn_privacy.attacks")))
