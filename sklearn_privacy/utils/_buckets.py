"""Score buckets and per-(group, bucket) cell statistics shared by metrics and estimators.

A *cell* is the set of members of a group whose predicted probability falls in one of
``n_bins`` equal-width buckets ``[0, 1/k), [1/k, 2/k), ..., [(k-1)/k, 1]``, with the edges
``j/k`` taken as float64 numbers (``j / k`` correctly rounded, as numpy computes it): a
probability ``p`` is in bucket ``j`` exactly when ``j / k <= p < (j + 1) / k``, and ``p = 1``
is in the last bucket. Both
:func:`sklearn_privacy.metrics.multicalibration_error` and
:class:`sklearn_privacy.PrivateMulticalibrator` score cells with the functions below.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_N_BINS", "cell_codes", "cell_statistics", "check_min_size", "check_n_bins",
           "score_buckets"]

#: Largest accepted ``n_bins``: ``p * n_bins`` stays an exact integer-valued float and fits
#: in int64 for every probability ``p``; larger values would not change any bucket of a
#: float64 probability in a meaningful way.
MAX_N_BINS = 2**53


def score_buckets(p, n_bins):
    """Bucket index of each probability: ``[0, 1/k), [1/k, 2/k), ..., [(k-1)/k, 1]``.

    Exact interval membership: ``p`` is in bucket ``j`` if and only if
    ``j / k <= p < (j + 1) / k`` with the float64 edges ``j / k`` (``p = 1`` in the last
    bucket). ``floor(p * k)`` alone is not that: the product rounds, so a probability one
    ulp below ``9 / 10`` gives ``p * 10 == 9.0``. The product is off by at most one bucket,
    and one comparison with each neighbouring edge corrects it.
    """
    p = np.asarray(p, dtype=float)
    k = float(n_bins)
    j = np.minimum(np.floor(p * k), k - 1.0)
    j -= p < j / k                      # the product rounded up across an edge
    j += (j + 1.0 < k) & (p >= (j + 1.0) / k)  # ... or down
    return j.astype(np.int64)


def check_n_bins(n_bins, param="n_bins"):
    """Validate a number of equal-width score buckets (1 .. MAX_N_BINS)."""
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, Integral):
        raise TypeError(f"{param} must be an integer >= 1; got {n_bins!r}.")
    if not 1 <= n_bins <= MAX_N_BINS:
        raise ValueError(f"{param} must be an integer in [1, 2**53]; got {n_bins!r}.")
    return int(n_bins)


def check_min_size(min_size, param="min_size"):
    """Validate a minimum cell size (integer >= 1)."""
    if isinstance(min_size, (bool, np.bool_)) or not isinstance(min_size, Integral):
        raise TypeError(f"{param} must be an integer >= 1; got {min_size!r}.")
    if min_size < 1:
        raise ValueError(f"{param} must be an integer >= 1; got {min_size!r}.")
    return int(min_size)


def cell_codes(group_of_pair, bucket_of_pair):
    """Compact cell index of each (group, bucket) membership pair.

    Parameters
    ----------
    group_of_pair, bucket_of_pair : int64 arrays of the same length
        Group index and bucket of each (row, group) membership pair.

    Returns
    -------
    cell_group, cell_bucket : ndarrays of shape (n_cells,)
        The occupied cells sorted by (group, bucket).
    inverse : ndarray of shape (n_pairs,)
        Index of each pair's cell in the arrays above.
    """
    order = np.lexsort((bucket_of_pair, group_of_pair))
    g, b = group_of_pair[order], bucket_of_pair[order]
    new = np.ones(g.size, dtype=bool)
    if g.size > 1:
        new[1:] = (g[1:] != g[:-1]) | (b[1:] != b[:-1])
    starts = np.flatnonzero(new)
    inverse = np.empty(g.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return g[starts], b[starts], inverse


def cell_statistics(buckets, resid, G):
    """Per-group occupied buckets with the residual sum and size of each cell.

    One pass over the (row, group) membership pairs: the occupied cells are found by one
    sort of the pair codes and their sums and sizes by ``np.bincount``, so the cost is
    O(nnz(G) log nnz(G)) whatever ``n_bins`` and the number of groups.

    Parameters
    ----------
    buckets : int64 ndarray of shape (n_samples,)
    resid : float ndarray of shape (n_samples,)
    G : bool ndarray of shape (n_samples, n_groups)

    Returns
    -------
    stats : list of (buckets, sums, sizes), one triple per column of ``G``
    """
    rows, groups = np.nonzero(np.asarray(G, dtype=bool))
    cg, cb, inv = cell_codes(groups.astype(np.int64), np.asarray(buckets)[rows])
    sums = np.bincount(inv, weights=np.asarray(resid, dtype=float)[rows], minlength=cg.size)
    sizes = np.bincount(inv, minlength=cg.size)
    cuts = np.searchsorted(cg, np.arange(G.shape[1] + 1))
    return [(cb[lo:hi], sums[lo:hi], sizes[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:],
                                                                       strict=True)]


def _check_vector(values, name):
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional of shape (n_samples,); got shape "
                         f"{arr.shape}.")
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers; got values like {arr[:3]!r}.") from None
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"{name} must hold numbers; got dtype {arr.dtype}.")
    return arr.astype(float)


def _check_groups(groups, n):
    if groups is None:
        return np.ones((n, 1), dtype=bool)
    if sp.issparse(groups):
        groups = groups.toarray()
    G = np.asarray(groups)
    if G.ndim == 1:
        G = G[:, None]
    if G.ndim != 2:
        raise ValueError(f"groups must be a membership matrix of shape (n_samples, n_groups); "
                         f"got shape {G.shape}.")
    if G.shape[0] != n:
        if isinstance(groups, (list, tuple)):
            raise ValueError(
                f"groups has {len(groups)} entries but y_true has {n} rows: here groups is a "
                "membership matrix (one row per sample, one boolean column per group). For "
                "group specifications (columns, predicates, Group objects), evaluate them on "
                "the data first: membership_matrix(groups, X).")
        raise ValueError(f"groups has {G.shape[0]} rows but y_true has {n}.")
    if G.shape[1] == 0:
        raise ValueError("groups has no column; pass None for the whole population only.")
    if G.dtype != bool:
        if not np.issubdtype(G.dtype, np.number):
            raise ValueError(f"groups must be boolean (or 0/1); got dtype {G.dtype}.")
        ok = (G == 0) | (G == 1)
        if not np.all(ok):
            bad = G[~ok].ravel()[:3]
            raise ValueError(f"groups must be boolean (or 0/1); got entries such as "
                             f"{bad.tolist()} (NaN is not a membership).")
        G = G.astype(bool)
    return G
