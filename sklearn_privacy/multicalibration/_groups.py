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
        the conjunction of such columns; a callable ``X -> bool array``; ``"all"``: every
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


def conjunction_groups(columns, max_order=2, names=None):
    """All conjunctions of up to ``max_order`` binary columns from different blocks.

    Parameters
    ----------
    columns : dict or list of lists of int
        Blocks of one-hot columns (e.g. ``{"race": [...], "sex": [...]}``); a conjunction
        takes at most one column per block (columns of the same one-hot block are
        mutually exclusive).
    max_order : int, default=2
    names : list of str, default=None
        Column names for readable group names.

    Returns
    -------
    groups : list of :class:`Group`

    Examples
    --------
    >>> from sklearn_privacy.multicalibration import conjunction_groups
    >>> gs = conjunction_groups({"sex": [0, 1], "race": [2, 3, 4]}, max_order=2)
    >>> len(gs)                 # 2 + 3 singles and 2 x 3 pairs
    11
    """
    blocks = list(columns.values()) if isinstance(columns, dict) else list(columns)
    out = []
    for order in range(1, max_order + 1):
        for chosen in combinations(range(len(blocks)), order):
            for combo in _product([blocks[b] for b in chosen]):
                name = None
                if names is not None:
                    name = "&".join(str(names[j]) for j in combo)
                out.append(Group(tuple(combo), name=name))
    return out


def _product(lists):
    if not lists:
        yield ()
        return
    for head in lists[0]:
        for tail in _product(lists[1:]):
            yield (head, *tail)
