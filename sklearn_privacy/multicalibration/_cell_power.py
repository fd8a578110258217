"""The cell settings of the multicalibration loop and what a private pass can correct.

The minimum cell size, the number of NumericSparse answers and the threshold come from
public parameters only; the probability that a private pass corrects a cell of a given
size and miscalibration has a closed form (the difference of two Laplace variables).
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import StatisticalWarning
from ..utils._warnings import warn_user


def cell_settings(est, n_groups, private):
    """(min cell size m, max_updates c, threshold) from public quantities only.

    ``n_groups`` counts the whole population. Without privacy ``c`` is
    ``max_updates`` (possibly None) and the threshold is unused.
    """
    tol = est._tol
    n_cells = n_groups * est.n_bins
    if est.min_cell_size is not None:
        m = int(est.min_cell_size)
    elif private:
        # Theorem 2's ln|C| / (tol^2 epsilon), in float64 so that extreme tol or
        # epsilon give a clear error instead of ZeroDivisionError / OverflowError
        with np.errstate(over="ignore", divide="ignore", under="ignore"):
            m_float = float(np.float64(math.log(max(n_cells, 2)))
                            / (np.float64(tol) ** 2 * np.float64(est._epsilon_number())))
        if not m_float <= 2.0**53:
            raise ValueError(
                f"calibration_tol={tol!r} and epsilon={est._epsilon_number()!r} give a "
                "default "
                f"min_cell_size ln|C| / (calibration_tol^2 epsilon) = {m_float:.3g}, "
                "beyond any data set (no cell could ever be updated). Use a larger "
                "calibration_tol or epsilon, or pass min_cell_size explicitly."
            )
        m = max(1, math.ceil(m_float))
    else:
        m = 20
    if not private:
        return m, est.max_updates, None
    c = est.max_updates
    if c is None:
        beta = 0.05
        c = max(1, int(math.sqrt(m * est._epsilon_number())
                       / math.sqrt(math.log(n_cells / beta) + math.log(n_cells))))
    thr = tol * m if est.threshold is None else float(est.threshold)
    return m, int(c), thr


def warn_few_updates(est, n, thr):
    """Warn when no cell of the calibration data is large enough to be corrected."""
    m = est.min_cell_size_
    need = _smallest_cell(1.0, 0.5, m, est.max_updates_, thr, est._epsilon_number())
    small = [g.name for g, size in zip(est.groups_, est.largest_cell_sizes_,
                                       strict=True) if size < need]
    # the texts hold public quantities and DP outputs only: no exact count, no name
    # of a small group (largest_cell_sizes_ says which, in memory, never pickled)
    if est.largest_cell_size_ >= need and small:
        warn_user(
            f"Some groups have no (group, bucket) cell of the {need} rows that a cell "
            "miscalibrated by 1 needs to be corrected half the time under this epsilon "
            "(see smallest_correctable_cell and largest_cell_sizes_): the private fit "
            "cannot correct them except by chance. Use a larger epsilon or "
            "calibration_tol, fewer groups or bins, or more calibration rows. "
            "(largest_cell_sizes_ holds exact counts: it stays in memory and is never "
            "pickled.)", StatisticalWarning, stacklevel=3)
        return
    if not small:
        return
    warn_user(
        f"The private fit made {est.n_updates_} update(s): a cell is corrected only "
        f"when its released size reaches min_cell_size_={m} and its residual sum passes "
        f"the noisy threshold {thr:.3g}, but no (group, bucket) cell of the "
        f"calibration data (n_samples={n}) has the {need} rows that a cell "
        "miscalibrated by 1 needs to be corrected half the time (see "
        "smallest_correctable_cell). Use a larger epsilon or calibration_tol, "
        "fewer groups or bins (min_cell_size grows with their number), or more "
        "calibration rows. (largest_cell_size_ is an exact count: it stays in memory "
        "and is never pickled.)", StatisticalWarning, stacklevel=3)


def _laplace_difference_sf(z, a, b):
    """``P(L_a - L_b >= z)`` for independent centred Laplace variables of scales a, b.

    The characteristic function of the difference factorises as
    ``(a^2 phi_a - b^2 phi_b) / (a^2 - b^2)``, so its tail is the same signed mixture of
    the two Laplace tails (for ``a == b``: ``exp(-|z|/a) (1 + |z|/(2a)) / 2`` on a side).
    """
    def sf(z, s):
        return 0.5 * math.exp(-z / s) if z >= 0 else 1.0 - 0.5 * math.exp(z / s)

    if math.isclose(a, b, rel_tol=1e-9):
        t = 0.5 * math.exp(-abs(z) / a) * (1.0 + abs(z) / (2.0 * a))
        return t if z >= 0 else 1.0 - t
    return (a * a * sf(z, a) - b * b * sf(z, b)) / (a * a - b * b)


def _update_probability(size, r, m, c, thr, epsilon):
    """Probability that a cell of ``size`` rows with mean residual ``r`` is updated."""
    test = _laplace_difference_sf(thr - r * size, 16.0 * c / epsilon, 8.0 * c / epsilon)
    count_scale = 4.0 * c / epsilon
    z = m - size
    count = 0.5 * math.exp(-z / count_scale) if z >= 0 else 1.0 - 0.5 * math.exp(
        z / count_scale)
    return max(0.0, min(1.0, test)) * count


def _smallest_cell(r, probability, m, c, thr, epsilon):
    """Smallest integer size whose update probability reaches ``probability``."""
    hi = 1
    while _update_probability(hi, r, m, c, thr, epsilon) < probability:
        hi *= 2
        if hi > 2**62:
            return hi
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _update_probability(mid, r, m, c, thr, epsilon) >= probability:
            hi = mid
        else:
            lo = mid
    return hi
