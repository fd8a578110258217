"""Declaring per-row weights public."""

from __future__ import annotations

import numpy as np

from .fixes import validate_params

__all__ = ["PublicWeights", "public_weights", "weights_are_public"]


class PublicWeights(np.ndarray):
    """Per-row weights the caller declares public (made by ``public_weights``).

    A one-dimensional float array; row subsets (``w[idx]``, slices) stay
    :class:`PublicWeights`, so the declaration follows the rows through splits and
    pipelines. Arithmetic on them (``2 * w``) gives plain arrays: a weight derived anew
    is declared anew.
    """

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        # results of ufuncs are new numbers, not the declared weights
        out = np.asarray(obj)
        return out[()] if return_scalar else out

    def __reduce__(self):
        # pickles (joblib workers) keep the declaration
        return (public_weights, (np.asarray(self),))


@validate_params({"sample_weight": ["array-like"]}, prefer_skip_nested_validation=True)
def public_weights(sample_weight) -> np.ndarray:
    """Declare per-row weights public: fixed before the rows were seen.

    ``sample_weight`` that depends on the rows -- ``compute_sample_weight("balanced",
    y)``, weights from group sizes, inverse propensities -- is data: replacing one row
    changes it (balanced weights change for every row of two classes), so a DP
    estimator cannot treat it as a constant. Without a declaration, the package's DP
    estimators fit with the weights but claim nothing (``epsilon_`` is ``inf``, with the
    reason), and their ``sensitivity_`` and noise are those of unit weights (a
    function of ``n`` only, so that nothing published encodes the weights).

    Wrapping the weights in this declaration says: these numbers are public facts, the
    same for every neighbouring data set (e.g. survey design weights published with the
    sampling plan, or weights fixed by a rule on public attributes). The DP view then
    uses them (the sensitivity grows with the largest weight's share of the total).
    Declaring row-dependent weights public is a false declaration; the claim is then
    void, as with a false ``data_norm``.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,)
        The weights.

    Returns
    -------
    weights : ndarray of shape (n_samples,)
        A float64 copy, marked as declared public (a private ndarray subclass whose row
        subsets and pickles keep the mark; arithmetic on it gives plain arrays); pass it
        as ``sample_weight``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLogisticRegression
    >>> from sklearn_privacy.utils import public_weights
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> design = np.where(np.arange(200) < 100, 1.0, 2.0)  # from the sampling plan
    >>> clf = FILLogisticRegression(epsilon=1.0, fit_intercept=False, data_norm=1.0)
    >>> float(clf.fit(X, y, sample_weight=design).epsilon_)
    inf
    >>> float(clf.fit(X, y, sample_weight=public_weights(design)).epsilon_)
    1.0
    """
    values = np.array(sample_weight, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"sample_weight must be one-dimensional; got shape {values.shape}.")
    return values.view(PublicWeights)


def weights_are_public(sample_weight) -> bool:
    """``True`` for ``None`` (unit weights) and declared :class:`PublicWeights`."""
    return sample_weight is None or isinstance(sample_weight, PublicWeights)
