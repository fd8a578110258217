"""Black-box inference of a numeric attribute, scored in the attribute's units."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import child_seeds, noise_generator
from ..utils._columns import frame_codes
from ..utils._intervals import paired_difference
from ..utils._validation import errors_name
from ..utils.fixes import HasMethods, NumberInterval, validate_params
from ._attribute import _set_feature
from ._validation import check_fraction, check_same_columns, check_target, is_frame, n_rows


@dataclass
class NumericInversionResult:
    """Estimates of a numeric attribute, scored in the attribute's own units.

    The attack's mean absolute error is compared with that of predicting the population
    median for every row (paired over the attacked rows: interval and one-sided p-value),
    and, when :func:`regression_inversion` built it, with the same attack trained without
    the model's answers (what querying the model adds).

    Parameters
    ----------
    column : str or int
        The attacked column.
    predictions : ndarray of shape (n_rows,)
        The attack's estimate of each attacked row's value.
    truth : ndarray of shape (n_rows,)
        The true values.
    baseline : float
        The baseline estimate: the median of the column in the population rows.
    mae : float
        Mean absolute error of the attack.
    baseline_mae : float
        Mean absolute error of predicting ``baseline`` for every row.
    improvement : float
        ``baseline_mae - mae`` (positive: the attack does better than the median).
    improvement_interval : tuple of float
        Paired t interval of ``improvement`` over the attacked rows at ``confidence``.
    p_value : float
        One-sided p-value of "the attack's error is below the baseline's" (paired t test
        of the per-row differences of absolute errors).
    confidence : float
        Coverage of ``improvement_interval``.
    without_model_mae : float or None, default=None
        Mean absolute error of the same regressor trained without the model's answers
        (other features and label only): what the population's correlations reveal.
    model_gain_interval : tuple of float or None, default=None
        Paired t interval of ``without_model_mae - mae``: what querying the model adds.
    model_gain_p_value : float or None, default=None
        One-sided p-value of "querying the model lowers the error".

    See Also
    --------
    regression_inversion : The attack that produces this result.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import NumericInversionResult
    >>> res = NumericInversionResult.from_predictions("age", [30.0, 40.0], [31.0, 45.0],
    ...                                               baseline=35.0)
    >>> res.mae, res.baseline_mae
    (3.0, 7.0)
    """

    column: object
    predictions: np.ndarray = field(repr=False)
    truth: np.ndarray = field(repr=False)
    baseline: float
    mae: float
    baseline_mae: float
    improvement: float
    improvement_interval: tuple
    p_value: float
    confidence: float = 0.95
    without_model_mae: float | None = None
    model_gain_interval: tuple | None = None
    model_gain_p_value: float | None = None

    @classmethod
    def from_predictions(cls, column, predictions, truth, *, baseline, confidence=0.95):
        """Score ``predictions`` against ``truth`` and against predicting ``baseline``.

        Parameters
        ----------
        column : str or int
            The attacked column (stored).
        predictions, truth : array-like of shape (n_rows,)
            Estimates and true values.
        baseline : float
            The reference estimate for every row (the population median).
        confidence : float in (0, 1), default=0.95
            Coverage of the interval of the improvement.

        Returns
        -------
        result : NumericInversionResult
            The scored result.
        """
        pred = np.asarray(predictions, dtype=float)
        truth = np.asarray(truth, dtype=float)
        if pred.ndim != 1 or pred.shape != truth.shape or pred.size == 0:
            raise ValueError(f"predictions and truth must be 1-D of the same non-zero length "
                             f"(one per attacked row); got shapes {pred.shape} and "
                             f"{truth.shape}.")
        if not (np.all(np.isfinite(pred)) and np.all(np.isfinite(truth))):
            raise ValueError("predictions and truth must be finite; got NaN or infinity.")
        if not np.isfinite(float(baseline)):
            raise ValueError(f"baseline must be a finite number; got {baseline!r}.")
        confidence = check_fraction(confidence, "confidence")
        err, base_err = np.abs(pred - truth), np.abs(float(baseline) - truth)
        mean, low, high, p = paired_difference(base_err - err, confidence)
        return cls(column=column, predictions=pred, truth=truth, baseline=float(baseline),
                   mae=float(err.mean()), baseline_mae=float(base_err.mean()),
                   improvement=mean, improvement_interval=(low, high), p_value=p,
                   confidence=confidence)


def _column_values(X, column, param="X"):
    """Values of one column of ``X`` (a name or position) as a 1-D array."""
    if is_frame(X) and column in X.columns:
        return X[column].to_numpy()
    if isinstance(column, bool) or not isinstance(column, Integral):
        raise ValueError(f"sensitive_features={column!r} is neither a column name of "
                         f"{param} nor an integer position.")
    if is_frame(X):
        return X[X.columns[int(column)]].to_numpy()
    n_features = X.shape[1] if sp.issparse(X) else np.shape(X)[1]
    if not 0 <= int(column) < n_features:
        raise ValueError(f"sensitive_features={column!r} is out of range for {param} with "
                         f"{n_features} columns; pass a position in [0, n_features) or a "
                         "column name.")
    A = X[:, [int(column)]].toarray().ravel() if sp.issparse(X) else np.asarray(X)[:, int(column)]
    return A


def _other_features(X, column, ref=None):
    """Every column of ``X`` but ``column``, as floats (categories as codes, NaN unknown).

    ``ref`` (rows of the same kind) fixes the codes of the categorical columns.
    """
    if is_frame(X):
        name = column if column in X.columns else X.columns[int(column)]
        return frame_codes(X, ref, skip=name)[0]
    A = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    return np.delete(A, int(column), axis=1)


def _likelihood_features(estimator, X, y, column, grid):
    """The model's fit of each row's label with the attribute set to each grid value."""
    feats = []
    clf = is_classifier(estimator) and hasattr(estimator, "predict_proba")
    if clf:
        classes = np.asarray(estimator.classes_)
        pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    for value in grid:
        Xc = _set_feature(X, column, value)
        with errors_name("X"):
            if clf:
                proba = np.asarray(estimator.predict_proba(Xc), dtype=float)
                feats.append(proba[np.arange(len(y)), pos])
            else:
                feats.append(-(np.asarray(estimator.predict(Xc), dtype=float)
                               - y.astype(float)) ** 2)
    return np.column_stack(feats)


def _one_column(sensitive_features):
    """The attacked column: a name or a position, or a list of exactly one."""
    column = sensitive_features
    if not isinstance(column, (str, Integral)):
        column = np.asarray(column, dtype=object).ravel()
        if column.size != 1:
            raise ValueError(f"sensitive_features must name one numeric column (a name or a "
                             f"position); got {sensitive_features!r}.")
        column = column[0]
    return column


def _numeric_column(A, column, param):
    """Finite float values of ``column`` in ``A``; the other columns numeric unless a frame."""
    raw = _column_values(A, column, param)     # names a bad ``column`` itself
    try:
        values = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"column {column!r} of {param} is not numeric; invert a "
                         "categorical attribute with fredrikson_inversion.") from None
    if not (is_frame(A) or sp.issparse(A)):
        try:
            np.asarray(A, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{param} holds non-numeric values in other columns; "
                             "pass a DataFrame for categorical columns.") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"column {column!r} of {param} has missing or infinite "
                         "values.")
    return values


def _query_grid(ref, n_grid):
    """Attribute values the model is queried at: population quantiles (rounded if integer)."""
    grid = np.unique(np.quantile(ref, np.linspace(0.05, 0.95, n_grid)))
    if np.all(np.equal(np.mod(ref, 1), 0)):
        grid = np.unique(np.round(grid))
    return grid


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "sensitive_features": [Integral, str, "array-like"],
        "X_population": ["array-like", "sparse matrix"],
        "y_population": ["array-like"],
        "n_grid": [NumberInterval(Integral, 2, None, closed="left")],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def regression_inversion(estimator, X, y, *, sensitive_features, X_population, y_population,
                         n_grid: int = 9, confidence: float = 0.95, random_state=None
                         ) -> NumericInversionResult:
    """Black-box inference of a numeric attribute, scored in the attribute's units.

    Threat model: the adversary knows an attacked row except the value of
    ``sensitive_features`` (one numeric column), its
    label, and can query the model; it also holds population rows (with their values) to
    learn from. It queries the model with the attribute set to each of ``n_grid``
    quantiles of the population's values, and a gradient-boosted regressor trained on the
    population rows maps (the other features, the label, the model's fit of the label at
    each grid value) to the attribute. This is the numeric counterpart of
    :func:`fredrikson_inversion`: a 52-level "age" is estimated in years, not matched
    exactly.

    The result is scored against predicting the population median for every row, by the
    mean absolute error; the improvement gets a paired t interval and a one-sided p-value.
    What the other features and the label alone reveal about the attribute (its
    correlations in the population) counts towards that improvement, so the same regressor
    is also trained without the model's answers: ``model_gain_interval`` and
    ``model_gain_p_value`` say what querying the model adds to it.

    Parameters
    ----------
    estimator : fitted classifier (``predict_proba``) or regressor
        The model attacked, queried on raw rows.
    X : DataFrame or array-like of shape (n_rows, n_features)
        The attacked rows, in the model's input space (their true value is read from
        ``sensitive_features`` for scoring only).
    y : array-like of shape (n_rows,)
        Their labels.
    sensitive_features : str or int (or a list of one)
        The numeric attribute: one column name of a frame, or a position.
    X_population, y_population : DataFrame or array-like, array-like
        Rows of the population with their labels, on which the adversary learns.
    n_grid : int, default=9
        Number of attribute values at which the model is queried (population quantiles).
    confidence : float in (0, 1), default=0.95
        Coverage of the interval of the improvement.
    random_state : int, RandomState, Generator or None, default=None
        Randomness of the regressor; ``None`` draws from fresh OS entropy.

    Returns
    -------
    result : NumericInversionResult
        Estimates, errors, the improvement over the median with its interval and p-value.

    Raises
    ------
    ValueError
        A non-numeric column or one that is neither a name nor a position in range,
        labels of the wrong length, fewer than 10 population rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_privacy.attacks import regression_inversion
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(800, 3)); y = 3 * X[:, 0] + 0.1 * rng.normal(size=800)
    >>> reg = LinearRegression().fit(X[:400], y[:400])
    >>> res = regression_inversion(reg, X[:400], y[:400], sensitive_features=0,
    ...                            X_population=X[400:], y_population=y[400:],
    ...                            random_state=0)
    >>> bool(res.mae < 0.5 * res.baseline_mae), bool(res.p_value < 1e-6)
    (True, True)
    """
    from sklearn.ensemble import HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    check_is_fitted(estimator)
    column = _one_column(sensitive_features)
    n, m = n_rows(X, "X"), n_rows(X_population, "X_population")
    y = check_target(y, n)
    y_population = check_target(y_population, m, param="y_population",
                                x_param="X_population")
    check_same_columns(X_population, X, "X_population")
    if m < 10:
        raise ValueError(f"X_population has {m} rows; the adversary needs at least 10 to "
                         "learn from.")
    truth = _numeric_column(X, column, "X")
    ref = _numeric_column(X_population, column, "X_population")
    grid = _query_grid(ref, n_grid)

    def features(A, labels, with_model=True):
        parts = [_other_features(A, column, ref=X_population),
                 labels.astype(float)[:, None] if labels.dtype.kind in "biuf"
                 else np.zeros((len(labels), 0))]
        if with_model:
            parts.append(_likelihood_features(estimator, A, labels, column, grid))
        return np.hstack(parts)

    seed = int(child_seeds(noise_generator(random_state), 1)[0])
    preds = []
    # one OpenMP thread: a few thousand rows need no more, and on a busy machine the
    # default thread pool spins
    with threadpool_limits(limits=1, user_api="openmp"):
        for with_model in (True, False):
            reg = HistGradientBoostingRegressor(loss="absolute_error", max_iter=200,
                                                random_state=seed)
            reg.fit(features(X_population, y_population, with_model), ref)
            preds.append(reg.predict(features(X, y, with_model)))
    res = NumericInversionResult.from_predictions(column, preds[0], truth,
                                                  baseline=float(np.median(ref)),
                                                  confidence=confidence)
    gain, lo, hi, p = paired_difference(np.abs(preds[1] - truth) - np.abs(preds[0] - truth),
                                        confidence)
    res.without_model_mae = float(np.abs(preds[1] - truth).mean())
    res.model_gain_interval, res.model_gain_p_value = (lo, hi), p
    return res
