"""Private copies and row scaling of the design matrix, shared by the FIL and DP estimators."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._bounds import dense_row_norms, record_bounding, row_scale_factors


def _buffers(a):
    """Memory buffers of an array-like input (None when they cannot be enumerated)."""
    if sp.issparse(a):
        return [np.asarray(getattr(a, name)) for name in ("data", "indices", "indptr", "row",
                                                           "col", "offsets")
                if isinstance(getattr(a, name, None), np.ndarray)]
    if isinstance(a, np.ndarray):
        return [a]
    if hasattr(a, "iloc") and hasattr(a, "columns"):  # pandas DataFrame
        out = []
        for j in range(a.shape[1]):
            col = a.iloc[:, j].to_numpy()
            if isinstance(col, np.ndarray):
                out.append(col)
        return out
    if isinstance(a, (list, tuple)):
        return []
    return None


def private_copy(validated, original):
    """``validated`` unless it may share memory with the caller's ``original``, else a copy.

    ``validate_data`` returns the caller's own array when it is already float64 (and a
    view of a DataFrame's block under copy-on-write); the audit state must not see later
    in-place changes of the caller's data (and the row scaling of ``data_norm`` must never
    rescale the caller's array), so such arrays are copied -- once; so is the output for
    any container whose buffers are unknown (e.g. an ``xarray.DataArray``). Arrays that
    validation converted (ints, lists, mixed frames) are already private.
    """
    if sp.issparse(validated):
        validated = sp.csr_matrix(validated)  # the engine's layout (no copy when CSR)
    mine = _buffers(validated)
    theirs = _buffers(original)
    if theirs is None:
        # an unknown container (xarray.DataArray, a memory view, ...): its buffers cannot
        # be enumerated, so validate_data's output may be the caller's own memory even
        # when it owns its data (np.asarray of a DataArray is its .values): copy
        shared = True
    else:
        shared = any(np.may_share_memory(m, t) for m in mine for t in theirs)
    if not shared:
        return validated
    if sp.issparse(validated):
        return validated.copy()
    return np.array(validated, dtype=np.float64, order="C", copy=True)


def _scale_rows(X, data_norm, owner=None):
    """Rows of ``X`` with L2 norm above ``data_norm`` scaled to it, silently.

    ``X`` is the estimator's private copy (dense) or a private CSR matrix. The number of
    scaled rows goes to ``owner``'s private channel (:func:`._bounds.record_bounding`),
    never to a warning: whether a row exceeds the bound depends on that row.
    """
    if sp.issparse(X):
        Xa = abs(X)
        m = np.asarray(Xa.max(axis=1).todense()).ravel()
        safe = np.where(m > 0, m, 1.0)
        Y = sp.diags(1.0 / safe) @ X
        norms = m * np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel())
    else:
        norms = dense_row_norms(X)
    over = norms > data_norm
    if owner is not None:   # rows above the bound by more than rounding
        record_bounding(owner, rows_scaled=np.count_nonzero(norms > data_norm * (1 + 1e-12)))
    if not np.any(over):
        return X
    factor = row_scale_factors(norms, data_norm)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(factor) @ X)
    X *= factor[:, None]
    return X
