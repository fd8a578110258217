"""The attacked attribute: its candidate levels, the adversary's prior, the result.

Shared by every attribute-inversion attack (the white-box attack on a FIL estimator, the
one on an audited MLP, the black-box attacks): how the attribute's values are matched to
candidate levels, how a level is set in raw rows, the prior over levels, and
:class:`AttributeInversionResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ..utils._intervals import binomial_p_greater, wilson_interval
from ._validation import check_fraction, is_frame


@dataclass
class AttributeInversionResult:
    """Predicted attribute level of every attacked row.

    ``predictions`` has shape (n_draws, n_rows) (one row per simulated release);
    ``accuracy`` is the mean over draws of the fraction of rows whose level is recovered;
    ``accuracy_per_row`` averages over draws. ``candidates`` are the values the attack
    chose among: rows of the encoded attribute columns, or the levels of a raw DataFrame
    column for the black-box attacks; ``levels`` holds the original-space levels when
    they were given through a pipeline (else None).

    Parameters
    ----------
    predictions : ndarray of int of shape (n_draws, n_rows)
        Index into ``candidates`` of the level predicted for every attacked row, one row
        per simulated release (a single row for an attack on one release).
    truth : ndarray of int of shape (n_rows,)
        Index into ``candidates`` of every attacked row's true level.
    candidates : ndarray
        The levels the attack chose among: of shape (n_candidates, n_columns) for encoded
        attribute columns, or of shape (n_candidates,) for the levels of a raw DataFrame
        column.
    accuracy : float
        Fraction of correct predictions, averaged over rows and draws.
    accuracy_per_row : ndarray of shape (n_rows,)
        Fraction of draws in which each row's level is recovered.
    levels : ndarray or None, default=None
        Levels of an original input feature in its original space, when the attribute
        was given through a pipeline; ``None`` otherwise.

    See Also
    --------
    whitebox_inversion : White-box attribute inversion of a FIL estimator.
    fredrikson_inversion : Black-box attribute inversion of Fredrikson et al.
    prior_baseline : Accuracy of guessing the most frequent level.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import AttributeInversionResult
    >>> res = AttributeInversionResult.from_predictions(
    ...     np.array([[0, 1, 1], [0, 1, 0]]), np.array([0, 1, 1]), np.array([[0.0], [1.0]]))
    >>> res.accuracy
    0.8333...
    >>> res.accuracy_per_row
    array([1. , 1. , 0.5])
    """

    predictions: np.ndarray = field(repr=False)
    truth: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)
    accuracy: float
    accuracy_per_row: np.ndarray = field(repr=False)
    levels: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_predictions(cls, predictions, truth, candidates, levels=None):
        """Score ``predictions`` (n_draws, n_rows) of candidate indices against ``truth``.

        Parameters
        ----------
        predictions : ndarray of int of shape (n_draws, n_rows)
            Index into ``candidates`` of the predicted level of every attacked row, one
            row per simulated release.
        truth : ndarray of int of shape (n_rows,)
            Index into ``candidates`` of every attacked row's true level.
        candidates : ndarray
            The levels the attack chose among (stored in the result).
        levels : ndarray or None, default=None
            Original-space levels of the attribute, when given through a pipeline
            (stored in the result).

        Returns
        -------
        result : AttributeInversionResult
            The result with ``accuracy`` (mean of the correct predictions) and
            ``accuracy_per_row`` (their mean over draws) computed from ``predictions``.
        """
        predictions, truth = np.asarray(predictions), np.asarray(truth)
        if truth.ndim != 1 or truth.size == 0:
            raise ValueError(f"truth must be a non-empty 1-D array of candidate indices (one "
                             f"per attacked row); got shape {truth.shape}.")
        if predictions.ndim not in (1, 2) or predictions.shape[-1] != truth.size:
            raise ValueError(f"predictions must have shape (n_draws, {truth.size}) (one column "
                             f"per attacked row); got {predictions.shape}.")
        k = len(candidates)
        for name, a in (("predictions", predictions), ("truth", truth)):
            if a.dtype.kind not in "iuf" or np.any((a < 0) | (a >= k) | (a != np.round(a))):
                raise ValueError(f"{name} must hold indices into candidates (integers in "
                                 f"0..{k - 1}).")
        correct = predictions == truth[None, :]
        return cls(predictions=predictions, truth=truth, candidates=candidates,
                   accuracy=float(correct.mean()), accuracy_per_row=correct.mean(axis=0),
                   levels=levels)

    @property
    def n_rows(self) -> int:
        """Number of attacked rows (the sample size of :meth:`confidence_interval`)."""
        return int(np.asarray(self.truth).size)

    def confidence_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson score interval of ``accuracy`` over the attacked rows.

        The rows are the sampling unit: ``accuracy * n_rows`` successes among ``n_rows``.
        With several simulated releases a row's success is its fraction of draws, whose
        variance is at most a Bernoulli's, so the interval is then conservative. Its
        coverage is measured in ``benchmarks/bench_interval_coverage.py``.

        Parameters
        ----------
        confidence : float in (0, 1), default=0.95
            Coverage of the interval.

        Returns
        -------
        (low, high) : tuple of float
            The limits of the interval.
        """
        confidence = check_fraction(confidence, "confidence")
        return wilson_interval(self.accuracy * self.n_rows, self.n_rows, confidence)

    def p_value(self, baseline: float) -> float:
        """One-sided exact binomial p-value of "the attack beats ``baseline``".

        The probability that an adversary correct with probability ``baseline`` on each
        row (e.g. the :func:`prior_baseline` accuracy: guessing the most frequent level)
        gets at least ``round(accuracy * n_rows)`` of the ``n_rows`` rows right. A small
        value is evidence that the attack learnt the attribute from the model.

        Parameters
        ----------
        baseline : float in [0, 1]
            Accuracy of the reference adversary.

        Returns
        -------
        p : float
            The p-value.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_privacy.attacks import AttributeInversionResult
        >>> truth = np.zeros(600, dtype=int)
        >>> pred = np.r_[np.zeros(426), np.ones(174)].astype(int)[None, :]
        >>> res = AttributeInversionResult.from_predictions(pred, truth, np.array([[0], [1]]))
        >>> round(res.accuracy, 3), round(res.p_value(0.7), 2)   # 0.710 vs 0.700: chance
        (0.71, 0.31)
        """
        if isinstance(baseline, (bool, np.bool_)) or not isinstance(baseline, Real) \
                or not 0.0 <= baseline <= 1.0:
            raise ValueError(f"baseline must be an accuracy in [0, 1]; got {baseline!r}.")
        return binomial_p_greater(self.accuracy * self.n_rows, self.n_rows, baseline)


#: Most distinct encoded values of an attribute read from the training data.
_MAX_LEVELS = 64


def _is_scalar_column(columns):
    return isinstance(columns, (str, Integral)) and not isinstance(columns, (bool, np.bool_))


def _check_candidates(candidates, width):
    try:
        cand = np.atleast_2d(np.asarray(candidates, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(
            "candidates must be numbers (one row per level, one column per attribute "
            "column); pass levels of an original feature through a pipeline instead."
        ) from None
    if cand.ndim != 2 or cand.shape[1] != width:
        raise ValueError(
            f"candidates must have one column per attribute column ({width}); got shape "
            f"{cand.shape}."
        )
    if not np.all(np.isfinite(cand)):
        raise ValueError("candidates contain NaN or infinity; pass finite values.")
    if len(cand) < 2:
        raise ValueError("An attribute needs at least two candidate values to be inverted; "
                         "when the attacked rows show fewer, pass candidates= with "
                         "every possible level.")
    if np.unique(cand, axis=0).shape[0] != len(cand):
        raise ValueError("candidates contains duplicate levels; pass each level once.")
    return cand


def _match(values, candidates):
    """Index of each row's level among ``candidates`` (tolerant to rounding)."""
    tol = 1e-9 * (1.0 + np.abs(candidates))
    match = np.all(np.abs(values[:, None, :] - candidates[None, :, :]) <= tol[None], axis=2)
    if not np.all(match.any(axis=1)):
        bad = np.flatnonzero(~match.any(axis=1))[:5]
        raise ValueError(
            f"Rows {bad.tolist()} have attribute values that are not among the candidates; "
            "pass every possible level in candidates (for a one-hot block with a dropped "
            "level, include the all-zero row)."
        )
    return match.argmax(axis=1)


def _encoded_setup(values, candidates, cols, *, require_onehot=True):
    """``(candidates, truth)`` of an encoded attribute whose values are ``values``."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"The values of columns {cols.tolist()} in X contain NaN or infinity; "
                         "the attacked attribute must be finite.")
    if candidates is None:
        if require_onehot and not (np.all((values == 0) | (values == 1))
                                   and np.all(values.sum(axis=1) <= 1)):
            raise ValueError(
                f"columns {cols.tolist()} are not a binary column or a one-hot group (0/1 "
                "values, at most one 1 per row). Invert a binary or one-hot encoded "
                "attribute, or pass its possible values explicitly in candidates."
            )
        candidates = np.unique(values, axis=0)
        if len(candidates) > _MAX_LEVELS:
            raise ValueError(
                f"columns {cols.tolist()} take {len(candidates)} distinct values in the data: "
                "too many to be read as the levels of a categorical attribute. Pass the "
                "possible values explicitly in candidates."
            )
    candidates = _check_candidates(candidates, cols.size)
    return candidates, _match(values, candidates)


def _set_feature(X, feature, level):
    """Copy of the raw rows ``X`` with input feature ``feature`` set to ``level``."""
    if is_frame(X):
        name = feature if isinstance(feature, str) else X.columns[int(feature)]
        Xc = X.copy()
        dtype = X[name].dtype
        if getattr(dtype, "name", "") == "category":
            if level not in dtype.categories:
                raise ValueError(
                    f"candidates: {level!r} is not a category of column {name!r} "
                    f"({list(dtype.categories)[:10]})."
                )
            import pandas as pd

            Xc[name] = pd.Categorical([level] * len(X), dtype=dtype)
        else:
            Xc[name] = level
        return Xc
    if isinstance(feature, str):
        raise ValueError(
            f"sensitive_features={feature!r} names a feature but X has no column names; "
            "pass a "
            "DataFrame or the feature's position."
        )
    Xc = np.array(X, dtype=object if np.asarray(X).dtype.kind in "OUS" else float)
    Xc[:, int(feature)] = level
    return Xc


def _prior(prior, truth, n_candidates):
    if prior is None:
        return np.full(n_candidates, 1.0 / n_candidates)
    if isinstance(prior, str):
        if prior != "empirical":
            raise ValueError(f"prior must be None, 'empirical' or an array; got {prior!r}.")
        counts = np.bincount(truth, minlength=n_candidates).astype(float)
        return counts / counts.sum()
    try:
        p = np.asarray(prior, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be None, 'empirical' or an array; got {prior!r}.") from None
    if (p.shape != (n_candidates,) or not np.all(np.isfinite(p)) or np.any(p < 0)
            or not np.isclose(p.sum(), 1)):
        raise ValueError(
            f"prior must be {n_candidates} non-negative probabilities summing to 1; got {prior!r}."
        )
    return p
