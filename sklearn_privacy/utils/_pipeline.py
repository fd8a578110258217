"""Trace an original input feature through the preprocessing steps of a pipeline."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)

from ._columns import resolve_columns
from .fixes import HasMethods, validate_params

__all__ = ["feature_columns", "split_pipeline"]

#: Transformers whose output column j is a function of input column j alone.
_COLUMNWISE = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, PowerTransformer,
               QuantileTransformer, Binarizer, OrdinalEncoder)


def split_pipeline(estimator):
    """``(preprocessing steps, final estimator)`` of a pipeline (``([], est)`` otherwise).

    Nested pipelines in the preprocessing are kept as steps; ``None``/"passthrough"
    steps are dropped.
    """
    if isinstance(estimator, Pipeline):
        steps = [s for _, s in estimator.steps[:-1] if s is not None and s != "passthrough"]
        final = estimator.steps[-1][1]
        if isinstance(final, Pipeline):
            inner, final = split_pipeline(final)
            steps = steps + inner
        return steps, final
    return [], estimator


def _input_names(estimator):
    """Names and number of the input features of a fitted estimator or pipeline."""
    names = getattr(estimator, "feature_names_in_", None)
    n = getattr(estimator, "n_features_in_", None)
    if n is None and isinstance(estimator, Pipeline):
        for _, step in estimator.steps:
            if step is not None and step != "passthrough":
                return _input_names(step)
    if n is None:
        raise ValueError(
            f"{type(estimator).__name__} is not fitted (no n_features_in_); fit it first."
        )
    return (None if names is None else [str(v) for v in names]), int(n)


def _cannot_trace(step, feature, why=""):
    return ValueError(
        f"feature_columns: cannot trace which output columns of {type(step).__name__} derive "
        f"from the input feature {feature!r}{why}. Supported steps: ColumnTransformer, "
        "OneHotEncoder, KBinsDiscretizer, SimpleImputer, MissingIndicator, nested Pipelines "
        "and column-wise transformers (scalers, OrdinalEncoder, FunctionTransformer with "
        "feature_names_out='one-to-one'). Steps that mix features (PCA, "
        "PolynomialFeatures, ...) cannot be traced: the feature's information spreads over "
        "columns shared with other features."
    )


def _names_out(step, names, n_out=None):
    try:
        out = [str(v) for v in step.get_feature_names_out(np.asarray(names, dtype=object))]
    except (AttributeError, ValueError, TypeError):
        if n_out is None:
            return None
        out = [f"x{i}" for i in range(n_out)]
    return out


def _ct_indices(cols, names, n):
    """Integer input indices of a ColumnTransformer column selection."""
    if isinstance(cols, slice):
        if isinstance(cols.start, str) or isinstance(cols.stop, str):
            start = 0 if cols.start is None else names.index(cols.start)
            stop = n - 1 if cols.stop is None else names.index(cols.stop)
            return np.arange(start, stop + 1)
        return np.arange(n)[cols]
    arr = np.asarray(cols, dtype=object if isinstance(cols, list) else None)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == bool:
        return np.flatnonzero(arr)
    items = arr.tolist()
    if all(isinstance(v, str) for v in items):
        if names is None:
            raise ValueError("ColumnTransformer selects columns by name but the input has none.")
        return np.array([names.index(v) for v in items], dtype=np.int64)
    return np.array([int(v) for v in items], dtype=np.int64)


def _propagate(step, mask, names, feature):
    """Dependency mask (and names) of ``step``'s output columns on the traced feature."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return mask, names
    if isinstance(step, Pipeline):
        for _, sub in step.steps:
            mask, names = _propagate(sub, mask, names, feature)
        return mask, names
    if isinstance(step, ColumnTransformer):
        masks, sub_names = [], []
        for _, trans, cols in step.transformers_:
            if isinstance(trans, str) and trans == "drop":
                continue
            idx = _ct_indices(cols, names, mask.size)
            if idx.size == 0:
                continue
            m, nm = _propagate(trans, mask[idx], [names[i] for i in idx], feature)
            masks.append(m)
            sub_names.extend(nm)
        out = np.concatenate(masks) if masks else np.zeros(0, bool)
        full = _names_out(step, names)
        if full is not None and len(full) != out.size:
            raise _cannot_trace(step, feature, f" (traced {out.size} outputs, it has "
                                f"{len(full)})")
        return out, full if full is not None else sub_names
    names_out = _names_out(step, names)
    if isinstance(step, OneHotEncoder):
        out = np.repeat(mask, encoder_output_counts(step))
    elif isinstance(step, KBinsDiscretizer):
        out = mask if step.encode == "ordinal" else np.repeat(mask, step.n_bins_)
    elif isinstance(step, SimpleImputer):
        stats = np.asarray(step.statistics_, dtype=object)
        keep = np.ones(mask.size, bool)
        if not getattr(step, "keep_empty_features", False) and step.strategy != "constant":
            keep = np.array([not (isinstance(v, float) and np.isnan(v)) for v in stats],
                            dtype=bool)
        out = mask[keep]
        if step.add_indicator:
            out = np.concatenate([out, mask[step.indicator_.features_]])
    elif isinstance(step, MissingIndicator):
        out = mask[step.features_]
    elif isinstance(step, _COLUMNWISE) or (
            isinstance(step, FunctionTransformer)
            and (step.func is None or step.feature_names_out == "one-to-one")):
        out = mask
    elif not mask.any() and names_out is not None:
        out = np.zeros(len(names_out), bool)  # the feature does not enter this step
    else:
        raise _cannot_trace(step, feature)
    if names_out is None:
        names_out = [f"x{i}" for i in range(out.size)]
    if len(names_out) != out.size:
        raise _cannot_trace(step, feature, f" (traced {out.size} outputs, it has "
                            f"{len(names_out)})")
    return out, names_out


@validate_params(
    {"estimator": [HasMethods(["fit"])], "feature": [str, Integral]},
    prefer_skip_nested_validation=True,
)
def feature_columns(estimator, feature) -> np.ndarray:
    """Columns, in the final step's input, derived from one original input feature.

    Parameters
    ----------
    estimator : fitted estimator or :class:`~sklearn.pipeline.Pipeline`
        For a pipeline, ``feature`` is a feature of the pipeline's input (e.g. a column of
        the raw DataFrame) and the result indexes the columns the final step sees.
    feature : str or int
        Name of the input feature (from ``feature_names_in_``) or its position.

    Returns
    -------
    columns : ndarray of int64
        Sorted indices into the final step's input (e.g. the one-hot columns of a
        categorical feature, or the one scaled column of a numeric feature).

    Raises
    ------
    ValueError
        The feature is unknown, dropped by the pipeline, or enters a step that mixes
        features (PCA, PolynomialFeatures, ...) or whose derivation cannot be traced.

    Notes
    -----
    The derivation is traced by structure, not by parsing output names: the column lists
    of :class:`~sklearn.compose.ColumnTransformer` (``transformers_``, remainder
    included), the number of output columns per input of
    :class:`~sklearn.preprocessing.OneHotEncoder` (``categories_``, ``drop_idx_``,
    infrequent categories) and :class:`~sklearn.preprocessing.KBinsDiscretizer`, the kept
    columns and indicators of :class:`~sklearn.impute.SimpleImputer`, and column-wise
    transformers (scalers, ``OrdinalEncoder``, ``FunctionTransformer`` declared
    ``feature_names_out="one-to-one"``, whose declaration is trusted). Every step's count
    is checked against its ``get_feature_names_out``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sklearn_privacy.utils import feature_columns
    >>> df = pd.DataFrame({"age": [30.0, 40, 50, 60], "race": ["a", "b", "c", "a"]})
    >>> pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
    ...                                              (OneHotEncoder(), ["race"])),
    ...                      LinearRegression()).fit(df, [1.0, 2.0, 3.0, 4.0])
    >>> feature_columns(pipe, "race")
    array([1, 2, 3])
    >>> feature_columns(pipe, "age")
    array([0])
    """
    steps, final = split_pipeline(estimator)
    names, n_in = _input_names(estimator)
    j = int(resolve_columns(feature, n_in, names, param="feature")[0])
    mask = np.zeros(n_in, bool)
    mask[j] = True
    current = names if names is not None else [f"x{i}" for i in range(n_in)]
    for step in steps:
        mask, current = _propagate(step, mask, current, feature)
    n_final = getattr(final, "n_features_in_", None)
    if n_final is not None and n_final != mask.size:
        raise ValueError(
            f"feature_columns: traced {mask.size} columns into the final step but it has "
            f"n_features_in_ = {n_final}; the pipeline's structure was not understood."
        )
    cols = np.flatnonzero(mask).astype(np.int64)
    if cols.size == 0:
        raise ValueError(
            f"feature {feature!r} is dropped by the pipeline: no column of the final step "
            "derives from it."
        )
    return cols


def encoder_output_counts(encoder):
    """Number of output columns of each input column of a fitted ``OneHotEncoder`` (after
    infrequent categories are grouped and dropped ones removed) or ``OrdinalEncoder`` (1)."""
    if not isinstance(encoder, OneHotEncoder):
        return [1] * len(encoder.categories_)
    counts = []
    infrequent = getattr(encoder, "infrequent_categories_", None)
    drop_idx = getattr(encoder, "drop_idx_", None)
    for j, cats in enumerate(encoder.categories_):
        k = len(cats)
        if infrequent is not None and infrequent[j] is not None:
            k -= len(infrequent[j]) - 1
        if drop_idx is not None and drop_idx[j] is not None:
            k -= 1
        counts.append(k)
    return counts
