"""Multicalibration error of predicted probabilities over groups and score buckets."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import column_or_1d

from ..utils._buckets import (
    MAX_N_BINS,
    _check_groups,
    _check_vector,
    cell_statistics,
    score_buckets,
)
from ..utils._groups import as_2d_data, as_groups, membership_matrix
from ..utils.fixes import NumberInterval, StrOptions, _num_samples, validate_params

WEIGHTINGS = ("max", "size_weighted", "mean_group_ece", "per_group_ece")

#: The cell parameters shared by the error and its scorer.
_CELL_CONSTRAINTS = {
    "n_bins": [NumberInterval(Integral, 1, MAX_N_BINS, closed="both")],
    "min_size": [NumberInterval(Integral, 1, None, closed="left")],
    "weighting": [StrOptions(set(WEIGHTINGS))],
}


@validate_params(
    {
        "y_true": ["array-like"],
        "y_prob": ["array-like"],
        "groups": [None, "array-like", "sparse matrix"],
        **_CELL_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)

def multicalibration_error(y_true, y_prob, groups=None, *, n_bins=10, min_size=1,
                           weighting="max"):
    """Calibration error of ``y_prob`` within every (group, score bucket) cell.

    For a cell :math:`S` (members of a group whose predicted probability falls in one of
    ``n_bins`` equal-width buckets) the error is :math:`|\\mathrm{mean}_S(y - p)|`. Only
    occupied cells are computed, so ``n_bins`` may be large (up to ``2**53``) without
    allocating anything of that size.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,), values in {0, 1}
        Observed binary labels.
    y_prob : array-like of shape (n_samples,), values in [0, 1]
        Predicted probabilities of the positive class.
    groups : array-like or sparse matrix of bool or 0/1, shape (n_samples, n_groups), \
            default=None
        Membership matrix (None: the whole population only). NaN entries are refused.
    n_bins : int in [1, 2**53], default=10
        Number of equal-width probability buckets on [0, 1].
    min_size : int >= 1, default=1
        Cells with fewer members are ignored.
    weighting : {"max", "size_weighted", "mean_group_ece", "per_group_ece"}, default="max"
        ``"max"``: the largest cell error (the alpha of alpha-multicalibration);
        ``"size_weighted"``: cell errors averaged with weights the cell sizes;
        ``"mean_group_ece"``: the expected calibration error of each group (over its cells
        with at least ``min_size`` members), averaged over the groups that have such a
        cell; ``"per_group_ece"``: the array of those per-group errors, NaN for a group
        without any cell of ``min_size`` members.

    Returns
    -------
    error : float or ndarray of shape (n_groups,)
        The error aggregated as ``weighting`` says; an array (one entry per group) only
        for ``"per_group_ece"``. Lower is better, 0 is perfect multicalibration.

    Raises
    ------
    ValueError
        Empty input, lengths that differ, labels other than 0/1, probabilities outside
        [0, 1] or not finite, a malformed membership matrix, or no cell with at least
        ``min_size`` members (the error is undefined then, not 0).
    TypeError
        Non-integer ``n_bins`` or ``min_size``.

    See Also
    --------
    make_multicalibration_scorer : The same error as a scorer for model selection.

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
    y = _check_vector(y_true, "y_true")
    p = _check_vector(y_prob, "y_prob")
    if y.size != p.size:
        raise ValueError(f"y_true and y_prob have different lengths ({y.size} and "
                         f"{p.size}).")
    if y.size == 0:
        raise ValueError("y_true and y_prob are empty; need at least one sample.")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("y_prob must hold finite probabilities in [0, 1].")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y_true must be binary with values 0 and 1 (NaN is refused).")
    n_bins, min_size = int(n_bins), int(min_size)
    G = _check_groups(groups, y.size)
    stats = cell_statistics(score_buckets(p, n_bins), y - p, G)
    errs, sizes, owner = [], [], []
    for g, (_, sums, counts) in enumerate(stats):
        keep = counts >= min_size
        errs.append(np.abs(sums[keep]) / counts[keep])
        sizes.append(counts[keep])
        owner.append(np.full(int(keep.sum()), g))
    err, size, owner = np.concatenate(errs), np.concatenate(sizes), np.concatenate(owner)
    if err.size == 0:
        raise ValueError(
            f"No (group, bucket) cell has at least min_size={min_size} members; the error "
            "is undefined. Lower min_size or n_bins."
        )
    if weighting == "max":
        return float(err.max())
    if weighting == "size_weighted":
        return float((err * size).sum() / size.sum())
    group_sizes = np.bincount(owner, weights=size, minlength=G.shape[1])
    weighted = np.bincount(owner, weights=err * size, minlength=G.shape[1])
    has = group_sizes > 0
    ece = np.full(G.shape[1], np.nan)
    ece[has] = weighted[has] / group_sizes[has]
    if weighting == "per_group_ece":
        return ece
    return float(ece[has].mean())


class _MulticalibrationScorer:
    def __init__(self, groups, n_bins, min_size, weighting):
        if isinstance(weighting, str) and weighting == "per_group_ece":
            raise ValueError("weighting must be one of ('max', 'size_weighted', "
                             "'mean_group_ece') for a scorer (a scorer returns one number); "
                             "got 'per_group_ece'.")
        self.groups = as_groups(groups)
        self.n_bins = int(n_bins)
        self.min_size = int(min_size)
        self.weighting = weighting

    def __call__(self, estimator, X, y, sample_weight=None, *, sensitive_features=None):
        if sample_weight is not None:
            raise ValueError("The multicalibration scorer does not support sample_weight "
                             "(cell errors are unweighted means).")
        y = column_or_1d(y)
        n = _num_samples(X)
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]}.")
        classes = getattr(estimator, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError("The multicalibration scorer needs a fitted binary classifier "
                             "with classes_ of length 2.")
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(
                "The multicalibration scorer needs predict_proba; "
                f"{type(estimator).__name__} has none. Score a probabilistic classifier "
                "(e.g. wrap it in sklearn.calibration.CalibratedClassifierCV).")
        if not np.all((y == classes[0]) | (y == classes[1])):
            raise ValueError(f"y holds labels outside the classifier's classes "
                             f"{list(classes)}.")
        y01 = (y == classes[1]).astype(int)
        if sensitive_features is None:
            p = estimator.predict_proba(X)
            Z = as_2d_data(X, "X")
        else:
            Z = as_2d_data(sensitive_features, "sensitive_features", allow_1d=True)
            if Z.shape[0] != n:
                raise ValueError(f"sensitive_features has {Z.shape[0]} rows but X has {n}.")
            try:
                p = estimator.predict_proba(X, sensitive_features=sensitive_features)
            except TypeError:  # a plain classifier: its predict_proba takes X only
                p = estimator.predict_proba(X)
        p = np.asarray(p, dtype=float)[:, 1]
        G = membership_matrix(self.groups, Z)
        return -multicalibration_error(y01, p, G, n_bins=self.n_bins, min_size=self.min_size,
                                       weighting=self.weighting)

    def set_score_request(self, *, sensitive_features=None):
        """Request ``sensitive_features`` from a metadata-routing caller (GridSearchCV).

        Parameters
        ----------
        sensitive_features : bool, str or None, default=None
            ``True`` to receive them, ``False`` not to, a string to receive them under an
            alias, None to raise if they are given (scikit-learn's convention).

        Returns
        -------
        self : the scorer
        """
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=self)
        request.score.add_request(param="sensitive_features", alias=sensitive_features)
        self._metadata_request = request
        return self

    def get_metadata_routing(self):
        """The metadata this scorer requests (see :meth:`set_score_request`)."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = getattr(self, "_metadata_request", None)
        if request is None:
            request = MetadataRequest(owner=self)
            request.score.add_request(param="sensitive_features", alias=None)
        return request

    def __repr__(self):
        return (f"make_multicalibration_scorer(groups={[g.name for g in self.groups]}, "
                f"n_bins={self.n_bins}, min_size={self.min_size}, "
                f"weighting={self.weighting!r})")


@validate_params(_CELL_CONSTRAINTS, prefer_skip_nested_validation=True)
def make_multicalibration_scorer(groups=(), *, n_bins=10, min_size=1, weighting="max"):
    """Scorer ``(estimator, X, y) -> -multicalibration_error`` for model selection.

    The groups are evaluated on the rows being scored (for instance each held-out fold of
    a cross-validation), always with the whole population as the first group, exactly as
    :class:`~sklearn_privacy.PrivateMulticalibrator` does. ``X`` is passed to the
    estimator untouched (DataFrames with string columns work); groups named by column
    are evaluated on it, or on ``sensitive_features`` when the scorer is called with
    them (``scorer(est, X, y, sensitive_features=S)``; they are forwarded to the
    estimator's ``predict_proba`` when it accepts them). Under metadata routing, request
    them with ``scorer.set_score_request(sensitive_features=True)``. The score is the *negated*
    error, so that greater is better as scikit-learn expects.

    Parameters
    ----------
    groups : sequence, default=()
        Group specifications as for :class:`~sklearn_privacy.PrivateMulticalibrator`
        (column position or name, tuple of those or of predicates, callable or
        :class:`~sklearn_privacy.multicalibration.Group`).
    n_bins : int in [1, 2**53], default=10
        Number of equal-width probability buckets on [0, 1].
    min_size : int, default=1
        Cells with fewer members in the scored rows are ignored.
    weighting : {"max", "size_weighted", "mean_group_ece"}, default="max"
        See :func:`multicalibration_error`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sensitive_features=None)`` returning the negated
        :func:`multicalibration_error` of ``estimator.predict_proba(X)[:, 1]``.

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
