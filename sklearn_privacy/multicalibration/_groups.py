"""Groups evaluable on any X: binary columns, conjunctions, predicates and callables."""

from __future__ import annotations

from itertools import combinations
from numbers import Integral

import numpy as np


class Group:
    """A subpopulation defined by a membership function of ``X``.

    Parameters
    ----------
    spec : int, tuple of int, callable or "all"
        ``int``: rows whose binary column ``spec`` is set (value > 0.5); a tuple of ints:
        the conjunction of such columns; a callable ``X -> bool array`` (for instance a
        :class:`ColumnPredicate`, which, unlike a lambda, can be pickled); ``"all"``: every
        row.
    name : str, default=None
    """

    def __init__(self, spec, name=None):
        if isinstance(spec, Integral):
            spec = (int(spec),)
        if isinstance(spec, tuple):
            if not spec or not all(isinstance(j, Integral) for j in spec):
                raise ValueError(f"A conjunction must be a non-empty tuple of column indices; "
                                 f"got {spec!r}.")
        elif not (callable(spec) or spec == "all"):
            raise TypeError(
                "A group must be a column index, a tuple of column indices (conjunction), a "
                f"callable X -> boolean mask or 'all'; got {spec!r}."
            )
        self.spec = spec
        self.name = name if name is not None else (
            "all" if spec == "all" else "&".join(f"x{j}" for j in spec)
            if isinstance(spec, tuple) else getattr(spec, "__name__", "callable"))

    def mask(self, X):
        n = X.shape[0]
        if isinstance(self.spec, str):
            return np.ones(n, dtype=bool)
        if isinstance(self.spec, tuple):
            if max(self.spec) >= X.shape[1] or min(self.spec) < -X.shape[1]:
                raise ValueError(
                    f"Group {self.name}: column index out of range for X with "
                    f"{X.shape[1]} columns."
                )
            col = X[:, list(self.spec)]
            if hasattr(col, "toarray"):
                col = col.toarray()
            return np.all(np.asarray(col) > 0.5, axis=1)
        m = np.asarray(self.spec(X))
        if m.shape != (n,) or m.dtype != bool:
            raise ValueError(
                f"Group {self.name}: the callable must return a boolean array of shape "
                f"({n},); got dtype {m.dtype} and shape {m.shape}."
            )
        return m

    def __repr__(self):
        return f"Group({self.name!r})"


class ColumnPredicate:
    """Picklable predicate on one column: ``X[:, column] <op> value``.

    Parameters
    ----------
    column : int
        Column index.
    op : {"<", "<=", ">", ">=", "==", "!="}
    value : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.multicalibration import ColumnPredicate, Group
    >>> g = Group(ColumnPredicate(0, ">=", 40.0))
    >>> g.name, g.mask(np.array([[25.0], [40.0], [61.0]])).tolist()
    ('x0>=40.0', [False, True, True])
    """

    _OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}

    def __init__(self, column, op, value):
        if not isinstance(column, Integral):
            raise TypeError(f"column must be an integer index; got {column!r}.")
        if op not in self._OPS:
            raise ValueError(f"op must be one of {sorted(self._OPS)}; got {op!r}.")
        self.column, self.op, self.value = int(column), op, float(value)
        self.__name__ = f"x{self.column}{op}{self.value!r}"

    def __call__(self, X):
        if not -X.shape[1] <= self.column < X.shape[1]:
            raise ValueError(f"Group {self.__name__}: column index out of range for X with "
                             f"{X.shape[1]} columns.")
        col = X[:, self.column]
        if hasattr(col, "toarray"):
            col = col.toarray().ravel()
        return self._OPS[self.op](np.asarray(col, dtype=float), self.value)

    def __repr__(self):
        return f"ColumnPredicate({self.column}, {self.op!r}, {self.value!r})"


def as_groups(groups):
    """Normalise a group collection; the whole population always comes first."""
    out = [Group("all")]
    for g in groups:
        grp = g if isinstance(g, Group) else Group(g)
        if grp.spec == "all":
            continue
        out.append(grp)
    return out


def membership_matrix(groups, X):
    """Boolean matrix (n_samples, n_groups) of group membership."""
    return np.column_stack([g.mask(X) for g in groups])


def conjunction_groups(columns, max_order=2, names=None, *, X=None, min_size=1):
    """All conjunctions of up to ``max_order`` binary columns from different blocks.

    With ``X``, only the conjunctions with at least ``min_size`` members in ``X`` are
    kept. Under differential privacy ``X`` must not be the private calibration set (the
    selection would access it outside the budget): use public data or the data the base
    model was trained on.

    Parameters
    ----------
    columns : dict or list of lists of int
        Blocks of one-hot columns (e.g. ``{"race": [...], "sex": [...]}``); a conjunction
        takes at most one column per block (columns of the same one-hot block are
        mutually exclusive).
    max_order : int, default=2
    names : list of str, default=None
        Column names for readable group names.
    X : array-like of shape (n_samples, n_features), default=None
        Data on which group sizes are counted (None: keep every conjunction).
    min_size : int, default=1
        Minimum number of members in ``X`` for a conjunction to be kept.

    Returns
    -------
    groups : list of :class:`Group`

    Examples
    --------
    >>> from sklearn_privacy.multicalibration import conjunction_groups
    >>> gs = conjunction_groups({"sex": [0, 1], "race": [2, 3, 4]}, max_order=2)
    >>> len(gs)                 # 2 + 3 singles and 2 x 3 pairs
    11
    >>> X = np.array([[1, 0, 1, 0, 0], [0, 1, 1, 0, 0], [1, 0, 0, 1, 0]])
    >>> [g.name for g in conjunction_groups([[0, 1], [2, 3, 4]], X=X, min_size=2)]
    ['x0', 'x2']
    """
    if int(min_size) != min_size or min_size < 1:
        raise ValueError(f"min_size must be a positive integer; got {min_size!r}.")
    if X is not None and not hasattr(X, "toarray"):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
    blocks = list(columns.values()) if isinstance(columns, dict) else list(columns)
    out = []
    for order in range(1, max_order + 1):
        for chosen in combinations(range(len(blocks)), order):
            for combo in _product([blocks[b] for b in chosen]):
                name = None
                if names is not None:
                    name = "&".join(str(names[j]) for j in combo)
                grp = Group(tuple(combo), name=name)
                if X is not None and int(grp.mask(X).sum()) < min_size:
                    continue
                out.append(grp)
    return out


def _product(lists):
    if not lists:
        yield ()
        return
    for head in lists[0]:
        for tail in _product(lists[1:]):
            yield (head, *tail)
