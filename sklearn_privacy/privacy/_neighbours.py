"""The neighbouring raw data sets of :func:`~sklearn_privacy.privacy.neighbour_invariance`:
one row of ``X`` (and ``y``) replaced by an exotic value, a new label, a duplicate of
another row, or a new, duplicated or non-range index label."""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

_UNSEEN = "__unseen_category__"
_STRAY = "n/a"
_HUGE = 10 ** 400           # a Python int no float holds

def _is_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


def _numeric_column(col) -> bool:
    kind = getattr(getattr(col, "dtype", None), "kind", "O")
    return kind in "biuf"


def _with_object_value(series, j, value):
    """``series`` as ``object`` with position ``j`` set to ``value`` (any object, an
    array included)."""
    out = series.astype(object).copy()
    out.iat[j] = value
    return out


def _set_row(X, j, values):
    """A copy of frame ``X`` with row ``j`` set to ``values`` ({column: value}); columns
    whose dtype cannot hold the value become ``object``."""
    Xn = X.copy()
    for col, v in values.items():
        series = Xn[col]
        exotic = isinstance(v, np.ndarray) or (isinstance(v, int) and abs(v) > 2 ** 63) \
            or (v is not None and type(v).__name__ == "NaTType")
        if exotic:
            Xn[col] = _with_object_value(series, j, v)
            continue
        if hasattr(series, "cat"):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                Xn.loc[Xn.index[j], col] = np.nan
                continue
            if v not in list(series.cat.categories):
                Xn[col] = series.cat.add_categories([v])
        elif isinstance(v, str) and _numeric_column(series) or (
                v is None and _numeric_column(series)):
            Xn[col] = series.astype(object)
        elif isinstance(v, float) and series.dtype.kind in "biu":
            Xn[col] = series.astype(np.float64)
        Xn.iloc[j, Xn.columns.get_loc(col)] = v
    return Xn


def _row_values(X, j, kind, rng):
    """``{column: value}`` of neighbour ``kind`` for row ``j`` of a frame (None: skip)."""
    import pandas as pd

    cols = list(X.columns)
    numeric = [c for c in cols if _numeric_column(X[c])]
    other = [c for c in cols if c not in numeric]
    if kind == "extreme":
        return {c: float(rng.choice([-1e9, 1e9])) for c in numeric} | {
            c: _UNSEEN for c in other}
    if kind == "missing":
        return {c: np.nan for c in numeric} | {c: None for c in other}
    if kind == "unseen_category":
        return {c: _UNSEEN for c in other} or None
    if kind == "stray_string":
        return {c: _STRAY for c in numeric[:1]} or None
    if kind == "huge_int":
        return {c: _HUGE for c in numeric[:1]} or None
    if kind == "nat":
        return {c: pd.NaT for c in numeric} or None
    if kind == "nested_array":
        return {c: np.array([1.0, 2.0]) for c in (other or cols)[:1]}
    return None


def _new_label(y):
    y = np.asarray(y)
    if y.dtype.kind in "biu":
        return y.max() + 1
    if y.dtype.kind == "f":
        return float(np.nanmax(np.abs(y))) * 1e6 + 1e6
    if y.dtype.kind == "b":
        return None
    return "__new_label__"


def _relabel(X, y, j, kind):
    """``(X', y')`` with row ``j``'s index label replaced (values kept): a label new to
    the index, another row's label, or a string label; ``None`` unless ``X`` is a
    frame. A pandas ``y`` gets the same index."""
    if not _is_frame(X):
        return None
    import pandas as pd

    labels = list(X.index)
    n = len(labels)
    if kind == "index_new":
        ints = [v for v in labels if isinstance(v, numbers.Integral)]
        labels[j] = (max(ints) if ints else n) + 1000
    elif kind == "index_duplicate":
        labels[j] = labels[(j + 1) % n]
    else:
        labels[j] = f"__row_{j}__"
    index = pd.Index(labels, dtype=object if kind == "index_string" else None)
    Xn = X.copy()
    Xn.index = index
    yn = y
    if hasattr(y, "index") and hasattr(y, "iloc") and len(y) == n:
        yn = y.copy()
        yn.index = index
    return Xn, yn


def _neighbours(X, y, rows, kinds, rng):
    """``(name, X', y')`` of every neighbour to fit."""
    n = X.shape[0]
    for j in rows:
        for kind in kinds:
            if kind == "repeat":
                yield "repeat (same rows)", X, y
                continue
            if kind.startswith("index_"):
                pair = _relabel(X, y, j, kind)
                if pair is not None:
                    yield f"{kind} (row {j})", *pair
                continue
            Xn, yn = X, None if y is None else np.array(y, copy=True)
            if kind == "new_label":
                label = None if y is None else _new_label(y)
                if label is None:
                    continue
                if yn.dtype.kind in "biu" and not isinstance(label, numbers.Integral):
                    yn = yn.astype(np.float64)
                if yn.dtype.kind not in "biuf":
                    yn = yn.astype(object)
                yn[j] = label
            elif kind == "duplicate":
                k = (j + 1) % n
                if _is_frame(X):
                    Xn = X.copy()
                    for c in range(X.shape[1]):     # column by column: dtypes kept
                        Xn.iloc[j, c] = X.iloc[k, c]
                elif sp.issparse(X):
                    A = X.toarray()
                    A[j] = A[k]
                    Xn = type(X)(A)  # the same sparse format
                else:
                    Xn = X.copy()
                    Xn[j] = X[k]
                if yn is not None:
                    yn[j] = yn[k]
            elif _is_frame(X):
                values = _row_values(X, j, kind, rng)
                if values is None:
                    continue
                Xn = _set_row(X, j, values)
            else:
                sparse = sp.issparse(X)
                A = X.toarray() if sparse else np.asarray(X)
                if sparse and kind in ("stray_string", "huge_int", "nat", "nested_array"):
                    continue  # a sparse matrix holds numbers only
                if kind == "extreme":
                    Xn = A.astype(np.float64, copy=True)
                    Xn[j] = rng.choice([-1e9, 1e9], size=A.shape[1])
                elif kind == "missing":
                    Xn = A.astype(np.float64, copy=True)
                    Xn[j] = np.nan
                elif kind in ("stray_string", "huge_int", "nat", "nested_array"):
                    import pandas as pd

                    Xn = A.astype(object)
                    Xn[j, 0] = {"stray_string": _STRAY, "huge_int": _HUGE, "nat": pd.NaT,
                                "nested_array": np.array([1.0, 2.0])}[kind]
                else:
                    continue
                if sparse:
                    Xn = type(X)(Xn)  # the same sparse format
            yield f"{kind} (row {j})", Xn, yn


# ------------------------------------------------------------------------ comparison
