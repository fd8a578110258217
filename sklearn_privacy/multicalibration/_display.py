"""Per-group reliability diagram, before and after multicalibration."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..utils import _buckets
from ..utils._display import check_matplotlib_support, get_axes
from ..utils._groups import membership_matrix

STAGES = ("before", "after")


def _vector(values, name):
    if np.asarray(values).dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers; got complex values.")
    return _buckets._check_vector(values, name)


def _check_probabilities(p, name, n=None):
    p = _vector(p, name)
    if n is not None and p.size != n:
        raise ValueError(f"{name} has {p.size} entries but y_true has {n}.")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"{name} must hold finite probabilities in [0, 1].")
    return p


def reliability_cells(y, p, G, n_bins, min_size=1):
    """Per group: (mean predicted, mean observed, size) of every occupied score bucket.

    The buckets are those of :func:`~sklearn_privacy.metrics.multicalibration_error` and
    of :class:`~sklearn_privacy.PrivateMulticalibrator` (equal width, ``n_bins``); cells
    with fewer than ``min_size`` members are left out.
    """
    buckets = _buckets.score_buckets(p, n_bins)
    pred = _buckets.cell_statistics(buckets, p, G)
    obs = _buckets.cell_statistics(buckets, y, G)
    out = []
    for (codes, p_sum, size), (_, y_sum, _) in zip(pred, obs, strict=True):
        keep = size >= min_size
        out.append({"bucket": codes[keep], "predicted": p_sum[keep] / size[keep],
                    "observed": y_sum[keep] / size[keep], "size": size[keep]})
    return out


class MulticalibrationDisplay:
    """Reliability diagram per group: mean predicted vs observed rate in each score bucket.

    A model is multicalibrated when, in every group and every bucket of predicted
    probability, the observed rate of positives matches the mean prediction: every point
    lies on the diagonal. Create it with :meth:`from_estimator` (a fitted
    :class:`~sklearn_privacy.PrivateMulticalibrator`: its base model "before", the
    multicalibrated model "after", on the groups it was fitted with) or
    :meth:`from_predictions`. Marker areas are proportional to the cell sizes. Up to four
    groups share one axes (legend beside it); beyond, each group gets a small axes of its
    own, titled with its largest cell error before and after (``layout``), and
    ``worst=k`` keeps the ``k`` groups with the largest error after post-processing. The points
    are computed on the rows passed (use held-out rows to judge generalisation); they
    release the exact cell means of those rows and carry no privacy guarantee.

    Parameters
    ----------
    cells : dict of str -> list of dict
        ``cells[stage][g]`` holds arrays ``bucket``, ``predicted``, ``observed``,
        ``size`` (stage "before" and/or "after").
    group_names : list of str
        Readable name of each group, in the order of the lists in ``cells``.
    n_bins : int
        Number of equal-width probability buckets on [0, 1].

    Attributes
    ----------
    lines_ : dict of (str, str) -> Line2D
        Line joining the cells of a group, keyed by (group name, stage).
    scatters_ : dict of (str, str) -> PathCollection
        Markers of the cells (area proportional to the cell size), with the same keys.
    diagonal_ : Line2D
        The diagonal of perfect calibration.
    ax_ : matplotlib Axes
        Axes with the diagram (the first one of a grid).
    axes_ : ndarray of matplotlib Axes
        Every axes drawn on (one for the overlay, one per group for the grid).
    figure_ : matplotlib Figure
        Figure containing the axes.

    See Also
    --------
    sklearn_privacy.PrivateMulticalibrator : Differentially private multicalibration.
    sklearn_privacy.metrics.multicalibration_error : Worst calibration error over the
        same cells.
    sklearn.calibration.CalibrationDisplay : Calibration curve of the whole population.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_privacy.multicalibration import MulticalibrationDisplay
    >>> y = np.array([0, 1, 0, 1, 1, 1]); p = np.array([.1, .2, .3, .7, .8, .9])
    >>> disp = MulticalibrationDisplay.from_predictions(y, p, n_bins=2)
    >>> disp.cells["after"][0]["observed"].tolist(), disp.cells["after"][0]["size"].tolist()
    ([0.333..., 1.0], [3, 3])
    """

    def __init__(self, cells, *, group_names, n_bins):
        self.cells = cells
        self.group_names = list(group_names)
        self.n_bins = n_bins

    @classmethod
    def from_predictions(cls, y_true, y_prob, groups=None, *, y_prob_before=None,
                         group_names=None, n_bins=10, min_size=1, show_groups=None, worst=None,
                         layout="auto", ax=None):
        """Reliability per group of probabilities (and optionally of earlier ones).

        Parameters
        ----------
        y_true : array-like of shape (n_samples,), values in {0, 1}
            True labels (1: positive class).
        y_prob : array-like of shape (n_samples,)
            Probabilities of the positive class ("after").
        groups : array-like of bool of shape (n_samples, n_groups), default=None
            Membership matrix (None: the whole population only).
        y_prob_before : array-like of shape (n_samples,), default=None
            Probabilities before post-processing (drawn dashed with open markers).
        group_names : sequence of str, default=None
            Readable name of each group (None: built from the groups).
        n_bins : int, default=10
            Number of equal-width probability buckets on [0, 1].
        min_size : int, default=1
            Cells with fewer members are not drawn.
        show_groups : sequence of int or str, default=None
            Groups to draw (positions or names; default: all).
        worst : int or None, default=None
            Draw only this many groups, those with the largest cell error.
        layout : {"auto", "overlay", "grid"}, default="auto"
            One axes for all groups, or small multiples (one per group); "auto" overlays
            up to 4 groups. See :meth:`plot`.
        ax : matplotlib Axes, array of Axes or None, default=None
            Axes to draw on (None: a new figure).

        Returns
        -------
        display : MulticalibrationDisplay
            The display, with the diagram drawn.

        Raises
        ------
        ValueError
            Labels other than 0/1, probabilities outside [0, 1], lengths that differ, a
            malformed membership matrix or ``group_names`` of the wrong length.
        """
        y = _vector(y_true, "y_true")
        if y.size == 0:
            raise ValueError("y_true is empty; need at least one sample.")
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("y_true must be binary with values 0 and 1.")
        n_bins = _buckets.check_n_bins(n_bins)
        min_size = _buckets.check_min_size(min_size)
        G = _buckets._check_groups(groups, y.size)
        if group_names is None:
            group_names = (["all"] if groups is None else
                           [f"group {g}" for g in range(G.shape[1])])
        group_names = [str(g) for g in group_names]
        if len(group_names) != G.shape[1]:
            raise ValueError(f"group_names has {len(group_names)} entries but groups has "
                             f"{G.shape[1]} columns.")
        cells = {}
        if y_prob_before is not None:
            before = _check_probabilities(y_prob_before, "y_prob_before", y.size)
            cells["before"] = reliability_cells(y, before, G, n_bins, min_size)
        after = _check_probabilities(y_prob, "y_prob", y.size)
        cells["after"] = reliability_cells(y, after, G, n_bins, min_size)
        disp = cls(cells, group_names=group_names, n_bins=n_bins)
        return disp.plot(ax=ax, show_groups=show_groups, worst=worst, layout=layout)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, sensitive_features=None, min_size=1,
                       show_groups=None, worst=None, layout="auto", ax=None):
        """Reliability of a fitted PrivateMulticalibrator and of its base model.

        Parameters
        ----------
        estimator : fitted :class:`~sklearn_privacy.PrivateMulticalibrator`
            "before" is its base model ``estimator_``, "after" the multicalibrated
            predictions; the groups are its ``groups_`` (the first is the whole
            population) and the buckets its ``n_bins``.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to evaluate (passed to the models untouched).
        y : array-like of shape (n_samples,)
            Their labels (``estimator.classes_``).
        sensitive_features : array-like or DataFrame, default=None
            Required if and only if the multicalibrator was fitted with them.
        min_size : int, default=1
            Cells with fewer members are not drawn.
        show_groups : sequence of int or str, default=None
            Groups to draw (positions in ``estimator.groups_`` or names; default: all).
        worst : int or None, default=None
            Draw only this many groups, those with the largest cell error.
        layout : {"auto", "overlay", "grid"}, default="auto"
            One axes for all groups, or small multiples (one per group); "auto" overlays
            up to 4 groups. See :meth:`plot`.
        ax : matplotlib Axes, array of Axes or None, default=None
            Axes to draw on (None: a new figure).

        Returns
        -------
        display : MulticalibrationDisplay
            The display, with the base model ("before") and the multicalibrated model
            ("after") drawn.
        """
        from ._multicalibrator import PrivateMulticalibrator

        if not isinstance(estimator, PrivateMulticalibrator):
            raise TypeError(f"MulticalibrationDisplay.from_estimator needs a fitted "
                            f"PrivateMulticalibrator; got {type(estimator).__name__}. For "
                            "another model use from_predictions(y, model.predict_proba(X)"
                            "[:, 1], membership_matrix(groups, X)).")
        check_is_fitted(estimator, "updates_")
        classes = np.asarray(estimator.classes_)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}.")
        if not np.all(np.isin(y, classes)):
            outside = int(np.count_nonzero(~np.isin(y, classes)))
            raise ValueError(f"y holds {outside} label(s) outside the estimator's "
                             f"{classes.size} classes_; pass labels from classes_.")
        y01 = (y == classes[1]).astype(int)
        after = estimator.predict_proba(X, sensitive_features=sensitive_features)[:, 1]
        before = np.clip(np.asarray(estimator.estimator_.predict_proba(X), float)[:, 1], 0, 1)
        Z = X if sensitive_features is None else sensitive_features
        if sensitive_features is not None and np.ndim(sensitive_features) == 1:
            Z = np.asarray(sensitive_features).reshape(-1, 1)
        G = membership_matrix(estimator.groups_, Z)
        names = [g.name for g in estimator.groups_]
        return cls.from_predictions(y01, after, G, y_prob_before=before, group_names=names,
                                    n_bins=estimator.n_bins, min_size=min_size,
                                    show_groups=show_groups, worst=worst, layout=layout,
                                    ax=ax)

    def _selected(self, show_groups):
        if show_groups is None:
            return list(range(len(self.group_names)))
        if isinstance(show_groups, str | Integral):
            show_groups = [show_groups]
        out = []
        for g in show_groups:
            if isinstance(g, str):
                if g not in self.group_names:
                    raise ValueError(f"show_groups: unknown group {g!r}; groups are "
                                     f"{self.group_names}.")
                out.append(self.group_names.index(g))
            elif isinstance(g, Integral) and not isinstance(g, bool | np.bool_) \
                    and 0 <= g < len(self.group_names):
                out.append(int(g))
            else:
                raise ValueError(f"show_groups: {g!r} is neither a group name nor a position "
                                 f"in 0..{len(self.group_names) - 1}.")
        return out

    def group_errors(self, stage="after"):
        """Largest ``|observed - predicted|`` over the drawn cells of each group.

        Parameters
        ----------
        stage : {"after", "before"}, default="after"
            Which predictions.

        Returns
        -------
        errors : ndarray of shape (n_groups,)
            NaN for a group without any drawn cell.
        """
        if stage not in self.cells:
            raise ValueError(f"stage must be one of {sorted(self.cells)}; got {stage!r}.")
        return np.array([float(np.max(np.abs(c["observed"] - c["predicted"])))
                         if c["size"].size else np.nan for c in self.cells[stage]])

    def _ranked(self, selected, worst):
        if worst is None:
            return selected
        if isinstance(worst, bool | np.bool_) or not isinstance(worst, Integral) or worst < 1:
            raise ValueError(f"worst must be a positive integer (the number of groups with the "
                             f"largest cell error to draw) or None; got {worst!r}.")
        err = self.group_errors("after")
        key = np.where(np.isnan(err), -np.inf, err)
        order = sorted(selected, key=lambda g: -key[g])
        return order[:int(worst)]

    def plot(self, ax=None, *, show_groups=None, worst=None, layout="auto",
             max_marker_size=200.0):
        """Draw the reliability diagram.

        Parameters
        ----------
        ax : matplotlib Axes, array of Axes or None, default=None
            Axes to draw on (None: a new figure). A single Axes for ``layout="overlay"``;
            for the grid, an array with at least one Axes per drawn group.
        show_groups : sequence of int or str, default=None
            Groups to draw (default: all).
        worst : int or None, default=None
            Draw only the ``worst`` groups (among ``show_groups``) with the largest cell
            error ``|observed - predicted|`` after post-processing, worst first.
        layout : {"auto", "overlay", "grid"}, default="auto"
            ``"overlay"``: every group on one axes, legend beside it; ``"grid"``: small
            multiples, one axes per group titled with its name and largest cell error,
            shared axes; ``"auto"``: overlay for up to 4 drawn groups, grid beyond.
        max_marker_size : float, default=200.0
            Marker area (points^2) of the largest cell.

        Returns
        -------
        display : MulticalibrationDisplay
            The display itself, with ``lines_``, ``scatters_``, ``diagonal_``, ``ax_``,
            ``axes_`` and ``figure_`` set (``ax_`` is the first axes of a grid, ``axes_``
            the array of all axes, ``diagonal_`` the first axes' diagonal).
        """
        if layout not in ("auto", "overlay", "grid"):
            raise ValueError(f"layout must be 'auto', 'overlay' or 'grid'; got {layout!r}.")
        selected = self._ranked(self._selected(show_groups), worst)
        if layout == "auto":
            layout = "overlay" if len(selected) <= 4 else "grid"
        sizes = [c["size"].max() for stage in self.cells.values() for c in stage if c["size"].size]
        scale = max_marker_size / max(sizes) if sizes else 1.0
        self.lines_, self.scatters_ = {}, {}
        if layout == "overlay":
            if ax is None:
                check_matplotlib_support(f"{type(self).__name__}.plot")
                import matplotlib.pyplot as plt

                fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
            else:
                ax, fig = get_axes(ax, f"{type(self).__name__}.plot")
            (self.diagonal_,) = ax.plot([0, 1], [0, 1], "k:", lw=0.8,
                                        label="perfectly calibrated")
            for k, g in enumerate(selected):  # distinct colours for the drawn groups
                self._draw_group(ax, g, f"C{k % 10}", scale, with_label=True)
            self._frame(ax)
            which = ("" if worst is None else
                     f"\n{len(selected)} of {len(self.group_names)} groups with the largest "
                     "cell error after post-processing")
            ax.set_title(f"reliability per group ({self.n_bins} buckets; marker area = cell "
                         f"size){which}", fontsize=9)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                      borderaxespad=0.0)
            self.ax_, self.axes_, self.figure_ = ax, np.array([ax], dtype=object), fig
            return self
        axes, fig = self._grid_axes(ax, len(selected))
        for k, g in enumerate(selected):
            a = axes[k]
            (diag,) = a.plot([0, 1], [0, 1], "k:", lw=0.8)
            if k == 0:
                self.diagonal_ = diag
            self._draw_group(a, g, "C0", scale, with_label=False, before_color="0.45")
            parts = [f"{stage} {e:.2f}" for stage in STAGES if stage in self.cells
                     for e in [self.group_errors(stage)[g]] if np.isfinite(e)]
            name = self.group_names[g]
            name = name if len(name) <= 28 else name[:27] + "\u2026"
            a.set_title(f"{name}\nmax err {', '.join(parts) or 'n/a'}", fontsize=7.5)
            a.set_xlim(-0.02, 1.02)
            a.set_ylim(-0.02, 1.02)
            a.tick_params(labelsize=7)
        for a in axes[len(selected):]:
            a.set_visible(False)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color="k", ls=":", lw=0.8, label="perfectly calibrated")]
        if "before" in self.cells:
            handles.append(Line2D([], [], color="0.45", ls="--", marker="o", mfc="none",
                                  alpha=0.7, label="before (base model)"))
        handles.append(Line2D([], [], color="C0", ls="-", marker="o", label=(
            "after" if "before" in self.cells else "cells")))
        shown = "" if len(selected) == len(self.group_names) else (
            f"{len(selected)} of {len(self.group_names)} groups"
            + (" with the largest cell error; " if worst is not None else "; "))
        legend_kw = dict(handles=handles, fontsize=7.5, ncol=len(handles), frameon=False,
                         title=f"reliability per group: {shown}{self.n_bins} buckets, "
                               "marker area = cell size", title_fontsize=9)
        try:
            fig.legend(loc="outside upper center", **legend_kw)
        except ValueError:  # matplotlib < 3.7: no "outside" locations, anchor above
            fig.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), **legend_kw)
        fig.supxlabel("mean predicted probability in the bucket", fontsize=8)
        fig.supylabel("observed fraction of positives", fontsize=8)
        self.ax_, self.axes_, self.figure_ = axes[0], axes, fig
        return self

    def _grid_axes(self, ax, n):
        check_matplotlib_support(f"{type(self).__name__}.plot")
        if ax is None:
            import matplotlib.pyplot as plt

            ncols = min(4, max(1, n))
            nrows = -(-n // ncols)
            fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.5 * nrows + 0.6),
                                     sharex=True, sharey=True, squeeze=False,
                                     layout="constrained")
            return axes.ravel(), fig
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size < n or not all(hasattr(a, "plot") for a in axes):
            raise ValueError(
                f"layout='grid' draws {n} groups, one per axes: pass ax=None or an array of "
                f"at least {n} Axes (got {axes.size}); or use layout='overlay' with one Axes."
            )
        return axes, axes[0].figure

    def _draw_group(self, ax, g, color, scale, *, with_label, before_color=None):
        name = self.group_names[g]
        for stage in STAGES:
            if stage not in self.cells:
                continue
            c = self.cells[stage][g]
            before = stage == "before"
            col = before_color if before and before_color is not None else color
            label = None
            if with_label:
                label = f"{name} ({stage})" if len(self.cells) > 1 else name
            (line,) = ax.plot(c["predicted"], c["observed"], "--" if before else "-",
                              color=col, lw=0.9, alpha=0.6 if before else 0.9, label=label)
            sc = ax.scatter(c["predicted"], c["observed"], s=scale * c["size"],
                            facecolors="none" if before else col,
                            edgecolors=col, alpha=0.8, zorder=3)
            self.lines_[(name, stage)] = line
            self.scatters_[(name, stage)] = sc

    @staticmethod
    def _frame(ax):
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("mean predicted probability in the bucket")
        ax.set_ylabel("observed fraction of positives")
