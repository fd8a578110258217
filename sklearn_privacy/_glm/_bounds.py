"""Row-norm bounds and their private counts, shared by the in-memory and the dask fit.

Below both ``_base`` and ``_dask`` in the import graph (it imports neither), so the dask
backend reads these helpers without importing the estimator module that calls it.
"""

from __future__ import annotations

import numpy as np


def dense_row_norms(X):
    """L2 norm of every row of a dense ``X``, without overflow (rows scaled by their max)."""
    m = np.max(np.abs(X), axis=1, initial=0.0)
    safe = np.where(m > 0, m, 1.0)
    return m * np.linalg.norm(X / safe[:, None], axis=1)


def row_scale_factors(norms, data_norm):
    """Factor of every row: ``data_norm / norm`` above ``data_norm``, else 1."""
    over = norms > data_norm
    factor = np.ones_like(norms)
    factor[over] = data_norm / norms[over]
    return factor


#: Name of the private channel of the bounding counts: an in-memory attribute of the
#: fitted estimator, left out of every pickle (``__getstate__``) and of
#: :func:`~sklearn_privacy.utils.strip_for_release`'s output.
BOUNDING_STATE = "_bounding_counts"


def record_bounding(estimator, *, rows_scaled=None, targets_clipped=None) -> None:
    """Count the rows scaled to ``data_norm`` / targets clipped to ``target_bound``.

    Whether any row exceeds a declared bound, and how many do, changes with one row, so
    under a finite claim it may be neither printed nor warned about: the counts go to a
    private channel, ``estimator._bounding_counts`` (a dict with ``"rows_scaled"`` and
    ``"targets_clipped"``), kept in memory for the data owner and never pickled. Rows are
    bounded silently; the declared bounds, which are parameters, say that they are.
    ``rows_scaled`` starts a new record (each fit bounds its rows first).
    """
    state = estimator.__dict__
    if rows_scaled is not None or BOUNDING_STATE not in state:
        state[BOUNDING_STATE] = {"rows_scaled": 0, "targets_clipped": 0}
    if rows_scaled is not None:
        state[BOUNDING_STATE]["rows_scaled"] = int(rows_scaled)
    if targets_clipped is not None:
        state[BOUNDING_STATE]["targets_clipped"] = int(targets_clipped)
