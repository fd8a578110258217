"""The multicalibration loop: passes over the (group, bucket) cells and their updates.

The loop of Hébert-Johnson et al. (HKRR) as :class:`PrivateMulticalibrator` runs it:
exact passes (no privacy) or passes whose every cell is a NumericSparse query; the replay
of the recorded updates on new rows; the choice of a prefix of the updates on held-out
rows. The functions read the estimator's parameters and write its fitted attributes.
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import StatisticalWarning
from ..utils._buckets import cell_statistics, score_buckets
from ..utils._warnings import warn_user


def replay(est, p, M):
    """Apply ``updates_`` in order to base probabilities ``p`` (rows of ``M``)."""
    lo, hi = est._proba_bounds()
    p = np.clip(p, lo, hi)
    b = score_buckets(p, est.n_bins)
    indptr, members = _group_members(M)
    for g, bucket, shift in est.updates_:
        rows_g = members[indptr[g]:indptr[g + 1]]
        cell = rows_g[b[rows_g] == bucket]
        p[cell] = np.clip(p[cell] + shift, lo, hi)
        b[cell] = score_buckets(p[cell], est.n_bins)
    return p


def select_on_validation(est, p, M, resid_y, m, n_fit):
    """Keep the prefix of ``updates_`` with the smallest error on the held-out rows."""
    lo, hi = est._proba_bounds()
    p = np.clip(p, lo, hi)
    b = score_buckets(p, est.n_bins)
    m_val = max(1, round(m * p.size / n_fit))
    indptr, members = _group_members(M)

    def error():
        stats = cell_statistics(b, resid_y - p, M)
        errs = [np.abs(su[sz >= m_val]) / sz[sz >= m_val] for _, su, sz in stats]
        errs = np.concatenate(errs) if errs else np.zeros(0)
        return float(errs.max()) if errs.size else 0.0

    scores = [error()]
    for g, bucket, shift in est.updates_:
        rows_g = members[indptr[g]:indptr[g + 1]]
        cell = rows_g[b[rows_g] == bucket]
        p[cell] = np.clip(p[cell] + shift, lo, hi)
        b[cell] = score_buckets(p[cell], est.n_bins)
        scores.append(error())
    est.validation_errors_ = np.asarray(scores)
    keep = int(np.argmin(est.validation_errors_))
    est.updates_ = est.updates_[:keep]
    est.n_updates_ = keep


def run_loop(est, p, M, resid_y, m, ns):
    """Passes over the cells; updates ``p`` in place and records ``updates_``.

    Cells are visited group by group (in order) and, within a group, bucket by bucket
    from low to high; a cell is the group's members whose *current* bucket is the
    visited one (rows moved up by an update of the same group join a later cell of
    that pass). Each group's bucket sums and counts come from one ``bincount`` over
    its members and are kept up to date when an update moves rows to a later bucket;
    only cells that may be updated (and, without privacy, the cells that may hold
    the largest error of the pass) are recomputed exactly from their rows, with the
    same arithmetic as a direct scan, so the updates do not depend on rounding of
    the running sums.
    """
    private = ns is not None
    lo, hi = est._proba_bounds()
    est.updates_ = []
    est._update_noise = []
    est.history_ = []
    est.n_queries_ = 0
    np.clip(p, lo, hi, out=p)
    b = score_buckets(p, est.n_bins)
    indptr, members = _group_members(M)
    rounds = 0
    for rounds in range(1, est._max_iter + 1):
        n_upd = 0
        worst = 0.0
        # every (group, bucket) cell of the pass counts as queried (under NumericSparse
        # each is; without privacy an empty cell is examined trivially)
        est.n_queries_ += M.shape[1] * est.n_bins
        for g in range(M.shape[1]):
            rows_g = members[indptr[g]:indptr[g + 1]]
            if private:
                n_upd += _private_pass(est, g, rows_g, p, b, resid_y, m, ns, lo, hi)
                if ns.halted_:
                    break
            else:
                k, worst = _exact_pass(est, g, rows_g, p, b, resid_y, m, lo, hi, worst)
                n_upd += k
        est.history_.append({"round": rounds, "n_updates": n_upd,
                              "max_cell_error_seen": worst})
        if est.verbose:
            if private:
                detail = (f"{ns.max_answers - ns.n_answers_} of {ns.max_answers} noisy "
                          "answers left (cell errors are not computed under privacy)")
            else:
                detail = f"max cell error {worst:.4g} (calibration_tol {est._tol:g})"
            print(f"[PrivateMulticalibrator] round {rounds}: {n_upd} updates, {detail}")
        if n_upd == 0 or (private and ns.halted_):
            break
    est.n_iter_ = est.n_rounds_ = rounds
    est.n_updates_ = len(est.updates_)


def _apply(est, g, bucket, shift, rows, p, b, lo, hi):
    """Shift the cell's rows, re-bucket them and record the update."""
    if rows.size:
        # standard error of the cell's mean residual if p were calibrated on it
        q = p[rows]
        se = math.sqrt(float(np.sum(q * (1.0 - q)))) / rows.size
        est._update_noise.append(abs(shift) < 2.0 * se)
    p[rows] = np.clip(p[rows] + shift, lo, hi)
    new = score_buckets(p[rows], est.n_bins)
    b[rows] = new
    est.updates_.append((g, bucket, shift))
    return new


def _exact_pass(est, g, rows_g, p, b, resid_y, m, lo, hi, worst):
    """One group's cells without privacy.

    Returns the number of updates and the largest cell error seen so far in the pass
    (``worst`` on entry: the largest before this group).
    """
    n_bins, alpha = est.n_bins, est._tol
    bm = b[rows_g]
    keys, sums, sizes = _cell_table(bm, resid_y[rows_g] - p[rows_g], n_bins)
    n_upd, pos = 0, 0
    cache = {}  # exact (rows, mean) of cells computed since the last update

    def exact_mean(bucket):
        if bucket not in cache:
            rows = rows_g[bm == bucket]
            cache[bucket] = rows, float(np.mean(resid_y[rows] - p[rows]))
        return cache[bucket]

    while pos < keys.size:
        s, c = sums[pos:], sizes[pos:]
        eligible = c >= m
        tol = _sum_tolerance(c)
        cand = np.flatnonzero(eligible & (np.abs(s) > alpha * c - tol))
        end = int(cand[0]) + 1 if cand.size else c.size
        # cells visited before the next possible update keep their current error:
        # the largest of them, exactly (ties within the rounding bound all computed)
        seen = np.flatnonzero(eligible[:end])
        if seen.size:
            err = np.abs(s[seen]) / c[seen]
            slack = tol[seen] / c[seen]
            top = err.max()
            if top + slack.max() > worst:
                for j in seen[err + slack >= top - slack.max()].tolist():
                    worst = max(worst, abs(exact_mean(keys[pos + j])[1]))
        if not cand.size:
            break
        j = pos + int(cand[0])
        bucket = int(keys[j])
        pos = j + 1
        rows, r = exact_mean(bucket)
        if abs(r) <= alpha:
            continue
        if est.max_updates is not None and len(est.updates_) >= est.max_updates:
            continue
        new = _apply(est, g, bucket, r, rows, p, b, lo, hi)
        bm[bm == bucket] = new
        cache.clear()
        n_upd += 1
        later = new > bucket
        if later.any():
            # rows moved up join later cells of this group's pass
            moved, dest = rows[later], new[later]
            at = np.searchsorted(keys, dest)
            if np.all(at < keys.size) and np.array_equal(keys[np.minimum(
                    at, keys.size - 1)], dest):
                np.add.at(sizes, at, 1)
                np.add.at(sums, at, resid_y[moved] - p[moved])
            else:  # a new occupied bucket: rebuild the table of the later cells
                up = bm > bucket
                keys, sums, sizes = _cell_table(
                    bm[up], resid_y[rows_g[up]] - p[rows_g[up]], n_bins)
                pos = 0
    return n_upd, worst


def _private_pass(est, g, rows_g, p, b, resid_y, m, ns, lo, hi):
    """One group's cells, every one a NumericSparse query; returns the updates made."""
    n_bins = est.n_bins
    bm = b[rows_g]
    sums = np.bincount(bm, weights=resid_y[rows_g] - p[rows_g], minlength=n_bins)
    sizes = np.bincount(bm, minlength=n_bins)
    tol = _sum_tolerance(sizes)
    n_upd = 0
    for bucket in range(n_bins):
        rows = None
        if sizes[bucket] == 0:
            answer = ns.query(0.0, [0.0, 0.0])
        else:
            def exact(bucket=bucket):
                nonlocal rows
                rows = rows_g[bm == bucket]
                resid = float(np.sum(resid_y[rows] - p[rows]))
                return abs(resid), [resid, rows.size]

            answer = ns._query_lazy(abs(float(sums[bucket])), float(tol[bucket]), exact)
        if answer is None:
            if ns.halted_:
                break
            continue
        # skip cells whose released size is below m (post-processing of a noisy
        # answer); the shift divides by released values only
        if answer[1] < m:
            continue
        shift = float(np.clip(answer[0] / answer[1], -1.0, 1.0))
        if rows is None or not rows.size:
            est.updates_.append((g, bucket, shift))
        else:
            new = _apply(est, g, bucket, shift, rows, p, b, lo, hi)
            bm[bm == bucket] = new
            later = new > bucket
            if later.any():
                moved = rows[later]
                np.add.at(sizes, new[later], 1)
                np.add.at(sums, new[later], resid_y[moved] - p[moved])
                tol = _sum_tolerance(sizes)
        n_upd += 1
    return n_upd


def warn_small_cells(est):
    """Warn when updates shifted cells by less than their sampling noise."""
    flags = np.asarray(est._update_noise, dtype=bool)
    noisy = int(flags.sum())
    if not noisy:
        return
    warn_user(
        f"{noisy} of {flags.size} updates shifted a cell by less than twice the "
        "standard error of its mean residual (sqrt(sum p(1 - p)) / size, the spread of "
        "that mean if the predictions were calibrated): on cells this small the "
        "correction may fit noise and raise the calibration error on new rows. Pass "
        "validation_fraction (e.g. 0.2) to keep only the updates that help on "
        "held-out rows, raise min_cell_size (a cell of s rows has a standard error up "
        "to 0.5 / sqrt(s)), or check multicalibration_error on held-out rows.",
        StatisticalWarning, stacklevel=3)


def _group_members(M):
    """Member rows of every column of ``M``, ascending: ``members[indptr[g]:indptr[g+1]]``."""
    cols = [np.flatnonzero(M[:, g]) for g in range(M.shape[1])]
    indptr = np.zeros(len(cols) + 1, dtype=np.int64)
    np.cumsum([c.size for c in cols], out=indptr[1:])
    return indptr, np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)


def _cell_table(buckets, resid, n_bins):
    """Occupied buckets (sorted) with the running residual sum and size of each."""
    if n_bins <= max(4 * buckets.size, 1024):
        sizes = np.bincount(buckets, minlength=n_bins)
        keys = np.flatnonzero(sizes)
        sums = np.bincount(buckets, weights=resid, minlength=n_bins)[keys]
        return keys, sums, sizes[keys]
    keys, inv = np.unique(buckets, return_inverse=True)
    return (keys, np.bincount(inv, weights=resid, minlength=keys.size),
            np.bincount(inv, minlength=keys.size))


_EPS = float(np.finfo(np.float64).eps)


def _sum_tolerance(sizes):
    """Bound on the gap between a running and an exact sum of ``sizes`` residuals in
    [-1, 1] (floating-point rounding of either order of summation), generously rounded up.
    """
    sizes = np.asarray(sizes, dtype=float)
    return (1e-9 + 4.0 * _EPS * (sizes + 64.0)) * sizes + 1e-12
