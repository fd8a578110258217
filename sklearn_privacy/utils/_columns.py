"""Column arguments: integer indices or names of ``feature_names_in_``, order kept."""

from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = ["resolve_columns"]


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
