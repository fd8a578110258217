"""The public facts about the data, declared once, and a data-independent map onto them."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils.fixes import _fit_context, validate_data
from ._bounded import BoundedScaler

__all__ = ["PublicSchema"]

#: The value a string categorical column takes for anything outside its categories,
#: unless the column declares its own ``unknown``.
UNKNOWN = "(unknown)"


def _parse_spec(name, spec):
    """``("numeric", low, high, fill)`` or ``("categorical", categories, unknown)``."""
    if isinstance(spec, dict):
        if "bounds" in spec:
            low, high = spec["bounds"]
            return _numeric(name, low, high, spec.get("fill"))
        if "categories" in spec:
            return _categorical(name, spec["categories"], spec.get("unknown"))
        raise ValueError(f"columns[{name!r}]: a dict spec needs 'bounds' (numeric) or "
                         f"'categories' (categorical); got keys {sorted(spec)}.")
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise ValueError(f"columns[{name!r}]: a tuple declares numeric bounds (low, "
                             f"high); got {spec!r}. Declare categories as a list.")
        return _numeric(name, spec[0], spec[1], None)
    if isinstance(spec, list | np.ndarray):
        return _categorical(name, spec, None)
    raise TypeError(f"columns[{name!r}] must be a tuple (low, high), a list of categories "
                    f"or a dict; got {type(spec).__name__}.")


def _numeric(name, low, high, fill):
    ok = all(isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v)
             for v in (low, high))
    if not ok or not low < high:
        raise ValueError(f"columns[{name!r}]: bounds must be finite numbers low < high; got "
                         f"({low!r}, {high!r}).")
    fill = (low + high) / 2.0 if fill is None else fill
    if not (isinstance(fill, Real) and low <= fill <= high):
        raise ValueError(f"columns[{name!r}]: fill must be a number inside the bounds; got "
                         f"{fill!r}.")
    return ("numeric", float(low), float(high), float(fill))


def _categorical(name, categories, unknown):
    cats = np.asarray(list(categories), dtype=object)
    if cats.size == 0:
        raise ValueError(f"columns[{name!r}]: declare at least one category.")
    numeric = all(isinstance(c, Real) and not isinstance(c, bool) for c in cats)
    strings = all(isinstance(c, str) for c in cats)
    if not (numeric or strings):
        raise TypeError(f"columns[{name!r}]: categories must be all strings or all numbers; "
                        f"got {list(categories)!r}.")
    if len(set(cats.tolist())) != cats.size:
        raise ValueError(f"columns[{name!r}]: categories must be distinct.")
    if numeric:
        values = cats.astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"columns[{name!r}]: numeric categories must be finite.")
        unknown = np.nan if unknown is None else float(unknown)
        return ("categorical", values, unknown)
    unknown = UNKNOWN if unknown is None else str(unknown)
    return ("categorical", cats, unknown)


def _as_float(values):
    """Numbers of a column; anything that is not a number (a stray string) is NaN."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    try:
        import pandas as pd
        return pd.to_numeric(pd.Series(np.asarray(values, dtype=object)),
                             errors="coerce").to_numpy(dtype=np.float64)
    except ImportError:  # pragma: no cover - pandas is optional
        out = np.full(len(values), np.nan)
        for i, v in enumerate(values):   # fallback without pandas only
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                pass
        return out


class PublicSchema(TransformerMixin, BaseEstimator):
    """The public facts about the data, declared once, and the map of raw rows onto them.

    A published model must not depend on anything the rows decide: which columns exist
    and their dtypes, the categories of a column, the range of a number, the label set,
    the layout of the encoded matrix. pandas infers a dtype from the values (one missing
    value turns an int column into float, one stray string turns a number column into
    ``object``), and scikit-learn derives categories, output widths and sparse layouts
    from what it sees. ``PublicSchema`` states those facts as parameters and maps every
    raw value onto them by a rule fixed in advance, row by row:

    * a **numeric** column ``(low, high)``: values parsed as numbers (a string that is
      not a number counts as missing), missing values replaced by the declared ``fill``
      (default: the middle of the bounds), then clipped to ``[low, high]``; output
      ``float64``;
    * a **categorical** column ``[c1, c2, ...]``: a value equal to a declared category is
      kept, anything else (NaN, a stray string, an unseen category) becomes the declared
      ``unknown`` (default ``"(unknown)"`` for strings, NaN for numeric categories), which
      the encoder of :meth:`make_encoder` maps to a row of zeros; output ``object``
      (string categories) or ``float64`` (numeric categories).

    The output has exactly the declared columns, in the declared order, with the
    declared dtypes, whatever the raw frame held: a DataFrame when pandas is installed
    (and ``X`` is a DataFrame), else an array. :meth:`make_encoder` builds the matching
    ``ColumnTransformer`` (declared bounds, declared categories, dense output), and
    :attr:`data_norm` the bound on the encoded rows' norm for the FIL estimators;
    ``classes`` is the label set to pass to the classifier's ``classes=``.

    **Threat model and guarantee.** The adversary sees the published object and knows
    every row but one. Nothing this step holds depends on the rows (epsilon = 0 for the
    step), and since it maps each row on its own, neighbouring raw data sets stay
    neighbours after it. Not guaranteed: facts declared by looking at the private rows
    (choose them from domain knowledge, a codebook or public data); columns of the raw
    frame that are not declared are dropped.

    Parameters
    ----------
    columns : dict
        ``{name: spec}`` in the order of the output. ``spec`` is a tuple ``(low,
        high)`` (numeric), a list of categories (all strings or all numbers), or a dict
        ``{"bounds": (low, high), "fill": value}`` / ``{"categories": [...], "unknown":
        value}``. With an array ``X`` the names are the column positions ``0, 1, ...``.
    classes : array-like or None, default=None
        The public label set (for the classifier's ``classes=``; ``y`` is not
        transformed).

    Attributes
    ----------
    n_features_in_ : int
        Number of columns of the raw ``X`` seen at fit (schema).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of the raw ``X`` seen at fit (schema), for a DataFrame.
    epsilon_ : float
        ``0.0``: the map is fixed by the declaration and acts row by row.
    delta_ : float
        ``0.0``.
    epsilon_reason_ : str
        Why the step costs no privacy (the claim :func:`~sklearn_privacy.privacy_claim`
        reads).

    See Also
    --------
    BoundedScaler : Declared bounds for numeric columns only.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn_privacy.preprocessing import PublicSchema
    >>> raw = pd.DataFrame({"age": [25, np.nan, 130], "job": ["a", "n/a", "b"]})
    >>> schema = PublicSchema({"age": (17, 90), "job": ["a", "b"]}).fit(raw)
    >>> schema.transform(raw)
        age        job
    0  25.0          a
    1  53.5  (unknown)
    2  90.0          b
    >>> schema.make_encoder().fit_transform(schema.transform(raw))
    array([[-0.78082192,  1.        ,  0.        ],
           [ 0.        ,  0.        ,  0.        ],
           [ 1.        ,  0.        ,  1.        ]])
    """

    #: the output dtypes are declared: later pipeline steps see no inferred dtype
    _fixes_dtypes = True

    _parameter_constraints: dict = {
        "columns": [dict],
        "classes": ["array-like", None],
    }

    def __init__(self, columns=None, *, classes=None):
        self.columns = columns
        self.classes = classes

    # -------------------------------------------------------------- declared facts
    def _specs(self):
        if not isinstance(self.columns, dict) or not self.columns:
            raise ValueError("columns must be a non-empty dict {name: spec}; got "
                             f"{self.columns!r}.")
        return {name: _parse_spec(name, spec) for name, spec in self.columns.items()}

    @property
    def numeric_columns(self) -> list:
        """Names of the declared numeric columns, in order."""
        return [n for n, s in self._specs().items() if s[0] == "numeric"]

    @property
    def categorical_columns(self) -> list:
        """Names of the declared categorical columns, in order."""
        return [n for n, s in self._specs().items() if s[0] == "categorical"]

    def _declared(self, names, kind):
        """``(names, specs)``: ``names`` checked to be declared columns of ``kind``."""
        specs = self._specs()
        if names is None:
            return [n for n, s in specs.items() if s[0] == kind], specs
        names = [names] if isinstance(names, str) or not np.iterable(names) else list(names)
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise ValueError(f"names: {unknown} are not declared columns; the declared "
                             f"columns are {list(specs)}.")
        other = [n for n in names if specs[n][0] != kind]
        if other:
            raise ValueError(f"names: {other} are not declared {kind} columns; the "
                             f"{kind} columns are "
                             f"{[n for n, s in specs.items() if s[0] == kind]}.")
        return names, specs

    def bounds_for(self, names=None) -> list:
        """``[(low, high), ...]`` of numeric columns (default: all, in order)."""
        names, specs = self._declared(names, "numeric")
        return [(specs[n][1], specs[n][2]) for n in names]

    def categories_for(self, names=None) -> list:
        """Categories of categorical columns as arrays of the output dtype."""
        names, specs = self._declared(names, "categorical")
        return [specs[n][1].copy() for n in names]

    @property
    def data_norm(self) -> float:
        """Largest L2 norm of a row encoded by :meth:`make_encoder`: every numeric column
        lies in ``[-1, 1]`` and every categorical column has at most one 1."""
        specs = self._specs()
        return float(math.sqrt(len(specs)))

    def make_encoder(self):
        """A ``ColumnTransformer`` for the output of :meth:`transform`, fixed by the
        declared facts: :class:`BoundedScaler` with the declared bounds onto ``[-1,
        1]`` for the numeric columns, ``OneHotEncoder`` with the declared categories
        (unknown: a row of zeros) for the categorical ones, dense output
        (``sparse_threshold=0``).

        Returns
        -------
        encoder : ColumnTransformer
            Unfitted.
        """
        from sklearn.compose import ColumnTransformer
        from sklearn.preprocessing import OneHotEncoder

        parts = []
        num, cat = self.numeric_columns, self.categorical_columns
        if num:
            parts.append(("num", BoundedScaler(self.bounds_for(num)), num))
        if cat:
            parts.append(("cat", OneHotEncoder(categories=self.categories_for(cat),
                                               handle_unknown="ignore",
                                               sparse_output=False), cat))
        return ColumnTransformer(parts, sparse_threshold=0.0)

    # ------------------------------------------------------------------ the map
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the declaration and that ``X`` has every declared column.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw rows (any dtypes).
        y : None
            Ignored.

        Returns
        -------
        self : PublicSchema
        """
        self._specs()
        self._check_raw(X)
        if self.classes is not None and np.unique(np.asarray(self.classes)).size < 2:
            raise ValueError("classes must list at least 2 distinct labels.")
        validate_data(self, X, skip_check_array=True)
        self._columns_of(X)
        claim = self.__sklearn_privacy_claim__()
        self.epsilon_, self.delta_, self.epsilon_reason_ = claim.epsilon, claim.delta, claim.reason
        return self

    def _check_raw(self, X):
        """Refuse what is not a table of raw rows (sparse, 1D, complex, empty)."""
        if hasattr(X, "tocsr") or hasattr(X, "todense"):
            raise TypeError("PublicSchema does not support sparse input: pass the raw rows "
                            "as a DataFrame or a dense array.")
        if not hasattr(X, "columns"):
            probe = np.asarray(X)
            if probe.ndim == 1:
                raise ValueError("Expected a 2D array, got a 1D array instead: Reshape your "
                                 "data using array.reshape(-1, 1) for a single feature or "
                                 "array.reshape(1, -1) for a single sample.")
            if probe.dtype.kind == "c":
                raise ValueError("Complex data not supported by PublicSchema.")
        shape = getattr(X, "shape", None) or np.asarray(X, dtype=object).shape
        if shape[0] == 0:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required "
                             "by PublicSchema.")
        if len(shape) == 2 and shape[1] == 0:
            raise ValueError(f"Found array with 0 feature(s) (shape={tuple(shape)}) while a "
                             "minimum of 1 is required by PublicSchema.")

    def _columns_of(self, X):
        """The raw values of every declared column (refusing a missing one)."""
        names = list(self.columns)
        if hasattr(X, "columns"):
            present = [str(c) for c in X.columns]
            missing = [n for n in names if str(n) not in present]
            if missing:
                raise ValueError(f"X lacks the declared columns {missing}; PublicSchema "
                                 "needs every declared column (undeclared ones are "
                                 "dropped).")
            lookup = {str(c): c for c in X.columns}
            # missing values as None: pd.NA (nullable dtypes) has no truth value, and
            # comparing it with the declared categories raised "boolean value of NA is
            # ambiguous"; None is missing to both the numeric and the categorical rule
            return [np.asarray(X[lookup[str(n)]].to_numpy(dtype=object, na_value=None))
                    for n in names]
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-dimensional; got shape {arr.shape}.")
        bad = [n for n in names if not (isinstance(n, int) and 0 <= n < arr.shape[1])]
        if bad:
            raise ValueError(f"X has no column names: declare columns by position 0..."
                             f"{arr.shape[1] - 1}; got {bad}.")
        return [arr[:, n] for n in names]

    def transform(self, X):
        """Map the raw rows onto the declared schema (see the class docstring).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw rows with every declared column.

        Returns
        -------
        X_out : DataFrame or ndarray of shape (n_samples, n_declared_columns)
            The declared columns, in order, with the declared dtypes.
        """
        check_is_fitted(self)
        self._check_raw(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        specs = self._specs()
        out = {}
        for (name, spec), raw in zip(specs.items(), self._columns_of(X), strict=True):
            if spec[0] == "numeric":
                _, low, high, fill = spec
                v = _as_float(raw)
                v = np.where(np.isnan(v), fill, v)
                out[name] = np.clip(v, low, high)
            else:
                _, cats, unknown = spec
                if cats.dtype == object:
                    known = np.isin(raw, cats)
                    col = np.where(known, raw, unknown).astype(object)
                else:
                    v = _as_float(raw)
                    col = np.where(np.isin(v, cats), v, unknown)
                out[name] = col
        if hasattr(X, "columns"):
            try:
                import pandas as pd
            except ImportError:  # pragma: no cover
                pd = None
            if pd is not None:
                index = getattr(X, "index", None)
                return pd.DataFrame({n: pd.Series(v, dtype=v.dtype, index=index)
                                     for n, v in out.items()},
                                    index=getattr(X, "index", None))
        if all(v.dtype == np.float64 for v in out.values()):
            return np.column_stack(list(out.values()))
        return np.column_stack([v.astype(object) for v in out.values()])

    def get_feature_names_out(self, input_features=None):
        """The declared column names, in order.

        Parameters
        ----------
        input_features : ignored

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self)
        return np.asarray([str(n) for n in self.columns], dtype=object)

    def __sklearn_privacy_attributes__(self):
        """Nothing is fitted beyond the raw schema (column count and names)."""
        return {}

    def __sklearn_privacy_claim__(self):
        """Data-independent: every fact is a parameter, the map acts row by row."""
        from ..privacy import StepClaim
        return StepClaim("", type(self).__name__, "data_independent", 0.0, 0.0,
                         "declared public schema (columns, dtypes, bounds, categories); "
                         "raw values mapped row by row by declared rules")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.requires_fit = True
        return tags
