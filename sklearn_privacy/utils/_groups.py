"""Groups evaluable on any data: binary columns, conjunctions, predicates and callables.

A group is evaluated on the data the caller passes -- a NumPy array, a SciPy sparse matrix
or a pandas DataFrame (string, ``category`` and numeric columns) -- so the base model can be
any pipeline. Columns are named by integer position (any data) or by column name (data with
column names, i.e. a DataFrame).
"""

from __future__ import annotations

from itertools import combinations, product
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .fixes import NumberInterval, validate_params

__all__ = ["ColumnPredicate", "Group", "as_2d_data", "as_groups", "conjunction_groups",
           "membership_matrix"]


# ---------------------------------------------------------------- data access
def _is_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def as_2d_data(X, param="X", *, allow_1d=False):
    """``X`` as something with ``shape == (n, p)``: DataFrame and sparse kept, else ndarray.

    With ``allow_1d``, a 1-D array is one column (for ``sensitive_features``). A polars
    DataFrame becomes a pandas one (its column names are what groups refer to).
    """
    if _is_frame(X):
        return X
    if type(X).__module__.split(".")[0] == "polars":  # named columns, read as pandas
        return _polars_to_pandas(X)
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{param} must be 2-dimensional; got a sparse array of shape "
                             f"{X.shape}.")
        return X if X.format in ("csr", "csc") else X.tocsr()
    if hasattr(X, "to_frame") and hasattr(X, "iloc"):  # a pandas Series: one column
        return X.to_frame()
    arr = np.asarray(X)
    if allow_1d and arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{param} must be 2-dimensional (n_samples, n_features); got an "
                         f"array of shape {arr.shape}.")
    return arr


def _polars_to_pandas(X):
    """A polars DataFrame (or Series) as a pandas DataFrame with the same column names.

    Column by column through numpy (no pyarrow needed); rows keep their order, so the
    groups evaluated on it align with the rows the base model sees.
    """
    import pandas as pd

    if hasattr(X, "columns"):
        return pd.DataFrame({name: X[name].to_numpy() for name in X.columns})
    return pd.DataFrame({X.name: X.to_numpy()})


def _column(X, column, who):
    """One column of ``X`` (a pandas Series for frames, else a 1-D ndarray)."""
    if isinstance(column, str):
        if not _is_frame(X):
            raise ValueError(
                f"Group {who}: the column name {column!r} needs data with column names (a "
                f"pandas DataFrame); got {type(X).__name__} without names. Pass a DataFrame "
                "(to fit, predict and score alike) or name the column by integer position."
            )
        if column not in X.columns:
            cols = [str(c) for c in X.columns]
            close = [c for c in cols if column.lower() in c.lower()][:5]
            hint = f" Columns containing it: {close}." if close else ""
            raise ValueError(f"Group {who}: {column!r} is not a column of the data "
                             f"({len(cols)} columns).{hint}")
        col = X[column]
        if _is_frame(col):
            raise ValueError(f"Group {who}: the data has several columns named {column!r}.")
        return col
    n_cols = X.shape[1]
    if not -n_cols <= column < n_cols:
        raise ValueError(f"Group {who}: column index {column} out of range for data with "
                         f"{n_cols} columns.")
    if _is_frame(X):
        return X.iloc[:, column]
    if sp.issparse(X):
        return np.asarray(X[:, [column]].toarray()).ravel()
    return np.asarray(X[:, column])


def _is_numeric_dtype(dtype) -> bool:
    try:
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        return bool(is_numeric_dtype(dtype) or is_bool_dtype(dtype))
    except ImportError:  # pragma: no cover - pandas is optional
        return np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)


def _as_float(col, who, what):
    """Numeric column as float64 (missing values -> NaN); TypeError for other dtypes."""
    if hasattr(col, "to_numpy"):
        if not _is_numeric_dtype(col.dtype):
            raise TypeError(
                f"Group {who}: column {col.name!r} has dtype {col.dtype}, not numeric; {what}."
            )
        return col.to_numpy(dtype=float, na_value=np.nan)
    arr = np.asarray(col)
    if arr.dtype == object:
        try:
            return arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError(f"Group {who}: the column holds non-numeric values such as "
                            f"{arr[:3].tolist()}; {what}.") from None
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"Group {who}: the column has dtype {arr.dtype}, not numeric; {what}.")
    return arr.astype(float)


def _missing(values: np.ndarray) -> np.ndarray:
    try:
        import pandas as pd

        return np.asarray(pd.isna(values), dtype=bool)
    except ImportError:  # pragma: no cover - pandas is optional
        return np.array([v is None or v != v for v in values], dtype=bool)


def _binary_member(X, column, who):
    vals = _as_float(_column(X, column, who), who,
                     "a column named in a group must be binary (0/1 or boolean); use "
                     "ColumnPredicate(column, '==', value) for a category")
    return vals > 0.5  # missing (NaN) is never a member


def _item_name(item) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Integral):
        return f"x{int(item)}"
    return getattr(item, "__name__", "callable")


def _call_mask(fn, X, n, who):
    m = fn(X)
    if sp.issparse(m) and m.shape in ((n, 1), (1, n), (n,)):
        m = m.toarray().ravel()
    if hasattr(m, "to_numpy"):
        m = m.to_numpy()
    m = np.asarray(m)
    if m.shape != (n,) or m.dtype != bool:
        raise ValueError(
            f"Group {who}: the callable must return a boolean array of shape ({n},); got "
            f"dtype {m.dtype} and shape {m.shape}."
        )
    return m


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _check_item(item):
    if isinstance(item, (bool, np.bool_)):
        raise TypeError(f"A group item cannot be a boolean; got {item!r}.")
    if isinstance(item, Integral):
        return int(item)
    if isinstance(item, str) or callable(item):
        return item
    raise TypeError(
        "Group spec: a group must be a column index, a column name, a tuple of those or of "
        f"predicates (conjunction), a callable X -> boolean mask or 'all'; got {item!r}."
    )


# ---------------------------------------------------------------- public classes
class Group:
    """A subpopulation defined by a membership function of the data.

    Groups are the subpopulations on which multicalibration is enforced and measured
    (:class:`~sklearn_privacy.PrivateMulticalibrator`,
    :func:`~sklearn_privacy.metrics.multicalibration_error`). A group is evaluated on the
    data it is given, never stored with it, so one group object serves for training,
    calibration and test data alike.

    Parameters
    ----------
    spec : int, str, tuple, callable or "all"
        ``int`` (column position) or ``str`` (column name of a DataFrame): the rows whose
        binary column is set (value > 0.5; a missing value is not a member). A tuple of
        such columns and/or predicates: their conjunction. A callable ``data -> bool
        array`` (for instance a :class:`ColumnPredicate`, which, unlike a lambda, can be
        pickled). ``"all"``: every row (a column named ``"all"`` is written ``("all",)``).
    name : str, default=None
        Readable name (default: built from ``spec``).

    See Also
    --------
    ColumnPredicate : Picklable predicate on one column, usable as (part of) a spec.
    conjunction_groups : All conjunctions of items of different blocks.
    membership_matrix : Membership of many groups at once.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privacy.multicalibration import ColumnPredicate, Group
    >>> df = pd.DataFrame({"race": ["Black", "White", "Black"], "female": [1, 1, 0]})
    >>> g = Group((ColumnPredicate("race", "==", "Black"), "female"))
    >>> g.name, g.mask(df).tolist()
    ("race=='Black'&female", [True, False, False])
    """

    def __init__(self, spec, name=None):
        if isinstance(spec, str) and spec == "all":
            pass
        elif isinstance(spec, tuple):
            if not spec:
                raise ValueError("A conjunction must be a non-empty tuple of column indices, "
                                 "column names or predicates; got ().")
            spec = tuple(_check_item(item) for item in spec)
        elif isinstance(spec, (Integral, str)) and not isinstance(spec, (bool, np.bool_)):
            spec = (_check_item(spec),)
        elif not callable(spec):
            raise TypeError(
                "Group spec: a group must be a column index, a column name, a tuple of those or of "
                f"predicates (conjunction), a callable X -> boolean mask or 'all'; got "
                f"{spec!r}."
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None; got {name!r}.")
        self.spec = spec
        if name is None:
            if isinstance(spec, str):
                name = "all"
            elif isinstance(spec, tuple):
                name = "&".join(_item_name(item) for item in spec)
            else:
                name = _item_name(spec)
        self.name = name

    def mask(self, X):
        """Boolean membership of each row of ``X``.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Data to evaluate the group on; column names in the spec need a DataFrame.

        Returns
        -------
        mask : ndarray of bool, shape (n_samples,)
            True for the rows that belong to the group.
        """
        return self._mask(as_2d_data(X), {})

    def _mask(self, X, cache):
        """:meth:`mask` on validated ``X``; ``cache`` holds the masks of columns and
        :class:`ColumnPredicate` items already evaluated on this ``X`` (shared by the
        groups of one :func:`membership_matrix` call)."""
        n = X.shape[0]
        if isinstance(self.spec, str):
            return np.ones(n, dtype=bool)
        if isinstance(self.spec, tuple):
            out = np.ones(n, dtype=bool)
            for item in self.spec:
                if type(item) is ColumnPredicate and _hashable(item.value):
                    key = ("predicate", item.column, item.op, type(item.value), item.value)
                    if key not in cache:
                        cache[key] = _call_mask(item, X, n, self.name)
                    out &= cache[key]
                elif callable(item):
                    out &= _call_mask(item, X, n, self.name)
                else:
                    key = ("column", item)
                    if key not in cache:
                        cache[key] = _binary_member(X, item, self.name)
                    out &= cache[key]
            return out
        return _call_mask(self.spec, X, n, self.name)

    def __repr__(self):
        return f"Group({self.name!r})"


class ColumnPredicate:
    """Picklable predicate on one column: ``X[column] <op> value``.

    Use it inside a :class:`Group` spec to define groups by thresholds or categories of
    raw columns without one-hot encoding them first. Unlike a lambda, it pickles (so
    estimators holding such groups can be saved and sent to workers) and it treats
    missing values consistently: a missing value belongs to no group.

    Parameters
    ----------
    column : int or str
        Column position (any data) or column name (a pandas DataFrame).
    op : {"<", "<=", ">", ">=", "==", "!="}
        Comparison between the column's values and ``value``.
    value : float or str (or another scalar)
        A real number compares numerically with a numeric column; any other value (a
        category such as ``"Black"``) compares by equality (``"=="``/``"!="`` only) with
        the column's values, for string, object and ``category`` columns alike. A missing
        value (NaN, None, ``pd.NA``) satisfies no predicate, not even ``"!="``.

    Raises
    ------
    TypeError
        ``column`` neither an int nor a str; at evaluation, a numeric ``value`` on a
        non-numeric column or a string ``value`` on a numeric column.
    ValueError
        Unknown ``op``, NaN ``value``, an ordering ``op`` with a non-numeric ``value``.

    See Also
    --------
    Group : A subpopulation, defined by columns, predicates or their conjunction.
    conjunction_groups : Expands a categorical column into one predicate per category.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.multicalibration import ColumnPredicate, Group
    >>> g = Group(ColumnPredicate(0, ">=", 40.0))
    >>> g.name, g.mask(np.array([[25.0], [40.0], [61.0]])).tolist()
    ('x0>=40.0', [False, True, True])
    >>> import pandas as pd
    >>> df = pd.DataFrame({"race": pd.Categorical(["Black", "White", None])})
    >>> ColumnPredicate("race", "!=", "White")(df).tolist()
    [True, False, False]
    """

    _OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}

    def __init__(self, column, op, value):
        if isinstance(column, (bool, np.bool_)) or not isinstance(column, (Integral, str)):
            raise TypeError(f"column must be an integer position or a column name; got "
                            f"{column!r}.")
        if not isinstance(op, str) or op not in self._OPS:
            raise ValueError(f"op must be one of {sorted(self._OPS)}; got {op!r}.")
        if isinstance(value, Real):
            value = float(value)
            if np.isnan(value):
                raise ValueError("value must not be NaN (no row would ever match); use a "
                                 "number or a category.")
        elif isinstance(value, np.generic) and value.dtype.kind in "US":
            value = value.item()
        if not isinstance(value, float) and op not in ("==", "!="):
            raise ValueError(f"op {op!r} needs a numeric value; got {value!r} (use '==' or "
                             "'!=' for a category).")
        self.column = int(column) if isinstance(column, Integral) else column
        self.op, self.value = op, value
        prefix = f"x{self.column}" if isinstance(self.column, int) else self.column
        self.__name__ = f"{prefix}{op}{self.value!r}"

    def __call__(self, X):
        X = as_2d_data(X)
        col = _column(X, self.column, self.__name__)
        is_category = getattr(getattr(col, "dtype", None), "name", "") == "category"
        if isinstance(self.value, float) and not (is_category and self.op in ("==", "!=")):
            vals = _as_float(col, self.__name__,
                             f"compare it with a category (e.g. '==' 'value'), not the "
                             f"number {self.value!r}")
            return self._OPS[self.op](vals, self.value) & ~np.isnan(vals)
        if not isinstance(self.value, float) and not is_category and \
                hasattr(col, "dtype") and _is_numeric_dtype(col.dtype):
            raise TypeError(
                f"Group {self.__name__}: {self.value!r} is not a number but the column is "
                f"numeric (dtype {col.dtype}); compare with a number."
            )
        vals = col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else \
            np.asarray(col, dtype=object)
        ok = ~_missing(vals)
        eq = np.equal(vals[ok], np.asarray(self.value, dtype=object)).astype(bool)
        out = np.zeros(vals.shape[0], dtype=bool)
        out[ok] = eq if self.op == "==" else ~eq
        return out

    def __repr__(self):
        return f"ColumnPredicate({self.column!r}, {self.op!r}, {self.value!r})"


# ---------------------------------------------------------------- helpers
def as_groups(groups):
    """Normalise a group collection; the whole population always comes first."""
    if isinstance(groups, (Group, str)) or callable(groups) or \
            not hasattr(groups, "__iter__"):
        raise TypeError(f"groups must be a sequence of group specifications; got {groups!r} "
                        "(wrap a single group in a list).")
    out = [Group("all")]
    for g in groups:
        grp = g if isinstance(g, Group) else Group(g)
        if isinstance(grp.spec, str) and grp.spec == "all":
            continue
        out.append(grp)
    return out


@validate_params(
    {"groups": ["array-like"], "X": ["array-like", "sparse matrix"]},
    prefer_skip_nested_validation=True,
)
def membership_matrix(groups, X):
    """Boolean matrix (n_samples, n_groups) of group membership.

    Parameters
    ----------
    groups : non-empty sequence of Group or group specifications
        The groups, as :class:`Group` objects or as specs accepted by :class:`Group`.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Data to evaluate the groups on.

    Returns
    -------
    M : ndarray of bool, shape (n_samples, n_groups)
        ``M[i, j]`` is True when row ``i`` belongs to ``groups[j]``.

    Raises
    ------
    ValueError
        Empty ``groups``, ``X`` not 2-dimensional, a column out of range or unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.multicalibration import membership_matrix
    >>> membership_matrix([0, (0, 1)], np.array([[1, 0], [1, 1]])).tolist()
    [[True, False], [True, True]]
    """
    groups = [g if isinstance(g, Group) else Group(g) for g in groups]
    if not groups:
        raise ValueError("groups is empty; pass at least one group.")
    X = as_2d_data(X)
    # column-major: each group's column is contiguous (members are read per group)
    out = np.empty((X.shape[0], len(groups)), dtype=bool, order="F")
    cache: dict = {}
    for j, g in enumerate(groups):
        out[:, j] = g._mask(X, cache)
    return out


def _category_values(X, column):
    col = _column(X, column, f"block {column!r}")
    cats = getattr(getattr(col, "cat", None), "categories", None)
    if cats is not None:
        return list(cats)
    vals = col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else np.asarray(col, object)
    vals = vals[~_missing(vals)]
    try:
        return sorted(set(vals.tolist()))
    except TypeError:
        return list(dict.fromkeys(vals.tolist()))


@validate_params(
    {
        "columns": [dict, list, tuple],
        "max_order": [NumberInterval(Integral, 1, None, closed="left")],
        "names": [None, dict, "array-like"],
        "X": [None, "array-like", "sparse matrix"],
        "min_size": [NumberInterval(Real, 1, np.inf, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def conjunction_groups(columns, max_order=2, names=None, *, X=None, min_size=1):
    """All conjunctions of up to ``max_order`` items taken from different blocks.

    With ``X``, only the conjunctions with at least ``min_size`` members in ``X`` are
    kept. Under differential privacy ``X`` must not be the private calibration set (the
    selection would access it outside the budget): use public data or the data the base
    model was trained on.

    Parameters
    ----------
    columns : dict or list of blocks
        Each block is a list of binary columns (integer positions or column names) or
        predicates (e.g. :class:`ColumnPredicate`), items of the same block being mutually
        exclusive (a one-hot block, the categories of one feature); a conjunction takes at
        most one item per block. A block may also be one column name (a string): it
        expands to ``ColumnPredicate(name, "==", v)`` for every category ``v`` of that
        column of ``X`` (its ``category`` dtype's categories, else its sorted distinct
        non-missing values), so ``X`` is then required.
    max_order : int >= 1, default=2
        Maximum number of items in a conjunction (1: the items themselves).
    names : dict or sequence of str, default=None
        Readable names of integer columns (``names[j]`` for column ``j``); column names
        and predicates name themselves.
    X : array-like, sparse matrix or DataFrame, default=None
        Data on which group sizes are counted (None: keep every conjunction).
    min_size : int >= 1, default=1
        Minimum number of members in ``X`` for a conjunction to be kept.

    Returns
    -------
    groups : list of :class:`Group`
        The single items first, then the conjunctions of increasing order.

    Raises
    ------
    ValueError, TypeError
        Malformed blocks, ``names`` without an entry for a column, bad ``max_order`` or
        ``min_size``, a string block without ``X``.

    Examples
    --------
    >>> from sklearn_privacy.multicalibration import conjunction_groups
    >>> gs = conjunction_groups({"sex": [0, 1], "race": [2, 3, 4]}, max_order=2)
    >>> len(gs)                 # 2 + 3 singles and 2 x 3 pairs
    11
    >>> X = np.array([[1, 0, 1, 0, 0], [0, 1, 1, 0, 0], [1, 0, 0, 1, 0]])
    >>> [g.name for g in conjunction_groups([[0, 1], [2, 3, 4]], X=X, min_size=2)]
    ['x0', 'x2']
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["A", "A", "B"]})
    >>> [g.name for g in conjunction_groups({"sex": "sex", "race": "race"}, X=df,
    ...                                     min_size=2)]
    ["sex=='F'", "race=='A'"]
    """
    if X is not None:
        X = as_2d_data(X)
    blocks = list(columns.values()) if isinstance(columns, dict) else list(columns)
    if not blocks:
        raise ValueError("columns is empty; pass at least one block.")
    expanded = []
    for block in blocks:
        if isinstance(block, str):
            if X is None:
                raise ValueError(f"columns: the block {block!r} names a column whose "
                                 "categories are read from X; pass X (public data).")
            block = [ColumnPredicate(block, "==", v) for v in _category_values(X, block)]
        elif isinstance(block, (Integral, Group)) or callable(block) or \
                not hasattr(block, "__iter__"):
            raise TypeError(f"columns: each block must be a list of columns or predicates "
                            f"(or one column name); got {block!r}.")
        block = [_check_item(item) for item in block]
        if not block:
            raise ValueError("columns: a block is empty.")
        expanded.append(block)

    def label(item):
        if names is not None and isinstance(item, int):
            try:
                return str(names[item])
            except (KeyError, IndexError, TypeError):
                size = len(names) if hasattr(names, "__len__") else "?"
                raise ValueError(f"names has no entry for column {item} ({size} names "
                                 "given); give a name for every integer column.") from None
        return _item_name(item)

    out = []
    for order in range(1, max_order + 1):
        for chosen in combinations(range(len(expanded)), order):
            for combo in product(*(expanded[b] for b in chosen)):
                grp = Group(tuple(combo), name="&".join(label(item) for item in combo))
                if X is not None and int(grp.mask(X).sum()) < min_size:
                    continue
                out.append(grp)
    return out

