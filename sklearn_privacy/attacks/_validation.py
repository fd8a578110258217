"""Input checks and row access shared by the attacks (data passed through untouched)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp


def is_frame(X) -> bool:
    """Whether ``X`` is a pandas DataFrame (without importing pandas)."""
    return hasattr(X, "iloc") and hasattr(X, "columns")


def n_rows(X, param="X") -> int:
    """Number of rows of ``X`` (array, DataFrame, sparse matrix or list of rows)."""
    if X is None:
        raise ValueError(f"{param} is None; pass the examples (array-like or DataFrame).")
    shape = getattr(X, "shape", None)
    if shape is not None:
        if len(shape) != 2:
            raise ValueError(
                f"{param} must be 2-D (n_samples, n_features); got shape {tuple(shape)}."
            )
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        raise TypeError(
            f"{param} must be an array-like, a DataFrame or a sparse matrix; got "
            f"{type(X).__name__}."
        ) from None


def take_rows(X, idx):
    """Rows ``idx`` (integer positions) of ``X``, its type kept where possible.

    pandas objects by ``iloc`` (index labels and dtypes kept), sparse matrices as CSR,
    arrays by fancy indexing, lists through :func:`numpy.asarray`.
    """
    idx = np.asarray(idx)
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    if sp.issparse(X):
        return X.tocsr()[idx]
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    return X[idx]


def check_same_columns(other, X, param, *, x_param="X", columns=None) -> None:
    """``other`` holds rows in the layout of ``X`` (the same model or positions read them).

    Frames: ``other`` has every column of ``X`` (or only ``columns``, the names actually
    read); otherwise both have the same number of columns.
    """
    if is_frame(X) and is_frame(other):
        need = list(X.columns) if columns is None else list(columns)
        have = set(other.columns)
        missing = [c for c in need if c not in have]
        if missing:
            raise ValueError(f"{param} lacks the columns {missing[:10]} of {x_param}; pass "
                             f"rows with {x_param}'s columns.")
        return
    d_x, d_other = np.shape(X), np.shape(other)
    if len(d_x) == len(d_other) == 2 and d_x[1] != d_other[1]:
        raise ValueError(f"{param} has {d_other[1]} columns but {x_param} has {d_x[1]}; pass "
                         f"rows with {x_param}'s columns.")


def check_target(y, n, *, param="y", x_param="X") -> np.ndarray:
    """``y`` as a 1-D array with ``n`` entries (a column vector is refused, not broadcast)."""
    if y is None:
        raise ValueError(f"{param} is None; pass the true label of every example.")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(
            f"{param} must be 1-D with one entry per row of {x_param}; got shape {y.shape}"
            + (" (pass y.ravel() for a column vector)." if y.ndim == 2 and y.shape[1] == 1
               else ".")
        )
    if y.shape[0] != n:
        raise ValueError(
            f"{param} has {y.shape[0]} entries but {x_param} has {n} rows; pass one label per "
            "row."
        )
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError(f"{param} contains NaN or infinity; pass finite labels / targets.")
    return y


def check_members(members, n) -> np.ndarray:
    """Boolean membership mask over ``n`` rows from a mask or distinct integer positions."""
    if members is None:
        raise ValueError("members is None; pass a boolean mask or integer row indices.")
    members = np.asarray(members)
    if members.ndim != 1:
        raise ValueError(f"members must be 1-D; got shape {members.shape}.")
    if members.size == 0:
        raise ValueError("members is empty; pass a boolean mask or integer row indices.")
    if members.dtype == bool:
        if members.shape != (n,):
            raise ValueError(
                f"members as a boolean mask must have shape ({n},); got {members.shape}."
            )
        mask = members.copy()
    else:
        if members.size and not np.issubdtype(members.dtype, np.integer):
            raise TypeError(
                "members must be a boolean mask over the rows of X or integer row indices; "
                f"got dtype {members.dtype}."
            )
        if members.size == n and n > 0 and np.all((members == 0) | (members == 1)):
            raise ValueError(
                "members is an integer array of 0/1 values with one entry per row "
                "of X: it looks like a membership mask, but integer arrays are read as row "
                "indices. Pass a boolean mask (members.astype(bool)) or the indices "
                "(np.flatnonzero(members))."
            )
        if members.size and (members.min() < 0 or members.max() >= n):
            raise ValueError(
                f"members must be a boolean mask over the rows of X or integer row indices "
                f"in [0, {n}); got min {members.min()}, max {members.max()}."
            )
        if np.unique(members).size != members.size:
            raise ValueError("members contains duplicate row indices; pass each member once.")
        mask = np.zeros(n, bool)
        mask[members] = True
    if mask.sum() < 2 or (~mask).sum() < 2:
        raise ValueError("members must leave at least 2 members and 2 non-members.")
    return mask


def check_membership_truth(members, n, *, param="members", scores_param="scores"
                           ) -> np.ndarray:
    """Membership truth of ``n`` scored rows: a boolean (or 0/1) mask, one per score.

    The ``y_true`` of :func:`sklearn.metrics.roc_curve`: True / 1 for members (trials on
    ``D'``), False / 0 for non-members.
    """
    if members is None:
        raise ValueError(f"{param} is None; pass a boolean mask, True for members, one "
                         f"per entry of {scores_param}.")
    mask = np.asarray(members)
    if mask.ndim != 1 or mask.shape[0] != n:
        raise ValueError(f"{param} must be 1-D with one entry per entry of {scores_param} "
                         f"({n}); got shape {mask.shape}.")
    if mask.dtype != bool:
        if mask.dtype.kind not in "biuf" or not np.all(np.isin(mask, (0, 1))):
            raise ValueError(f"{param} must be boolean (or 0/1): True for members, False "
                             "for non-members.")
        mask = mask.astype(bool)
    return mask


def check_finite_scores(s, param) -> np.ndarray:
    """1-D float scores without NaN/inf."""
    if np.asarray(s).dtype.kind == "c":
        raise TypeError(f"{param} must hold real numbers; got complex values.")
    try:
        s = np.asarray(s, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{param} must be an array of numbers.") from None
    if s.ndim != 1:
        raise ValueError(f"{param} must be 1-D (one score per example); got shape {s.shape}.")
    bad = ~np.isfinite(s)
    if np.any(bad):
        raise ValueError(
            f"{param} contains {int(bad.sum())} NaN or infinite scores (e.g. a model "
            "returning NaN probabilities); an attack on them would report a meaningless "
            "'no leakage' figure. Check the model's outputs."
        )
    return s


def check_fraction(value, param) -> float:
    """A real number in the open interval (0, 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(f"{param} must be a float in (0, 1); got {value!r}.")
    if not (np.isfinite(value) and 0 < value < 1):
        raise ValueError(f"{param} must be a float in (0, 1); got {value!r}.")
    return float(value)


def check_positive_int(value, param, *, minimum=1) -> int:
    """An integer >= ``minimum`` (booleans and floats refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise TypeError(f"{param} must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{param} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_choice(value, choices, param) -> str:
    """One of ``choices`` (strings)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{param} must be one of {tuple(choices)}; got {value!r}.")
    return value


def check_bool(value, param) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{param} must be True or False; got {value!r}.")
    return bool(value)


def resolve_rows(rows, n, *, param="rows") -> np.ndarray:
    """Row positions in the caller's order (duplicates kept); negatives count from the end."""
    if rows is None:
        return np.arange(n)
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n,):
            raise ValueError(
                f"{param}: a boolean mask must have length n_samples = {n}; got shape "
                f"{r.shape}."
            )
        return np.flatnonzero(r)
    r = np.atleast_1d(r)
    if r.ndim != 1 or (r.size and not np.issubdtype(r.dtype, np.integer)):
        raise ValueError(
            f"{param} must be None, an integer, a 1-D sequence of integer row indices or a "
            f"boolean mask over the {n} training rows; got {rows!r}."
        )
    r = r.astype(np.int64)
    if r.size and (r.min() < -n or r.max() >= n):
        raise ValueError(
            f"{param}: index out of range for {n} training rows (valid: {-n}..{n - 1}); got "
            f"min {r.min()}, max {r.max()}."
        )
    return np.where(r < 0, r + n, r)
