"""One ROC routine for the membership metrics, batched over weightings of the rows.

A membership result is read off the ROC curve of ``score >= t`` on its evaluation rows.
The same routine serves the point estimate (weights 1), the bootstrap (integer resample
counts) and the permutation null distribution (a random choice of which rows play the
members), so that the three are computed by the same arithmetic: every resample is one
row of a weight matrix and all of them are evaluated at once (cumulative sums over the
rows sorted by score), with no Python loop over resamples or thresholds.
"""

from __future__ import annotations

import numpy as np

#: the metrics a membership result reports, by name
METRICS = ("auc", "advantage", "balanced_accuracy", "tpr_at_fpr")


def allowed_false_positives(level, n_nonmembers):
    """Largest number of false positives ``k`` with ``k / n_nonmembers <= level``.

    Counted exactly (``floor(level * n)``, guarded against the rounding of the product,
    e.g. ``0.29 * 100 = 28.999999999999996``), never by comparing rounded rates.
    """
    prod = level * n_nonmembers
    k = np.floor(prod)
    if prod - k > 1.0 - 1e-9 * max(1.0, prod):  # the product rounded below an integer
        k += 1.0
    return int(k)


def resolved(level, n_nonmembers) -> bool:
    """Whether an FPR of ``level`` is resolved by ``n_nonmembers`` (one false positive)."""
    return allowed_false_positives(level, n_nonmembers) >= 1


def roc_counts(scores, w_in, w_out):
    """Weighted true- and false-positive counts of ``score >= t``, for every threshold.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Pooled scores (members and non-members).
    w_in, w_out : ndarray of shape (n_weightings, n)
        Weight of every row as a member and as a non-member in each weighting.

    Returns
    -------
    tp, fp : ndarray of shape (n_weightings, n_thresholds + 1)
        Counts at the thresholds, from ``+inf`` (first column, 0) down to every distinct
        score in decreasing order (ties form one step).
    """
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    last = np.r_[s[1:] != s[:-1], True]  # last row of every group of equal scores
    tp = np.cumsum(w_in[:, order], axis=1)[:, last]
    fp = np.cumsum(w_out[:, order], axis=1)[:, last]
    zero = np.zeros((tp.shape[0], 1))
    return np.hstack([zero, tp]), np.hstack([zero, fp])


def metrics_from_counts(tp, fp, metric, *, level=None):
    """``metric`` of every weighting from its ROC counts (vectorised over rows)."""
    n_in, n_out = tp[:, -1:], fp[:, -1:]
    tpr = tp / np.where(n_in > 0, n_in, 1.0)
    fpr = fp / np.where(n_out > 0, n_out, 1.0)
    if metric == "auc":
        return np.sum(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]), axis=1) / 2.0
    if metric == "advantage":
        return np.max(tpr - fpr, axis=1)
    if metric == "tpr_at_fpr":
        n = fp[:, -1]
        # exact count rule: at most floor(level * n_nonmembers) false positives
        allowed = np.array([allowed_false_positives(level, v) for v in np.unique(n)])
        cap = allowed[np.searchsorted(np.unique(n), n)][:, None]
        return np.max(np.where(fp <= cap + 1e-9, tpr, 0.0), axis=1)
    raise ValueError(f"metric must be one of {METRICS}; got {metric!r}.")


def batched_metric(scores, w_in, w_out, metric, *, level=None, decisions=None,
                   chunk_elements=2_000_000):
    """``metric`` for every row of the weight matrices, in chunks of bounded memory."""
    if metric == "balanced_accuracy":
        d = np.asarray(decisions, dtype=float)
        n_in, n_out = w_in.sum(axis=1), w_out.sum(axis=1)
        return 0.5 * (w_in @ d / n_in + 1.0 - w_out @ d / n_out)
    step = max(1, chunk_elements // max(scores.size, 1))
    out = [metrics_from_counts(*roc_counts(scores, w_in[i:i + step], w_out[i:i + step]),
                               metric, level=level)
           for i in range(0, w_in.shape[0], step)]
    return np.concatenate(out)


def bootstrap_weights(rng, n_in, n_out, size):
    """Stratified bootstrap counts: ``n_in`` members and ``n_out`` non-members redrawn."""
    def counts(n):
        draw = rng.randint if hasattr(rng, "randint") else rng.integers  # RandomState
        idx = draw(0, n, size=(size, n)) + n * np.arange(size)[:, None]
        return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(float)

    c_in, c_out = counts(n_in), counts(n_out)
    w_in = np.hstack([c_in, np.zeros((size, n_out))])
    w_out = np.hstack([np.zeros((size, n_in)), c_out])
    return w_in, w_out


def permutation_weights(rng, n_in, n_out, size):
    """Random relabelling: ``n_in`` of the pooled rows drawn as members, the rest not."""
    n = n_in + n_out
    ranks = np.argsort(rng.random((size, n)), axis=1)
    w_in = np.zeros((size, n))
    np.put_along_axis(w_in, ranks[:, :n_in], 1.0, axis=1)
    return w_in, 1.0 - w_in
