"""Compatibility layer: the only module that touches private scikit-learn API.

scikit-learn does not promise stability for names that start with an underscore or live in
an underscored module. The package still needs a few of them (the parameter-validation
machinery every scikit-learn estimator uses, sample-weight checking, indexing of arrays and
frames alike). Importing them here, and only here, means an upstream rename breaks one file,
and a shim for a new or old scikit-learn version is written once.

Supported range: scikit-learn >= 1.6 (the declared minimum, tested by ``.ci/run``) up to the
newest release. For every symbol below the comment says why it is needed and whether and
since which version a public alternative exists; where one exists, it is used.

Rules for the rest of the package (checked by ``grep``, see ``CONTRIBUTING.md``):
``sklearn.utils._*``, ``_param_validation``, ``_validate_params``, ``_routing_enabled``,
``_check_sample_weight``, ``_safe_indexing``, ``_num_samples`` and ``_fit_context`` are
imported from this module, never from scikit-learn directly.

This module is internal: its contents may change in any release.
"""

from __future__ import annotations

import numpy as np
import sklearn

# --- fit context ----------------------------------------------------------------------
# ``_fit_context`` validates ``_parameter_constraints`` once per ``fit`` (and skips nested
# validation of sub-estimators when asked), exactly as scikit-learn's own estimators do. It
# replaces direct calls of the private ``BaseEstimator._validate_params``. Private in every
# release (since 1.3); no public alternative.
from sklearn.base import _fit_context  # noqa: F401

# --- Indexing -------------------------------------------------------------------------
# ``_safe_indexing`` selects rows of an array, sparse matrix, list or DataFrame by integer
# indices. It is listed in scikit-learn's API reference (``sklearn.utils._safe_indexing``)
# but keeps its underscore, so it counts as private here. The public
# ``sklearn.utils.resample(..., replace=False)`` shuffles and does not take indices, so it
# is no alternative.
from sklearn.utils import _safe_indexing  # noqa: F401

# --- Parameter validation -------------------------------------------------------------
# ``_parameter_constraints`` with these constraint classes is how scikit-learn validates
# hyper-parameters; there is no public equivalent in any released version (checked up to
# 1.9). ``validate_params`` decorates public functions the same way.
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    Hidden,
    Interval,
    StrOptions,
    validate_params,
)

# --- Input validation -----------------------------------------------------------------
# ``validate_data`` is public from scikit-learn 1.6 on (the declared minimum); it is
# re-exported for symmetry, modules may import it from sklearn.utils.validation directly.
# ``_check_sample_weight``: None -> ones, scalar -> constant, shape and dtype checks, with
# ``ensure_non_negative`` (that keyword exists from 1.6 on). Private in every release; no
# public alternative.
# ``_num_samples``: number of rows of an array, sparse matrix, DataFrame or list (without
# converting a frame). Private in every release; no public alternative.
from sklearn.utils.validation import (
    _check_sample_weight,  # noqa: F401
    _num_samples,  # noqa: F401
    validate_data,  # noqa: F401
)


class NumberInterval(Interval):
    """:class:`Interval` that refuses booleans.

    ``True`` is an ``Integral`` (hence a ``Real``) in Python, so scikit-learn's
    ``Interval(Real, 0, 1)`` accepts it as 1. A budget, a probability or a number of rows
    given as ``True`` is a mistake; the functions of this package refuse it, with the
    interval in the message. Overrides ``Interval.is_satisfied_by``, the method
    ``validate_params`` calls (private like the class, in every release).
    """

    def is_satisfied_by(self, val):
        import numpy as np

        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


# --- Metadata routing -----------------------------------------------------------------
def routing_enabled() -> bool:
    """Whether scikit-learn's metadata routing is enabled.

    Public replacement of ``sklearn.utils.metadata_routing._routing_enabled``, through
    ``sklearn.get_config()["enable_metadata_routing"]`` (public since scikit-learn 1.3).

    Returns
    -------
    enabled : bool

    Examples
    --------
    >>> import sklearn
    >>> from sklearn_privacy.utils.fixes import routing_enabled
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     routing_enabled()
    True
    """
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


# --- numpy ----------------------------------------------------------------------------
def numpy1_print_options():
    """Context manager printing numpy scalars as numpy 1 did (``0.5``, not ``np.float64(0.5)``).

    ``np.printoptions(legacy="1.25")`` exists from numpy 2.0 on; numpy 1.x (the declared
    minimum is 1.24) prints that way already and rejects the option.

    Returns
    -------
    context : context manager
    """
    import contextlib

    import numpy as np

    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        return np.printoptions(legacy="1.25")
    return contextlib.nullcontext()


# --- Test helpers ---------------------------------------------------------------------
def enforce_estimator_tags_y(estimator, y):
    """Adapt a target ``y`` to an estimator's tags as scikit-learn's common checks do.

    Wraps the private ``sklearn.utils.estimator_checks._enforce_estimator_tags_y`` (used by
    the common-test suite to detect an upstream defect). Returns ``None`` when this
    scikit-learn version has no such function, so callers can skip their detection.

    Parameters
    ----------
    estimator : estimator instance
    y : ndarray

    Returns
    -------
    y : ndarray or None
    """
    from sklearn.utils import estimator_checks

    enforce = getattr(estimator_checks, "_enforce_estimator_tags_y", None)
    return None if enforce is None else enforce(estimator, y)


# --- Parameter validation outside fit ----------------------------------------------
def validate_estimator_params(estimator) -> None:
    """Check ``estimator.get_params()`` against its ``_parameter_constraints`` outside fit.

    What ``_fit_context`` does on entering ``fit``, for a method that reads the
    parameters of an estimator that may not be fitted (for example
    ``PrivateMulticalibrator.smallest_correctable_cell``). Wraps the private
    ``BaseEstimator._validate_params`` (since 1.2; no public alternative).

    Parameters
    ----------
    estimator : BaseEstimator with ``_parameter_constraints``
    """
    estimator._validate_params()


# --- Types of scikit-learn objects ------------------------------------------------------
def search_cv_base():
    """``sklearn.model_selection._search.BaseSearchCV``, the base of every search.

    Private module (every release); no public alternative: ``GridSearchCV`` and
    ``RandomizedSearchCV`` are public but third-party searches subclass the base. Imported
    lazily (model selection is not needed on import).
    """
    from sklearn.model_selection._search import BaseSearchCV

    return BaseSearchCV


def scorer_base():
    """``sklearn.metrics._scorer._BaseScorer``, the class of ``make_scorer``'s scorers.

    Private (every release); no public alternative to recognise a scorer object. Imported
    lazily.
    """
    from sklearn.metrics._scorer import _BaseScorer

    return _BaseScorer


# --- joblib's process pool --------------------------------------------------------------
def register_process_pool_reducer(cls, reduce_function) -> bool:
    """Use ``reduce_function`` for ``cls`` in joblib's process-pool (loky) pickler only.

    joblib's default backend (loky, what ``cross_validate(n_jobs=2)`` and
    ``GridSearchCV(n_jobs=2)`` use) sends arguments to its worker processes and results
    back through its own pickler, whose dispatch table is extended by
    ``joblib.externals.loky.backend.reduction.register``. That table is consulted by no
    other pickler (``pickle``, ``joblib.dump``, ``cloudpickle``, ``copy``), so a reducer
    registered here changes what travels between the processes of one pool and nothing
    else. Private API of joblib's vendored loky (stable since joblib 0.12, no public
    alternative); returns False, registering nothing, when it is missing.

    Parameters
    ----------
    cls : type
        Exact class (the dispatch table is keyed by type, not by subclass).
    reduce_function : callable
        ``obj -> (callable, args)``, as for :mod:`copyreg`.

    Returns
    -------
    registered : bool
    """
    try:
        from joblib.externals.loky.backend.reduction import register
    except ImportError:  # pragma: no cover - a joblib without loky
        return False
    register(cls, reduce_function)
    return True


__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "NumberInterval",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "_num_samples",
    "_safe_indexing",
    "enforce_estimator_tags_y",
    "numpy1_print_options",
    "register_process_pool_reducer",
    "routing_enabled",
    "scorer_base",
    "search_cv_base",
    "validate_data",
    "validate_estimator_params",
    "validate_params",
]


# --- ColumnTransformer input columns ----------------------------------------------------
# The input column indices of each fitted transformer of a ColumnTransformer (whatever form
# the user gave: names, positions, slices, masks, callables or a selector), remainder
# included. Private ``_transformer_to_input_indices`` (since 1.2); no public alternative
# (``transformers_`` keeps the user's column specification).
def column_transformer_input_indices(ct, name):
    """Input column indices (list of int) of the fitted transformer ``name`` of ``ct``."""
    return list(ct._transformer_to_input_indices.get(name, []))

# --- Selection on the rows ----------------------------------------------------------
# Fit provenance (``utils/_provenance.py``) recognises a fit that runs inside a scikit-learn
# search or cross-validation on the same rows by walking the call stack: a frame whose
# ``self`` is a search (``search_cv_base()`` above) or a frame of the private module holding
# ``cross_validate``, ``cross_val_score`` and the validation/learning curves. No public
# alternative (scikit-learn has no hook that tells an estimator it is being selected).
CV_MODULES = ("sklearn.model_selection._validation",)


# --- Fitted state of histogram gradient boosting ------------------------------------------
# The structural disclosure checks of the privacy report read what a pickled
# ``HistGradientBoosting*`` model holds: its bin thresholds (``_bin_mapper.bin_thresholds_``,
# every midpoint between consecutive distinct training values when a column has at most
# ``max_bins`` of them) and its trees (``_predictors``: per node the training-row ``count``,
# ``is_leaf``, ``feature_idx``, ``num_threshold``, children). Both are private attributes in
# every release (since 0.21) and pickled with the model; there is no public accessor.
def hist_gradient_boosting_state(estimator):
    """``(bin_thresholds, predictors)`` of a fitted HistGradientBoosting model.

    ``bin_thresholds`` is a list (one array per input column, ``None`` for a categorical
    column); ``predictors`` a flat list of the ``nodes`` structured arrays of every tree.
    """
    mapper = getattr(estimator, "_bin_mapper", None)
    thresholds = None
    if mapper is not None:
        cat = getattr(mapper, "is_categorical", None)
        thresholds = [None if (cat is not None and bool(cat[j])) else np.asarray(t)
                      for j, t in enumerate(mapper.bin_thresholds_)]
    nodes = [p.nodes for per_iter in getattr(estimator, "_predictors", [])
             for p in per_iter]
    return thresholds, nodes
