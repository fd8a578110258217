"""Scaling with user-declared bounds: no state derived from the rows."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import validate_named
from ..utils.fixes import _fit_context
from ._rules import numeric_frame

__all__ = ["BoundedScaler", "resolve_bounds"]


def resolve_bounds(bounds, n_features: int, feature_names=None, *, param: str = "bounds"):
    """``(lower, upper)`` arrays of shape ``(n_features,)`` from a ``bounds`` parameter.

    Parameters
    ----------
    bounds : pair, list of pairs or dict
        ``(low, high)`` for every column; a list of ``n_features`` pairs (one per column);
        or a dict ``{column name: (low, high)}`` covering every column of
        ``feature_names``.
    n_features : int
        Number of columns.
    feature_names : array-like of str or None
        Column names (required for a dict).
    param : str
        Name of the parameter in error messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
    """
    if isinstance(bounds, dict):
        if feature_names is None:
            raise ValueError(f"{param} is a dict keyed by column names, but X has no column "
                             "names; pass a DataFrame or a list of (low, high) pairs.")
        names = [str(n) for n in feature_names]
        missing = [n for n in names if n not in bounds]
        extra = [k for k in bounds if str(k) not in names]
        if missing or extra:
            raise ValueError(f"{param} must give (low, high) for exactly the columns of X; "
                             f"missing {missing}, unknown {extra}.")
        pairs = [bounds[n] for n in names]
    else:
        arr = np.asarray(bounds, dtype=object)
        if arr.ndim == 1 and arr.shape[0] == 2 and all(
                isinstance(v, Real) and not isinstance(v, bool) for v in arr):
            pairs = [tuple(arr)] * n_features
        else:
            pairs = list(bounds)
    try:
        b = np.asarray(pairs, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{param} must hold numbers: a (low, high) pair, one pair per "
                         f"column, or a dict of pairs; got {bounds!r}.") from None
    if b.shape != (n_features, 2):
        raise ValueError(f"{param} must be one (low, high) pair or {n_features} pairs (one "
                         f"per column of X); got shape {b.shape}.")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"{param} must be finite numbers; got {bounds!r}.")
    if np.any(b[:, 0] >= b[:, 1]):
        bad = np.flatnonzero(b[:, 0] >= b[:, 1]).tolist()
        raise ValueError(f"{param}: low must be < high for every column; not for columns "
                         f"{bad}.")
    return b[:, 0].copy(), b[:, 1].copy()


class BoundedScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip every column to declared bounds and map them linearly onto a fixed range.

    ``transform`` clips column ``j`` to ``[low_j, high_j]`` and maps that interval onto
    ``feature_range``. The bounds are parameters, so nothing the fitted scaler holds
    depends on the rows: in a pipeline it keeps the published object's
    :func:`~sklearn_privacy.privacy_claim` finite, where a
    :class:`~sklearn.preprocessing.StandardScaler` or
    :class:`~sklearn.preprocessing.MinMaxScaler` (whose statistics are learned from the
    rows) makes it infinite. ``fit`` only validates the bounds against the columns and
    records the schema (``n_features_in_``, ``feature_names_in_``).

    **Threat model and guarantee.** The adversary sees the fitted scaler and knows the
    bounds, the schema and every other row. The scaler publishes nothing about the rows
    (the guarantee is epsilon = 0 for this step), and since clipping and rescaling act on
    each row alone, the next step receives neighbouring data sets when the raw data are
    neighbours, so its guarantee carries over. Not guaranteed: bounds chosen by looking
    at the private rows (choose them from domain knowledge, a public data set or the
    published schema). Each output value lies in ``feature_range``, so with ``d`` columns the
    row norm is at most ``sqrt(d) * max(|feature_range|)`` -- a data-independent
    ``data_norm`` for the FIL estimators.

    Parameters
    ----------
    bounds : (low, high), list of (low, high) or dict
        One pair for every column, one pair per column, or ``{column name: (low,
        high)}`` for a DataFrame.
    feature_range : tuple (min, max), default=(-1.0, 1.0)
        The output range of every column.
    fill_value : float or None, default=None
        The declared value of a missing entry: NaN becomes ``fill_value`` (``None``: the
        middle of the column's bounds, ``(low + high) / 2``), ``+-inf`` is clipped to the
        bounds, then every value is clipped and rescaled. Entries of a non-numeric column
        (a DataFrame column of dtype ``object``, ``category`` or ``string``) are read by
        :class:`PublicSchema`'s numeric rule first: a number is its value, a string is
        parsed as a number, anything else is missing. A rule fixed in advance, the same
        for every row: no value of a row makes ``fit`` or ``transform`` fail or warn.

    Attributes
    ----------
    epsilon_ : float
        0: the step reads no statistic of the rows (the bounds are parameters).
    delta_ : float
        0.
    epsilon_reason_ : str
        Why (see :func:`~sklearn_privacy.privacy_claim`).
    lower_ : ndarray of shape (n_features,)
        The lower bound of every column (from ``bounds``).
    upper_ : ndarray of shape (n_features,)
        The upper bound of every column (from ``bounds``).
    n_features_in_ : int
        Number of columns seen at fit (schema).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names seen at fit, when ``X`` has string column names (schema).

    See Also
    --------
    DPStandardScaler : Standardisation with a differentially private mean and variance.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.preprocessing import BoundedScaler
    >>> X = np.array([[17.0, 0.0], [90.0, 99999.0], [200.0, 5000.0]])
    >>> BoundedScaler([(17, 90), (0, 10000)]).fit_transform(X)
    array([[-1., -1.],
           [ 1.,  1.],
           [ 1.,  0.]])
    """

    _parameter_constraints: dict = {
        "bounds": ["array-like", dict],
        "feature_range": [tuple],
        "fill_value": [Real, None],
    }

    def __init__(self, bounds=(0.0, 1.0), *, feature_range=(-1.0, 1.0), fill_value=None):
        self.bounds = bounds
        self.feature_range = feature_range
        self.fill_value = fill_value

    def _check_fill(self):
        """Refuse a ``fill_value`` that is not a finite number (from the parameter only)."""
        if self.fill_value is not None and not np.isfinite(float(self.fill_value)):
            raise ValueError(f"fill_value must be a finite number or None; got "
                             f"{self.fill_value!r}.")

    def _finite(self, X):
        """``X`` with NaN mapped to ``fill_value`` (``None``: the middle of the bounds)."""
        missing = np.isnan(X)
        if not missing.any():
            return X
        fill = ((self.lower_ + self.upper_) / 2.0 if self.fill_value is None
                else np.full(X.shape[1], float(self.fill_value)))
        return np.where(missing, fill, X)

    def _check_range(self):
        fr = self.feature_range
        if len(fr) != 2 or not all(isinstance(v, Real) and np.isfinite(v) for v in fr) \
                or not fr[0] < fr[1]:
            raise ValueError("feature_range must be a pair (min, max) of finite numbers with "
                             f"min < max; got {fr!r}.")
        return float(fr[0]), float(fr[1])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the bounds against the columns of ``X`` (no statistic is computed).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric columns.
        y : None
            Ignored.

        Returns
        -------
        self : BoundedScaler
        """
        self._check_range()
        self._check_fill()
        X = validate_named(self, numeric_frame(X), dtype=np.float64, ensure_all_finite=False)
        self.lower_, self.upper_ = resolve_bounds(
            self.bounds, X.shape[1], getattr(self, "feature_names_in_", None))
        claim = self.__sklearn_privacy_claim__()
        self.epsilon_, self.delta_, self.epsilon_reason_ = claim.epsilon, claim.delta, claim.reason
        return self

    def transform(self, X):
        """Clip to the bounds, then map onto ``feature_range``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
            Values in ``feature_range`` (missing entries mapped by ``fill_value``).
        """
        check_is_fitted(self)
        X = self._finite(validate_named(self, numeric_frame(X), dtype=np.float64,
                                        reset=False, ensure_all_finite=False))
        lo, hi = self._check_range()
        Xc = np.clip(X, self.lower_, self.upper_)
        return lo + (hi - lo) * (Xc - self.lower_) / (self.upper_ - self.lower_)

    def inverse_transform(self, X):
        """Map values of ``feature_range`` back onto the bounds (clipped values stay clipped).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_orig : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        lo, hi = self._check_range()
        return self.lower_ + (X - lo) * (self.upper_ - self.lower_) / (hi - lo)

    def __sklearn_privacy_attributes__(self):
        """``lower_`` and ``upper_`` are the declared bounds (constants)."""
        return {"lower_": "constant", "upper_": "constant"}

    def __sklearn_privacy_claim__(self):
        """Data-independent: the bounds are parameters (see :func:`privacy_claim`)."""
        from ..privacy import StepClaim
        return StepClaim("", type(self).__name__, "data_independent", 0.0, 0.0,
                         "bounds given as parameters, clipping is row-wise "
                         "(n_features_in_ / feature_names_in_ are the public schema)")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
