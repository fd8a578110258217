"""Every attribute of every object in a published model: declared, or the claim is inf.

A privacy claim is about the object a user publishes: its pickle holds every attribute of
every object inside it, and scikit-learn and pandas derive state from the rows that no
list of "safe" classes sees (the dense-or-sparse layout a ``ColumnTransformer`` picks
from the density of the rows, the dtype pandas infers for a column with one missing value,
the label set found in ``y``, a hyperparameter chosen by cross-validation). So
:func:`~sklearn_privacy.privacy_claim` walks the published state of every estimator (the
dict its ``__getstate__`` returns, i.e. what a pickle holds) and accepts an attribute only
when it is one of:

``"schema"``
    ``n_features_in_`` / ``feature_names_in_``: the number and names of the columns,
    public by the threat model (accepted for every declared class).
``"public"``
    a fact the user declared (``classes_`` equal to a ``classes=`` parameter,
    ``categories_`` equal to the ``categories`` parameter *with the declared dtype*); the
    declaring class checks the value and reports a finding when it does not match.
``"constant"``
    a function of the code and the parameters only (the parameters themselves are
    constants automatically).
``"dp"``
    output of the DP mechanism accounted in the object's own claim (released
    coefficients, noisy statistics, a private selection's winner). Estimators inside it
    are walked too, and a selection they record is then the owner's, already accounted.
``"provenance"``
    ``fit_provenance_``, the record of how ``fit`` ran (see below).
``"child"``
    holds fitted estimators (pipeline steps, ``transformers_``) walked in turn.

Anything else -- an attribute no declaration names, an estimator class without a
declaration, or a declaration ``("rows", "why; the fix")`` -- makes the claim ``inf``,
with the owner, the attribute and the fix in the reason (``"ColumnTransformer.
sparse_output_ depends on the rows: set sparse_threshold=0"``).

Declaring a class's attributes
------------------------------
A class of the package (or of a user) declares the kind of its fitted attributes with one
method, evaluated on the fitted object so that it can check values against parameters::

    def __sklearn_privacy_attributes__(self):
        return {
            "coef_": "dp",                       # the Gaussian mechanism's output
            "sensitivity_": "constant",          # from alpha, data_norm and n
            "classes_": "public" if self.classes is not None else (
                "rows", "the labels found in y; pass classes=[...]"),
        }

Parameters, ``n_features_in_``, ``feature_names_in_``, ``fit_provenance_`` and
``_sklearn_version`` need no entry; an attribute removed by the class's ``__getstate__``
is not published and needs none either. Subclasses extend their parent's dict. For the
scikit-learn classes the documented recipes use (``Pipeline``, ``ColumnTransformer``,
``OneHotEncoder``, ``OrdinalEncoder``, ``FunctionTransformer``, ``FrozenEstimator``,
...), the declarations are in :data:`SKLEARN_ATTRIBUTES` below, with the checks of their
values.

Provenance
----------
Every estimator of the package records ``fit_provenance_`` at fit (see
``sklearn_privacy.utils._provenance``): a seeded noise source (kept after
:func:`~sklearn_privacy.utils.strip_for_release` clears ``random_state``), a fit inside
a selection on the same rows (a search, cross-validation) that no enclosing ``"dp"``
owner accounts for, and a failed certificate each make the claim ``inf``.
"""

from __future__ import annotations

import math
from contextvars import ContextVar

import numpy as np
from sklearn.base import BaseEstimator

from ._claim import StepClaim

__all__ = ["ATTRIBUTE_KINDS", "SKLEARN_ATTRIBUTES", "attribute_findings"]

ATTRIBUTE_KINDS = ("schema", "public", "constant", "dp", "provenance", "child")

#: Attributes every declared class may hold without an entry.
_AUTOMATIC = {"n_features_in_": "schema", "feature_names_in_": "schema",
              "fit_provenance_": "provenance", "_sklearn_version": "constant",
              "_sklearn_output_config": "constant",
              # the object's own claim, set at fit from its parameters and the public n;
              # the one data-dependent event it reflects, a failed certificate, is also
              # recorded in fit_provenance_ and voids the claim there
              "epsilon_": "constant", "delta_": "constant", "epsilon_reason_": "constant"}

#: Off only inside :func:`_attribute_check_disabled` (tests that show the invariance check
#: catches what this module would have refused).
_ENABLED: ContextVar[bool] = ContextVar("attribute_check_enabled", default=True)


class _attribute_check_disabled:
    """Context manager: ``privacy_claim`` without the attribute walk (tests only)."""

    def __enter__(self):
        self._token = _ENABLED.set(False)
        return self

    def __exit__(self, *exc):
        _ENABLED.reset(self._token)
        return False


def rows(reason: str) -> tuple[str, str]:
    """The declaration of an attribute learned from the rows, with the fix."""
    return ("rows", reason)


# ------------------------------------------------------------ scikit-learn declarations
def _values_equal(a, b) -> bool:
    if len(a) != len(b):
        return False
    for u, v in zip(a, b, strict=True):
        same = (u is v) or (u == v)
        if not same and not (u != u and v != v):   # NaN declared and found
            return False
    return True


def _categories_check(est, typed=False):
    name = type(est).__name__
    if isinstance(est.categories, str):
        return rows(f"categories={est.categories!r}: categories_ are the values found in "
                    "the rows (a category held by one row is published); pass "
                    "categories=[[...], ...] (e.g. PublicSchema.categories_for(...))")
    if getattr(est, "min_frequency", None) is not None or \
            getattr(est, "max_categories", None) is not None:
        return rows("min_frequency / max_categories group categories by their counts in "
                    "the rows; leave both None")
    got = est.__dict__.get("categories_", [])
    if len(got) != len(est.categories):
        return rows("categories_ does not match the declared categories")
    for i, (declared, found) in enumerate(zip(est.categories, got, strict=True)):
        declared = np.asarray(declared)
        expected = np.dtype(object) if declared.dtype.kind in "OUS" else declared.dtype
        found = np.asarray(found)
        if expected.kind != "O" and not typed:
            return rows(
                f"categories_[{i}] holds numbers, which {name} casts to the dtype pandas "
                "inferred for the column: one missing value or stray string turns an int "
                "column into float (or object). Run sklearn_privacy.preprocessing."
                "PublicSchema first (it fixes the dtype: float64) and pass "
                "schema.categories_for(...), or declare the categories as strings")
        if found.dtype != expected:
            return rows(
                f"categories_[{i}] has dtype {found.dtype}, not the declared {expected}: "
                f"{name} casts the declared categories to the dtype pandas/numpy inferred "
                "for the column, which one missing value or one stray string changes; "
                "declare the column's dtype (run sklearn_privacy.preprocessing.PublicSchema "
                "first) or give the categories in the column's dtype")
        if not _values_equal(list(found), list(declared)):
            return rows(f"categories_[{i}] differs from the declared categories")
    return "public"


def _encoder(est, typed=False):
    return {"categories_": _categories_check(est, typed), "_infrequent_enabled": "constant",
            "drop_idx_": "constant", "_drop_idx_after_grouping": "constant",
            "_n_features_outs": "constant", "_missing_indices": "constant"}


def _column_transformer(est):
    decl = {"transformers_": "child", "_remainder": "constant",
            "output_indices_": "constant", "_transformer_to_input_indices": "constant",
            "_n_features": "constant", "_name_to_fitted_passthrough": "child",
            "_columns": "constant"}
    if est.sparse_threshold != 0:
        decl["sparse_output_"] = rows(
            "ColumnTransformer chooses sparse or dense output from the density of the rows "
            f"(sparse_threshold={est.sparse_threshold!r}), so one row can change the "
            "layout: set sparse_threshold=0")
    else:
        decl["sparse_output_"] = "constant"
    if any(callable(cols) for _, _, cols in est.transformers) or callable(
            getattr(est, "remainder", None)):
        decl["_columns"] = rows(
            "a column selector (make_column_selector / a callable) picks the columns from "
            "the dtypes or values of the rows, which one stray string changes: list the "
            "columns by name")
    return decl


def _simple_imputer(est):
    why = ("SimpleImputer keeps the dtype inferred from the rows (_fit_dtype, "
           "statistics_): one stray string turns a numeric column into object; fill "
           "missing values with a declared fill value in PublicSchema instead")
    if est.strategy != "constant":
        why = (f"strategy={est.strategy!r}: statistics_ are learned from the rows; fill "
               "missing values with a declared fill value in PublicSchema")
    decl = {"statistics_": rows(why), "_fit_dtype": rows(why)}
    if est.add_indicator:
        decl["indicator_"] = rows("add_indicator=True: which columns get an indicator "
                                  "depends on the rows")
    return decl


def _spline(est):
    if isinstance(est.knots, str):
        why = rows(f"knots={est.knots!r} places the knots from the rows; pass knots as an "
                   "array of public values")
        return {"bsplines_": why, "n_features_out_": why}
    return {"bsplines_": "constant", "n_features_out_": "constant"}


def _ovr(est):
    why = rows("the label set found in y (one new label adds a model); use "
               "FILLogisticRegression(classes=[...]), multinomial, instead")
    return {"estimators_": "child", "label_binarizer_": why, "classes_": why}


def _target_regressor(est):
    return {"regressor_": "child", "transformer_": "child", "_training_dim": "constant"}


def _search(est):
    why = rows(f"{type(est).__name__} selected best_estimator_ / best_params_ by scores "
               "computed on the private rows, without a guarantee; tune on public data or "
               "use RandomStoppingSearch")
    return dict.fromkeys(("best_estimator_", "best_params_", "best_index_", "best_score_",
                          "cv_results_", "scorer_", "refit_time_", "multimetric_",
                          "n_splits_", "classes_"), why)


def _cv_estimator(selected):
    def declare(est):
        return {name: rows(f"{type(est).__name__} chose {name} by cross-validation on the "
                           "private rows; fix the hyperparameter from public data")
                for name in selected}
    return declare


def _sklearn_registry():
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.frozen import FrozenEstimator
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegressionCV, RidgeCV
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import (
        Binarizer,
        FunctionTransformer,
        Normalizer,
        OneHotEncoder,
        OrdinalEncoder,
        PolynomialFeatures,
        SplineTransformer,
    )

    return {
        Pipeline: lambda est: {"steps": "child"},
        FeatureUnion: lambda est: {"transformer_list": "child"},
        ColumnTransformer: _column_transformer,
        OneHotEncoder: _encoder,
        OrdinalEncoder: _encoder,
        FunctionTransformer: lambda est: {},
        Normalizer: lambda est: {},
        Binarizer: lambda est: {},
        PolynomialFeatures: lambda est: dict.fromkeys(
            ("n_output_features_", "_min_degree", "_max_degree", "_n_out_full"),
            "constant"),
        SplineTransformer: _spline,
        SimpleImputer: _simple_imputer,
        FrozenEstimator: lambda est: {},   # fitted elsewhere: see privacy_claim's note
        TransformedTargetRegressor: _target_regressor,
        OneVsRestClassifier: _ovr,
        GridSearchCV: _search,
        RandomizedSearchCV: _search,
        RidgeCV: _cv_estimator(("alpha_", "best_score_", "cv_results_")),
        LogisticRegressionCV: _cv_estimator(("C_", "l1_ratio_", "scores_",
                                             "coefs_paths_")),
    }


_REGISTRY_CACHE: dict = {}


def _registry():
    if not _REGISTRY_CACHE:
        _REGISTRY_CACHE.update(_sklearn_registry())
    return _REGISTRY_CACHE


#: The scikit-learn classes with a declaration (exact classes; a subclass declares its
#: own through ``__sklearn_privacy_attributes__``). Filled on first use.
SKLEARN_ATTRIBUTES = _REGISTRY_CACHE


def declaration(est, typed: bool = False) -> dict | None:
    """The declared kind of each fitted attribute of ``est``, or ``None`` (unknown).

    ``typed``: ``est`` receives the output of a step that fixes the dtypes (a
    ``PublicSchema`` earlier in the pipeline), so numeric categories are not cast to a
    dtype inferred from the rows.
    """
    method = getattr(type(est), "__sklearn_privacy_attributes__", None)
    if method is not None:
        return dict(est.__sklearn_privacy_attributes__())
    declare = _registry().get(type(est))
    if declare is None:
        return None
    if declare is _encoder:
        return dict(_encoder(est, typed))
    return dict(declare(est))


# ------------------------------------------------------------------------------ walk
def _published_state(est) -> dict:
    """What a pickle of ``est`` holds (its ``__getstate__`` dict)."""
    try:
        state = est.__getstate__()
    except Exception:  # noqa: BLE001 - fall back to the instance dict
        state = None
    return dict(state) if isinstance(state, dict) else dict(vars(est))


def _estimators_in(value, path, out, depth=0):
    """``(path, estimator)`` of every estimator held in ``value`` (lists, dicts, ...)."""
    if depth > 6:
        return
    if isinstance(value, BaseEstimator):
        out.append((path, value))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _estimators_in(v, f"{path}[{i}]", out, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _estimators_in(v, f"{path}[{k!r}]", out, depth + 1)
    elif isinstance(value, np.ndarray) and value.dtype == object:
        for i, v in enumerate(value.ravel()):
            _estimators_in(v, f"{path}[{i}]", out, depth + 1)


def _finding(path, est, attr, reason):
    where = f"{path}.{attr}" if attr else path
    return StepClaim(where, type(est).__name__, "non_private", math.inf, 0.0, reason)


def _provenance_findings(prov, path, est, accounted, allow_seeded):
    name = type(est).__name__
    out = []
    if getattr(prov, "is_seeded", False) and not allow_seeded:
        what = ("an int seed" if prov.noise == "seed"
                else "a shared RandomState/Generator instance")
        out.append(_finding(path, est, "fit_provenance_", (
            f"{name} was fitted with random_state set to {what} (recorded at fit, so "
            "clearing random_state afterwards, as strip_for_release does, changes "
            "nothing): the noise can be redrawn from the seed, so the release is not "
            "private; refit with random_state=None (fresh OS entropy)")))
    selected = getattr(prov, "selected_by", None)
    if selected and not accounted:
        out.append(_finding(path, est, "fit_provenance_", (
            f"{name} was fitted inside {selected} on the same rows: its hyperparameters "
            "were chosen (or could be) by scores computed on the private rows, which its "
            "own claim does not cover; fix them without the private rows, or publish the "
            "private selection itself (RandomStoppingSearch)")))
    if getattr(prov, "certificate", None) is False:
        out.append(_finding(path, est, "fit_provenance_", (
            f"{name}'s certificate failed: the released centre was not certified close to "
            "the exact minimiser, so the mechanism's analysis does not cover it; use the "
            "default tol (where there is one) and a larger max_iter")))
    return out


def _check(est, path, accounted, allow_seeded, out, seen, typed=False):
    if id(est) in seen:
        return
    seen.add(id(est))
    name = type(est).__name__
    decl = declaration(est, typed)
    if decl is None:
        out.append(_finding(path, est, None, (
            f"no declaration of {name}'s fitted attributes is known: everything it holds "
            "is treated as learned from the rows (declare them with "
            "a __sklearn_privacy_attributes__ method, as described in the user guide "
            "page 'The published object: public facts and the assumptions of a claim')")))
        return
    try:
        params = set(est.get_params(deep=False))
    except Exception:  # noqa: BLE001
        params = set()
    state = _published_state(est)
    for key, value in state.items():
        kind = decl.get(key)
        if kind is None:
            kind = "constant" if key in params else _AUTOMATIC.get(key)
        if kind is None:
            kind = rows(f"{name}.{key} is not declared by {name}: treated as learned from "
                        "the rows")
        if isinstance(kind, tuple):
            out.append(_finding(path, est, key, f"{name}.{key} depends on the rows: "
                                                f"{kind[1]}"))
            continue
        if kind not in ATTRIBUTE_KINDS:
            raise ValueError(f"{name}.__sklearn_privacy_attributes__: the kind of {key} "
                             f"must be one of {ATTRIBUTE_KINDS} or ('rows', reason); got "
                             f"{kind!r}.")
        if kind in ("child", "dp"):
            found: list = []
            _estimators_in(value, f"{path}.{key}", found)
            sub_typed = typed
            for sub_path, sub in found:
                _check(sub, sub_path, accounted or kind == "dp", allow_seeded, out, seen,
                       sub_typed)
                # in a pipeline, the steps after a dtype-fixing step see fixed dtypes
                sub_typed = sub_typed or (key == "steps"
                                          and getattr(type(sub), "_fixes_dtypes", False))
    prov = state.get("fit_provenance_")
    if prov is not None:
        out.extend(_provenance_findings(prov, path, est, accounted, allow_seeded))


def attribute_findings(model, path: str, *, allow_seeded: bool = False) -> list[StepClaim]:
    """One ``non_private`` step claim per attribute of ``model`` learned from the rows.

    Parameters
    ----------
    model : fitted estimator
        The published object.
    path : str
        Name of ``model`` in the claims.
    allow_seeded : bool, default=False
        Ignore seeded noise (audits that choose the seeds).

    Returns
    -------
    findings : list of StepClaim
        Empty when every attribute is declared public, schema, constant, DP output or
        provenance (and the provenance shows fresh noise, no unaccounted selection and no
        failed certificate).
    """
    if not _ENABLED.get():
        return []
    out: list = []
    _check(model, path, False, allow_seeded, out, set())
    return out
