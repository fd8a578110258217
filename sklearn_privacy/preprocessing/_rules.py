"""The declared rules that map one raw value onto a public schema (no value makes them fail).

Shared by :class:`~sklearn_privacy.preprocessing.PublicSchema` and
:class:`~sklearn_privacy.preprocessing.BoundedScaler`. Every function maps a column entry
by entry: the output at position ``i`` depends on the input at position ``i`` only (never
on an index label, never on another entry), and no raw value raises or warns. Typed
columns take vectorised paths that give the same result as the value-by-value rule.
"""

from __future__ import annotations

import math
from decimal import Decimal
from numbers import Real

import numpy as np

__all__ = ["map_column", "map_values", "numbers_of_array", "numeric_frame"]


def _number(value) -> float:
    """The declared numeric rule for one raw value; never raises.

    Real numbers (Python and numpy ints, floats and bools, ``Fraction``, ``Decimal``) are
    their value, an int or a ``Decimal`` beyond the float range being ``+-inf``; a string
    is parsed as Python's ``float`` does (``" 3.5 "``, ``"1e400"`` -> inf, ``"nan"``);
    anything else -- None, NaN, ``pd.NA``, ``NaT``, dates and durations, complex numbers,
    bytes, lists, arrays, any other object -- is missing (NaN).
    """
    try:
        if isinstance(value, np.datetime64 | np.timedelta64):
            return math.nan
        if isinstance(value, bool | np.bool_):
            return float(value)
        if isinstance(value, Real | Decimal):
            try:
                return float(value)
            except OverflowError:   # an int (or Fraction) beyond the float range
                return math.inf if value > 0 else -math.inf
        if isinstance(value, str):
            return float(str.__str__(value))
    except Exception:  # noqa: BLE001 - a value the rule cannot read is missing
        return math.nan
    return math.nan


_number_ufunc = np.frompyfunc(_number, 1, 1)


def _infer_kind(values) -> str | None:
    """pandas' inferred kind of an object array (skipping missing values), or None."""
    try:
        from pandas.api.types import infer_dtype
    except ImportError:  # pragma: no cover - pandas is optional
        return None
    try:
        return infer_dtype(values, skipna=True)
    except Exception:  # noqa: BLE001
        return None


def numbers_of_array(values) -> np.ndarray:
    """:func:`_number` of every entry of a 1-D array, vectorised where the dtype allows."""
    values = np.asarray(values)
    kind = values.dtype.kind
    with np.errstate(over="ignore", invalid="ignore"):
        if kind in "fiub":
            return values.astype(np.float64)
        if kind in "mMcSV":   # dates, durations, complex, bytes, records: not numbers
            return np.full(values.shape, np.nan)
        if kind == "O" and _infer_kind(values) in ("floating", "integer",
                                                   "mixed-integer-float", "boolean"):
            try:
                return values.astype(np.float64)
            except Exception:  # noqa: BLE001 - e.g. an int beyond the float range
                pass
        return _number_ufunc(values.astype(object)).astype(np.float64)


def _declared_category(lookup, unknown):
    def one(value):
        try:
            if isinstance(value, str):   # a str subclass compares by its own __eq__
                return lookup.get(value, unknown)
        except Exception:  # noqa: BLE001
            pass
        return unknown
    return np.frompyfunc(one, 1, 1)


def _strings_of_array(values, cats, unknown) -> np.ndarray:
    """The declared string category of every entry (``unknown`` where there is none)."""
    values = np.asarray(values)
    if values.dtype.kind == "U":
        values = values.astype(object)
    if values.dtype.kind != "O":   # numbers, dates, bytes: never a string category
        return np.full(values.shape, unknown, dtype=object)
    if _infer_kind(values) == "string":   # only strings and missing values
        try:
            import pandas as pd
            idx = pd.Index(cats, dtype=object).get_indexer(values)
            out = np.full(values.shape, unknown, dtype=object)
            out[idx >= 0] = cats[idx[idx >= 0]]
            return out
        except Exception:  # noqa: BLE001 - fall back to the exact rule below
            pass
    lookup = {str(c): c for c in cats}
    return _declared_category(lookup, unknown)(values).astype(object)


def map_column(column, spec) -> np.ndarray:
    """The declared rule of ``spec`` applied to one raw column, entry by entry."""
    if spec[0] == "numeric":
        _, low, high, fill = spec
        v = map_values(column, numbers_of_array)
        return np.clip(np.where(np.isnan(v), fill, v), low, high)
    _, cats, unknown = spec
    if cats.dtype == object:
        return map_values(column, lambda a: _strings_of_array(a, cats, unknown))
    v = map_values(column, numbers_of_array)
    return np.where(np.isin(v, cats), v, unknown)


def map_values(column, rule) -> np.ndarray:
    """``rule`` (a function of a 1-D array) applied to a raw column, by position.

    A pandas ``Categorical`` column applies the rule to its categories once and takes
    the result by code (a missing entry, code -1, is mapped as a missing value); a
    nullable numeric or boolean column has its missing entries as NaN; any other pandas
    column, an array or a column of another frame library is read as a 1-D array.
    """
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if pd is not None and isinstance(column, pd.Series | pd.Index):
        dtype = column.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cats = np.asarray(dtype.categories.to_numpy(dtype=object), dtype=object)
            mapped = rule(np.concatenate([cats, np.array([None], dtype=object)]))
            return mapped[np.asarray(column.cat.codes if isinstance(column, pd.Series)
                                     else column.codes)]
        if pd.api.types.is_bool_dtype(dtype) or (
                pd.api.types.is_numeric_dtype(dtype) and dtype.kind in "fiub"
                and isinstance(dtype, pd.api.extensions.ExtensionDtype)):
            return rule(column.to_numpy(dtype=np.float64, na_value=np.nan))
        if isinstance(dtype, np.dtype):
            return rule(column.to_numpy())
        return rule(np.asarray(column.to_numpy(dtype=object, na_value=None), dtype=object))
    if hasattr(column, "to_numpy"):   # a column of another frame library
        column = column.to_numpy()
    return rule(np.asarray(column) if not isinstance(column, np.ndarray) else column)


def numeric_frame(X):
    """``X`` with every column read by the numeric rule, when a column is not numeric.

    A DataFrame keeps its column names (and its index, by position); an array becomes a
    float array. Numeric input is returned as it is (the estimator's own validation reads
    it). Used by :class:`~sklearn_privacy.preprocessing.BoundedScaler`, so that a stray
    string or an exotic value in one row is a missing entry rather than an exception.
    """
    if hasattr(X, "tocsr") or hasattr(X, "todense"):
        return X
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if pd is not None and isinstance(X, pd.DataFrame):
        if all(isinstance(t, np.dtype) and t.kind in "fiuc" for t in X.dtypes):
            return X   # numbers (complex ones are refused by the estimator's validation)
        out = pd.DataFrame({j: map_values(X.iloc[:, j], numbers_of_array)
                            for j in range(X.shape[1])})
        out.columns = X.columns
        out.index = X.index
        return out
    if hasattr(X, "columns") or hasattr(X, "__dataframe__"):
        return X   # another frame library: the estimator's validation reads it
    arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if arr.dtype.kind in "fiuc" or arr.ndim != 2:
        return X
    return np.column_stack([numbers_of_array(arr[:, j]) for j in range(arr.shape[1])]) \
        if arr.shape[1] else arr.astype(np.float64)
