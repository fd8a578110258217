"""ROC curve of a membership inference attack on log-log axes."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.metrics import auc as _auc
from sklearn.metrics import roc_curve

from ..utils._display import check_names, get_axes
from ._membership import MembershipInferenceResult


def _check_levels(fpr_levels):
    levels = np.atleast_1d(np.asarray(fpr_levels, dtype=object))
    out = []
    for v in levels:
        if isinstance(v, bool | np.bool_) or not isinstance(v, Real) or not 0 < v < 1:
            raise ValueError(f"fpr_levels must be numbers in (0, 1); got {v!r}.")
        out.append(float(v))
    return tuple(out)


def _tpr_at(fpr, tpr, levels):
    """Largest TPR at FPR <= level (the library's convention, as in the results)."""
    return {lv: float(tpr[fpr <= lv].max()) if np.any(fpr <= lv) else 0.0 for lv in levels}


def _pct(level):
    return f"{100 * level:g}%"


class MembershipROCDisplay:
    """ROC curve of a membership attack, on log-log axes with the chance line.

    Low false-positive rates are what matter for membership inference (Carlini et al.,
    2022): an attack that identifies a few members with near certainty is a real leak
    even at an AUC close to 0.5. Create it with :meth:`from_result` (any
    :class:`~sklearn_privacy.attacks.MembershipInferenceResult`, including
    :class:`~sklearn_privacy.attacks.LiRAResult`), :meth:`from_results` (several results
    on one axes) or :meth:`from_predictions` (membership labels and scores).

    The curve is :func:`sklearn.metrics.roc_curve` of the scores on the result's
    *evaluation* rows (the members and non-members not used to choose thresholds), so
    its AUC equals ``result.auc``.

    Parameters
    ----------
    fpr : ndarray of shape (n_thresholds,)
        False positive rates of the ROC points (fraction of non-members flagged),
        increasing.
    tpr : ndarray of shape (n_thresholds,)
        True positive rates of the ROC points (fraction of members found).
    roc_auc : float or None, default=None
        Area under the ROC curve.
    tpr_at_fpr : dict of float -> float or None, default=None
        TPR at the chosen FPR levels (largest TPR at FPR <= level).
    name : str or None, default=None
        Curve label (the attack name).

    Attributes
    ----------
    line_ : Line2D
        The ROC curve.
    chance_level_ : Line2D or None
        The chance line TPR = FPR, or None when it is not drawn.
    ax_ : matplotlib Axes
        Axes with the curve.
    figure_ : matplotlib Figure
        Figure containing the axes.

    See Also
    --------
    sklearn_privacy.attacks.membership_inference : Membership attack whose result is shown.
    sklearn_privacy.attacks.lira : Likelihood-ratio membership attack.
    sklearn_privacy.attacks.evaluate_scores : Membership result from member and
        non-member scores.
    sklearn.metrics.RocCurveDisplay : ROC curve of a classifier (linear axes).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import MembershipROCDisplay, evaluate_scores
    >>> rng = np.random.RandomState(0)
    >>> res = evaluate_scores(rng.normal(1, 1, 500), rng.normal(0, 1, 500), random_state=0)
    >>> disp = MembershipROCDisplay.from_result(res)
    >>> bool(np.isclose(disp.roc_auc, res.auc))
    True
    """

    def __init__(self, fpr, tpr, *, roc_auc=None, tpr_at_fpr=None, name=None):
        self.fpr = np.asarray(fpr, dtype=float)
        self.tpr = np.asarray(tpr, dtype=float)
        self.roc_auc = roc_auc
        self.tpr_at_fpr = tpr_at_fpr
        self.name = name

    @classmethod
    def from_predictions(cls, y_true, y_score, *, fpr_levels=(0.001, 0.01), name=None,
                         ax=None, plot_chance_level=True):
        """ROC of membership scores against true membership.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            1 (or True) for members, 0 for non-members.
        y_score : array-like of shape (n_samples,)
            Finite scores, higher = more likely member.
        fpr_levels : sequence of float in (0, 1), default=(0.001, 0.01)
            FPRs at which the TPR is reported in the legend.
        name : str, default=None
            Legend label or title of the curve (None: a default).
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        plot_chance_level : bool, default=True
            Whether to draw the diagonal of a random guess.

        Returns
        -------
        display : MembershipROCDisplay
            The display, with the curve drawn.

        Raises
        ------
        ValueError
            Lengths differ, labels other than 0/1, non-finite scores, a single class, or
            an FPR level outside (0, 1).
        """
        levels = _check_levels(fpr_levels)
        y_true = np.asarray(y_true)
        y_score = np.asarray(y_score)
        if y_true.ndim != 1 or y_score.ndim != 1 or y_true.shape != y_score.shape:
            raise ValueError(f"y_true and y_score must be 1-D of the same length; got shapes "
                             f"{y_true.shape} and {y_score.shape}.")
        if y_score.dtype.kind not in "biuf":
            raise ValueError(f"y_score must hold numbers; got dtype {y_score.dtype}.")
        if not np.all(np.isfinite(y_score)):
            raise ValueError("y_score contains NaN or infinity; membership scores must be "
                             "finite.")
        if y_true.dtype.kind not in "biuf" or not np.all((y_true == 0) | (y_true == 1)):
            raise ValueError("y_true must hold 1 (member) and 0 (non-member) only.")
        y_true = y_true.astype(int)
        if np.unique(y_true).size < 2:
            raise ValueError("y_true must contain both members (1) and non-members (0).")
        fpr, tpr, _ = roc_curve(y_true, y_score, drop_intermediate=False)
        disp = cls(fpr, tpr, roc_auc=float(_auc(fpr, tpr)), tpr_at_fpr=_tpr_at(fpr, tpr, levels),
                   name=name)
        return disp.plot(ax=ax, plot_chance_level=plot_chance_level)

    @classmethod
    def from_result(cls, result, *, fpr_levels=(0.001, 0.01), name=None, ax=None,
                    plot_chance_level=True):
        """ROC of a membership inference result on its evaluation rows.

        Parameters
        ----------
        result : MembershipInferenceResult or LiRAResult
            Result of a membership attack, with its member labels and scores.
        fpr_levels : sequence of float in (0, 1), default=(0.001, 0.01)
            FPRs at which the TPR is reported in the legend.
        name : str, default=None
            Curve label (default: ``result.attack``).
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        plot_chance_level : bool, default=True
            Whether to draw the diagonal of a random guess.

        Returns
        -------
        display : MembershipROCDisplay
            The display, with the curve drawn.
        """
        if not isinstance(result, MembershipInferenceResult):
            raise TypeError("result must be a MembershipInferenceResult (or LiRAResult) "
                            f"returned by the attacks; got {type(result).__name__}.")
        s_in = np.asarray(result.scores_members)
        s_out = np.asarray(result.scores_nonmembers)
        e_in = getattr(result, "eval_members", None)
        e_out = getattr(result, "eval_nonmembers", None)
        if e_in is not None and e_out is not None:
            s_in, s_out = s_in[np.asarray(e_in)], s_out[np.asarray(e_out)]
        y_true = np.r_[np.ones(s_in.size, int), np.zeros(s_out.size, int)]
        return cls.from_predictions(y_true, np.r_[s_in, s_out], fpr_levels=fpr_levels,
                                    name=result.attack if name is None else name, ax=ax,
                                    plot_chance_level=plot_chance_level)

    @classmethod
    def from_results(cls, results, *, names=None, fpr_levels=(0.001, 0.01), ax=None):
        """ROC curves of several results on one axes (one chance line).

        Parameters
        ----------
        results : sequence of MembershipInferenceResult
            Results of membership attacks, one curve each.
        names : sequence of str, default=None
            One label per result (default: each ``result.attack``).
        fpr_levels : sequence of float in (0, 1), default=(0.001, 0.01)
            FPRs at which the TPR is reported in the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).

        Returns
        -------
        displays : list of MembershipROCDisplay
            One per result, all drawn on the same axes.
        """
        if isinstance(results, MembershipInferenceResult):
            results = [results]
        results = list(results)
        if not results:
            raise ValueError("results is empty; pass at least one membership result.")
        names = check_names(names, len(results))
        out = []
        for i, (res, nm) in enumerate(zip(results, names, strict=True)):
            disp = cls.from_result(res, fpr_levels=fpr_levels, name=nm, ax=ax,
                                   plot_chance_level=(i == len(results) - 1))
            ax = disp.ax_
            out.append(disp)
        return out

    def plot(self, ax=None, *, name=None, plot_chance_level=True, **kwargs):
        """Draw the ROC curve (log-log axes).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw into; call ``plot`` on several displays with the same ``ax`` to
            compare attacks.
        name : str, default=None
            Overrides the stored name in the legend.
        plot_chance_level : bool, default=True
            Draw the diagonal TPR = FPR.
        **kwargs
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        display : MembershipROCDisplay
            The display itself, with ``line_``, ``chance_level_``, ``ax_`` and
            ``figure_`` set.
        """
        ax, fig = get_axes(ax, f"{type(self).__name__}.plot")
        name = self.name if name is None else name
        parts = [] if name is None else [str(name)]
        if self.roc_auc is not None:
            parts.append(f"AUC {self.roc_auc:.3f}")
        for level, value in (self.tpr_at_fpr or {}).items():
            parts.append(f"TPR {value:.3g} @ {_pct(level)} FPR")
        label = ", ".join(parts) if parts else None
        # a log axis cannot show FPR = 0: start at the smallest positive FPR (or 1e-4)
        positive = self.fpr[self.fpr > 0]
        lo = min(float(positive.min()) if positive.size else 1e-4, 1e-2) / 2
        fpr = np.maximum(self.fpr, lo)
        tpr = np.maximum(self.tpr, lo)
        (self.line_,) = ax.plot(fpr, tpr, label=label, **kwargs)
        self.chance_level_ = None
        if plot_chance_level:
            (self.chance_level_,) = ax.plot([lo, 1], [lo, 1], "k--", lw=0.8,
                                            label="chance (TPR = FPR)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        left = min(lo, ax.get_xlim()[0]) if ax.get_xscale() == "log" else lo
        ax.set_xlim(left, 1.05)
        ax.set_ylim(left, 1.05)
        ax.set_xlabel("false positive rate (non-members flagged)")
        ax.set_ylabel("true positive rate (members found)")
        ax.legend(fontsize=7, loc="lower right")
        self.ax_, self.figure_ = ax, fig
        return self
