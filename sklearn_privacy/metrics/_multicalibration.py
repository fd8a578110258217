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

    See Also
    --------
    make_multicalibration_scorer : the same error as a scorer for model selection.

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


class _MulticalibrationScorer:
    def __init__(self, groups, n_bins, min_size, weighting):
        if weighting not in WEIGHTINGS or weighting == "per_group_ece":
            raise ValueError(
                "weighting must be one of ('max', 'size_weighted', 'mean_group_ece') for a "
                f"scorer (a scorer returns one number); got {weighting!r}."
            )
        from ..multicalibration._groups import as_groups

        self.groups = as_groups(groups)
        self.n_bins, self.min_size, self.weighting = n_bins, min_size, weighting

    def __call__(self, estimator, X, y):
        from ..multicalibration._groups import membership_matrix

        X = check_array(X, dtype=float, accept_sparse="csr")
        y = column_or_1d(y)
        classes = getattr(estimator, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError("The multicalibration scorer needs a fitted binary classifier "
                             "with classes_ of length 2.")
        y01 = (y == classes[1]).astype(int)
        if not np.all((y == classes[0]) | (y == classes[1])):
            raise ValueError(f"y holds labels outside the classifier's classes "
                             f"{list(classes)}.")
        p = np.asarray(estimator.predict_proba(X), dtype=float)[:, 1]
        G = membership_matrix(self.groups, X)
        return -multicalibration_error(y01, p, G, n_bins=self.n_bins, min_size=self.min_size,
                                       weighting=self.weighting)

    def __repr__(self):
        return (f"make_multicalibration_scorer(groups={[g.name for g in self.groups]}, "
                f"n_bins={self.n_bins}, min_size={self.min_size}, "
                f"weighting={self.weighting!r})")


def make_multicalibration_scorer(groups=(), *, n_bins=10, min_size=1, weighting="max"):
    """Scorer ``(estimator, X, y) -> -multicalibration_error`` for model selection.

    The groups are evaluated on the rows being scored (for instance each held-out fold of
    a cross-validation), always with the whole population as the first group, exactly as
    :class:`~sklearn_privacy.PrivateMulticalibrator` does. The score is the *negated*
    error, so that greater is better as scikit-learn expects.

    Parameters
    ----------
    groups : sequence, default=()
        Group specifications as for :class:`~sklearn_privacy.PrivateMulticalibrator`
        (column index, tuple of column indices, callable or
        :class:`~sklearn_privacy.multicalibration.Group`).
    n_bins : int, default=10
    min_size : int, default=1
        Cells with fewer members in the scored rows are ignored.
    weighting : {"max", "size_weighted", "mean_group_ece"}, default="max"
        See :func:`multicalibration_error`.

    Returns
    -------
    scorer : callable

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn_privacy.metrics import make_multicalibration_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=600), rng.randint(0, 2, size=600)])
    >>> y = (rng.uniform(size=600) < 0.3 + 0.4 * X[:, 1]).astype(int)
    >>> scorer = make_multicalibration_scorer(groups=[1], min_size=10)
    >>> scores = cross_val_score(LogisticRegression(), X, y, cv=3, scoring=scorer)
    >>> bool(np.all((scores <= 0) & (scores > -1)))
    True
    """
    return _MulticalibrationScorer(groups, n_bins, min_size, weighting)
