"""Visualisation of the per-example Fisher information loss (eta) of a FIL estimator."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..utils._deprecation import DEPRECATED, renamed_parameter, warn_renamed
from ..utils._display import format_value, get_axes
from ..utils._validation import check_flag, errors_name
from ._audits._pipeline import eta as _pipeline_eta
from ._audits._pipeline import final_fil_estimator

KINDS = ("hist", "ecdf", "history")
_HISTORY_KEYS = ("max", "mean", "min")
#: Smallest width of the histogram's range, relative to the midpoint of the etas.
MIN_RELATIVE_RANGE = 1e-2
#: Largest number of histogram bins (each bin is an artist).
MAX_BINS = 10_000


def _check_kind(kind):
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}.")
    return kind


def _final_fil(estimator):
    return final_fil_estimator(estimator, "EtaDisplay")[1]


def _column_of(X, sf, n):
    """Values of column ``sf`` (name or position) of ``X`` (array or DataFrame)."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        if isinstance(sf, str):
            if sf not in X.columns:
                raise ValueError(f"sensitive_features={sf!r} is not a column of X; columns are "
                                 f"{list(X.columns)[:10]}.")
            values = X[sf].to_numpy()
        else:
            if not 0 <= sf < X.shape[1]:
                raise ValueError(f"sensitive_features={sf!r} is out of range for X with "
                                 f"{X.shape[1]} columns.")
            values = X.iloc[:, int(sf)].to_numpy()
    else:
        if isinstance(sf, str):
            raise ValueError(f"sensitive_features={sf!r} names a column, but X has no column "
                             "names; pass a "
                             "DataFrame or a column position.")
        A = np.asarray(X)
        if A.ndim != 2:
            raise ValueError(f"X must be 2-D to read the column sensitive_features={sf!r}; got "
                             "shape "
                             f"{A.shape}.")
        if not 0 <= sf < A.shape[1]:
            raise ValueError(f"sensitive_features={sf!r} is out of range for X with {A.shape[1]} "
                             "columns.")
        values = A[:, int(sf)]
    if values.shape[0] != n:
        raise ValueError(f"X has {values.shape[0]} rows but the estimator was trained on {n}; "
                         "pass the training data.")
    return values


def _training_column(estimator, final, sf):
    """Training values of column ``sf``: of the final step's input, or an original
    feature of a pipeline (its one-hot columns decoded to level names)."""
    from ..utils import resolve_columns
    from ..utils._pipeline import feature_columns

    engine = final._audit_engine()
    try:
        col = resolve_columns(sf, final.n_features_in_,
                              getattr(final, "feature_names_in_", None), param="sensitive_features")
        return engine.dense_columns(col)[:, 0]
    except ValueError:
        if estimator is final:
            raise
    try:
        cols = feature_columns(estimator, sf)
    except ValueError as exc:
        raise ValueError(f"sensitive_features={sf!r}: {exc} Or pass X= (the training frame) to "
                         "read the "
                         "column from it.") from None
    block = engine.dense_columns(cols)
    if cols.size == 1:
        return block[:, 0]
    from ..utils._pipeline import split_pipeline
    from ._audits._pipeline import _final_input_names

    names = _final_input_names(split_pipeline(estimator)[0], final)
    nonzero = block != 0
    if names is None or np.any(nonzero.sum(axis=1) > 1):
        raise ValueError(
            f"sensitive_features={sf!r} maps to {cols.size} columns of the final step that are "
            "not a one-hot "
            "block; pass X= (the training frame) to read the column from it."
        )
    level = [names[k].split("__", 1)[-1] for k in cols]
    prefix = f"{sf}_"
    level = [v[len(prefix):] if v.startswith(prefix) else v for v in level]
    out = np.array(level + ["(none)"], dtype=object)
    pick = np.where(nonzero.any(axis=1), np.argmax(nonzero, axis=1), len(level))
    return out[pick]


# what ``by_class=True`` passes on to the resolvers below (not a value users can pass)
_CLASS = object()


def _class_split(sensitive_features, by_class):
    """``sensitive_features`` to resolve, with ``by_class`` (and the old ``"class"``)."""
    if not isinstance(by_class, bool | np.bool_):
        raise TypeError(f"by_class must be True or False; got {by_class!r}.")
    if isinstance(sensitive_features, str) and sensitive_features == "class":
        warn_renamed('EtaDisplay.from_estimator: sensitive_features="class" was replaced by '
                     "by_class=True", new="by_class=True", stacklevel=4,
                     reason="The class is the label, not a sensitive attribute.")
        if by_class:
            raise ValueError('Pass by_class=True or the deprecated sensitive_features="class", '
                             "not both.")
        return _CLASS
    if by_class:
        if sensitive_features is not None:
            raise ValueError("by_class=True splits the examples by class label; it cannot be "
                             "combined with sensitive_features. Pass one of them.")
        return _CLASS
    return sensitive_features


def _labels(values):
    """Group labels and the per-row group code of a 1-D array of categorical values."""
    values = np.asarray(values)
    if values.dtype == object:
        text = np.array(["nan" if v is None or (isinstance(v, float) and np.isnan(v))
                         else str(v) for v in values], dtype=object)
        uniq, codes = np.unique(text.astype(str), return_inverse=True)
        return [str(u) for u in uniq], codes
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise ValueError("sensitive_features holds NaN or infinite values; fill or drop them "
                         "before "
                         "grouping.")
    if values.dtype.kind == "c":
        raise ValueError("sensitive_features must hold labels (numbers, strings, booleans); got "
                         "dtype "
                         f"{values.dtype}.")
    uniq, codes = np.unique(values, return_inverse=True)
    return [format_value(u.item() if hasattr(u, "item") else u) for u in uniq], codes


class EtaDisplay:
    """Per-example Fisher information loss of a FIL estimator, or IRFIL's convergence.

    Create it with :meth:`from_estimator` (a fitted FIL/IRFIL estimator or a pipeline
    ending in one); the constructor takes precomputed values. The plot shows what the
    estimator reports: ``eta`` is the Cramér-Rao leakage of each training example under
    the FIL threat model of :class:`~sklearn_privacy.FILLinearRegression` (unbiased
    adversary knowing every other training value), not a differential privacy bound.

    Parameters
    ----------
    eta : ndarray of shape (n_samples,)
        Per-example eta (``kind`` "hist" or "ecdf").
    group_codes : ndarray of int of shape (n_samples,) or None, default=None
        Group of each eta value, as an index into ``group_names``: :meth:`from_estimator`
        sets it from the values of ``sensitive_features`` or, with ``by_class=True``, from
        the class labels; any split can be given (two models' etas side by side, say).
    group_names : list of str or None, default=None
        Legend label of each group code (None: a single, unnamed group).
    top_k_index : ndarray of int or None, default=None
        Rows to mark (the most leaking ones).
    history : dict of ndarray or None, default=None
        IRFIL ``eta_history_`` (``kind="history"``).
    kind : {"hist", "ecdf", "history"}, default="hist"
        What :meth:`plot` draws: a histogram or empirical CDF of ``eta`` per group, or
        the IRFIL ``history``.
    name : str or None, default=None
        Default title of the plot (as ``name`` of scikit-learn's ``RocCurveDisplay``).
    top_k_labels : list of str or None, default=None
        Label of each ``top_k_index`` row (None: its position).
    groups : ndarray of int of shape (n_samples,)
        Deprecated old name of ``group_codes``; removed in 0.4.

        .. deprecated:: 0.3
           Use ``group_codes`` (``groups`` names multicalibration's subpopulations).

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    bars_ : dict of str -> BarContainer
        One histogram per group (``kind="hist"``).
    counts_ : dict of str -> ndarray
        Bar heights of each histogram.
    bin_edges_ : ndarray
        Shared bin edges (``kind="hist"``): the range of the finite etas, widened to 1 %
        of their midpoint when narrower (near-constant etas, as IRFIL equalises them).
    lines_ : dict of str -> Line2D
        ECDF per group (``kind="ecdf"``) or history statistic (``kind="history"``).
    band_ : PolyCollection or None
        mean +- std of the history (``kind="history"``).
    top_k_markers_ : PathCollection or None
        Markers of the ``top_k_index`` rows.
    top_k_texts_ : list of Annotation
        One label per marked row (the frame's index label when ``X`` is a DataFrame,
        else the row position), stacked by rank so that they never overlap.

    See Also
    --------
    sklearn_privacy.FILLinearRegression.eta : The values shown.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_privacy import FILLogisticRegression
    >>> from sklearn_privacy.fil import EtaDisplay
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = FILLogisticRegression(random_state=0).fit(X, y)
    >>> disp = EtaDisplay.from_estimator(clf, y=y, by_class=True, top_k=3)
    >>> sorted(disp.counts_), int(sum(c.sum() for c in disp.counts_.values()))
    (['0', '1'], 200)
    """

    def __init__(self, eta=None, *, group_codes=None, group_names=None, top_k_index=None,
                 history=None, kind="hist", name=None, top_k_labels=None, groups=DEPRECATED):
        with errors_name("eta"):
            self.eta = None if eta is None else np.asarray(eta, dtype=float)
        group_codes = renamed_parameter(group_codes, groups, old="groups", new="group_codes",
                                        where="EtaDisplay")
        self.group_codes = None if group_codes is None else np.asarray(group_codes)
        self.group_names = group_names
        self.top_k_index = None if top_k_index is None else np.asarray(top_k_index)
        self.top_k_labels = None if top_k_labels is None else [str(v) for v in top_k_labels]
        self.history = history
        self.kind = kind
        self.name = name

    # ------------------------------------------------------------------ constructors
    @property
    def groups(self):
        """Deprecated old name of ``group_codes`` (removed in 0.4)."""
        warn_renamed("EtaDisplay.groups was renamed EtaDisplay.group_codes",
                     new="EtaDisplay.group_codes")
        return self.group_codes

    @classmethod
    def from_estimator(cls, estimator, *, kind="hist", sensitive_features=None, X=None, y=None,
                       columns=None,
                       constrained=False, top_k=5, bins=30, log_scale=False, ax=None,
                       name=None, wrt=None, by_class=False):
        """Plot the per-example eta (or the IRFIL history) of a fitted estimator.

        Parameters
        ----------
        estimator : fitted FIL/IRFIL estimator, or a Pipeline ending in one, or an MLP audit
            The estimator whose audit state is plotted (``kind="history"`` needs an
            IRFIL estimator). The result of :func:`sklearn_privacy.fil.audit` on an
            ``MLPClassifier`` / ``MLPRegressor`` plots its raw-input etas (``by`` a
            column then needs ``X``, ``by_class=True`` needs ``y``).
        kind : {"hist", "ecdf", "history"}, default="hist"
            ``"hist"``: histogram of eta per group (shared bins); ``"ecdf"``: empirical
            CDF per group; ``"history"``: IRFIL's ``eta_history_`` (max, mean, min and
            mean +- std of the equalised eta per reweighting iteration).
        sensitive_features : None, array-like of shape (n_samples,), str or int, \
                default=None
            Split the examples by a sensitive attribute: a boolean mask (``True``: "in
            group"); an array of its values (one per training row); or a column -- a name
            or position of ``X`` when ``X`` is given (categorical values work), otherwise
            of the final FIL estimator's input (``feature_names_in_`` or position) or, for
            a pipeline, an original input feature traced through the fitted steps (a
            one-hot encoded feature is decoded to its level names).
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            The training data: to read the column ``sensitive_features``, and for a
            pipeline the raw rows of the raw-input eta (see ``wrt``).
        y : array-like of shape (n_samples,), default=None
            Training labels, for ``by_class=True``.
        columns : None or columns, default=None
            Attribute-level eta of these columns (as in :func:`sklearn_privacy.fil.eta`,
            original feature names through a pipeline); ``None``: example-level eta.
        constrained : bool, default=False
            As in :func:`sklearn_privacy.fil.eta`.
        top_k : int, default=5
            Mark and label the ``top_k`` most leaking rows (0: none). Labels are the
            index labels of ``X`` when it is a DataFrame of the training rows, else row
            positions.
        bins : int in [1, 10000], default=30
            Number of histogram bins, shared by the groups (``kind="hist"``).
        log_scale : bool, default=False
            Log-scaled eta axis (and log-spaced bins).
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        name : str, default=None
            Title (default: the estimator's class name).
        wrt : {None, "raw", "features"}, default=None
            For a pipeline, eta of the raw inputs or of the features entering the final
            step, as in :func:`sklearn_privacy.fil.eta` (the default: the raw inputs when
            every step has a known derivative; a non-linear map needs ``X``).
        by_class : bool, default=False
            Split the examples by class label instead (``y`` if given, else the labels the
            classifier was trained on); not with ``sensitive_features``. Replaces
            ``sensitive_features="class"``, deprecated in 0.3 (it warns; removed in
            0.4): the class is the label, not a sensitive attribute.

        Returns
        -------
        display : EtaDisplay
            The display, plotted (``ax_``, ``figure_`` and the artists set).

        Raises
        ------
        TypeError
            Not a FIL estimator.
        ValueError
            Unknown ``kind``, ``sensitive_features`` of the wrong length or naming an
            unknown column,
            ``by_class=True`` for a regressor without ``y``, ``kind="history"`` on a
            non-IRFIL estimator, ``by_class=True`` with ``sensitive_features``.
        """
        kind = _check_kind(kind)
        sensitive_features = _class_split(sensitive_features, by_class)
        from ._mlp._audit import AuditedMLP

        if isinstance(estimator, AuditedMLP):
            return cls._from_mlp_audit(estimator, kind, sensitive_features, X, y, columns,
                                       constrained, top_k, bins, log_scale, ax, name)
        final = _final_fil(estimator)
        check_is_fitted(final)
        name = type(final).__name__ if name is None else name
        if kind == "history":
            history = getattr(final, "eta_history_", None)
            if history is None:
                raise ValueError(
                    "kind='history' needs an IRFIL estimator (IRFILLinearRegression or "
                    f"IRFILLogisticRegression) with eta_history_; {name} has none."
                )
            disp = cls(history=history, kind=kind, name=name)
            return disp.plot(ax=ax)
        if isinstance(top_k, bool | np.bool_) or not isinstance(top_k, Integral) or top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0; got {top_k!r}.")
        raw_rows = X if hasattr(estimator, "steps") else None
        values = np.asarray(_pipeline_eta(estimator, columns=columns, per_example=True,
                                          constrained=constrained, wrt=wrt, X=raw_rows),
                            dtype=float)
        n = values.size
        groups, names = cls._resolve_by(estimator, final, sensitive_features, X, y, n)
        order = np.argsort(-values, kind="stable")
        labels = None
        index = getattr(X, "index", None)
        if index is not None and len(index) == n and hasattr(X, "columns"):
            labels = [str(v) for v in np.asarray(index)[order[:top_k]]]
        disp = cls(values, group_codes=groups, group_names=names, top_k_index=order[:top_k],
                   top_k_labels=labels, kind=kind, name=name)
        return disp.plot(ax=ax, bins=bins, log_scale=log_scale)

    @classmethod
    def _from_mlp_audit(cls, audited, kind, by, X, y, columns, constrained, top_k, bins,
                        log_scale, ax, name):
        """The per-example eta of an MLP audit (raw inputs; every training row)."""
        if kind == "history" or constrained:
            raise ValueError("EtaDisplay of an MLP audit: kind='history' and constrained "
                             "do not apply.")
        if isinstance(top_k, bool | np.bool_) or not isinstance(top_k, Integral) or top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0; got {top_k!r}.")
        values = np.asarray(audited.eta(columns=columns, per_example=True), dtype=float)
        n = values.size
        groups = names = None
        if by is not None:
            if by is _CLASS:
                if y is None:
                    raise ValueError("by_class=True on an MLP audit needs the labels: pass y.")
                labels = np.asarray(y)
                if labels.shape != (n,):
                    raise ValueError(f"y must have one label per audited row ({n}).")
                names, groups = _labels(labels)
            elif isinstance(by, str | Integral) and not isinstance(by, bool | np.bool_):
                if X is None:
                    raise ValueError("sensitive_features=<column> on an MLP audit needs the "
                                     "training rows: pass X.")
                names, groups = _labels(_column_of(X, by, n))
            else:
                groups, names = cls._resolve_by(None, None, by, None, None, n)
        order = np.argsort(-values, kind="stable")
        labels = None
        index = getattr(X, "index", None)
        if index is not None and len(index) == n and hasattr(X, "columns"):
            labels = [str(v) for v in np.asarray(index)[order[:top_k]]]
        disp = cls(values, group_codes=groups, group_names=names, top_k_index=order[:top_k],
                   top_k_labels=labels, kind=kind,
                   name=type(audited._source[1]).__name__ if name is None else name)
        return disp.plot(ax=ax, bins=bins, log_scale=log_scale)

    @classmethod
    def from_history(cls, estimator, *, ax=None, name=None):
        """Shortcut for ``from_estimator(estimator, kind="history")``.

        Parameters
        ----------
        estimator : fitted IRFIL estimator, or a Pipeline ending in one
            The estimator whose ``eta_history_`` is plotted.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        name : str, default=None
            Title (default: the estimator's class name).

        Returns
        -------
        display : EtaDisplay
            The display, plotted (``ax_``, ``figure_`` and the artists set).
        """
        return cls.from_estimator(estimator, kind="history", ax=ax, name=name)

    @staticmethod
    def _resolve_by(estimator, final, sf, X, y, n):
        if sf is None:
            return None, None
        if sf is _CLASS:
            if y is None:
                classes = getattr(final, "classes_", None)
                if classes is None:
                    raise ValueError("by_class=True needs class labels: the estimator is a "
                                     "regressor; pass y, or a mask/column as "
                                     "sensitive_features.")
                labels = np.asarray(classes)[final._audit_engine().y.astype(int)]
            else:
                labels = np.asarray(y)
                if labels.ndim != 1 or labels.shape[0] != n:
                    raise ValueError(f"y must be 1-D with one label per training row ({n}); "
                                     f"got shape {labels.shape}.")
            names, codes = _labels(labels)
            return codes, names
        if isinstance(sf, str | Integral) and not isinstance(sf, bool | np.bool_):
            if X is not None:
                values = _column_of(X, sf, n)
            else:
                values = _training_column(estimator, final, sf)
            names, codes = _labels(values)
            return codes, names
        arr = np.asarray(sf)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(
                "sensitive_features must be a column name/position, or an array with "
                "one entry per "
                f"training row ({n}); got {type(sf).__name__} of shape {arr.shape}."
            )
        if arr.dtype == bool:
            return (~arr).astype(int), ["in group", "rest"]
        return _labels(arr)[::-1]

    # ------------------------------------------------------------------ drawing
    def plot(self, ax=None, *, bins=30, log_scale=False, name=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw into (a new figure when None).
        bins : int, default=30
            Number of shared histogram bins (``kind="hist"``).
        log_scale : bool, default=False
            Log-scaled eta axis.
        name : str, default=None
            Title (default: the display's ``name``).

        Returns
        -------
        display : EtaDisplay
            ``self``, with ``ax_``, ``figure_`` and the artists set.
        """
        kind = _check_kind(self.kind)
        log_scale = check_flag(log_scale, "log_scale")
        if (isinstance(bins, bool | np.bool_) or not isinstance(bins, Integral)
                or not 1 <= bins <= MAX_BINS):
            raise ValueError(f"bins must be an integer in [1, {MAX_BINS}]; got {bins!r}.")
        ax, fig = get_axes(ax, f"{type(self).__name__}.plot")
        self.bars_, self.counts_, self.lines_ = {}, {}, {}
        self.band_ = self.top_k_markers_ = self.bin_edges_ = None
        self.top_k_texts_ = []
        title = name if name is not None else self.name
        if kind == "history":
            self._plot_history(ax)
        else:
            self._plot_eta(ax, kind, bins, log_scale)
        if title:
            ax.set_title(title)
        self.ax_, self.figure_ = ax, fig
        return self

    def _split(self):
        codes = self.group_codes
        if codes is None:
            return [("all", self.eta)]
        names = self.group_names
        return [(str(names[g]) if names is not None else str(g), self.eta[codes == g])
                for g in np.unique(codes)]

    def _plot_eta(self, ax, kind, bins, log_scale):
        if self.eta is None or self.eta.size == 0:
            raise ValueError("EtaDisplay has no eta values to plot.")
        eta = self.eta
        if eta.ndim != 1 or np.isnan(eta).any():
            raise ValueError(f"eta must be 1-D (one value per example) without NaN; got "
                             f"shape {eta.shape}"
                             + (" with NaN." if eta.ndim == 1 else "."))
        codes = self.group_codes
        if codes is not None and codes.shape != eta.shape:
            raise ValueError(f"group_codes must have one entry per eta value "
                             f"({eta.size}); got shape {codes.shape}.")
        # rows a Nystroem step publishes verbatim have eta = inf: counted, not drawn
        finite = np.isfinite(eta)
        if not finite.any():
            raise ValueError("every eta is infinite (training rows published verbatim by "
                             "the preprocessing): there is no finite value to draw.")
        parts = []  # (key, legend label, finite values, number of examples)
        for key, values in self._split():
            n_inf = int(np.sum(~np.isfinite(values)))
            label = f"{key} (n={values.size}" + (
                f"; {n_inf} with eta = inf not drawn)" if n_inf else ")")
            parts.append((key, label, values[np.isfinite(values)], values.size))
        eta = eta[finite]
        if kind == "hist":
            lo, hi = float(eta.min()), float(eta.max())
            if log_scale and lo <= 0:
                raise ValueError("log_scale=True needs positive eta values.")
            mid = 0.5 * (lo + hi)
            if mid > 0 and hi - lo < MIN_RELATIVE_RANGE * mid:
                # near-constant eta (equalised by IRFIL): bins of a visible width
                # around the values instead of a sliver of width (hi - lo) / bins
                lo = mid * (1.0 - MIN_RELATIVE_RANGE / 2)
                hi = mid * (1.0 + MIN_RELATIVE_RANGE / 2)
            if log_scale:
                edges = np.geomspace(lo, hi, bins + 1)
            else:
                edges = np.histogram_bin_edges(eta, bins=bins, range=(lo, hi))
            self.bin_edges_ = edges
            for key, label, values, _ in parts:
                counts, _, bars = ax.hist(values, bins=edges, alpha=0.6, label=label)
                self.counts_[key] = np.asarray(counts)
                self.bars_[key] = bars
            ax.set_ylabel("number of examples")
        else:
            for key, label, values, size in parts:
                xs = np.sort(values)
                ys = np.arange(1, xs.size + 1) / size  # of every example, inf included
                (line,) = ax.step(xs, ys, where="post", label=label)
                self.lines_[key] = line
            ax.set_ylabel("fraction of examples with eta <= x")
            ax.set_ylim(0, 1.02)
        if log_scale:
            ax.set_xscale("log")
        ax.set_xlabel("per-example eta (Fisher information loss)")
        top = self.top_k_index
        labels = self.top_k_labels
        if top is not None and top.size:
            if labels is None or len(labels) != top.size:
                labels = [str(int(i)) for i in top]
            drawn = np.isfinite(self.eta[top])
            top, labels = top[drawn], [lab for lab, k in zip(labels, drawn, strict=True) if k]
        if top is not None and top.size:
            xs = self.eta[top]
            self.top_k_markers_ = ax.scatter(
                xs, np.full(xs.size, 0.03), transform=ax.get_xaxis_transform(), marker="v",
                color="crimson", zorder=3, label=f"top {top.size} rows")
            # one label per marker, stacked by rank so that labels of close values never
            # overlap; a thin line joins each label to its marker
            self.top_k_texts_ = []
            for rank, (label, x) in enumerate(zip(labels, xs, strict=True)):
                txt = ax.annotate(
                    label, (x, 0.03), xycoords=ax.get_xaxis_transform(),
                    xytext=(x, 0.12 + 0.07 * rank), textcoords=ax.get_xaxis_transform(),
                    fontsize=7, color="crimson", ha="center", va="bottom",
                    arrowprops={"arrowstyle": "-", "color": "crimson", "lw": 0.5},
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                          "alpha": 0.8})
                self.top_k_texts_.append(txt)
        ax.legend(fontsize=8)

    def _plot_history(self, ax):
        h = self.history
        if not isinstance(h, dict) or any(k not in h for k in _HISTORY_KEYS):
            raise ValueError("history must be IRFIL's eta_history_ (a dict with 'max', "
                             "'mean', 'min' and 'std').")
        t = np.arange(len(h["mean"]))
        for key, style in zip(_HISTORY_KEYS, ("^-", "o-", "v-"), strict=True):
            (line,) = ax.plot(t, h[key], style, label=key)
            self.lines_[key] = line
        if "std" in h:
            mean, std = np.asarray(h["mean"]), np.asarray(h["std"])
            # an explicit ``where``: matplotlib 3.6 fails on the default for plain arrays
            self.band_ = ax.fill_between(t, mean - std, mean + std,
                                         where=np.ones(len(t), dtype=bool), alpha=0.2,
                                         label="mean +- std")
        ax.set_xlabel("reweighting iteration (0 = unweighted fit)")
        ax.set_ylabel("equalised eta")
        if len(t) < 20:
            ax.set_xticks(t)
        ax.legend(fontsize=8)
