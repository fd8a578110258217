"""Helpers the report's sections share: number formats, figures, chunked queries."""

from __future__ import annotations

import io

import numpy as np

from ..attacks._validation import is_frame, n_rows, take_rows

#: rows per chunk when the model is queried on many rows (bounded memory)
_CHUNK = 100_000
#: most rows per side of the two-sample test and of the attribute attacks
_TEST_ROWS = 5_000
#: a numeric column with more distinct values is attacked by regression, not by levels
_MAX_LEVELS = 20


def _fmt(x, digits=3):
    if isinstance(x, (float, np.floating)):
        return "inf" if np.isinf(x) else f"{x:.{digits}g}"
    return str(x)


def _figure_png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _coarse(x):
    """A per-person figure (private page only): two significant digits."""
    return f"{float(x):.2g}"


def _predict_chunks(est, X, method="predict"):
    """``est.<method>`` on the rows of ``X`` in chunks of ``_CHUNK`` (bounded memory)."""
    n = n_rows(X)
    fn = getattr(est, method)
    out = [np.asarray(fn(take_rows(X, np.arange(i, min(i + _CHUNK, n)))))
           for i in range(0, n, _CHUNK)]
    return np.concatenate(out) if out else np.zeros(0)


def _column_of(X, c):
    if is_frame(X):
        return X[c].to_numpy() if c in X.columns else X.iloc[:, int(c)].to_numpy()
    if hasattr(X, "tocsr"):
        return X[:, [int(c)]].toarray().ravel()
    return np.asarray(X)[:, int(c)]


def _concat(A, B):
    if is_frame(A):
        import pandas as pd

        return pd.concat([A, B], axis=0, ignore_index=True)
    if hasattr(A, "tocsr"):
        import scipy.sparse as sp

        return sp.vstack([A, B], format="csr")
    return np.concatenate([np.asarray(A), np.asarray(B)])


def _is_numeric_attribute(values):
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return False
    return np.unique(v[np.isfinite(v)]).size > _MAX_LEVELS
