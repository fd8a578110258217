"""Black-box attribute inversion: Fredrikson et al. (2014) and the prior baseline."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import resolve_columns
from ..utils.fixes import HasMethods, NumberInterval, StrOptions, validate_params
from ._attribute import (
    AttributeInversionResult,
    _encoded_setup,
    _is_scalar_column,
    _prior,
    _set_feature,
)
from ._validation import check_same_columns, check_target, is_frame, n_rows


def _blackbox_attribute(X, sensitive_features, candidates, *, param="X"):
    """``(mode, column(s), candidates/levels, truth)`` of attacked rows ``X``.

    ``mode`` is ``"raw"`` for one column of a DataFrame (levels are its values: strings,
    categories or numbers) and ``"encoded"`` otherwise (numeric columns, candidate rows).
    """
    n = n_rows(X, param)
    if n == 0:
        raise ValueError(f"{param} is empty; pass at least one attacked row.")
    if is_frame(X) and _is_scalar_column(sensitive_features):
        name = sensitive_features if isinstance(sensitive_features, str) else X.columns[
            int(resolve_columns(sensitive_features, X.shape[1],
                                param="sensitive_features")[0])]
        if name not in X.columns:
            raise ValueError(f"sensitive_features: {name!r} is not a column of {param}.")
        values = X[name].to_numpy(dtype=object)
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v))
                            for v in values])
        if missing.any():
            raise ValueError(f"column {name!r} has missing values in rows "
                             f"{np.flatnonzero(missing)[:5].tolist()}.")
        if candidates is None:
            dtype = X[name].dtype
            if getattr(dtype, "name", "") == "category":
                present = set(values.tolist())
                levels = np.array([c for c in dtype.categories if c in present], dtype=object)
            else:
                levels = np.array(sorted(set(values.tolist())), dtype=object)
        else:
            levels = np.asarray(candidates, dtype=object).ravel()
        if len(levels) < 2:
            raise ValueError("An attribute needs at least two candidate values to be inverted; "
                         "when the attacked rows show fewer, pass candidates= with "
                         "every possible level.")
        lookup = {}
        for k, lev in enumerate(levels.tolist()):
            if lev in lookup:
                raise ValueError("candidates contains duplicate levels; pass each level once.")
            lookup[lev] = k
        truth = np.array([lookup.get(v, -1) for v in values.tolist()], dtype=np.int64)
        if np.any(truth < 0):
            bad = np.flatnonzero(truth < 0)[:5]
            raise ValueError(
                f"Rows {bad.tolist()} have attribute values that are not among the "
                "candidates; pass every possible level in candidates."
            )
        return "raw", name, levels, truth
    names = [str(c) for c in X.columns] if is_frame(X) else None
    n_features = X.shape[1] if hasattr(X, "shape") else np.asarray(X).shape[1]
    cols = resolve_columns(sensitive_features, n_features, names, param="sensitive_features")
    values = (X.iloc[:, cols].to_numpy() if is_frame(X)
              else (X[:, cols].toarray() if sp.issparse(X) else np.asarray(X)[:, cols]))
    try:
        values = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"columns {cols.tolist()} are not numeric; name one column of a DataFrame to "
            "invert a categorical feature by its levels."
        ) from None
    cand, truth = _encoded_setup(values, candidates, cols)
    return "encoded", cols, cand, truth


def _with_attribute(X, mode, cols, value):
    """Copy of ``X`` with the attribute set to ``value`` (a level or an encoded row)."""
    if mode == "raw":
        return _set_feature(X, cols, value)
    if is_frame(X):
        Xc = X.copy()
        for j, v in zip(cols, value, strict=True):
            Xc.iloc[:, int(j)] = v
        return Xc
    if sp.issparse(X):
        Xc = X.tolil(copy=True)
        Xc[:, cols] = np.broadcast_to(value, (X.shape[0], len(cols)))
        return Xc.tocsr()
    Xc = np.array(X, dtype=float)
    Xc[:, cols] = value
    return Xc


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "sensitive_features": [Integral, str, "array-like"],
        "candidates": ["array-like", None],
        "prior": [StrOptions({"empirical"}), "array-like", None],
        "residual_std": [NumberInterval(Real, 0, None, closed="neither"), None],
        "X_prior": ["array-like", "sparse matrix", None],
    },
    prefer_skip_nested_validation=True,
)
def fredrikson_inversion(estimator, X, y, *, sensitive_features, candidates=None,
                         prior="empirical", residual_std=None,
                         X_prior=None) -> AttributeInversionResult:
    """Black-box attribute inversion of Fredrikson et al. (2014) (FIL paper, eq. 31).

    The adversary knows an example except its attribute, its label ``y``, the prior of the
    attribute and the model's predictions and performance statistics; it predicts
    :math:`\\arg\\max_c p(c)\\,\\pi(f(x_c), y)`. For regressors :math:`\\pi` is the Gaussian
    density of ``y`` around the prediction with variance the training mean squared error
    (``residual_std**2``; by default estimated on ``X, y``); for classifiers it is the
    model's confusion rate :math:`P(\\text{true} = y \\mid \\text{predicted} = f(x_c))`
    estimated on ``X, y``.

    Parameters
    ----------
    estimator : fitted regressor or classifier (any pipeline)
        The fitted model that is attacked or audited.
    X : array-like, DataFrame or sparse matrix
        The attacked examples (their true attribute is in ``X``), in the estimator's input
        space; passed to ``predict`` with the attribute replaced by each candidate.
    y : array-like of shape (n_samples,)
        Their labels.
    sensitive_features : int, str or array-like of int / str
        With a DataFrame ``X``, a single column name (or position) is a **raw feature**:
        its levels are its distinct values (strings, categories, numbers) and the
        candidates, if given, are levels. Otherwise integer indices or names of numeric
        columns holding a binary column or a one-hot block (candidates: rows of values).
    candidates : array-like, default=None
        See ``sensitive_features``.
    prior : "empirical", None or array-like, default="empirical"
        Prior over candidates ("empirical": frequencies in ``X_prior``, default ``X``).
    residual_std : float > 0, default=None
        Standard deviation of the regression residuals (default: estimated on ``X, y``).
    X_prior : array-like, default=None
        Rows (in the same space as ``X``) whose levels define the empirical prior.

    Returns
    -------
    result : :class:`AttributeInversionResult`
        Predicted attribute values of the attacked rows (per simulated release when the
        attack draws releases), with the true values and the accuracy.

    Raises
    ------
    ValueError
        ``residual_std`` not a positive finite number, ``y`` of the wrong shape, attribute
        values missing from ``candidates``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_privacy.attacks import fredrikson_inversion
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(200, 2)), rng.randint(0, 2, size=200)])
    >>> y = X @ [1.0, -1.0, 3.0] + 0.1 * rng.normal(size=200)
    >>> reg = LinearRegression().fit(X, y)
    >>> fredrikson_inversion(reg, X, y, sensitive_features=[2]).accuracy  # drives the label
    1.0
    """
    check_is_fitted(estimator)
    mode, cols, candidates, truth = _blackbox_attribute(X, sensitive_features, candidates)
    y = check_target(y, len(truth))
    prior_truth = truth
    if X_prior is not None:
        _check_prior_rows(X_prior, X, sensitive_features)
        prior_truth = _blackbox_attribute(X_prior, sensitive_features, candidates,
                                          param="X_prior")[3]
    p = _prior(prior, prior_truth, len(candidates))
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    scores = np.empty((len(y), len(candidates)))
    if is_classifier(estimator):
        classes = np.asarray(estimator.classes_)
        pred = estimator.predict(X)
        yi = np.searchsorted(classes, y)
        if np.any(yi >= len(classes)) or not np.all(classes[np.minimum(yi, len(classes) - 1)]
                                                    == y):
            raise ValueError("y contains labels the estimator was not trained on.")
        conf = np.ones((len(classes), len(classes)))  # Laplace smoothing
        np.add.at(conf, (yi, np.searchsorted(classes, pred)), 1.0)
        conf /= conf.sum(axis=0, keepdims=True)         # P(true | predicted)
        for c in range(len(candidates)):
            pc = np.searchsorted(classes, estimator.predict(
                _with_attribute(X, mode, cols, candidates[c])))
            scores[:, c] = logp[c] + np.log(conf[yi, pc])
    else:
        try:
            yf = y.astype(float)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric for a regressor.") from None
        if residual_std is None:
            residual_std = float(np.sqrt(np.mean((np.asarray(estimator.predict(X), float)
                                                  - yf) ** 2)))
            if not (np.isfinite(residual_std) and residual_std > 0):
                raise ValueError(
                    "The model's residuals on X, y are all zero (or not finite): pass "
                    "residual_std, the noise level the adversary assumes."
                )
        for c in range(len(candidates)):
            pred_c = np.asarray(estimator.predict(_with_attribute(X, mode, cols,
                                                                  candidates[c])), float)
            scores[:, c] = logp[c] - (pred_c - yf) ** 2 / (2 * residual_std**2)
    if not np.all(np.isfinite(scores[:, np.isfinite(logp)])):
        raise ValueError("The model's predictions are NaN or infinite on some rows.")
    preds = np.argmax(scores, axis=1)[None, :]
    return AttributeInversionResult.from_predictions(preds, truth, candidates)


def _check_prior_rows(X_prior, X, sensitive_features):
    """``X_prior`` in the layout of ``X``: same width for arrays, the named columns for frames."""
    if is_frame(X) and is_frame(X_prior):
        items = ([sensitive_features] if _is_scalar_column(sensitive_features)
                 else list(np.ravel(sensitive_features)))
        check_same_columns(X_prior, X, "X_prior",
                           columns=[c for c in items if isinstance(c, str)])
    else:
        check_same_columns(X_prior, X, "X_prior")


def _stack_rows(A, B):
    """Rows of ``A`` then ``B`` (same kind of container), or None when they differ."""
    if is_frame(A) and is_frame(B):
        import pandas as pd

        return pd.concat([A, B], ignore_index=True)
    if is_frame(A) or is_frame(B):
        return None
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)])
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        return None
    return np.vstack([A, B])


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "sensitive_features": [Integral, str, "array-like"],
        "candidates": ["array-like", None],
        "X_prior": ["array-like", "sparse matrix", None],
    },
    prefer_skip_nested_validation=True,
)
def prior_baseline(X, *, sensitive_features, candidates=None,
                   X_prior=None) -> AttributeInversionResult:
    """Guess the most frequent level (in ``X_prior``, default ``X``) for every row.

    The accuracy of an adversary that knows only the attribute's distribution: an
    attack on a released model has learnt something from it only if it beats this.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or DataFrame
        Attacked rows; their true attribute is in ``X``.
    sensitive_features, candidates : see :func:`fredrikson_inversion`
        With a raw DataFrame, one column name (e.g. ``"race"``) and, optionally, its levels.
    X_prior : array-like, default=None
        Rows whose level frequencies define the mode (default: ``X``).

    Returns
    -------
    result : :class:`AttributeInversionResult`
        Predicted attribute values of the attacked rows (per simulated release when the
        attack draws releases), with the true values and the accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import prior_baseline
    >>> X = np.array([[0.3, 1], [0.1, 1], [0.7, 0], [0.2, 1]])
    >>> prior_baseline(X, sensitive_features=[1]).accuracy
    0.75
    """
    if X_prior is not None:
        _check_prior_rows(X_prior, X, sensitive_features)
    if candidates is None and X_prior is not None:
        # the levels are those of the prior's rows and of the attacked rows together (a
        # level absent from a small attacked subset is still a level of the attribute)
        both = _stack_rows(X_prior, X)
        if both is not None:
            candidates = _blackbox_attribute(both, sensitive_features, None,
                                             param="X_prior")[2]
    _, _, candidates, truth = _blackbox_attribute(X, sensitive_features, candidates)
    ref = truth
    if X_prior is not None:
        ref = _blackbox_attribute(X_prior, sensitive_features, candidates,
                                  param="X_prior")[3]
    mode = int(np.argmax(np.bincount(ref, minlength=len(candidates))))
    preds = np.full((1, len(truth)), mode)
    return AttributeInversionResult.from_predictions(preds, truth, candidates)
