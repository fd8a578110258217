"""ROC curve of a membership inference attack on log-log axes."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.metrics import auc as _auc
from sklearn.metrics import roc_curve

from ..utils import noise_generator
from ..utils._display import check_names, get_axes
from ..utils._intervals import auc_delong
from ._membership import MembershipInferenceResult
from ._roc import allowed_false_positives, bootstrap_weights, roc_counts
from ._validation import check_fraction, check_positive_int


def _check_levels(fpr_levels):
    levels = np.atleast_1d(np.asarray(fpr_levels, dtype=object))
    out = []
    for v in levels:
        if isinstance(v, bool | np.bool_) or not isinstance(v, Real) or not 0 < v < 1:
            raise ValueError(f"fpr_levels must be numbers in (0, 1); got {v!r}.")
        out.append(float(v))
    return tuple(out)


def _tpr_at(fpr, tpr, levels, n_out):
    """TPR at each FPR level by the exact count rule; NaN where the level is unresolved.

    The largest TPR of a threshold with at most ``floor(level * n_out)`` false positives,
    as in :class:`~sklearn_privacy.attacks.MembershipInferenceResult`.
    """
    fp = np.rint(fpr * n_out)
    out = {}
    for lv in levels:
        k = allowed_false_positives(lv, n_out)
        out[lv] = float(tpr[fp <= k].max()) if k >= 1 else float("nan")
    return out


def _band(s_in, s_out, grid, confidence, n_resamples, random_state):
    """Pointwise bootstrap interval of the ROC curve (as drawn) at each grid FPR.

    Every resample's ROC polyline (ties: one straight segment, as
    :func:`sklearn.metrics.roc_curve` draws them) is read at the grid FPRs by linear
    interpolation; the band is the pointwise percentile interval.
    """
    rng = noise_generator(random_state)
    w_in, w_out = bootstrap_weights(rng, s_in.size, s_out.size, n_resamples)
    tp, fp = roc_counts(np.r_[s_in, s_out], w_in, w_out)
    tpr, fpr = tp / s_in.size, fp / s_out.size
    values = np.empty((n_resamples, grid.size))
    for b in range(n_resamples):  # one np.interp per resample (a figure, not a hot path)
        f, t = fpr[b], tpr[b]
        last = np.r_[f[1:] != f[:-1], True]  # the highest TPR at each FPR
        values[b] = np.interp(grid, f[last], t[last])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha], axis=0)
    return low, high


def _auc_interval(s_in, s_out, confidence):
    """The library's AUC interval (DeLong, logit scale): the one every table shows."""
    return auc_delong(s_in, s_out, confidence)[1:3]


_OWN_AXES = "sklearn_privacy-membership-roc"


def _pct(level):
    return f"{100 * level:g}%"


class MembershipROCDisplay:
    """ROC curve of a membership attack on log-log axes, with its uncertainty.

    Low false-positive rates are what matter for membership inference (Carlini et al.,
    2022): an attack that identifies a few members with near certainty is a real leak
    even at an AUC close to 0.5. Create it with :meth:`from_result` (any
    :class:`~sklearn_privacy.attacks.MembershipInferenceResult`, including
    :class:`~sklearn_privacy.attacks.LiRAResult`), :meth:`from_results` (several results
    on one axes) or :meth:`from_predictions` (membership labels and scores).

    The curve is :func:`sklearn.metrics.roc_curve` of the scores on the result's
    *evaluation* rows (the members and non-members not used to choose thresholds), so
    its AUC equals ``result.auc``. What the figure shows besides the curve:

    * a shaded band: the pointwise ``confidence`` bootstrap interval of the TPR at each
      FPR (members and non-members resampled separately), and the AUC's interval in the
      legend;
    * the chance line TPR = FPR (an attack with no signal);
    * a grey region left of ``1 / n_nonmembers``: FPRs the evaluation set does not
      resolve (one false positive is already that rate). The legend gives the TPR only
      at resolved levels, by the exact count rule (at most ``floor(level *
      n_nonmembers)`` false positives) and says "unresolved" for the others.

    The constructor takes the curve's label as ``name``, as
    :class:`sklearn.metrics.RocCurveDisplay` does since scikit-learn 1.7 (which
    deprecated its ``estimator_name``); the class methods take ``name`` as everywhere in
    scikit-learn.

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
        TPR at the chosen FPR levels (exact count rule; NaN when unresolved).
    name : str or None, default=None
        Curve label (the attack name).
    n_nonmembers : int or None, default=None
        Number of evaluation non-members: the FPR resolution is ``1 / n_nonmembers``.
    roc_auc_interval : tuple of float or None, default=None
        Confidence interval of the AUC.
    tpr_band : tuple of three ndarrays or None, default=None
        ``(fpr_grid, tpr_low, tpr_high)``: pointwise interval of the TPR at FPR <= each
        grid value.
    confidence : float or None, default=None
        Coverage of the intervals (for the legend).

    Attributes
    ----------
    line_ : Line2D
        The ROC curve.
    band_ : PolyCollection or None
        The confidence band, or None when not drawn.
    unresolved_ : matplotlib patch or None
        The shaded region of unresolved FPRs, or None.
    chance_level_ : Line2D or None
        The chance line TPR = FPR, or None when it is not drawn.
    ax_ : matplotlib Axes
        Axes with the curve.
    figure_ : matplotlib Figure
        Figure containing the axes.
    bound_line_ : Line2D
        The claim's worst-case ROC, after :meth:`plot_bound`.
    refuted_ : bool
        After :meth:`plot_bound`: whether the attack's band, or an audit point given to
        it, lies above the proven bound.
    audit_points_ : list of dict
        After :meth:`plot_bound`: each audit's point (``tpr``, ``fpr`` and their limits,
        ``audit``, ``refuted``).

    See Also
    --------
    sklearn_privacy.attacks.membership_inference : Membership attack whose result is shown.
    sklearn_privacy.attacks.lira : Likelihood-ratio membership attack.
    sklearn_privacy.attacks.evaluate_scores : Membership result from the membership
        truth and the scores.
    sklearn.metrics.RocCurveDisplay : ROC curve of a classifier (linear axes).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import MembershipROCDisplay, evaluate_scores
    >>> rng = np.random.RandomState(0)
    >>> scores = np.r_[rng.normal(1, 1, 500), rng.normal(0, 1, 500)]
    >>> res = evaluate_scores(np.arange(1000) < 500, scores, random_state=0)
    >>> disp = MembershipROCDisplay.from_result(res)
    >>> bool(np.isclose(disp.roc_auc, res.auc)), disp.n_nonmembers
    (True, 250)
    >>> disp.tpr_at_fpr  # 250 non-members: 0.1 % FPR is unresolved
    {0.001: nan, 0.01: 0.136}
    """

    def __init__(self, fpr, tpr, *, roc_auc=None, tpr_at_fpr=None, name=None,
                 n_nonmembers=None, roc_auc_interval=None, tpr_band=None, confidence=None):
        self.fpr = np.asarray(fpr, dtype=float)
        self.tpr = np.asarray(tpr, dtype=float)
        self.roc_auc = roc_auc
        self.tpr_at_fpr = tpr_at_fpr
        self.name = name
        self.n_nonmembers = n_nonmembers
        self.roc_auc_interval = roc_auc_interval
        self.tpr_band = tpr_band
        self.confidence = confidence

    @classmethod
    def from_predictions(cls, y_true, y_score, *, fpr_levels=(0.001, 0.01), name=None,
                         ax=None, plot_chance_level=True, confidence=0.95,
                         n_resamples=500, random_state=None):
        """ROC of membership scores against true membership.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            1 (or True) for members, 0 for non-members.
        y_score : array-like of shape (n_samples,)
            Finite scores, higher = more likely member.
        fpr_levels : sequence of float in (0, 1), default=(0.001, 0.01)
            FPRs at which the TPR is reported in the legend (NaN, "unresolved", below
            ``1 / n_nonmembers``).
        name : str, default=None
            Legend label or title of the curve (None: a default).
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        plot_chance_level : bool, default=True
            Whether to draw the diagonal of a random guess.
        confidence : float in (0, 1) or None, default=0.95
            Coverage of the bootstrap band and of the AUC interval (DeLong, logit scale:
            the interval of every table of the library); None draws neither.
        n_resamples : int, default=500
            Bootstrap resamples (vectorised).
        random_state : int, RandomState, Generator or None, default=None
            Bootstrap resampling; ``None`` draws from fresh OS entropy.

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
        if confidence is not None:
            confidence = check_fraction(confidence, "confidence")
            n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=10)
        fpr, tpr, _ = roc_curve(y_true, y_score, drop_intermediate=False)
        s_in = y_score[y_true == 1].astype(float)
        s_out = y_score[y_true == 0].astype(float)
        n_out = s_out.size
        interval = band = None
        if confidence is not None:
            interval = _auc_interval(s_in, s_out, confidence)
            grid = np.unique(np.r_[np.geomspace(1.0 / n_out, 1.0, 80), 1.0])
            band = (grid, *_band(s_in, s_out, grid, confidence, n_resamples,
                                 random_state))
        disp = cls(fpr, tpr, roc_auc=float(_auc(fpr, tpr)),
                   tpr_at_fpr=_tpr_at(fpr, tpr, levels, n_out), name=name,
                   n_nonmembers=n_out, roc_auc_interval=interval, tpr_band=band,
                   confidence=confidence)
        disp._scores = (s_in, s_out)   # for the exact check of plot_bound
        return disp.plot(ax=ax, plot_chance_level=plot_chance_level)

    @classmethod
    def from_result(cls, result, *, fpr_levels=(0.001, 0.01), name=None, ax=None,
                    plot_chance_level=True, confidence=0.95, n_resamples=500,
                    random_state=None):
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
        confidence : float in (0, 1) or None, default=0.95
            Coverage of the bootstrap band and of the AUC interval (DeLong, logit scale:
            the interval of every table of the library); None draws neither.
        n_resamples : int, default=500
            Bootstrap resamples.
        random_state : int, RandomState, Generator or None, default=None
            Bootstrap resampling.

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
                                    plot_chance_level=plot_chance_level,
                                    confidence=confidence, n_resamples=n_resamples,
                                    random_state=random_state)

    @classmethod
    def from_results(cls, results, *, names=None, fpr_levels=(0.001, 0.01), ax=None,
                     confidence=0.95, n_resamples=500, random_state=None):
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
        confidence : float in (0, 1) or None, default=0.95
            Coverage of the bootstrap bands and AUC intervals; None draws neither.
        n_resamples : int, default=500
            Bootstrap resamples.
        random_state : int, RandomState, Generator or None, default=None
            Bootstrap resampling.

        Returns
        -------
        displays : list of MembershipROCDisplay
            One per result, all drawn on the same axes.
        """
        if isinstance(results, MembershipInferenceResult):
            results = [results]
        if isinstance(results, dict):
            raise TypeError("results must be a sequence of membership results; got a dict; "
                            "pass list(d.values()), names=list(d).")
        results = list(results)
        if not results:
            raise ValueError("results is empty; pass at least one membership result.")
        names = check_names(names, len(results))
        out = []
        for i, (res, nm) in enumerate(zip(results, names, strict=True)):
            disp = cls.from_result(res, fpr_levels=fpr_levels, name=nm, ax=ax,
                                   plot_chance_level=(i == len(results) - 1),
                                   confidence=confidence, n_resamples=n_resamples,
                                   random_state=random_state)
            ax = disp.ax_
            out.append(disp)
        return out

    def _label(self, name):
        parts = [] if name is None else [str(name)]
        if self.roc_auc is not None:
            auc = f"AUC {self.roc_auc:.3f}"
            if self.roc_auc_interval is not None:
                low, high = self.roc_auc_interval
                auc += f" [{low:.3f}, {high:.3f}]"
            parts.append(auc)
        for level, value in (self.tpr_at_fpr or {}).items():
            if np.isnan(value):
                n = "" if self.n_nonmembers is None else f" by {self.n_nonmembers} non-members"
                parts.append(f"TPR @ {_pct(level)} FPR: unresolved{n}")
            else:
                parts.append(f"TPR {value:.3g} @ {_pct(level)} FPR")
        return "\n".join([", ".join(parts[:2])] + parts[2:]) if parts else None

    @classmethod
    def from_canary_audit(cls, result, *, fpr_levels=(0.001, 0.01), name=None, ax=None,
                          plot_chance_level=True, confidence=0.95, n_resamples=500,
                          random_state=None):
        """ROC of a canary audit's releases: with the row (``D'``) against without (``D``).

        Each release is one independent trial of the audited mechanism on the pair, so
        the curve and its band estimate the mechanism's own ROC on that pair; draw the
        claim against it with :meth:`plot_bound`.

        Parameters
        ----------
        result : CanaryAuditResult
            What :func:`~sklearn_privacy.attacks.canary_audit` returned.
        fpr_levels : sequence of float in (0, 1), default=(0.001, 0.01)
            FPRs at which the TPR is reported in the legend.
        name : str, default=None
            Curve label (None: ``"canary audit"``).
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        plot_chance_level : bool, default=True
            Whether to draw the diagonal of a random guess.
        confidence : float in (0, 1) or None, default=0.95
            Coverage of the bootstrap band and of the AUC interval; None draws neither.
        n_resamples : int, default=500
            Bootstrap resamples.
        random_state : int, RandomState, Generator or None, default=None
            Bootstrap resampling; ``None`` draws from fresh OS entropy.

        Returns
        -------
        display : MembershipROCDisplay
            The display, with the curve drawn.
        """
        from ._audit import CanaryAuditResult

        if not isinstance(result, CanaryAuditResult):
            raise TypeError("from_canary_audit takes the CanaryAuditResult of canary_audit; "
                            f"got {type(result).__name__}.")
        members, scores = result.roc_scores()
        return cls.from_predictions(
            members.astype(int), scores, fpr_levels=fpr_levels,
            name="canary audit" if name is None else name, ax=ax,
            plot_chance_level=plot_chance_level, confidence=confidence,
            n_resamples=n_resamples, random_state=random_state)

    def plot_bound(self, bound, *, name: str = "proven bound", audits=(),
                   fpr: float = 0.01):
        """Draw a claim's worst-case ROC on the same axes; flag points above it.

        ``bound`` is anything :func:`sklearn_privacy.privacy.tradeoff_curve` reads (a
        fitted object, its claim, or a :class:`~sklearn_privacy.privacy.TradeoffCurve`):
        the largest TPR any attack can reach at each FPR. For a display made from scores
        (every ``from_*`` constructor), the attack refutes the claim when, at one of the
        legend's resolved FPR levels, the Clopper--Pearson lower limit of its TPR lies
        above the bound at an upper confidence limit of the threshold's FPR (the
        ``Beta(k + 1, n - k)`` quantile, ``k`` false positives among ``n_nonmembers``),
        jointly at the display's ``confidence`` with a Bonferroni correction over the
        levels; ``refuted_`` is then True and the point is marked. A display built from
        ``fpr`` and ``tpr`` alone uses the lower end of its band instead.

        Audit results given in ``audits`` are drawn as points with their confidence
        limits: a :class:`~sklearn_privacy.attacks.CanaryAuditResult` at its TPR at FPR
        ``fpr`` (:meth:`CanaryAuditResult.tpr_at
        <sklearn_privacy.attacks.CanaryAuditResult.tpr_at>`, exact: the releases are
        independent), a :class:`~sklearn_privacy.attacks.OneRunAuditResult` at the point
        of its "included" guesses (:meth:`OneRunAuditResult.roc_point
        <sklearn_privacy.attacks.OneRunAuditResult.roc_point>`, whose limits treat the
        canaries as independent trials). A point whose lower TPR limit lies above the
        curve at its upper FPR limit refutes the claim too.

        Parameters
        ----------
        bound : fitted estimator, PrivacyClaim or TradeoffCurve
            The claim to draw.
        name : str, default="proven bound"
            Legend label.
        audits : sequence of CanaryAuditResult or OneRunAuditResult, default=()
            Empirical points to draw against the curve (at the display's
            ``confidence``, 0.95 when it has none).
        fpr : float in (0, 1), default=0.01
            The FPR at which a canary audit's point is read.

        Returns
        -------
        display : MembershipROCDisplay
            With ``bound_line_``, ``refuted_`` and ``audit_points_`` set. Call
            :meth:`plot` first.
        """
        from scipy.stats import beta

        from ..privacy import tradeoff_curve
        from ._audit import CanaryAuditResult
        from ._one_run import OneRunAuditResult

        if not hasattr(self, "ax_"):
            raise ValueError("plot_bound draws on the display's axes: call plot() (or a "
                             "from_* constructor) first.")
        curve = tradeoff_curve(bound)
        ax = self.ax_
        lo = max(ax.get_xlim()[0], 1e-6)
        grid = np.geomspace(lo, 1.0, 400)
        (self.bound_line_,) = ax.plot(
            grid, np.maximum(curve.max_tpr(grid), lo), color="k", lw=1.8,
            label=f"{name}: TPR at 1% FPR <= {float(curve.max_tpr(0.01)):.3g}")
        self.refuted_ = False
        scores = self.__dict__.get("_scores")
        levels = [lv for lv, v in (self.tpr_at_fpr or {}).items() if np.isfinite(v)]
        if scores is not None and levels:
            # exact: at each resolved FPR level of the legend, the threshold's TPR with
            # Clopper--Pearson limits and an upper limit of its FPR, Bonferroni over the
            # levels (the bootstrap band is no confidence statement at each FPR)
            from ..privacy._tradeoff import empirical_point

            conf = 1 - (1 - (self.confidence or 0.95)) / len(levels)
            for lv in levels:
                point = empirical_point(*scores, fpr=lv, confidence=conf)
                if point["tpr_low"] > float(curve.max_tpr(min(point["fpr_high"], 1.0))):
                    self.refuted_ = True
                    ax.scatter([max(point["fpr"], lo)], [point["tpr_low"]], marker="x",
                               color="red", zorder=5,
                               label="above the proven bound: the claim is refuted")
        elif self.tpr_band is not None and self.n_nonmembers:
            g, low, _ = (np.asarray(a, dtype=float) for a in self.tpr_band)
            n = int(self.n_nonmembers)
            k = np.floor(g * n + 1e-9)
            conf = self.confidence or 0.95
            fpr_high = np.where(k < n, beta.ppf(conf, k + 1, np.maximum(n - k, 1)), 1.0)
            above = (k >= 1) & (low > curve.max_tpr(np.minimum(fpr_high, 1.0)))
            self.refuted_ = bool(np.any(above))
            if self.refuted_:
                ax.scatter(g[above], low[above], marker="x", color="red", zorder=5,
                           label="above the proven bound: the claim is refuted")
        conf = self.confidence or 0.95
        self.audit_points_ = []
        for result in audits:
            if isinstance(result, CanaryAuditResult):
                point = dict(result.tpr_at(fpr, confidence=conf), fpr_low=0.0,
                             audit="canary audit")
            elif isinstance(result, OneRunAuditResult):
                point = dict(result.roc_point(confidence=conf), audit="one-run audit")
            else:
                raise TypeError("audits holds CanaryAuditResult or OneRunAuditResult "
                                f"objects; got {type(result).__name__}.")
            limit = float(curve.max_tpr(min(point["fpr_high"], 1.0)))
            point["refuted"] = bool(point["tpr_low"] > limit)
            self.audit_points_.append(point)
            x = max(point["fpr"], lo)
            ax.errorbar(
                x, max(point["tpr"], lo),
                xerr=[[x - max(point["fpr_low"], lo)], [max(point["fpr_high"] - x, 0.0)]],
                yerr=[[max(point["tpr"] - point["tpr_low"], 0.0)],
                      [max(point["tpr_high"] - point["tpr"], 0.0)]],
                fmt="s" if point["refuted"] else "o",
                color="red" if point["refuted"] else "tab:green", capsize=3, zorder=6,
                label=(f"{point['audit']}: TPR {point['tpr']:.3g} at FPR "
                       f"{point['fpr']:.3g}" + (" -- REFUTES the claim"
                                                if point["refuted"] else "")))
            self.refuted_ = self.refuted_ or point["refuted"]
        ax.legend(fontsize=7, loc="lower right")
        return self

    def plot(self, ax=None, *, name=None, plot_chance_level=True, **kwargs):
        """Draw the ROC curve (log-log axes), its band and the unresolved region.

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
            The display itself, with ``line_``, ``band_``, ``unresolved_``,
            ``chance_level_``, ``ax_`` and ``figure_`` set.
        """
        if self.fpr.ndim != 1 or self.fpr.shape != self.tpr.shape:
            raise ValueError(f"fpr and tpr must be 1-D of the same length (one point of the "
                             f"curve each); got shapes {self.fpr.shape} and {self.tpr.shape}.")
        ax, fig = get_axes(ax, f"{type(self).__name__}.plot")
        if ax.get_gid() is None and not ax.lines:
            ax.set_gid(_OWN_AXES)  # a fresh axes: the legend may go outside it
        created = ax.get_gid() == _OWN_AXES
        name = self.name if name is None else name
        label = self._label(name)
        # a log axis cannot show FPR = 0: points at zero false positives are drawn at
        # half the resolution, inside the shaded unresolved region
        positive = self.fpr[self.fpr > 0]
        if self.n_nonmembers:
            lo = 0.5 / self.n_nonmembers
        else:
            lo = min(float(positive.min()) if positive.size else 1e-4, 1e-2) / 2
        fpr = np.maximum(self.fpr, lo)
        tpr = np.maximum(self.tpr, lo)
        (self.line_,) = ax.plot(fpr, tpr, label=label, **kwargs)
        self.band_ = None
        if self.tpr_band is not None:
            grid, low, high = (np.asarray(a, dtype=float) for a in self.tpr_band)
            # an explicit ``where``: matplotlib 3.6 fails on a band without one here
            self.band_ = ax.fill_between(grid, np.maximum(low, lo), np.maximum(high, lo),
                                         where=np.ones(grid.size, dtype=bool), alpha=0.2,
                                         lw=0, color=self.line_.get_color())
        self.unresolved_ = None
        left = min(lo, ax.get_xlim()[0]) if ax.get_xscale() == "log" else lo
        if self.n_nonmembers:
            labels = ax.get_legend_handles_labels()[1]
            text = "unresolved FPR (< 1 / n non-members)"
            self.unresolved_ = ax.axvspan(left / 2, 1.0 / self.n_nonmembers, color="0.88",
                                          zorder=0, label=None if text in labels else text)
        self.chance_level_ = None
        if plot_chance_level:
            (self.chance_level_,) = ax.plot([left / 2, 1], [left / 2, 1], "k--", lw=0.8,
                                            label="chance (TPR = FPR)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(left, 1.05)
        ax.set_ylim(left, 1.05)
        level = f"{100 * self.confidence:g}% bootstrap band, " if self.tpr_band else ""
        ax.set_xlabel("false positive rate (non-members flagged)")
        ax.set_ylabel("true positive rate (members found)")
        if level:
            ax.set_title(f"membership ROC ({level}evaluation rows only)", fontsize=9)
        # curves first, then the shared marks (unresolved region, chance line)
        handles, labels = ax.get_legend_handles_labels()
        shared = [i for i, lab in enumerate(labels)
                  if lab.startswith(("unresolved FPR", "chance ("))]
        order = [i for i in range(len(labels)) if i not in shared] + shared
        handles, labels = [handles[i] for i in order], [labels[i] for i in order]
        if created:  # room on the right for the legend, outside the curves
            fig.set_size_inches(9.0, 4.8)
            ax.legend(handles, labels, fontsize=7, loc="upper left",
                      bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
            fig.subplots_adjust(left=0.09, right=0.6, bottom=0.11, top=0.92)
        else:
            ax.legend(handles, labels, fontsize=7, loc="lower right")
        self.ax_, self.figure_ = ax, fig
        return self
