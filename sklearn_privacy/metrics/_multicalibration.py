"""Multicalibration error of predicted probabilities over groups and score buckets."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

WEIGHTINGS = ("max", "size_weighted", "mean_group_ece", "per_group_ece")


def score_buckets(p, n_bins):
    """Bucket index of each probability: ``[0, 1/k), [1/k, 2/k), ..., [(k-1)/k, 1]``."""
    return np.minimum((np.asarray(p) * n_bins).astype(int), n_bins - 1)


def multicalibration_error(y_true, y_prob, groups=None, *, n_bins=10, min_size=1,
                           weighting="max"):
    """Calibration error of ``y_prob`` within every (group, score bucket) cell.

    For a cell :math:`S` (members of a group whose predicted probability falls in one of
    ``n_bins`` equal-width buckets) the error is :math:`|\\mathrm{mean}_S(y - p)|`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,), values in {0, 1}
    y_prob : array-like of shape (n_samples,), values in [0, 1]
    groups : array-like of bool, shape (n_samples, n_groups), default=None
        Membership matrix (None: the whole population only).
    n_bins : int, default=10
    min_size : int, default=1
        Cells with fewer members are ignored.
    weighting : {"max", "size_weighted", "mean_group_ece", "per_group_ece"}, default="max"
        ``"max"``: the largest cell error (the alpha of alpha-multicalibration);
        ``"size_weighted"``: cell errors averaged with weights the cell sizes;
        ``"mean_group_ece"``: the expected calibration error of each group, averaged
        over groups; ``"per_group_ece"``: the array of those per-group errors.

    Returns
    -------
    error : float or ndarray of shape (n_groups,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.metrics import multicalibration_error
    >>> y = np.array([0, 0, 1, 1]); p = np.array([0.1, 0.1, 0.9, 0.9])
    >>> round(multicalibration_error(y, p), 3)
    0.1
    >>> g = np.array([[True, False], [True, True], [False, True], [False, True]])
    >>> multicalibration_error(y, p, g, weighting="per_group_ece").round(3)
    array([0.1, 0.1])
    """
    y = column_or_1d(y_true).astype(float)
    p = column_or_1d(y_prob).astype(float)
    check_consistent_length(y, p)
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ValueError("y_prob must hold probabilities in [0, 1].")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y_true must be binary with values 0 and 1.")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}; got {weighting!r}.")
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
    if groups is None:
        G = np.ones((len(y), 1), dtype=bool)
    else:
        G = check_array(groups, dtype=bool, ensure_2d=False)
        if G.ndim == 1:
            G = G[:, None]
        if G.shape[0] != len(y):
            raise ValueError(f"groups has {G.shape[0]} rows but y has {len(y)}.")
    b = score_buckets(p, n_bins)
    resid = y - p
    n_groups = G.shape[1]
    sums = np.zeros((n_groups, n_bins))
    sizes = np.zeros((n_groups, n_bins))
    for g in range(n_groups):
        m = G[:, g]
        sums[g] = np.bincount(b[m], weights=resid[m], minlength=n_bins)
        sizes[g] = np.bincount(b[m], minlength=n_bins)
    valid = sizes >= max(min_size, 1)
    err = np.where(valid, np.abs(sums) / np.maximum(sizes, 1), 0.0)
    if weighting == "max":
        return float(err[valid].max()) if np.any(valid) else 0.0
    if weighting == "size_weighted":
        return float((err * sizes)[valid].sum() / max(sizes[valid].sum(), 1))
    group_sizes = np.where(valid, sizes, 0).sum(axis=1)
    ece = (err * np.where(valid, sizes, 0)).sum(axis=1) / np.maximum(group_sizes, 1)
    if weighting == "per_group_ece":
        return ece
    return float(ece[group_sizes > 0].mean())
