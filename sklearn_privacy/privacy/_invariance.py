"""Refit a published object on neighbouring raw data sets and list what differs."""

from __future__ import annotations

import math
import numbers
import types
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone

from ..utils.fixes import HasMethods, NumberInterval, validate_params
from ._attributes import _published_state, declaration

__all__ = ["Difference", "InvarianceReport", "NEIGHBOUR_KINDS", "neighbour_invariance"]

#: The neighbouring data sets :func:`~sklearn_privacy.privacy.neighbour_invariance` builds,
#: each from one row.
NEIGHBOUR_KINDS = ("extreme", "missing", "unseen_category", "stray_string", "new_label",
                   "duplicate", "repeat")

_UNSEEN = "__unseen_category__"
_STRAY = "n/a"
_MAX_DEPTH = 12


@dataclass(frozen=True)
class Difference:
    """One attribute that differs between the object fitted on D and on a neighbour.

    Parameters
    ----------
    neighbour : str
        The kind of neighbour (one of ``"extreme"``, ``"missing"``,
        ``"unseen_category"``, ``"stray_string"``, ``"new_label"``, ``"duplicate"``,
        ``"repeat"``) and the row replaced.
    path : str
        Where in the object (``"pipeline.steps[0][1].sparse_output_"``).
    what : str
        ``"value"``, ``"dtype"``, ``"shape"``, ``"type"``, ``"sparse format"``,
        ``"attributes"`` (present in one object only), or ``"noise"`` (a refit on the
        same rows gave the same DP output: the noise is reproducible).
    detail : str
        The two values (abridged).
    """

    neighbour: str
    path: str
    what: str
    detail: str

    def __str__(self):
        return f"[{self.neighbour}] {self.path}: {self.what} differs ({self.detail})"


@dataclass
class InvarianceReport:
    """What :func:`~sklearn_privacy.privacy.neighbour_invariance` found.

    Attributes
    ----------
    differences : list of Difference
        Every non-noise attribute that differs between the object fitted on D and on a
        neighbour (value, dtype, shape, type, sparse format), and reproducible noise.
    refused : list of str
        Neighbours on which ``fit`` raised (kind, row, exception type): a data set outside
        the declared domain (e.g. a label not in ``classes``, NaN under
        ``BoundedScaler(fill_value=None)``), refused as a whole.
    n_neighbours : int
        Number of neighbouring data sets fitted.
    """

    differences: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    n_neighbours: int = 0

    @property
    def is_invariant(self) -> bool:
        """No attribute differs (refusals are counted apart)."""
        return not self.differences

    def paths(self) -> list[str]:
        """The distinct paths that differ, in order of discovery."""
        return list(dict.fromkeys(d.path for d in self.differences))

    def __str__(self):
        head = (f"InvarianceReport: {len(self.differences)} difference(s) over "
                f"{self.n_neighbours} neighbour(s), {len(self.refused)} refused")
        return "\n".join([head] + [f"  {d}" for d in self.differences[:50]]
                         + [f"  refused: {r}" for r in self.refused[:10]])

    __repr__ = __str__


# ------------------------------------------------------------------------ neighbours
def _is_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


def _numeric_column(col) -> bool:
    kind = getattr(getattr(col, "dtype", None), "kind", "O")
    return kind in "biuf"


def _set_row(X, j, values):
    """A copy of frame ``X`` with row ``j`` set to ``values`` ({column: value}); columns
    whose dtype cannot hold the value become ``object``."""
    Xn = X.copy()
    for col, v in values.items():
        series = Xn[col]
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
        Xn.loc[Xn.index[j], col] = v
    return Xn


def _row_values(X, j, kind, rng):
    """``{column: value}`` of neighbour ``kind`` for row ``j`` of a frame (None: skip)."""
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


def _neighbours(X, y, rows, kinds, rng):
    """``(name, X', y')`` of every neighbour to fit."""
    n = X.shape[0]
    out = []
    for j in rows:
        for kind in kinds:
            Xn, yn = X, None if y is None else np.array(y, copy=True)
            if kind == "repeat":
                out.append(("repeat (same rows)", X, y))
                continue
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
                    Xn.iloc[j] = X.iloc[k]
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
                if kind == "stray_string" and sparse:
                    continue  # a sparse matrix holds numbers only
                if kind == "extreme":
                    Xn = A.astype(np.float64, copy=True)
                    Xn[j] = rng.choice([-1e9, 1e9], size=A.shape[1])
                elif kind == "missing":
                    Xn = A.astype(np.float64, copy=True)
                    Xn[j] = np.nan
                elif kind == "stray_string":
                    Xn = A.astype(object)
                    Xn[j, 0] = _STRAY
                else:
                    continue
                if sparse:
                    Xn = type(X)(Xn)  # the same sparse format
            out.append((f"{kind} (row {j})", Xn, yn))
    return out


# ------------------------------------------------------------------------ comparison
def _short(v):
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _structure(a, b, path, name, out):
    """Type, shape, dtype and sparse format only (DP outputs: values are noise)."""
    if type(a) is not type(b):
        out.append(Difference(name, path, "type", f"{type(a).__name__} vs "
                                                  f"{type(b).__name__}"))
        return
    if isinstance(a, BaseEstimator):
        if type(a) is not type(b):
            out.append(Difference(name, path, "type", ""))
        return
    for attr, what in (("format", "sparse format"), ("shape", "shape"), ("dtype", "dtype")):
        va, vb = getattr(a, attr, None), getattr(b, attr, None)
        if va is not None and not isinstance(va, types.MethodType) and va != vb:
            out.append(Difference(name, path, what, f"{va} vs {vb}"))
            return
    if isinstance(a, list | tuple | dict) and len(a) != len(b):
        out.append(Difference(name, path, "shape", f"length {len(a)} vs {len(b)}"))


def _same_scalar(a, b):
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001 - incomparable objects
        return a is b
    try:
        return isinstance(a, numbers.Real) and math.isnan(a) and math.isnan(b)
    except TypeError:
        return False


def _diff(a, b, path, name, out, depth=0):
    if depth > _MAX_DEPTH:
        return
    if type(a) is not type(b):
        out.append(Difference(name, path, "type", f"{type(a).__name__} vs "
                                                  f"{type(b).__name__}"))
        return
    if isinstance(a, BaseEstimator):
        _diff_estimator(a, b, path, name, out, depth)
    elif isinstance(a, np.ndarray):
        if a.dtype != b.dtype:
            out.append(Difference(name, path, "dtype", f"{a.dtype} vs {b.dtype}"))
        elif a.shape != b.shape:
            out.append(Difference(name, path, "shape", f"{a.shape} vs {b.shape}"))
        elif a.dtype == object:
            for i, (u, v) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                _diff(u, v, f"{path}[{i}]", name, out, depth + 1)
        elif not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif hasattr(a, "tocsr") and hasattr(a, "nnz"):       # scipy sparse
        if a.format != b.format or a.shape != b.shape or a.dtype != b.dtype:
            out.append(Difference(name, path, "sparse format",
                                  f"{a.format} {a.shape} vs {b.format} {b.shape}"))
        elif (a != b).nnz:
            out.append(Difference(name, path, "value", "sparse entries differ"))
    elif hasattr(a, "equals") and hasattr(a, "dtypes"):   # pandas objects
        if not a.equals(b):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(a, list | tuple):
        if len(a) != len(b):
            out.append(Difference(name, path, "shape", f"length {len(a)} vs {len(b)}"))
            return
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _diff(u, v, f"{path}[{i}]", name, out, depth + 1)
    elif isinstance(a, dict):
        if list(a) != list(b):
            out.append(Difference(name, path, "attributes",
                                  f"keys {sorted(map(str, a))} vs {sorted(map(str, b))}"))
            return
        for k in a:
            _diff(a[k], b[k], f"{path}[{k!r}]", name, out, depth + 1)
    elif isinstance(a, str | bytes | numbers.Number | np.generic | type(None) | bool):
        if not _same_scalar(a, b):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(a, type | types.FunctionType | types.BuiltinFunctionType |
                    types.ModuleType):
        if a is not b:
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(getattr(a, "__dict__", None), dict):
        _diff(dict(vars(a)), dict(vars(b)), path, name, out, depth + 1)
    elif not _same_scalar(a, b):
        out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))


def _diff_estimator(a, b, path, name, out, depth):
    sa, sb = _published_state(a), _published_state(b)
    if set(sa) != set(sb):
        only = sorted(set(sa) ^ set(sb))
        out.append(Difference(name, path, "attributes", f"present in one only: {only}"))
    decl = declaration(a) or {}
    for key in sa:
        if key not in sb:
            continue
        if decl.get(key) == "dp":
            _structure(sa[key], sb[key], f"{path}.{key}", name, out)
        else:
            _diff(sa[key], sb[key], f"{path}.{key}", name, out, depth + 1)


def _dp_outputs(est, path="", out=None, depth=0):
    """``(path, value)`` of every attribute declared ``"dp"`` (for the repeat check)."""
    out = [] if out is None else out
    if depth > _MAX_DEPTH or not isinstance(est, BaseEstimator):
        return out
    decl = declaration(est) or {}
    for key, value in _published_state(est).items():
        if decl.get(key) == "dp":
            out.append((f"{path}.{key}", value))
        elif decl.get(key) == "child":
            stack = [(f"{path}.{key}", value)]
            while stack:
                p, v = stack.pop()
                if isinstance(v, BaseEstimator):
                    _dp_outputs(v, p, out, depth + 1)
                elif isinstance(v, list | tuple):
                    stack.extend((f"{p}[{i}]", u) for i, u in enumerate(v))
    return out


def _fit(estimator, X, y, fit_params):
    est = clone(estimator)
    # a callable fit parameter is a declared rule (e.g. weights from the labels):
    # evaluated on the data set being fitted, so each neighbour gets its own
    fit_params = {k: (v(X, y) if callable(v) else v) for k, v in fit_params.items()}
    return est.fit(X, **fit_params) if y is None else est.fit(X, y, **fit_params)


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": [None, "array-like"],
        "rows": ["array-like"],
        "kinds": ["array-like"],
        "fit_params": [None, dict],
        "random_state": [None, NumberInterval(numbers.Integral, 0, None, closed="left"),
                         np.random.Generator],
    },
    prefer_skip_nested_validation=False,
)
def neighbour_invariance(estimator, X, y=None, *, rows=(0,), kinds=NEIGHBOUR_KINDS,
                         fit_params=None, random_state=None) -> InvarianceReport:
    """Refit ``estimator`` on neighbouring raw data sets and report what differs.

    The adversary of a privacy claim sees the published object and knows every row but
    one. This check plays that game on the *structure* of the object: for each row of
    ``rows`` it builds neighbouring data sets by replacing that row -- with extreme
    values (``+-1e9`` numbers, an unseen category), missing values, an unseen category, a
    stray string in a numeric column, a new label, or a duplicate of another row -- and
    refits a clone of ``estimator`` on each. It then compares every attribute of every
    object in the published state (what a pickle holds, walked as
    :func:`~sklearn_privacy.privacy_claim` walks it) with the fit on ``(X, y)``:

    * attributes declared as the output of a DP mechanism (``"dp"``, see
      ``sklearn_privacy.privacy._attributes``) are compared by type, shape, dtype and
      sparse format only (their values are noise);
    * every other attribute is compared by value too (arrays: dtype, shape, values;
      sparse matrices: format; frames; nested estimators, lists, dicts, objects).

    A ``"repeat"`` neighbour refits on the same rows: if the DP outputs come out
    identical, the noise is reproducible (a seed), and that is reported too.

    Under a finite claim the report must be empty: any difference distinguishes the
    neighbours with certainty, whatever the noise. A neighbour on which ``fit`` raises is
    listed in ``refused`` (the data set is outside the declared domain: refused as a
    whole, by a rule fixed in advance).

    Parameters
    ----------
    estimator : estimator
        The unfitted object to publish (it is cloned for every fit).
    X : DataFrame or array-like of shape (n_samples, n_features)
        The raw rows.
    y : array-like of shape (n_samples,) or None, default=None
        Targets.
    rows : sequence of int, default=(0,)
        The rows to replace (one neighbour set per row).
    kinds : sequence of str, default=all kinds
        Which neighbours to build, among ``"extreme"``, ``"missing"``,
        ``"unseen_category"``, ``"stray_string"``, ``"new_label"``, ``"duplicate"`` and
        ``"repeat"`` (default: all).
    fit_params : dict or None, default=None
        Passed to every ``fit``. A callable value is a rule that computes the parameter
        from the rows: it is called as ``rule(X, y)`` on the reference data and on every
        neighbour, so that row-dependent parameters are recomputed for each (e.g.
        ``{"sample_weight": lambda X, y: compute_sample_weight("balanced", y)}``);
        passing the reference's weights as an array would reuse them for every
        neighbour and hide what one row changes.
    random_state : None, int or Generator, default=None
        Signs of the extreme values.

    Returns
    -------
    report : InvarianceReport
        ``differences`` (empty when the object's structure does not depend on the
        replaced row), ``refused`` and ``n_neighbours``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from sklearn_privacy.privacy import neighbour_invariance
    >>> X = pd.DataFrame({"job": ["a", "b", "c"] * 30 + ["z"] * 10})
    >>> ct = ColumnTransformer([("cat", OneHotEncoder(categories=[["a", "b", "c"]],
    ...                                               handle_unknown="ignore"), ["job"])])
    >>> report = neighbour_invariance(ct, X, kinds=["unseen_category"])
    >>> report.paths()                  # one unknown category more: sparse output
    ['columntransformer.sparse_output_']
    >>> neighbour_invariance(ct.set_params(sparse_threshold=0), X,
    ...                      kinds=["unseen_category"]).is_invariant
    True
    """
    fit_params = {} if fit_params is None else dict(fit_params)
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    rows = list(np.atleast_1d(np.asarray(rows, dtype=object)))
    bad = [j for j in rows if isinstance(j, bool | np.bool_)
           or not isinstance(j, numbers.Integral) or not -n <= j < n]
    if not rows or bad:
        raise ValueError(f"rows: every entry must be an integer row index in [-{n}, {n}) "
                         f"(X has {n} rows); got {bad if bad else 'no row'}.")
    rows = [int(j) for j in rows]
    unknown = sorted(set(kinds) - set(NEIGHBOUR_KINDS))
    if unknown:
        raise ValueError(f"kinds: unknown neighbour kinds {unknown}; choose among "
                         f"{NEIGHBOUR_KINDS}.")
    rng = np.random.default_rng(random_state)
    root = type(estimator).__name__.lower()
    reference = _fit(estimator, X, y, fit_params)
    report = InvarianceReport()
    for name, Xn, yn in _neighbours(X, y, rows, list(kinds), rng):
        report.n_neighbours += 1
        try:
            other = _fit(estimator, Xn, yn, fit_params)
        except Exception as exc:  # noqa: BLE001 - a refusal is a result, not an error
            report.refused.append(f"{name}: {type(exc).__name__}")
            continue
        if name.startswith("repeat"):
            mine = dict(_dp_outputs(reference, root))
            for p, value in _dp_outputs(other, root):
                ref = mine.get(p)
                if isinstance(value, np.ndarray) and isinstance(ref, np.ndarray) and \
                        value.dtype.kind == "f" and np.any(value != 0) and \
                        np.array_equal(value, ref):       # (zeros: nothing released)
                    report.differences.append(Difference(
                        name, p, "noise", "a refit on the same rows released the same "
                                          "values: the noise is reproducible (seeded)"))
            continue
        _diff_estimator(reference, other, root, name, report.differences, 0)
    return report
