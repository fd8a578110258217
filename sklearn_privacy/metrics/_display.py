"""Privacy-utility trade-off of a hyper-parameter search."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..utils._display import format_value, get_axes


def _sort_key(value):
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def _score_column(cv_results, score, which):
    if not isinstance(score, str):
        raise TypeError(f"{which} must be the name of a score; got {score!r}.")
    for key in (f"mean_test_{score}", score if score.startswith("mean_test_") else None,
                f"test_{score}"):
        if key is not None and key in cv_results:
            return key
    available = sorted(k[len("mean_test_"):] for k in cv_results if k.startswith("mean_test_"))
    available += sorted(k[len("test_"):] for k in cv_results if k.startswith("test_"))
    raise ValueError(f"{which}={score!r} is not a score of the search; available: {available}. "
                     "Use multi-metric scoring, e.g. scoring={'accuracy': 'accuracy', "
                     "'advantage': make_membership_scorer(...)}.")


def _varying_param(params):
    keys = sorted({k for p in params for k in p})
    varying = [k for k in keys
               if len({repr(p.get(k)) for p in params}) > 1]
    return varying


class PrivacyUtilityDisplay:
    """Privacy-utility trade-off curve over a searched parameter (sigma, w, epsilon ...).

    One point per candidate: the mean cross-validated leakage score on the x axis, the
    mean utility score on the y axis, labelled by the value of the searched parameter
    and joined in parameter order. The leakage scorers of
    :mod:`sklearn_privacy.attacks` are *negated* (greater is better, as scikit-learn
    expects): with ``negate_leakage=True`` (default) the plot shows the leakage itself
    (e.g. the membership advantage), so that more leakage is to the right. The figures are
    empirical attack outcomes on held-out folds; they are not privacy guarantees.

    Parameters
    ----------
    leakage : ndarray of shape (n_candidates,)
        Leakage of each candidate, the x coordinates (already negated when
        ``negate_leakage``), in parameter order.
    utility : ndarray of shape (n_candidates,)
        Utility of each candidate, the y coordinates, in parameter order.
    param_values : list
        Value of the searched parameter at each point.
    leakage_std : ndarray of shape (n_candidates,) or None, default=None
        Standard deviations of the leakage over folds (horizontal error bars).
    utility_std : ndarray of shape (n_candidates,) or None, default=None
        Standard deviations of the utility over folds (vertical error bars).
    leakage_name : str, default="leakage"
        Name of the leakage score (x axis label).
    utility_name : str, default="utility"
        Name of the utility score (y axis label).
    param_name : str or None, default=None
        Name of the searched parameter (label of the line and title; None: no title).
    n_splits : int or None, default=None
        Number of cross-validation splits the scores are means over (written in the axis
        labels when above 1; None: unknown, nothing written).
    chance_level : float or None, default=0.0
        Leakage of a model that carries no membership signal, drawn as a vertical line:
        0 for the default metric of :func:`~sklearn_privacy.attacks.make_membership_scorer`
        (``0.5 - AUC``, negated) and for the balanced accuracy. The advantage metric's
        chance level is positive and depends on the evaluation size
        (:meth:`~sklearn_privacy.attacks.MembershipInferenceResult.chance_level`); for an
        attribute-inversion accuracy it is the prior baseline. None: not drawn.
    leakage_bound : float or None, default=None
        A leakage bound to draw (vertical line), e.g. the one given to
        :func:`~sklearn_privacy.attacks.refit_under_leakage_bound`.
    selected : int or None, default=None
        Position (in the plotted order) of the candidate the search refitted, circled.

    Attributes
    ----------
    line_ : Line2D
        The trade-off curve.
    errorbar_ : ErrorbarContainer or None
        Error bars (plus or minus one standard deviation over the folds, as the legend
        says), or None when not drawn (no standard deviations, or ``errorbars=False``).
    chance_level_ : Line2D or None
        The vertical chance-level line, or None.
    bound_ : Line2D or None
        The vertical leakage-bound line, or None.
    selected_ : Line2D or None
        The circle around the refitted candidate, or None.
    annotations_ : list of Annotation
        Parameter value written next to each point.
    ax_ : matplotlib Axes
        Axes with the curve.
    figure_ : matplotlib Figure
        Figure containing the axes.

    See Also
    --------
    sklearn_privacy.attacks.make_membership_scorer : Leakage scorer for the search.
    sklearn_privacy.attacks.make_attribute_inversion_scorer : Another leakage scorer.
    sklearn.model_selection.GridSearchCV : Search whose ``cv_results_`` are shown.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_privacy.metrics import PrivacyUtilityDisplay
    >>> cv_results = {"params": [{"sigma": 0.1}, {"sigma": 1.0}],
    ...               "mean_test_accuracy": [0.9, 0.8], "mean_test_advantage": [-0.2, -0.05]}
    >>> disp = PrivacyUtilityDisplay.from_cv_results(
    ...     cv_results, utility="accuracy", leakage="advantage")
    >>> disp.leakage.tolist(), disp.param_values
    ([0.2, 0.05], [0.1, 1.0])
    """

    def __init__(self, leakage, utility, param_values, *, leakage_std=None, utility_std=None,
                 leakage_name="leakage", utility_name="utility", param_name=None,
                 n_splits=None, chance_level=0.0, leakage_bound=None, selected=None):
        self.leakage = np.asarray(leakage, dtype=float)
        self.utility = np.asarray(utility, dtype=float)
        self.param_values = list(param_values)
        self.leakage_std = leakage_std
        self.utility_std = utility_std
        self.leakage_name = leakage_name
        self.utility_name = utility_name
        self.param_name = param_name
        self.n_splits = n_splits
        self.chance_level = chance_level
        self.leakage_bound = leakage_bound
        self.selected = selected

    @classmethod
    def from_cv_results(cls, cv_results, *, utility, leakage, param=None,
                        negate_leakage=True, chance_level=0.0, leakage_bound=None,
                        selected=None, ax=None):
        """Trade-off from a ``cv_results_`` dict (GridSearchCV, RandomizedSearchCV).

        Parameters
        ----------
        cv_results : dict
            ``search.cv_results_`` of a multi-metric search (``mean_test_<name>`` and
            ``params`` entries).
        utility : str
            Name of the utility score (a key of the ``scoring`` dict), plotted on the y
            axis.
        leakage : str
            Name of the leakage score (a key of the ``scoring`` dict), plotted on the x
            axis.
        param : str, default=None
            Searched parameter labelling the points (e.g. ``"sigma"``,
            ``"estimator__w"``). Default: the only parameter that varies.
        negate_leakage : bool, default=True
            Plot ``-score`` of the leakage (the library's leakage scorers are negated).
        chance_level : float or None, default=0.0
            Leakage of a model without membership signal (vertical line; see the class
            docstring). None: not drawn.
        leakage_bound : float or None, default=None
            A leakage bound to draw as a vertical line.
        selected : int or None, default=None
            Index (in ``cv_results``) of the candidate to circle, e.g. the search's
            ``best_index_``.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display, with the curve drawn.

        Raises
        ------
        ValueError
            Unknown score names, no ``params`` entry, or several varying parameters
            without ``param``.
        """
        if not isinstance(cv_results, dict) or "params" not in cv_results:
            raise ValueError("cv_results must be a search's cv_results_ dict (with 'params').")
        params = cv_results["params"]
        if isinstance(params, (str, dict)) or not hasattr(params, "__iter__") or not all(
                isinstance(p, dict) for p in params):
            raise ValueError("cv_results['params'] must be a list of parameter dicts, one per "
                             "candidate.")
        params = list(params)
        if not params:
            raise ValueError("cv_results has no candidate (empty 'params').")
        u_key = _score_column(cv_results, utility, "utility")
        l_key = _score_column(cv_results, leakage, "leakage")
        for key in (u_key, l_key):
            if np.ndim(cv_results[key]) != 1 or len(cv_results[key]) != len(params):
                raise ValueError(f"cv_results[{key!r}] has {np.size(cv_results[key])} entries "
                                 f"but 'params' has {len(params)} candidates; pass a search's "
                                 "cv_results_ unchanged.")
        if param is None:
            varying = _varying_param(params)
            if len(varying) != 1:
                raise ValueError(
                    f"param must name the searched parameter: {len(varying)} parameters vary "
                    f"({varying}); pass param=... (one of them)."
                )
            param = varying[0]
        if not isinstance(param, str):
            raise TypeError(f"param must be the name of the searched parameter; got "
                            f"{param!r}.")
        if param.startswith("param_"):
            param = param[len("param_"):]
        if any(param not in p for p in params):
            raise ValueError(f"param={param!r} is not a parameter of every candidate; "
                             f"parameters are {sorted({k for p in params for k in p})}.")
        values = [p[param] for p in params]
        order = sorted(range(len(values)), key=lambda i: _sort_key(values[i]))
        sign = -1.0 if negate_leakage else 1.0

        def column(key):
            return np.asarray(cv_results[key], dtype=float)[order]

        def std(key):
            sk = key.replace("mean_", "std_", 1)
            return column(sk) if key.startswith("mean_") and sk in cv_results else None

        # splits: the per-split columns a search records (split0_test_<name>, ...)
        prefix = u_key.replace("mean_test_", "", 1) if u_key.startswith("mean_test_") else None
        n_splits = (sum(1 for k in cv_results
                        if k.startswith("split") and k.endswith(f"_test_{prefix}"))
                    if prefix is not None else 0)
        if selected is not None and (isinstance(selected, (bool, np.bool_))
                                     or not isinstance(selected, Integral)
                                     or not 0 <= selected < len(params)):
            raise ValueError(f"selected={selected!r} is not a candidate of cv_results "
                             f"(0..{len(params) - 1}); pass the search's best_index_.")
        disp = cls(sign * column(l_key), column(u_key), [values[i] for i in order],
                   leakage_std=std(l_key), utility_std=std(u_key),
                   leakage_name=leakage if negate_leakage else f"{leakage} (score)",
                   utility_name=utility, param_name=param, n_splits=n_splits or None,
                   chance_level=chance_level, leakage_bound=leakage_bound,
                   selected=None if selected is None else order.index(int(selected)))
        return disp.plot(ax=ax)

    @classmethod
    def from_estimator(cls, search, *, utility, leakage, param=None, negate_leakage=True,
                       chance_level=0.0, leakage_bound=None, ax=None):
        """Trade-off of a fitted GridSearchCV / RandomizedSearchCV.

        Parameters
        ----------
        search : fitted search with ``cv_results_``
            A fitted search (e.g. ``GridSearchCV``) whose ``cv_results_`` hold the scores.
        utility : str
            Name of the utility score (a key of the search's ``scoring`` dict), plotted
            on the y axis.
        leakage : str
            Name of the leakage score (a key of the search's ``scoring`` dict), plotted
            on the x axis.
        param : str, default=None
            Searched parameter labelling the points (e.g. ``"sigma"``). Default: the
            only parameter that varies.
        negate_leakage : bool, default=True
            Plot ``-score`` of the leakage (the library's leakage scorers are negated).
        chance_level : float or None, default=0.0
            Leakage of a model without membership signal (vertical line; see the class
            docstring). None: not drawn.
        leakage_bound : float or None, default=None
            A leakage bound to draw as a vertical line.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure). The refitted candidate
            (``search.best_index_``, when the search refits) is circled.

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display, with the curve drawn.
        """
        cv_results = getattr(search, "cv_results_", None)
        if cv_results is None:
            raise ValueError(f"{type(search).__name__} has no cv_results_: pass a fitted "
                             "GridSearchCV/RandomizedSearchCV (multi-metric scoring).")
        best = getattr(search, "best_index_", None)
        return cls.from_cv_results(cv_results, utility=utility, leakage=leakage, param=param,
                                   negate_leakage=negate_leakage, chance_level=chance_level,
                                   leakage_bound=leakage_bound, selected=best, ax=ax)

    @classmethod
    def from_cross_validate(cls, results, *, utility, leakage, param="parameter",
                            negate_leakage=True, chance_level=0.0, leakage_bound=None,
                            ax=None):
        """Trade-off from ``cross_validate`` results, one per parameter value.

        Parameters
        ----------
        results : dict of value -> dict
            ``{value: sklearn.model_selection.cross_validate(...)}``: each entry holds
            ``test_<utility>`` and ``test_<leakage>`` arrays (one score per fold).
        utility : str
            Name of the utility score: each result holds ``test_<utility>``.
        leakage : str
            Name of the leakage score: each result holds ``test_<leakage>``.
        param : str, default="parameter"
            Name of the parameter (label of the line and title only).
        negate_leakage : bool, default=True
            Plot ``-score`` of the leakage (the library's leakage scorers are negated).
        chance_level : float or None, default=0.0
            Leakage of a model without membership signal (vertical line; see the class
            docstring). None: not drawn.
        leakage_bound : float or None, default=None
            A leakage bound to draw as a vertical line.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display, with the mean over folds of each score drawn and their
            standard deviations as error bars.
        """
        if not isinstance(results, dict) or not results:
            raise ValueError("results must be a non-empty dict {parameter value: "
                             "cross_validate result}.")
        cv_results = {"params": [], f"mean_test_{utility}": [], f"std_test_{utility}": [],
                      f"mean_test_{leakage}": [], f"std_test_{leakage}": []}
        per_split = []  # the utility of every fold, per value
        for value, res in results.items():
            if not isinstance(res, dict):
                raise ValueError(f"results[{value!r}] must be a cross_validate result dict.")
            cv_results["params"].append({param: value})
            for score in (utility, leakage):
                key = _score_column(res, score, "utility" if score == utility else "leakage")
                scores = np.asarray(res[key], dtype=float)
                cv_results[f"mean_test_{score}"].append(scores.mean())
                cv_results[f"std_test_{score}"].append(scores.std())
                if score == utility:
                    per_split.append(scores)
        if len({scores.size for scores in per_split}) == 1:
            # the per-split columns of a search (they give the number of folds)
            for k in range(per_split[0].size):
                cv_results[f"split{k}_test_{utility}"] = [scores[k] for scores in per_split]
        return cls.from_cv_results(cv_results, utility=utility, leakage=leakage, param=param,
                                   negate_leakage=negate_leakage, chance_level=chance_level,
                                   leakage_bound=leakage_bound, ax=ax)

    def plot(self, ax=None, *, errorbars=True, **kwargs):
        """Draw the trade-off curve.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        errorbars : bool, default=True
            Standard deviations over folds, when known.
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display itself, with ``line_``, ``errorbar_``, ``annotations_``, ``ax_``
            and ``figure_`` set.
        """
        self._check()
        ax, fig = get_axes(ax, f"{type(self).__name__}.plot")
        kwargs.setdefault("marker", "o")
        (self.line_,) = ax.plot(self.leakage, self.utility,
                                label=self.param_name or None, **kwargs)
        n = self.n_splits
        self.errorbar_ = None
        if errorbars and self.leakage_std is not None and self.utility_std is not None:
            folds = f" over {n} folds" if n is not None and n > 1 else " over folds"
            self.errorbar_ = ax.errorbar(self.leakage, self.utility, xerr=self.leakage_std,
                                         yerr=self.utility_std, fmt="none", alpha=0.4,
                                         color=self.line_.get_color(),
                                         label=f"\u00b11 s.d.{folds}")
        self.chance_level_ = None
        if self.chance_level is not None:
            self.chance_level_ = ax.axvline(self.chance_level, color="k", ls="--", lw=0.8,
                                            label="chance level (no membership signal)")
        self.bound_ = None
        if self.leakage_bound is not None:
            self.bound_ = ax.axvline(self.leakage_bound, color="C3", ls=":", lw=1.2,
                                     label=f"leakage bound {self.leakage_bound:g}")
        self.selected_ = None
        if self.selected is not None:
            k = self.selected
            (self.selected_,) = ax.plot([self.leakage[k]], [self.utility[k]], "o", ms=13,
                                        mfc="none", mec="C3", mew=1.5,
                                        label="selected (refit)")
        self.annotations_ = self._annotate(ax)
        over = f" (mean over {n} folds)" if n is not None and n > 1 else ""
        ax.set_xlabel(f"leakage: {self.leakage_name}{over}")
        ax.set_ylabel(f"utility: {self.utility_name}{over}")
        if self.param_name:
            ax.set_title(f"privacy-utility trade-off over {self.param_name}", fontsize=9)
        ax.legend(fontsize=7, loc="best")
        self.ax_, self.figure_ = ax, fig
        return self

    def _check(self):
        """Consistent arrays and numeric lines, named when they are not."""
        n = len(self.param_values)
        if not self.leakage.shape == self.utility.shape == (n,):
            raise ValueError(
                "leakage, utility and param_values must be 1-D with one entry per candidate; "
                f"got shapes {self.leakage.shape}, {self.utility.shape} and ({n},).")
        for name in ("chance_level", "leakage_bound"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, (bool, np.bool_))
                                      or not isinstance(value, Real)):
                raise TypeError(f"{name} must be a real number or None; got {value!r}.")
        k = self.selected
        if k is not None and (isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral)
                              or not 0 <= k < n):
            raise ValueError(f"selected={k!r} is not a position in 0..{n - 1} (the plotted "
                             "order of the candidates).")

    def _annotate(self, ax):
        """Parameter values next to the points, moved apart where points crowd."""
        ax.autoscale_view()
        xy = ax.transData.transform(np.column_stack([self.leakage, self.utility]))
        offsets = [(5, 4), (5, -11), (-8, 6), (-8, -13)]
        placed, out = [], []
        for v, x, y, (px, py) in zip(self.param_values, self.leakage, self.utility, xy,
                                     strict=True):
            # the first offset whose text position is not within 12 px of a placed one
            for dx, dy in offsets + [(5 + 28 * k, 4) for k in range(1, 6)]:
                pos = np.array([px + dx, py + dy])
                if all(np.hypot(*(pos - q)) >= 12 for q in placed):
                    break
            placed.append(pos)
            out.append(ax.annotate(format_value(v), (x, y), textcoords="offset points",
                                   xytext=(dx, dy), fontsize=7,
                                   ha="right" if dx < 0 else "left"))
        return out
