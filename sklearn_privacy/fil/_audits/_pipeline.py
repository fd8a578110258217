"""Audit functions that accept a pipeline ending in a FIL estimator."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...exceptions import PrivacyWarning
from ...utils._columns import resolve_columns
from ...utils._pipeline import feature_columns, split_pipeline
from ...utils._validation import errors_name, positional_rows
from ...utils._warnings import warn_user
from ...utils.fixes import NumberInterval, StrOptions, validate_params
from .._base import BaseFILEstimator
from .._eta._engine import check_sigma_scaled
from .._raw._feature_maps import feature_map
from .._raw._raw_input import RawInputAudit
from ._ovr import OneVsRestAudit, is_fil_ovr

__all__ = ["eta", "fisher_information", "sigma_for_eta"]

#: Parameters shared by :func:`eta`, :func:`fisher_information` and :func:`sigma_for_eta`
#: (the estimator is checked by :func:`final_fil_estimator`, with a message naming the
#: accepted models; the elements of ``rows`` and ``columns`` where they are resolved).
_AUDIT_CONSTRAINTS = {
    "rows": [None, Integral, "array-like"],
    "columns": [None, str, Integral, "array-like"],
    "wrt": [None, StrOptions({"raw", "features"})],
    "X": [None, "array-like", "sparse matrix"],
}


def _final_input_names(steps, final):
    """Column names of the final step's input, or None when they cannot be known."""
    names = getattr(final, "feature_names_in_", None)
    if names is None and steps:
        try:
            names = steps[-1].get_feature_names_out()
        except (AttributeError, ValueError, TypeError):
            return None
    if names is None or len(names) != final.n_features_in_:
        return None
    return [str(n) for n in names]


def final_fil_estimator(estimator, who, why=""):
    """``(preprocessing steps, final FIL estimator)`` of an estimator or Pipeline.

    Raises a TypeError naming ``who`` (the caller, e.g. ``"EtaDisplay"``) when the last
    step is not one of this package's FIL estimators; ``why`` is appended to the message.
    """
    steps, final = split_pipeline(estimator)
    if not isinstance(final, BaseFILEstimator):
        hint = ""
        if is_fil_ovr(final):
            hint = (" FILLogisticRegression fits more than two classes natively "
                    "(multinomial): use it instead of OneVsRestClassifier (fil.eta and "
                    "fil.fisher_information also accept the one-vs-rest composition).")
        raise TypeError(
            f"{who} needs a fitted FIL estimator (FILLinearRegression, "
            "FILLogisticRegression, FILPoissonRegressor or the IRFIL variants), possibly as "
            f"the last step of a Pipeline{why}; got {type(final).__name__}.{hint} For a "
            "linear model trained with scikit-learn, sklearn_privacy.fil.audit(model, X, y, "
            "sigma=...) returns one."
        )
    return steps, final


def _final_and_columns(estimator, columns):
    """The final FIL estimator and ``columns`` as indices into its input (+ label)."""
    steps, final = split_pipeline(estimator)
    if is_fil_ovr(final):  # K binary releases audited together
        final = OneVsRestAudit(final)
    else:
        steps, final = final_fil_estimator(estimator, "eta / fisher_information")
    final._audit_engine()  # fitted, audit state available
    if columns is None:
        return final, None
    d = final.n_features_in_
    if not steps:
        return final, resolve_columns(columns, d, getattr(final, "feature_names_in_", None),
                                      label=True)
    if isinstance(columns, (str, Integral)) and not isinstance(columns, (bool, np.bool_)):
        items = [columns]
    elif isinstance(columns, (bool, np.bool_, float, np.floating)) or not np.iterable(columns):
        raise TypeError(
            "columns must be an original feature name or position, or a list of them; got "
            f"{columns!r}."
        )
    else:
        items = list(columns)
    if not items:
        raise ValueError("columns is empty; select at least one feature.")
    out = []
    for item in items:
        if isinstance(item, str) and item == "label":
            out.append(np.array([d]))
        else:
            try:
                with errors_name("columns"):
                    out.append(feature_columns(estimator, item))
            except ValueError as exc:
                # not an original input feature: a name of the final step's input (the
                # preprocessing's output, e.g. "cat__race_White"), even when that input
                # was a sparse matrix or an array without column names
                names = _final_input_names(steps, final)
                if not isinstance(item, str) or names is None or item not in names:
                    msg = str(exc)
                    if msg.startswith("feature: "):  # feature_columns' own parameter
                        raise ValueError("columns: " + msg[len("feature: "):]) from exc
                    raise
                out.append(np.array([names.index(item)]))
    cols = np.concatenate(out)
    if np.unique(cols).size != cols.size:
        raise ValueError(
            f"columns: {items} select some final-step columns twice (a feature listed twice, "
            "or two features sharing derived columns)."
        )
    return final, cols


_WRT = (None, "raw", "features")


def raw_view(estimator, wrt=None, X=None, *, who="eta", stacklevel=3):
    """The raw-input audit of a pipeline, or None for the transformed-feature view.

    ``wrt=None`` (the default): the raw inputs when the preprocessing is traceable (every
    step has a known derivative), else the features entering the final step with a
    PrivacyWarning naming the steps. ``"raw"``: the raw inputs or a ValueError naming the
    steps. ``"features"``: the features (the view of a bare estimator). The raw rows
    are ``X``, else those :func:`~sklearn_privacy.fil.audit` kept in memory; a map whose
    derivative depends on the row (splines, ...) needs them.
    """
    if wrt not in _WRT:
        raise ValueError(f"wrt must be None, 'raw' or 'features'; got {wrt!r}.")
    steps, final = split_pipeline(estimator)
    if wrt == "features" or not steps:  # a bare estimator: its inputs are the raw ones
        return None
    if not is_fil_ovr(final):
        final_fil_estimator(estimator, who)
        check_is_fitted(final)  # before tracing: an unfitted pipeline has no input width
    else:
        if wrt == "raw":
            raise ValueError(f"{who}: wrt='raw' is not available for a one-vs-rest "
                             "composition; use wrt='features' or FILLogisticRegression.")
        warn_user(
            f"{who}: eta is reported for the features entering the one-vs-rest "
            "composition, not the raw inputs (the raw-input view is not available for it; "
            "FILLogisticRegression fits several classes natively and has it). Pass "
            "wrt='features' to ask for that view explicitly.",
            PrivacyWarning, stacklevel=stacklevel)
        return None
    fmap = feature_map(estimator)
    refusals = raw_refusals(fmap, final)
    if refusals:
        if wrt == "raw":
            raise ValueError(
                f"{who}: the raw-input eta cannot be computed: " + "; ".join(refusals)
                + ". Use wrt='features' for the eta of the features entering the final "
                "step.")
        warn_user(
            f"{who}: eta is reported for the features entering the final step, not the "
            "raw inputs, because " + "; ".join(refusals) + ". Pass "
            "wrt='features' to ask for that view explicitly.",
            PrivacyWarning, stacklevel=stacklevel)
        return None
    if X is None:
        X = final.__dict__.get("_raw_input")
    if X is None and not fmap.constant:
        raise ValueError(
            f"{who}: the preprocessing's derivative depends on the row (it contains a "
            "non-linear map), so the raw-input eta needs the raw training rows: pass "
            "X=<the rows the pipeline was fitted on>, or wrt='features' for the eta of "
            "the transformed features.")
    if X is not None and not hasattr(X, "iloc") and not hasattr(X, "shape"):
        X = np.asarray(X)
    return RawInputAudit(final, fmap, X)


def raw_refusals(fmap, final):
    """Why the raw-input view of a pipeline is not available (empty: it is)."""
    out = list(fmap.refusals)
    if getattr(final, "data_norm", None) is not None:
        out.append(f"the final step ({type(final).__name__}) rescales each row to norm "
                   "data_norm, a map whose derivative is not traced")
    return out


def raw_columns(raw, columns):
    """Raw coordinates (and ``d_u`` for the label) of ``columns`` through a map."""
    fmap = raw.fmap
    d_u = raw.d_u
    if columns is None:
        return np.arange(d_u + 1)
    if isinstance(columns, (str, Integral)) and not isinstance(columns, (bool, np.bool_)):
        items = [columns]
    elif isinstance(columns, (bool, np.bool_, float, np.floating)) or not np.iterable(columns):
        raise TypeError(
            "columns must be a raw input feature name or position, a raw coordinate name "
            f"or 'label', or a list of them; got {columns!r}.")
    else:
        items = list(columns)
    if not items:
        raise ValueError("columns is empty; select at least one feature.")
    out = []
    for item in items:
        if isinstance(item, str):
            if item == "label" and "label" not in fmap.feature_names_in:
                out.append(np.array([d_u]))
            elif item in fmap.feature_names_in:
                c = fmap.feature_coordinates[fmap.feature_names_in.index(item)]
                if not c.size:
                    raise ValueError(f"columns: the raw feature {item!r} is dropped by the "
                                     "preprocessing; no value of the model depends on it.")
                out.append(c)
            elif item in fmap.coordinate_names:
                out.append(np.array([fmap.coordinate_names.index(item)]))
            elif len(alias := [u for u, c in enumerate(fmap.coordinate_names)
                               if item.endswith("__" + c)]) == 1:
                # an encoded level by its name in the final step's input ("cat__race_a")
                out.append(np.array(alias))
            else:
                close = [n for n in dict.fromkeys(fmap.feature_names_in
                                                  + fmap.coordinate_names)
                         if item.lower() in n.lower()][:5]
                raise ValueError(
                    f"columns: {item!r} is neither a raw input feature nor a raw coordinate"
                    f" of the pipeline.{' Close: ' + str(close) + '.' if close else ''}")
        elif isinstance(item, (Integral, np.integer)) and not isinstance(item, (bool, np.bool_)):
            k = int(item)
            if not 0 <= k < fmap.n_features_in:
                raise ValueError(f"columns: position {k} out of range for "
                                 f"{fmap.n_features_in} raw input features.")
            c = fmap.feature_coordinates[k]
            if not c.size:
                raise ValueError(f"columns: raw feature {k} is dropped by the preprocessing.")
            out.append(c)
        else:
            raise TypeError(f"columns must hold names or positions; got {item!r}.")
    cols = np.concatenate(out).astype(np.intp)
    if np.unique(cols).size != cols.size:
        raise ValueError(f"columns: {items} select some raw coordinates twice.")
    return cols


def _raw_scaled(final, sq, what):
    """``sqrt(sq) / sigma``, ``inf`` kept (a published row)."""
    sigma = final._audit_sigma()
    sq = np.asarray(sq, dtype=float)
    finite = np.isfinite(sq)
    out = np.full(sq.shape, np.inf)
    with np.errstate(over="ignore", under="ignore"):
        out[finite] = np.sqrt(sq[finite]) / sigma
    check_sigma_scaled(out[finite], np.sqrt(np.max(sq[finite], initial=0.0)), sigma, what)
    return out


def _is_mlp_audit(estimator, wrt, X, constrained, who):
    """Whether ``estimator`` is the audit of a scikit-learn MLP (its own methods apply)."""
    from .._mlp._audit import AuditedMLP

    if not isinstance(estimator, AuditedMLP):
        return False
    if wrt not in (None, "raw") or constrained:
        raise ValueError(
            f"{who} of an MLP audit: its etas are always with respect to the raw inputs "
            "the audit was given (through the traced preprocessing); wrt='features' and "
            "constrained do not apply. For the features entering the network, audit "
            "pipe[-1] on pipe[:-1].transform(X).")
    if X is not None and (X.shape[0] if hasattr(X, "shape") else len(X)) != \
            estimator._state().n:
        raise ValueError(
            f"X: the MLP audit holds its {estimator._state().n} training rows; X (not "
            "needed) has a different number of rows.")
    return True


@validate_params(
    {**_AUDIT_CONSTRAINTS, "per_example": ["boolean"], "constrained": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def eta(estimator, rows=None, columns=None, *, per_example: bool = False,
        constrained: bool = False, wrt=None, X=None):
    """Fisher information loss of training values of a FIL estimator or pipeline.

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one, or an MLP audit
        (An MLP audit, the result of :func:`~sklearn_privacy.fil.audit` on an
        ``MLPClassifier`` / ``MLPRegressor``, answers with its own methods, with respect
        to the raw inputs it was given.)
        The model whose training values are audited. Its audit state must be available
        (not removed by :func:`~sklearn_privacy.utils.strip_for_release`). A fitted
        :class:`~sklearn.multiclass.OneVsRestClassifier` of FIL classifiers (or a
        pipeline ending in one) is audited as its ``K`` releases together: independent
        noise, so their Fisher information adds and ``eta = sqrt(lambda_max(sum_k
        FIM_k))``; the label is then the one-hot vector, ``K - 1`` values in the
        Helmert basis of the sum-zero changes (as for the multinomial model).
    rows : None, int, array-like of int or array-like of bool, default=None
        Training rows (see :meth:`~sklearn_privacy.FILLinearRegression.eta`). A boolean
        pandas Series is aligned on the index of the training frame ``X`` when given.
    columns : None, or one or several features, default=None
        For a FIL estimator: indices or names of its ``feature_names_in_`` (index
        ``n_features_in_`` or ``"label"`` for the label). For a pipeline: **original input
        features** of the pipeline (names of the raw frame, or positions), each expanded
        to every column of the final step derived from it (e.g. all one-hot columns of
        ``"race"``, see :func:`sklearn_privacy.utils.feature_columns`), names of the
        final step's input columns (the preprocessing's ``get_feature_names_out()``, e.g.
        ``"cat__race_White"``, also when that input is sparse), and ``"label"``.
        ``None``: every feature and the label.
    per_example, constrained : bool, default=False
        As in :meth:`~sklearn_privacy.FILLinearRegression.eta`; ``constrained`` applies to a one-hot
        attribute (e.g. an original categorical feature encoded without a dropped level).
    wrt : {None, "raw", "features"}, default=None
        For a pipeline, the values whose leakage is measured. ``"raw"``: the **raw
        inputs** -- each numeric input column in its own units (eta about age in years),
        each encoded categorical column as its one-hot coordinates -- through the
        derivative of the preprocessing (see "Raw inputs through feature maps" in the
        FIL user guide; steps without a known derivative are refused by name).
        ``"features"``: the columns entering the final step (the transformed features).
        ``None`` (default): the raw inputs when every step has a known derivative, else
        the features with a :class:`~sklearn_privacy.exceptions.PrivacyWarning` naming
        the steps. Through the raw inputs, ``columns`` names raw input features (a
        categorical one expands to its encoded coordinates), raw coordinates (e.g.
        ``"race_White"``) or ``"label"``.
    X : DataFrame or array-like of shape (n_samples, n_features) or None, default=None
        The raw training rows of the pipeline, in the order it was fitted on (checked:
        they must reproduce the final step's data). Needed for the raw inputs when the
        derivative depends on the row (splines, polynomials, kernel maps, a
        ``FunctionTransformer``); the result of :func:`~sklearn_privacy.fil.audit` keeps
        them in memory. Scalers and encoders alone need none.

    Returns
    -------
    eta : float or ndarray of shape (n_rows,)
        The eta of the set of values, or one eta per row with ``per_example=True``. A
        row that the preprocessing publishes verbatim (``Nystroem.components_``) has
        ``inf`` (a :class:`~sklearn_privacy.exceptions.PrivacyWarning` says so), and so
        has a set containing one.

    Raises
    ------
    TypeError
        The (final) estimator is not a FIL estimator.
    ValueError
        Unknown feature, or a pipeline step whose derivation cannot be traced.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.fil import eta
    >>> rng = np.random.RandomState(0)
    >>> df = pd.DataFrame({"age": rng.normal(40, 10, 60),
    ...                    "race": rng.choice(["a", "b", "c"], 60)})
    >>> pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
    ...                                              (OneHotEncoder(), ["race"])),
    ...                      FILLinearRegression(sigma=1.0, random_state=0))
    >>> pipe = pipe.fit(df, rng.normal(size=60))
    >>> direct = pipe[-1].eta(columns=[1, 2, 3], per_example=True)
    >>> bool(np.allclose(eta(pipe, columns="race", per_example=True), direct))
    True

    Through the scaler, the raw-input eta of ``age`` is in years: the eta of the
    standardised column divided by the scaler's ``scale_``.

    >>> raw_age = eta(pipe, columns="age", per_example=True)
    >>> std_age = eta(pipe, columns="age", per_example=True, wrt="features")
    >>> bool(np.allclose(raw_age, std_age / pipe[0].transformers_[0][1].scale_[0]))
    True
    """
    rows = positional_rows(rows, "rows", X)
    if _is_mlp_audit(estimator, wrt, X, constrained, "eta"):
        return estimator.eta(rows, columns, per_example=per_example)
    raw = raw_view(estimator, wrt, X, who="eta")
    if raw is None:
        final, cols = _final_and_columns(estimator, columns)
        return final.eta(rows, cols, per_example=per_example, constrained=constrained)
    order = raw_columns(raw, columns)
    if per_example:
        sq = raw.per_example_sq_norms(order, constrained=constrained, rows=rows)
        out = _raw_scaled(raw.final, sq, "eta")
    else:
        out = float(_raw_scaled(raw.final, raw.group_sq_norm(rows, order,
                                                             constrained=constrained),
                                "eta"))
    raw.warn_published()
    return out


@validate_params(
    {**_AUDIT_CONSTRAINTS, "dense": ["boolean", None]},
    prefer_skip_nested_validation=True,
)
def fisher_information(estimator, rows=None, columns=None, *, dense=None, wrt=None, X=None):
    """Fisher information matrix of training values of a FIL estimator or pipeline.

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one, or an MLP audit
        (An MLP audit, the result of :func:`~sklearn_privacy.fil.audit` on an
        ``MLPClassifier`` / ``MLPRegressor``, answers with its own methods, with respect
        to the raw inputs it was given.)
        The model whose training values are audited.
    rows : None, int, array-like of int or array-like of bool, default=None
        Training rows, as in :func:`eta` (duplicates refused).
    columns : None, or one or several features, default=None
        Features, as in :func:`eta` (original features through a pipeline).
    dense : bool or None, default=None
        As in :meth:`~sklearn_privacy.FILLinearRegression.fisher_information`.
    wrt : {None, "raw", "features"}, default=None
        Raw inputs or transformed features, as in :func:`eta`.
    X : DataFrame or array-like or None, default=None
        The raw training rows, as in :func:`eta`.

    Returns
    -------
    fim : ndarray or LinearOperator of shape (n_values, n_values)
        Data values ordered row-major: over the final step's columns (ascending), or
        over the raw coordinates of ``columns`` in the order given (the label of a
        multinomial model as its ``K - 1`` coordinates).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.fil import eta, fisher_information
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(50, 3)); y = X @ [1.0, -1.0, 0.5] + rng.normal(size=50)
    >>> model = FILLinearRegression(sigma=1.0, random_state=0).fit(X, y)
    >>> fim = fisher_information(model, rows=[0], columns=[0, 1])
    >>> fim.shape
    (2, 2)
    >>> eta_0 = eta(model, rows=[0], columns=[0, 1])
    >>> bool(np.isclose(np.sqrt(np.linalg.eigvalsh(fim).max()), eta_0))
    True
    """
    rows = positional_rows(rows, "rows", X)
    if _is_mlp_audit(estimator, wrt, X, False, "fisher_information"):
        return estimator.fisher_information(rows, columns)
    raw = raw_view(estimator, wrt, X, who="fisher_information")
    if raw is None:
        final, cols = _final_and_columns(estimator, columns)
        return final.fisher_information(rows, cols, dense=dense)
    out = raw.fim(rows, raw_columns(raw, columns), sigma=raw.final._audit_sigma(),
                  dense=dense)
    raw.warn_published()
    return out


@validate_params(
    {
        **{k: v for k, v in _AUDIT_CONSTRAINTS.items() if k != "rows"},
        "target_eta": [NumberInterval(Real, 0, np.inf, closed="neither")],
        "aggregate": [StrOptions({"max", "mean"})],
        "constrained": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def sigma_for_eta(estimator, target_eta: float, *, aggregate: str = "max", columns=None,
                  constrained: bool = False, wrt=None, X=None) -> float:
    """Noise scale at which the per-example eta of a FIL estimator or pipeline hits a target.

    The pipeline-level form of :meth:`FILLogisticRegression.sigma_for_eta
    <sklearn_privacy.FILLogisticRegression.sigma_for_eta>`: ``columns`` may name an
    *original* input feature of the pipeline (``"sex"``), which maps to every column the
    preprocessing derives from it, as in :func:`eta`. Refit with
    ``pipe.set_params(<last step>__sigma=sigma)`` to release a model whose per-example eta
    aggregate equals ``target_eta``.

    eta is not unit-free: it measures how precisely an unbiased adversary can recover a
    training *value* (standard deviation at least ``1 / eta`` in the units of that
    value), so rescaling a feature or the target rescales eta and the sigma returned
    here (standardise the columns, or read eta in the units the adversary cares about).
    For a one-hot attribute, ``constrained=True`` counts only moves between its levels
    (the unconstrained eta also counts impossible moves such as "half female"; see the
    FIL user guide).

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one, or an MLP audit
        (An MLP audit, the result of :func:`~sklearn_privacy.fil.audit` on an
        ``MLPClassifier`` / ``MLPRegressor``, answers with its own methods, with respect
        to the raw inputs it was given.)
        The model whose training values are audited.
    target_eta : float > 0
        The per-example eta the refitted model must reach.
    aggregate : {"max", "mean"}, default="max"
        Which aggregate of the per-example eta must equal ``target_eta``.
    columns : None, or one or several features, default=None
        Features, as in :func:`eta` (original features through a pipeline).
    constrained : bool, default=False
        As in :func:`eta`, for a one-hot attribute.
    wrt : {None, "raw", "features"}, default=None
        Raw inputs or transformed features, as in :func:`eta`.
    X : DataFrame or array-like or None, default=None
        The raw training rows, as in :func:`eta`.

    Returns
    -------
    sigma : float
        The output-perturbation noise scale.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sklearn_privacy import FILLogisticRegression
    >>> from sklearn_privacy.fil import eta, sigma_for_eta
    >>> rng = np.random.RandomState(0)
    >>> X = pd.DataFrame({"age": rng.normal(40, 10, 300),
    ...                   "sex": rng.choice(["Female", "Male"], 300)})
    >>> y = (X["age"] + 5 * (X["sex"] == "Male") > 42).astype(int)
    >>> pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
    ...                                              (OneHotEncoder(), ["sex"])),
    ...                      FILLogisticRegression(sigma=1.0, random_state=0)).fit(X, y)
    >>> sigma = sigma_for_eta(pipe, 0.5, columns="sex")
    >>> refit = pipe.set_params(fillogisticregression__sigma=sigma).fit(X, y)
    >>> round(float(eta(refit, columns="sex", per_example=True).max()), 6)
    0.5
    """
    if _is_mlp_audit(estimator, wrt, X, constrained, "sigma_for_eta"):
        return estimator.sigma_for_eta(target_eta, aggregate=aggregate, columns=columns)
    raw = raw_view(estimator, wrt, X, who="sigma_for_eta")
    if raw is None:
        final, cols = _final_and_columns(estimator, columns)
        return final.sigma_for_eta(target_eta, aggregate=aggregate, columns=cols,
                                   constrained=constrained)
    norms = np.sqrt(raw.per_example_sq_norms(raw_columns(raw, columns),
                                             constrained=constrained))
    raw.warn_published()
    if not np.all(np.isfinite(norms)):
        raise ValueError("sigma_for_eta: the preprocessing publishes training rows "
                         "verbatim (their eta is infinite at any sigma).")
    value = norms.max() if aggregate == "max" else norms.mean()
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        sigma = value / target_eta
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(
            f"target_eta={target_eta!r}: the noise scale reaching it ({value!r} / "
            f"{target_eta!r}) is not a positive finite float64.")
    return float(sigma)
