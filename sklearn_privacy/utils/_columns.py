"""Column arguments: integer indices or names of ``feature_names_in_``, order kept."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .fixes import NumberInterval, validate_params

__all__ = ["resolve_columns"]


# ``columns`` is checked element by element below, with ``param`` (the caller's name for
# it) in the message.
@validate_params(
    {
        "n_features": [NumberInterval(Integral, 0, None, closed="left")],
        "feature_names": [None, "array-like"],
        "label": ["boolean"],
        "param": [str],
        "allow_duplicates": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def resolve_columns(columns, n_features: int, feature_names=None, *, label: bool = False,
                    param: str = "columns", allow_duplicates: bool = False) -> np.ndarray:
    """Integer column indices of ``columns``, in the order given.

    Parameters
    ----------
    columns : int, str, 1-D array-like of int or str, or 1-D array-like of bool
        Column indices in ``0..n_features - 1`` (``n_features`` for the label when
        ``label=True``; negative indices are refused, they are ambiguous next to the label
        index) or names from ``feature_names`` (``"label"`` names the label when
        ``label=True``). A boolean mask must have length ``n_features`` (``+ 1`` with
        ``label``).
    n_features : int
        Number of features of the fitted estimator; valid indices are
        ``0..n_features - 1`` (plus ``n_features`` for the label when ``label=True``).
    feature_names : array-like of str or None
        ``feature_names_in_`` of the fitted estimator (None when it was fitted on an array
        without names; then names are refused with a message saying so).
    label : bool, default=False
        Whether index ``n_features`` (the label) is allowed.
    param : str, default="columns"
        Parameter name used in error messages.
    allow_duplicates : bool, default=False
        Whether a column may be selected more than once (kept, in order, when allowed;
        a ValueError otherwise).

    Returns
    -------
    indices : ndarray of int64, shape (n_columns,)
        The selected column indices, in the order of ``columns``.

    Raises
    ------
    ValueError
        Empty selection, unknown name, index out of range, duplicates, wrong mask length.
    TypeError
        Elements that are neither integers nor strings (floats, None, ...).

    Examples
    --------
    >>> from sklearn_privacy.utils import resolve_columns
    >>> resolve_columns(["b", 0], 3, ["a", "b", "c"])
    array([1, 0])
    >>> resolve_columns(3, 3, label=True)
    array([3])
    """
    upper = n_features + int(label)
    names = None if feature_names is None else [str(f) for f in feature_names]
    if isinstance(columns, (str, Integral)) and not isinstance(columns, (bool, np.bool_)):
        items = [columns]
    else:
        if columns is None:
            raise ValueError(f"{param}: got None; pass column indices or names.")
        arr = np.asarray(columns, dtype=object if not hasattr(columns, "dtype") else None)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1:
            raise ValueError(f"{param} must be 1-D; got an array of shape {arr.shape}.")
        if arr.dtype == bool or (arr.size and all(isinstance(v, (bool, np.bool_)) for v in arr)):
            mask = arr.astype(bool)
            if mask.shape != (upper,):
                extra = " (the last entry is the label)" if label else ""
                raise ValueError(
                    f"{param}: a boolean mask must have length {upper}{extra}; got "
                    f"{mask.shape[0]}."
                )
            items = list(np.flatnonzero(mask))
            if not items:
                raise ValueError(f"{param}: the boolean mask selects no column.")
        else:
            items = list(arr.tolist())
    if len(items) == 0:
        raise ValueError(f"{param} is empty; select at least one column.")
    out = []
    for item in items:
        if isinstance(item, (bool, np.bool_)):
            raise TypeError(f"{param}: mix of booleans and other values in {columns!r}.")
        if isinstance(item, (Integral, np.integer)):
            k = int(item)
            if not 0 <= k < upper:
                what = (f"0..{n_features - 1} for the features and {n_features} for the "
                        "label" if label else f"0..{n_features - 1}")
                raise ValueError(f"{param}: index {k} out of range; valid indices are {what}.")
            out.append(k)
        elif isinstance(item, str):
            if label and item == "label" and (names is None or "label" not in names):
                out.append(n_features)
                continue
            if names is None:
                raise ValueError(
                    f"{param}: got the name {item!r}, but the estimator was fitted on data "
                    "without column names (no feature_names_in_); pass integer indices or "
                    "fit on a pandas DataFrame."
                )
            try:
                out.append(names.index(item))
            except ValueError:
                close = [n for n in names if item.lower() in n.lower()][:5]
                hint = f" Names containing it: {close}." if close else ""
                raise ValueError(
                    f"{param}: {item!r} is not a column of feature_names_in_ "
                    f"({len(names)} columns).{hint}"
                ) from None
        else:
            raise TypeError(
                f"{param} must hold integer indices or column names (str); got "
                f"{type(item).__name__} {item!r}."
            )
    idx = np.asarray(out, dtype=np.int64)
    if not allow_duplicates and np.unique(idx).size != idx.size:
        raise ValueError(f"{param} contains duplicate columns: {items}.")
    return idx


def derived_columns(feature: str, feature_names) -> np.ndarray:
    """Columns of ``feature_names`` that scikit-learn's naming derives from ``feature``.

    A :class:`~sklearn.compose.ColumnTransformer` names its output
    ``"{transformer}__{name}"``, and a :class:`~sklearn.preprocessing.OneHotEncoder`
    names each level ``"{feature}_{category}"``; so the columns of an original feature
    ``"sex"`` are ``"cat__sex_Female"``, ``"cat__sex_Male"`` (or ``"sex_Female"``, ... when
    ``verbose_feature_names_out=False``) and the column of a scaled ``"age"`` is
    ``"num__age"``. Returns the indices (ascending) of the names equal to ``feature`` or
    to ``feature + "_..."`` once the part up to the first ``"__"`` is removed. The match
    is by name only: a different feature whose name starts with ``feature + "_"`` would
    match too, which the caller must rule out (see ``check_derived_block``).
    """
    out = []
    for k, name in enumerate(str(f) for f in feature_names):
        rest = name.split("__", 1)[1] if "__" in name else name
        if rest == feature or rest.startswith(feature + "_"):
            out.append(k)
    return np.asarray(out, dtype=np.int64)


def check_derived_block(feature: str, names, block, param: str) -> None:
    """Refuse a name-derived column set that is not one feature's encoding.

    ``block`` holds the training values of the matched columns (n, k). One column named
    exactly after the feature is its (scaled) value; one other column must hold 0/1; several
    columns must be a one-hot block (at most one positive entry per row, the rest 0; rows
    scaled to a norm bound keep that shape). Anything else -- e.g. the levels
    of ``"sex"`` plus those of another feature ``"sex_at_birth"``, two 1s in a row -- is
    refused with the matched names, so that no column is included silently.
    """
    rests = [n.split("__", 1)[1] if "__" in n else n for n in names]
    if len(names) == 1 and rests[0] == feature:
        return
    block = np.asarray(block, dtype=float)
    nonzero = block != 0
    if len(names) == 1:
        # one level of a binary feature (OneHotEncoder(drop="if_binary")): 0/1 values
        if np.all((block == 0) | (block == 1)):
            return
    elif np.all(nonzero.sum(axis=1) <= 1) and np.all(block[nonzero] > 0):
        # a one-hot block (its rows possibly scaled to a norm bound): one level per row
        return
    raise ValueError(
        f"{param}: {feature!r} is not a column name; by scikit-learn's naming it would be "
        f"the columns {list(names)}, but their values are not one feature's one-hot "
        "encoding (at most one non-zero entry per row), so another feature may share "
        "the prefix. Pass the exact column names (or indices) instead."
    )


def frame_codes(X, ref=None, skip=None):
    """The columns of a DataFrame as floats: numbers as they are, other columns as codes.

    A non-numeric (or boolean) column becomes the position of each value's string among
    the distinct strings of the same column of ``ref`` (default ``X`` itself), NaN for a
    value ``ref`` does not have. ``skip``: a column name left out. Returns the
    ``(n_rows, n_kept)`` matrix and the positions (among the kept columns) that were coded.
    """
    import pandas as pd

    source = X if ref is None else ref
    cols, coded = [], []
    for c in X.columns:
        if skip is not None and c == skip:
            continue
        col = X[c]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            cols.append(col.to_numpy(dtype=float))
        else:
            levels = pd.unique(source[c].astype(str))
            codes = pd.Categorical(col.astype(str), categories=levels).codes
            coded.append(len(cols))
            cols.append(np.where(codes < 0, np.nan, codes).astype(float))
    matrix = np.column_stack(cols) if cols else np.zeros((len(X), 0))
    return matrix, coded
