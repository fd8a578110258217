"""``data_norm`` and ``intercept_scaling`` read off the declared preprocessing."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.pipeline import Pipeline

from ..utils.fixes import Interval, validate_params

#: the constant column's value as a share of the bound on the encoded features' norm
INTERCEPT_SHARE = 0.5


def _max_square(feature_range) -> float:
    low, high = (float(v) for v in feature_range)
    return max(low * low, high * high)


def _n_columns_of_bounds(scaler):
    fitted = getattr(scaler, "n_features_in_", None)
    if fitted is not None:
        return int(fitted)
    bounds = scaler.bounds
    if isinstance(bounds, dict):
        return len(bounds)
    arr = np.asarray(bounds, dtype=object)
    if arr.ndim == 2:
        return arr.shape[0]
    return None


def _square_norm(step, columns, where):
    """Bound on the squared L2 norm of ``step``'s output rows, from its parameters only
    (``columns``: the number of input columns when a ``ColumnTransformer`` says so)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    from ..preprocessing import BoundedScaler, DPQuantileScaler, DPRowNormClipper

    if isinstance(step, DPRowNormClipper):
        return 1.0
    if isinstance(step, (BoundedScaler, DPQuantileScaler)):
        k = columns if columns is not None else _n_columns_of_bounds(step)
        if k is None:
            raise ValueError(
                f"{where}: {type(step).__name__}(bounds={step.bounds!r}) declares one pair for "
                "every column, so the number of columns is not declared; pass one pair "
                "per column (a list or a dict), or put it in a ColumnTransformer.")
        return k * _max_square(step.feature_range)
    if isinstance(step, OneHotEncoder):
        if isinstance(step.categories, str) or step.drop is not None or \
                step.handle_unknown not in ("ignore", "infrequent_if_exist"):
            raise ValueError(
                f"{where}: OneHotEncoder needs declared categories (categories=[...]), "
                "drop=None and handle_unknown='ignore' for a data-independent bound (each "
                "encoded feature then holds at most one 1).")
        return float(len(step.categories))
    if isinstance(step, ColumnTransformer):
        if step.remainder != "drop":
            raise ValueError(f"{where}: ColumnTransformer(remainder={step.remainder!r}) "
                             "passes columns with no declared bound; use remainder='drop'.")
        total = 0.0
        for name, part, cols in step.transformers:
            if part == "drop":
                continue
            if part == "passthrough":
                raise ValueError(f"{where}: transformer {name!r} is 'passthrough': its "
                                 "columns have no declared bound.")
            n_cols = (len(cols) if isinstance(cols, (list, tuple, np.ndarray))
                      and not isinstance(cols, str) else 1 if isinstance(cols, (str, int))
                      else None)
            total += _square_norm(part, n_cols, f"{where} -> {name!r}")
        return total
    if isinstance(step, Pipeline):
        return _declared_square_norm(step.steps, where)
    raise ValueError(
        f"{where}: no declared bound on the rows after {type(step).__name__}; the bounds "
        "are read from BoundedScaler, OneHotEncoder with declared categories, a "
        "ColumnTransformer of those, or PublicSchema.make_encoder(). Pass data_norm "
        "yourself.")


def _declared_square_norm(steps, where):
    from ..preprocessing import PublicSchema

    last = None
    for name, step in steps:
        if step is None or step == "passthrough":
            continue
        if isinstance(step, PublicSchema):
            last = ("schema", step)
            continue
        last = ("bound", _square_norm(step, None, f"{where} step {name!r}"))
    if last is None or last[0] == "schema":
        raise ValueError(
            f"{where}: the model's input has no declared bound (no encoder after "
            "PublicSchema); add schema.make_encoder() before the model, or pass "
            "data_norm yourself.")
    return last[1]


@validate_params(
    {"pipeline": [Pipeline],
     "intercept_share": [Interval(Real, 0, None, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def with_declared_bounds(pipeline: Pipeline, *, intercept_share: float = INTERCEPT_SHARE):
    """Set the final model's ``data_norm`` and ``intercept_scaling`` from the declared
    preprocessing before it.

    The steps before the model map every row into a box the user declared: a
    :class:`~sklearn_privacy.preprocessing.BoundedScaler` puts each of its ``k`` columns
    in ``feature_range`` (``(-1, 1)``: squared norm at most ``k``; so does a
    :class:`~sklearn_privacy.preprocessing.DPQuantileScaler`, whose output range does not
    depend on the rows either), a
    :class:`~sklearn_privacy.preprocessing.DPRowNormClipper` outputs rows of norm at
    most 1, a ``OneHotEncoder``
    with declared categories, ``drop=None`` and ``handle_unknown="ignore"`` puts at most
    one 1 in each encoded feature (squared norm at most the number of features), a
    ``ColumnTransformer`` adds its parts, and
    :meth:`~sklearn_privacy.preprocessing.PublicSchema.make_encoder` builds exactly
    these. With ``F`` the bound so found on the encoded rows' norm, the constant column
    takes ``intercept_scaling = intercept_share * F`` and ``data_norm = sqrt(F^2 +
    intercept_scaling^2)`` -- for ``k`` declared columns after a schema's encoder,
    ``intercept_scaling = 0.5 sqrt(k)`` and ``data_norm = sqrt(1.25 k)``. Only
    parameters are read (never a row), so the bounds are data-independent and the
    claim is unchanged.

    The model's values are set only when its ``data_norm`` is ``None`` (a value the user
    gave is kept, with its ``intercept_scaling``); without ``fit_intercept``,
    ``data_norm = F``.

    Parameters
    ----------
    pipeline : Pipeline
        Declared preprocessing steps followed by a model with ``data_norm`` and
        ``intercept_scaling`` parameters (the DP and FIL linear models).
    intercept_share : float > 0, default=0.5
        The constant column's value as a share of ``F`` (0.5: the value on the tables
        of the user guide's publishing page).

    Returns
    -------
    pipeline : Pipeline
        The same pipeline, its final model's parameters set (``set_params``).

    Raises
    ------
    ValueError
        When a step before the model has no declared bound (its name in the message).

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_privacy.linear_model import DPLogisticRegression, with_declared_bounds
    >>> from sklearn_privacy.preprocessing import PublicSchema
    >>> schema = PublicSchema({"age": (17, 90), "hours": (0, 99),
    ...                        "job": ["a", "b", "c"], "sex": ["f", "m"]}, classes=[0, 1])
    >>> model = with_declared_bounds(make_pipeline(
    ...     schema, schema.make_encoder(), DPLogisticRegression(1.0, classes=[0, 1])))
    >>> final = model[-1]
    >>> round(final.data_norm, 4), round(final.intercept_scaling, 4)
    (2.2361, 1.0)
    """
    steps = pipeline.steps
    final = steps[-1][1]
    params = final.get_params(deep=False)
    if "data_norm" not in params:
        raise ValueError(f"with_declared_bounds: the final step {steps[-1][0]!r} "
                         f"({type(final).__name__}) has no data_norm parameter.")
    if params["data_norm"] is not None:
        return pipeline
    F2 = _declared_square_norm(steps[:-1], "with_declared_bounds")
    F = math.sqrt(F2)
    if params.get("fit_intercept", False) and "intercept_scaling" in params:
        s = float(intercept_share) * F
        final.set_params(data_norm=math.sqrt(F2 + s * s), intercept_scaling=s)
    else:
        final.set_params(data_norm=F)
    return pipeline
