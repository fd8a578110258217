"""Binned features and the histogram statistics of private cyclic boosting.

Everything here is either a function of declared public facts (bin edges from bounds,
sensitivities, noise scales) or one histogram query over the rows (counts, residual
sums). The queries are vectorised with :func:`numpy.bincount` over integer bin codes.

Sensitivities (replace-one: one row ``(x, y)`` becomes ``(x', y')``, ``n`` public). Each
row falls in exactly one bin of every feature.

* **Counts** of feature ``j``, per bin and class (``K`` columns; one column for a
  regressor): the row leaves one cell and enters one (possibly the same), so the L1
  change is at most 2 and the L2 change at most ``sqrt(2)``. The ``d`` features' count
  histograms together: L1 ``2 d``, L2 ``sqrt(2 d)``.
* **Residual sums** of feature ``j`` (``K`` columns), with every residual vector ``r``
  of one row bounded by ``||r||_1 <= a`` and ``||r||_2 <= b`` and any two of them by
  ``||r - r'||_1 <= A``, ``||r - r'||_2 <= B``: in one bin the change is ``r - r'``,
  in two bins ``(r, -r')``. Hence L1 ``max(A, 2 a)`` and L2 ``max(B, sqrt(2) b)``:

  - regression (``r`` clipped to ``[-h, h]``; ``h = c w / 2`` with ``w = high - low`` of
    the target and ``c`` the public clip share, ``RESIDUAL_CLIP`` = 0.5 by default):
    ``a = b = h``, ``A = B = 2 h``: L1 = L2 = ``2 h = c w`` (``w`` for ``c = 1``);
  - two classes (one logit, ``r = y - p`` in ``(-1, 1)``, clipped to ``[-c, c]`` with
    the public clip ``c`` in ``(0, 1]``): ``a = b = c``, ``A = B = 2 c``: L1 = L2 =
    ``2 c`` (2 unclipped);
  - ``K >= 3`` classes (``r = e_y - p``): ``||r||_1 = 2 (1 - p_y) < 2``,
    ``||r||_2^2 = (1 - p_y)^2 + sum_{k != y} p_k^2 < 2``, and ``r - r' = (e_y - e_y') -
    (p - p')`` has L1 below 4 and L2 below ``2 sqrt(2)`` (reached in the limit ``p =
    e_y'``, ``p' = e_y``): L1 = 4, L2 = ``2 sqrt(2)``.

* **Totals**: the class totals (a row moves from one class to another: L1 2, L2
  ``sqrt(2)``), or the sum of the targets centred at the middle of their range (L1 = L2
  = ``high - low``).

The residuals of the other rows do not change with the replaced row: they are computed
from the model released so far (post-processing of earlier noisy answers), so the rounds
compose adaptively.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bin_codes", "count_histograms", "residual_histogram", "selection_scores",
           "sensitivities"]


def numeric_edges(low: float, high: float, n_bins: int) -> np.ndarray:
    """The ``n_bins - 1`` interior edges of equal-width bins over ``[low, high]``."""
    return np.linspace(low, high, n_bins + 1)[1:-1]


def bin_codes(column: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin code of every value (``searchsorted`` over the interior edges; values
    outside the bounds fall in the first or last bin)."""
    return np.searchsorted(edges, column, side="right").astype(np.intp)


def count_histograms(codes: np.ndarray, y_idx: np.ndarray, n_bins, n_columns: int):
    """Per feature, the ``(n_bins[j], n_columns)`` counts of rows per bin and class.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_features), integer
    y_idx : ndarray of shape (n_samples,)
        Class index of every row (zeros for a regressor, ``n_columns=1``).
    n_bins : sequence of int
    n_columns : int
    """
    out = []
    for j, nb in enumerate(n_bins):
        flat = codes[:, j] * n_columns + y_idx
        out.append(np.bincount(flat, minlength=nb * n_columns).astype(np.float64)
                   .reshape(nb, n_columns))
    return out


def residual_histogram(codes_j: np.ndarray, residuals: np.ndarray, n_bins: int):
    """``(n_bins, K)`` sums of the residual vectors of the rows in each bin.

    Parameters
    ----------
    codes_j : ndarray of shape (n_samples,), integer
    residuals : ndarray of shape (n_samples, K)
    n_bins : int
    """
    n, K = residuals.shape
    if K == 1:
        return np.bincount(codes_j, weights=residuals[:, 0], minlength=n_bins)[:, None]
    flat = (codes_j[:, None] * K + np.arange(K)[None, :]).ravel()
    return np.bincount(flat, weights=residuals.ravel(), minlength=n_bins * K).reshape(
        n_bins, K)


def selection_scores(codes: np.ndarray, residuals: np.ndarray, n_bins) -> np.ndarray:
    """The L1 norm of every feature's residual-sum histogram, shape ``(d,)``.

    With the residuals of one public model (the released intercept), replacing one row
    moves every feature's histogram by at most its residual L1 sensitivity, so (triangle
    inequality) every score moves by at most that much: the selection's sensitivity is
    ``sensitivities(...)["residual"][0]`` per score.
    """
    return np.array([np.abs(residual_histogram(codes[:, j], residuals, n_bins[j])).sum()
                     for j in range(codes.shape[1])])


def sensitivities(task: str, n_classes: int = 2, target_width: float | None = None,
                  residual_clip: float = 1.0):
    """``{"total": ..., "count": ..., "residual": ...}``: ``(l1, l2)`` of the totals
    query and of one feature's count and residual histograms.

    Parameters
    ----------
    task : {"classification", "regression"}
    n_classes : int
        Number of classes (classification).
    target_width : float
        ``high - low`` of the declared target range (regression).
    residual_clip : float in (0, 1]
        Regression: residuals are clipped to ``residual_clip * target_width / 2`` in
        absolute value, so their histogram's sensitivity is ``residual_clip *
        target_width``. Two classes: residuals ``y - p`` are clipped to
        ``[-residual_clip, residual_clip]``, sensitivity ``2 residual_clip``. Unused for
        three classes or more.
    """
    count = (2.0, math.sqrt(2.0))
    if task == "regression":
        w = float(target_width)
        r = float(residual_clip) * w
        return {"total": (w, w), "count": count, "residual": (r, r)}
    if n_classes == 2:
        r = 2.0 * float(residual_clip)
        return {"total": count, "count": count, "residual": (r, r)}
    return {"total": count, "count": count, "residual": (4.0, 2.0 * math.sqrt(2.0))}
