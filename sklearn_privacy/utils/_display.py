"""Shared pieces of the Display objects (matplotlib is imported lazily, inside plot)."""

from __future__ import annotations

import numpy as np


def check_matplotlib_support(caller: str) -> None:
    """Raise an ImportError naming ``caller`` and the install command without matplotlib.

    (scikit-learn's helper of the same name is private API, hence this copy.)
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, an optional dependency of sklearn_privacy. "
            "Install it with `pip install matplotlib` or `pip install sklearn-privacy[plot]`."
        ) from exc


def get_axes(ax, caller: str):
    """``(ax, figure)``: the given axes, or a new figure with one axes.

    Raises an ImportError naming ``caller`` and the ``plot`` extra when matplotlib is not
    installed.
    """
    check_matplotlib_support(caller)
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        return ax, fig
    if not hasattr(ax, "plot") or not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}.")
    return ax, ax.figure


def format_value(value) -> str:
    """Compact label of a parameter value (``0.01``, ``1e-05``, ``'l2'``)."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    return str(value)


def check_names(names, n, param="names"):
    """A list of ``n`` labels (``None`` entries allowed) from ``names`` (None: all None)."""
    if names is None:
        return [None] * n
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if len(names) != n:
        raise ValueError(f"{param} must have one entry per result ({n}); got {len(names)}.")
    return names
