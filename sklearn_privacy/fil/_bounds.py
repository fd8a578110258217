"""Row-norm bounds and their warnings, shared by the in-memory and the dask fit.

Below both ``_base`` and ``_dask`` in the import graph (it imports neither), so the dask
backend reads these helpers without importing the estimator module that calls it.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import PrivacyWarning
from ..utils._warnings import warn_user


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


def warn_scaled_rows(count, n, data_norm, stacklevel):
    """The PrivacyWarning of ``data_norm``: some rows were scaled.

    No count and no value of a row (not even the largest norm) enters the text, which
    ends up in logs, notebooks and the output of parallel workers: an exact count of the
    rows above the bound changes with one row. ``count`` and ``n`` are kept in the
    signature for the callers.
    """
    warn_user(
        "Rows of X have an L2 norm above "
        f"data_norm={data_norm!r}; they were scaled to norm "
        "data_norm before fitting. The DP guarantee (epsilon_) holds for the scaled "
        "rows (and, the scaling acting row by row, for the original data); the "
        "model, eta_ and fisher_information describe the scaled rows.",
        PrivacyWarning,
        stacklevel=stacklevel + 1,
    )


def warn_clipped_targets(count, n, bound, stacklevel):
    """The PrivacyWarning of ``target_bound``: some targets were clipped (no count, as
    :func:`warn_scaled_rows`)."""
    warn_user(
        "Targets exceed target_bound="
        f"{bound!r} in absolute value; they were "
        "clipped to [-target_bound, target_bound] before fitting. The DP "
        "guarantee (epsilon_) holds for the clipped targets (hence for the "
        "original data); the model and eta_ describe the clipped targets.",
        PrivacyWarning,
        stacklevel=stacklevel + 1,
    )
