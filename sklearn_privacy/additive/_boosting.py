"""Differentially private cyclic boosting of per-feature shape functions."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..exceptions import NoiseDominatesWarning
from ..mechanisms._gaussian import analytic_gaussian_sigma
from ..privacy._tradeoff import RiskTarget, epsilon_value
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    OUTSIDE_LABELS_STATE,
    encode_declared_labels,
    errors_name,
    label_set_sentence,
    validate_named,
    void_outside_labels,
)
from ..utils.fixes import HasMethods, Interval, StrOptions, _fit_context, validate_data
from . import _histograms as hist
from ._params import _ATTRS, _NOTES, _PARAMS
from ._plan import (
    AUTO_ITER_RATIO,
    CLASSIFIER_CLIP_MAX_RATIO,
    MIN_CURVATURE,
    NB_PSEUDO_COUNT,
    PRIOR_SHARE,
    RESIDUAL_CLIP,
    SELECT_SHARE,
    SHARES,
    SMOOTH,
    TAU_POWER,
    _draw,
    auto_bins,
    auto_features,
    classifier_residual_clip,
    main_feature_indices,
    noise_plan,
    noise_to_signal,
    rows_per_cell,
)
from ._plan import LOSE_TO_CONSTANT_RATIO as _LOSE_RATIO
from ._post import centre_shapes, naive_bayes_scores, pooled_totals, shape_step

__all__ = ["DPBoostingClassifier", "DPBoostingRegressor"]


class _BaseDPBoosting(BaseEstimator):
    """Shared fit of the private boosting estimators (not for direct use)."""

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "bounds": ["array-like", dict, None],
        "schema": [HasMethods(["fit", "transform"]), None],
        "max_bins": [Interval(Integral, 2, 65535, closed="both"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "max_features": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "main_features": ["array-like", None],
        "learning_rate": [Interval(Real, 0, 1, closed="right")],
        "random_state": ["random_state", np.random.Generator],
    }

    # ------------------------------------------------------------ binning (public facts)
    def _binned(self, X, reset):
        """``(codes, n_bins)`` of ``X``: from the schema's declarations or ``bounds``."""
        if self.schema is not None:
            if self.bounds is not None:
                raise ValueError("Pass either schema (raw frames) or bounds (numeric "
                                 "arrays), not both: the schema declares the bounds.")
            if reset:
                validate_data(self, X, skip_check_array=True)
                self.schema_ = clone(self.schema).fit(X)
            else:
                validate_data(self, X, skip_check_array=True, reset=False)
            Xt = self.schema_.transform(X)
            cols = ([Xt.iloc[:, j].to_numpy() for j in range(Xt.shape[1])]
                    if hasattr(Xt, "iloc") else [Xt[:, j] for j in range(Xt.shape[1])])
            if reset:
                self.max_bins_ = self._resolve_bins(Xt.shape[0], Xt.shape[1])
                self.bin_edges_, self._categories = self._schema_bins()
            codes = np.empty((len(cols[0]), len(cols)), dtype=np.intp)
            for j, col in enumerate(cols):
                cats = self._categories[j]
                if cats is None:
                    codes[:, j] = hist.bin_codes(np.asarray(col, dtype=np.float64),
                                                 self.bin_edges_[j])
                else:
                    match = np.asarray(col)[:, None] == cats[None, :]
                    codes[:, j] = np.where(match.any(axis=1), np.argmax(match, axis=1),
                                           cats.size)
            return codes
        if self.bounds is None:
            raise ValueError(
                f"{type(self).__name__}: bounds is required without schema (declared "
                "(low, high) of every column; the bins are cut from them). Choose them "
                "from public knowledge of the features' ranges, not from the rows; or "
                "pass schema=PublicSchema(...) to fit raw frames.")
        X = validate_named(self, X, dtype=np.float64, reset=reset,
                           accept_sparse=["csr", "csc"])
        if reset:
            from ..preprocessing._bounded import resolve_bounds
            low, high = resolve_bounds(self.bounds, X.shape[1],
                                       getattr(self, "feature_names_in_", None))
            self.max_bins_ = self._resolve_bins(X.shape[0], X.shape[1])
            self.bin_edges_ = [hist.numeric_edges(lo, hi, self.max_bins_)
                               for lo, hi in zip(low, high, strict=True)]
            self._categories = [None] * X.shape[1]
        if sp.issparse(X):
            X = X.tocsc()
        codes = np.empty(X.shape, dtype=np.intp)
        for j in range(X.shape[1]):
            col = X[:, [j]].toarray().ravel() if sp.issparse(X) else X[:, j]
            codes[:, j] = hist.bin_codes(col, self.bin_edges_[j])
        return codes

    def _schema_bins(self):
        specs = self.schema_._specs()
        edges, cats = [], []
        for spec in specs.values():
            if spec[0] == "numeric":
                edges.append(hist.numeric_edges(spec[1], spec[2], self.max_bins_))
                cats.append(None)
            else:
                edges.append(None)
                cats.append(np.asarray(spec[1]))
        return edges, cats

    def _resolve_iter(self, n, d):
        """``max_iter``, or the ``"auto"`` rule (public quantities only): no residual
        cycle for a pure-DP classifier of three or more classes (its residual histograms
        cost twice its count histograms: L1 4 against 2), two for a regressor with at
        least AUTO_ITER_RATIO rows per column per unit of epsilon, one otherwise."""
        if self.max_iter != "auto":
            return int(self.max_iter)
        delta = float(self.delta)
        if self._task == "classification" and delta == 0.0 and len(self.classes_) >= 3:
            return 0
        if (self._task == "regression" and
                n * epsilon_value(self.epsilon, delta) / max(d, 1) >= AUTO_ITER_RATIO):
            return 2
        return 1

    def _resolve_clip(self, n, d):
        """Share of the largest residual at which residuals are clipped (public
        quantities only): ``RESIDUAL_CLIP`` for a regressor; for a classifier
        :func:`~._plan.classifier_residual_clip`."""
        if self._task == "regression":
            return float(RESIDUAL_CLIP)
        return classifier_residual_clip(
            n_samples=n, n_features=d,
            epsilon=epsilon_value(self.epsilon, float(self.delta)),
            n_classes=len(self.classes_))

    def _resolve_features(self, n, d):
        """Features modelled: ``max_features`` (at most ``d``), or the ``"auto"`` rule
        from public quantities only."""
        if self.max_features is None:
            return int(d)
        if self.max_features != "auto":
            return int(min(int(self.max_features), d))
        delta = float(self.delta)
        return auto_features(n_samples=n, n_features=d,
                             epsilon=epsilon_value(self.epsilon, delta), delta=delta,
                             n_classes=self._n_auto_classes(), task=self._task)

    def _column_names(self, d):
        """Names of the binned columns (the schema's, else ``feature_names_in_``)."""
        if self.schema is not None:
            return [str(c) for c in self.schema_._specs()]
        names = getattr(self, "feature_names_in_", None)
        return None if names is None else [str(c) for c in names]

    def _resolve_main(self, d):
        """Indices of ``main_features`` (declared, public): sorted, unique."""
        return main_feature_indices(self.main_features, d, self._column_names(d),
                                    type(self).__name__)

    def _resolve_bins(self, n, d):
        """``max_bins``, or the ``"auto"`` rule's bins from public quantities only (the
        number of modelled features, which sets the count noise, stands for ``d``)."""
        if self.max_bins != "auto":
            return int(self.max_bins)
        delta, K = float(self.delta), self._n_auto_classes()
        eps = epsilon_value(self.epsilon, delta)
        large = (self._task == "classification"
                 and rows_per_cell(n, d, eps, K) > CLASSIFIER_CLIP_MAX_RATIO)
        return auto_bins(n_samples=n, n_features=self._resolve_features(n, d),
                         epsilon=eps, delta=delta, n_classes=K, large_table=large)

    def _n_bins(self):
        return [e.size + 1 if c is None else c.size + 1
                for e, c in zip(self.bin_edges_, self._categories, strict=True)]

    # ------------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Release the noisy histograms and boost the shape functions on them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame
            Training rows (numbers within ``bounds``; raw rows with ``schema``).
        y : array-like of shape (n_samples,)
            Class labels (classifier) or real targets (regressor).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.schema is None and y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the "
                             "target y is None.")
        codes = self._binned(X, reset=True)
        with errors_name("y"):
            y = column_or_1d(y if not hasattr(y, "to_numpy") else y.to_numpy(), warn=True)
        if y.shape[0] != codes.shape[0]:
            raise ValueError(f"X and y have different numbers of rows: {codes.shape[0]} "
                             f"and {y.shape[0]}.")
        target = self._encode_target(y)
        # rows whose label is outside the declared classes: counted nowhere, residual 0
        known = self.__dict__.pop("_known_labels", None)
        n, d_all = codes.shape
        n_bins_all = self._n_bins()
        K = self._n_columns()
        self.residual_clip_ = self._resolve_clip(n, d_all)
        sens = self._sensitivities()
        main = self._resolve_main(d_all)
        d = max(self._resolve_features(n, d_all), main.size)
        n_iter = self._resolve_iter(n, d_all)
        shares = SHARES[self._task]
        # the declared main features are modelled without a selection; the private
        # selection picks the other d - m among the other d_all - m columns
        n_picks, n_cands = d - main.size, d_all - main.size
        selecting = 0 < n_picks < n_cands
        if selecting:
            shares = {k: v * (1.0 - SELECT_SHARE) for k, v in shares.items()}
            shares["select"] = SELECT_SHARE
            sens = dict(sens, select=(sens["residual"][0],) * 2)
        plan = noise_plan(epsilon=epsilon_value(self.epsilon, float(self.delta)),
                          delta=float(self.delta),
                          n_features=d, n_rounds=n_iter, sensitivities=sens,
                          shares=shares, n_candidates=n_cands if selecting else None,
                          n_picks=n_picks)
        self._warn_if_noise_dominates(plan, n, n_bins_all, d, n_iter, sens)
        warn_shared_noise(type(self).__name__, self.random_state, stacklevel=3)
        rng = noise_generator(self.random_state)
        # ---- totals (one query)
        total = self._total(target if known is None else target[known])
        total = total + _draw(rng, plan, total.shape, "total")
        intercept, newton = self._start(total, n)
        # ---- private selection of the modelled features (one query), by the L1 norm
        # of every feature's residual histogram at the (released) intercept
        selected = np.arange(d_all) if d == d_all else main
        if selecting:
            selected = self._select(codes, intercept, target, known, main, n_picks,
                                    n_bins_all, plan, rng)
        codes = codes[:, selected]
        n_bins = [n_bins_all[j] for j in selected]
        # ---- counts (one query over the modelled features)
        y_idx = self._count_index(target)
        n_count_cols = self._count_columns()
        counts = hist.count_histograms(codes if known is None else codes[known],
                                       y_idx if known is None else y_idx[known],
                                       n_bins, n_count_cols)
        counts = [c + _draw(rng, plan, c.shape, "count") for c in counts]
        bin_counts = [c.sum(axis=1) for c in counts]
        if self._task == "classification":
            # every count histogram also sums to the class totals: the intercept is
            # re-estimated from the totals and those sums, inverse-variance weighted
            # (independent unbiased estimates; post-processing of released values)
            intercept, newton = self._start(
                pooled_totals(total, plan["total_sd"], counts, plan["count_sd"]), n)
        # ---- cyclic boosting on noisy residual sums
        F = np.tile(intercept, (n, 1))
        scores = [np.zeros((nb, K)) for nb in n_bins]
        tau = PRIOR_SHARE * self._prior_bound() / d ** TAU_POWER[self._task]
        lr = float(self.learning_rate)
        for j, step in enumerate(self._first_round(counts, bin_counts, intercept, newton,
                                                   plan, tau, selected)):
            scores[j] += step
            F += step[codes[:, j]]
        lam = (plan["residual_sd"] / tau) ** 2
        for _ in range(n_iter):
            for j in range(d):
                R = self._residuals(F, target)
                if known is not None:
                    R[~known] = 0.0
                S = hist.residual_histogram(codes[:, j], R, n_bins[j])
                S = S + _draw(rng, plan, S.shape, "residual")
                step = lr * newton * self._shape_step(S, bin_counts[j], lam, selected[j])
                scores[j] += step
                F += step[codes[:, j]]
        intercept = centre_shapes(scores, bin_counts, intercept)
        all_scores = [np.zeros((nb, K)) for nb in n_bins_all]
        all_counts = [np.full(nb, np.nan) for nb in n_bins_all]
        for i, j in enumerate(selected):
            all_scores[j], all_counts[j] = scores[i], bin_counts[i]
        self._set_release(intercept, all_scores)
        self.bin_counts_ = all_counts
        self.selected_features_ = selected
        self.n_iter_ = n_iter
        self.total_noise_scale_ = float(plan["total_scale"])
        self.count_noise_scale_ = float(plan["count_scale"])
        self.residual_noise_scale_ = float(plan["residual_scale"])
        self._account(plan, sens, main, d_all)
        record_fit_provenance(self)
        return self

    def _select(self, codes, intercept, target, known, main, n_picks, n_bins, plan, rng):
        """The private selection: the ``n_picks`` columns outside ``main`` whose residual
        histograms at the released intercept have the largest noisy L1 norms (Gumbel
        top-k at ``delta=0``, the top of Gaussian-noised scores otherwise), with the
        declared ``main`` features, sorted."""
        n = codes.shape[0]
        others = np.setdiff1d(np.arange(codes.shape[1]), main)
        R0 = self._residuals(np.tile(intercept, (n, 1)), target)
        if known is not None:
            R0[~known] = 0.0
        score = hist.selection_scores(codes[:, others], R0, [n_bins[j] for j in others])
        if plan["noise"] == "laplace":
            score = score + rng.gumbel(0.0, plan["select_scale"], size=others.size)
        else:
            score = score + rng.normal(0.0, plan["select_scale"], size=others.size)
        picked = others[np.argsort(-score, kind="stable")[:n_picks]]
        return np.sort(np.concatenate([main, picked]))

    def _first_round(self, counts, bin_counts, intercept, newton, plan, tau, selected):
        """Every modelled feature's first update from its noisy per-class counts
        (post-processing; none for a regressor): naive Bayes for three classes or more,
        the ridge step of the residual sums at the intercept for two."""
        if self._n_columns() > 1:
            pseudo = NB_PSEUDO_COUNT * plan["count_sd"]
            return [naive_bayes_scores(c, pseudo) for c in counts]
        first = self._count_round(counts, intercept)
        if first is None:
            return []
        lam0 = (plan["count_sd"] / tau) ** 2
        lr = float(self.learning_rate)
        return [lr * newton * self._shape_step(first[j], bin_counts[j], lam0, selected[j])
                for j in range(len(first))]

    def _shape_step(self, S, counts, lam, feature):
        """The bins' updates from their noisy sums and counts (:func:`~._post.shape_step`;
        smoothed along a numeric feature at ``SMOOTH[task]``)."""
        numeric = self._categories[feature] is None
        return shape_step(S, counts, lam, SMOOTH[self._task] if numeric else 0.0)

    def _raw_scores(self, X):
        check_is_fitted(self)
        codes = self._binned(X, reset=False)
        F = np.tile(np.atleast_1d(self.intercept_).astype(np.float64), (codes.shape[0], 1))
        for j, s in enumerate(self.term_scores_):
            s2 = s if s.ndim == 2 else s[:, None]
            F += s2[codes[:, j]]
        return F

    def _warn_if_noise_dominates(self, plan, n, n_bins, d, n_iter, sens):
        """NoiseDominatesWarning when the public noise-to-signal ratio of the plan
        (:func:`~._plan.noise_to_signal`) exceeds ``LOSE_TO_CONSTANT_RATIO``: a function
        of n, the bins, the declared classes, epsilon and delta only, never of the rows."""
        ratio = noise_to_signal(plan, n_samples=n, n_classes=self._n_auto_classes(),
                                n_bins=float(np.mean(n_bins)), n_features=d,
                                n_rounds=n_iter, sensitivities=sens)
        threshold = _LOSE_RATIO[self._task]
        if ratio <= threshold:
            return
        what = "residual" if n_iter > 0 else "count"
        advice = "a larger epsilon, more rows, or fewer bins or features"
        if float(self.delta) == 0.0:
            advice += ", or delta > 0 (Gaussian noise grows more slowly with the features)"
        warnings.warn(
            f"{type(self).__name__}: at epsilon="
            f"{epsilon_value(self.epsilon, float(self.delta))!r}, delta="
            f"{float(self.delta)!r} with {int(n)} rows, {int(d)} modelled features and "
            f"about {float(np.mean(n_bins)):.3g} bins each, the noise on the {what} "
            f"histograms is {ratio:.3g} times the largest signal the rows expected in a "
            f"bin can carry (expected to lose to a constant prediction above {threshold}; "
            f"computed from these public quantities only, not from the rows). Use {advice}.",
            NoiseDominatesWarning, stacklevel=4)

    # ------------------------------------------------------------------ accounting
    def _account(self, plan, sens, main, d_all):
        eps = epsilon_value(self.epsilon, float(self.delta))
        self.epsilon_ = eps
        self.delta_ = float(self.delta)
        d, m = len(self.selected_features_), main.size
        selecting = "select_scale" in plan
        declared = ""
        if m:
            names = self._column_names(d_all)
            shown = [names[j] if names is not None else int(j) for j in main]
            declared = (f"; the declared main features {shown} modelled without a "
                        "selection (public parameter)")
        words = {"total": "the totals", "count": "the counts (modelled features)",
                 "residual": "each of the max_iter x n_features residual histograms"
                             + self._clip_words()}
        if self.n_iter_ == 0:
            del words["residual"]
        select = ""
        if plan["noise"] == "laplace":
            parts = [f"{plan[k + '_scale']:.6g} on {words[k]} (L1 sensitivity "
                     f"{sens[k][0] * (d if k == 'count' else 1):.6g},"
                     f" epsilon {plan[k + '_budget']:.6g})" for k in words]
            how = ("pure epsilon-DP by basic composition: Laplace noise of scale "
                   + "; ".join(parts))
            if selecting:
                select = (f"; {d - m} of the {d_all - m} "
                          f"{'other ' if m else ''}features modelled chosen by the "
                          "exponential mechanism (Gumbel top-k) on the L1 norms of the "
                          "residual histograms at the intercept (sensitivity "
                          f"{sens['select'][0]:.6g} each), Gumbel scale "
                          f"{plan['select_scale']:.6g}, epsilon "
                          f"{plan['select_budget']:.6g}")
        else:
            parts = [f"{plan[k + '_scale']:.6g} on {words[k]} (L2 sensitivity "
                     f"{sens[k][1] * (math.sqrt(d) if k == 'count' else 1):.6g},"
                     f" mu {plan[k + '_budget']:.6g})" for k in words]
            how = (f"(epsilon, delta) = ({eps!r}, {float(self.delta)!r})-DP as "
                   f"{plan['gaussian_mu']:.6g}-Gaussian DP, composed exactly: Gaussian noise "
                   "of standard deviation " + "; ".join(parts))
            if selecting:
                select = (f"; {plan['select_scale']:.6g} on the L1 norms of the "
                          f"{d_all - m} {'other ' if m else ''}residual histograms at "
                          "the intercept (L2 sensitivity "
                          f"{math.sqrt(d_all - m) * sens['select'][0]:.6g}, mu "
                          f"{plan['select_budget']:.6g}), whose top {d - m} are "
                          f"{'the other' if m else 'the'} features modelled")
        how += declared + select
        self.epsilon_reason_ = (
            f"{how}, for replacing the values of any one row (n, the schema, the bins, "
            "the label set and every parameter public); the updates and the centring are "
            "post-processing." + self._noise_note())

    def _clip_words(self):
        """How the residuals were clipped, for the claim's text (public constants)."""
        if self._task == "regression":
            return (f" (residuals clipped to +-{self._residual_bound():.6g}, a quarter of "
                    "the declared target range)")
        if len(self.classes_) == 2 and self.residual_clip_ < 1.0:
            return (f" (residuals y - p clipped to [-{self.residual_clip_:.6g}, "
                    f"{self.residual_clip_:.6g}])")
        return ""

    def _noise_note(self):
        rs = self.random_state
        if rs is None:
            return " epsilon_ assumes fresh noise: random_state=None draws it from OS entropy."
        return (f" epsilon_ assumes fresh noise, but random_state={rs!r} makes the noise "
                "reproducible or shared by clones: this release is not private as "
                "published; use random_state=None.")

    def __getstate__(self):
        # the count of rows with a label outside the declared classes: private channel
        state = dict(super().__getstate__())
        state.pop(OUTSIDE_LABELS_STATE, None)
        return state

    def __sklearn_privacy_claim__(self):
        """The step claim: ``dp`` with ``(epsilon_, delta_)`` (and the Gaussian ``mu``)."""
        from ..privacy import StepClaim
        check_is_fitted(self)
        mu = None
        if self.delta_ > 0:
            mu = 1.0 / analytic_gaussian_sigma(self.epsilon_, self.delta_, 1.0)
        reason = self.epsilon_reason_ + label_set_sentence(self)
        return StepClaim("", type(self).__name__, "dp", float(self.epsilon_),
                         float(self.delta_), reason, gaussian_mu=mu)

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``):
        the scores, intercept and noisy counts are the mechanism's output; the bin
        edges and noise scales are functions of the parameters, the declared schema and
        the public number of rows; the schema is walked as a child."""
        kinds = {"intercept_": "dp", "term_scores_": "dp", "bin_counts_": "dp",
                 "bin_edges_": "constant", "_categories": "constant",
                 "count_noise_scale_": "constant", "total_noise_scale_": "constant",
                 "residual_noise_scale_": "constant", "n_iter_": "constant",
                 "max_bins_": "constant", "residual_clip_": "constant",
                 "selected_features_": "dp",
                 "schema_": "child"}
        if "classes_" in self.__dict__:
            declared = self._declared_classes()
            if declared is None:
                kinds["classes_"] = ("rows", "the label set found in y: one row with a "
                                     "new label changes classes_ and the shapes of the "
                                     "scores; pass classes=[...] (the public label set)")
            elif not (np.array_equal(np.unique(np.asarray(declared)), self.classes_)
                      and np.asarray(declared).dtype == self.classes_.dtype):
                kinds["classes_"] = ("rows", "classes_ differs from the declared classes")
            else:
                kinds["classes_"] = "public"
        return kinds

    def _declared_classes(self):
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.schema is None
        tags.non_deterministic = True
        if self.schema is not None:
            tags.input_tags.string = True
            tags.input_tags.categorical = True
            tags.input_tags.allow_nan = True
        return tags


class DPBoostingClassifier(ClassifierMixin, _BaseDPBoosting):
    _task = "classification"

    __doc__ = """Private additive classifier by cyclic boosting (pure or (eps, delta)-DP).

    An additive model ``f(x) = intercept + sum_j s_j(bin_j(x_j))`` (one logit for two
    classes, one per class for more) whose shape functions ``s_j`` are boosted on noisy
    per-bin residual sums, like DP-EBM, with a pure-DP (Laplace) and a Gaussian
    variant, two or more classes, and a raw-frame front through a declared
    :class:`~sklearn_privacy.preprocessing.PublicSchema`. It can follow any shape of a
    feature's effect (steps, thresholds, non-monotone curves), where a private linear
    model can only follow a line.

    Parameters
    ----------
{PARAMS}    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, declared (else the schema's ``classes``). ``None`` (and no
        schema classes): ``classes_`` is the set of labels found in ``y``, which one row
        can change, so :func:`~sklearn_privacy.privacy_claim` is ``inf``. A row whose
        label is outside the declared set stays a row and contributes nothing (see
        Notes): no label value makes the fit fail.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels (declared, sorted; else those found in ``y``).
{ATTRS}
    See Also
    --------
    DPBoostingRegressor : The same for real targets.
    sklearn_privacy.DPLogisticRegression : A private linear classifier.
{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.additive import DPBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(5000, 3))
    >>> y = ((X[:, 0] > 6) | (X[:, 1] < 2)).astype(int)      # steps, not a line
    >>> clf = DPBoostingClassifier(epsilon=1.0, delta=0.0, bounds=(0, 10),
    ...                            classes=[0, 1]).fit(X, y)
    >>> clf.epsilon_, clf.delta_
    (1.0, 0.0)
    >>> bool(clf.score(X, y) > 0.85)
    True
    """.replace("{PARAMS}", _PARAMS.replace("{LR}", "0.5")).replace(
        "{ATTRS}", _ATTRS).replace("{NOTES}", _NOTES)

    _parameter_constraints = {
        **_BaseDPBoosting._parameter_constraints,
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon=1.0, *, delta=1e-5, bounds=None, schema=None,
                 max_bins="auto", max_iter="auto", max_features="auto",
                 main_features=None, learning_rate=0.5, random_state=None, classes=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.schema = schema
        self.max_bins = max_bins
        self.max_iter = max_iter
        self.max_features = max_features
        self.main_features = main_features
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.classes = classes

    def _declared_classes(self):
        if self.classes is not None:
            return self.classes
        return getattr(self.schema, "classes", None)

    def _encode_target(self, y):
        declared = self._declared_classes()
        if declared is not None:
            y, known = void_outside_labels(self, declared, y)
            if known is not None:
                self.__dict__["_known_labels"] = known
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError(f"{type(self).__name__}: y contains NaN or infinity; class "
                             "labels must be finite (drop or label those rows).")
        with errors_name("y"):
            check_classification_targets(y)
            if declared is not None:
                classes, idx = encode_declared_labels(declared, y)
            else:
                classes, idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs y with at least 2 classes, got "
                             f"{classes.size} class(es); or declare classes=[...].")
        self.classes_ = classes
        return idx.astype(np.intp)

    def _n_columns(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _count_columns(self):
        return len(self.classes_)

    def _count_index(self, target):
        return target

    def _sensitivities(self):
        return hist.sensitivities("classification", len(self.classes_),
                                  residual_clip=self.residual_clip_)

    def _residual_bound(self):
        return 1.0

    def _prior_bound(self):
        return 1.0

    def _n_auto_classes(self):
        declared = self._declared_classes()
        return 2 if declared is None else max(len(np.unique(np.asarray(declared))), 2)

    def _total(self, target):
        return np.bincount(target, minlength=len(self.classes_)).astype(np.float64)

    def _start(self, totals, n):
        """Intercept from the noisy class totals and the Newton factor of each column."""
        K = len(self.classes_)
        share = np.clip(totals / n, 1.0 / (2 * n), None)
        share = share / share.sum()
        curvature = np.maximum(share * (1 - share), MIN_CURVATURE)
        if K == 2:
            logit = math.log(share[1] / share[0])
            return np.array([logit]), 1.0 / curvature[1]
        log_share = np.log(share)
        return log_share - log_share.mean(), 1.0 / curvature

    def _count_round(self, counts, intercept):
        """Per feature, the residual sums at the starting intercept, from the noisy
        per-class counts: ``N[b, 1] - p C[b]`` (two classes; three or more start from
        naive Bayes instead, see ``_first_round``)."""
        p = expit(intercept[0])
        return [(c[:, 1] - p * c.sum(axis=1))[:, None] for c in counts]

    def _residuals(self, F, target):
        if F.shape[1] == 1:
            c = self.residual_clip_
            return np.clip((target == 1).astype(np.float64)[:, None] - expit(F), -c, c)
        R = -softmax(F, axis=1)
        R[np.arange(F.shape[0]), target] += 1.0
        return R

    def _set_release(self, intercept, scores):
        if len(self.classes_) == 2:
            self.intercept_ = float(intercept[0])
            self.term_scores_ = [s[:, 0].copy() for s in scores]
        else:
            self.intercept_ = np.asarray(intercept, dtype=np.float64)
            self.term_scores_ = scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def decision_function(self, X):
        """Compute the log-odds (two classes) or class scores of the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``intercept_`` plus every feature's bin score (one column for two classes,
            raveled).
        """
        F = self._raw_scores(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict_proba(self, X):
        """Class probabilities under the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return softmax(z, axis=1)
        return np.column_stack([expit(-z), expit(z)])

    def predict_log_proba(self, X):
        """Log class probabilities under the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities in the order of ``classes_``, without underflow.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return log_softmax(z, axis=1)
        return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])

    def predict(self, X):
        """Class labels under the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The class of the largest score.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return self.classes_[np.argmax(z, axis=1)]
        return self.classes_[(z > 0).astype(int)]


class DPBoostingRegressor(RegressorMixin, _BaseDPBoosting):
    _task = "regression"

    __doc__ = """Private additive regressor by cyclic boosting (pure or (eps, delta)-DP).

    An additive model ``f(x) = intercept + sum_j s_j(bin_j(x_j))`` boosted on noisy
    per-bin sums of the residuals ``y - f(x)``, clipped to a quarter of the declared
    target range; targets are clipped to ``target_bound``. See
    :class:`DPBoostingClassifier` for the mechanism.

    Parameters
    ----------
{PARAMS}    target_bound : float > 0 or (low, high)
        Declared range of ``y``: ``B`` for ``[-B, B]`` or a pair ``(low, high)``
        (required; targets outside are clipped silently). The residual sensitivity is
        ``(high - low) / 2``, so a tight public range pays off directly.

    Attributes
    ----------
{ATTRS}
    See Also
    --------
    DPBoostingClassifier : The same for class labels.
    sklearn_privacy.DPLinearRegression : A private linear regressor.
{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.additive import DPBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = np.sin(3 * X[:, 0]) + np.abs(X[:, 1]) + 0.1 * rng.normal(size=5000)
    >>> reg = DPBoostingRegressor(epsilon=1.0, delta=0.0, bounds=(-1, 1),
    ...                           target_bound=(-2, 3)).fit(X, y)
    >>> bool(reg.score(X, y) > 0.7), reg.epsilon_
    (True, 1.0)
    """.replace("{PARAMS}", _PARAMS.replace("{LR}", "1.0")).replace(
        "{ATTRS}", _ATTRS).replace("{NOTES}", _NOTES)

    _parameter_constraints = {
        **_BaseDPBoosting._parameter_constraints,
        "target_bound": [Interval(Real, 0, None, closed="neither"), "array-like", None],
    }

    def __init__(self, epsilon=1.0, *, delta=1e-5, bounds=None, schema=None,
                 max_bins="auto", max_iter="auto", max_features="auto",
                 main_features=None, learning_rate=1.0, random_state=None, target_bound=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.schema = schema
        self.max_bins = max_bins
        self.max_iter = max_iter
        self.max_features = max_features
        self.main_features = main_features
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.target_bound = target_bound

    def _target_range(self):
        tb = self.target_bound
        if tb is None:
            raise ValueError(
                f"{type(self).__name__}: target_bound is required (a declared range of y: "
                "B for [-B, B] or (low, high); the noise is calibrated to it). Choose it "
                "from public knowledge of the target, not from the rows.")
        if isinstance(tb, Real):
            return -float(tb), float(tb)
        pair = np.asarray(tb, dtype=np.float64).ravel()
        if pair.shape != (2,) or not np.all(np.isfinite(pair)) or pair[0] >= pair[1]:
            raise ValueError("target_bound must be a number B > 0 or a finite pair (low, "
                             f"high) with low < high; got {tb!r}.")
        return float(pair[0]), float(pair[1])

    def _encode_target(self, y):
        with errors_name("y"):
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("Input y contains NaN or infinity.")
        low, high = self._target_range()
        return np.clip(y, low, high)

    def _n_columns(self):
        return 1

    def _count_columns(self):
        return 1

    def _count_index(self, target):
        return np.zeros(target.shape[0], dtype=np.intp)

    def _sensitivities(self):
        low, high = self._target_range()
        return hist.sensitivities("regression", target_width=high - low,
                                  residual_clip=RESIDUAL_CLIP)

    def _residual_bound(self):
        low, high = self._target_range()
        return RESIDUAL_CLIP * 0.5 * (high - low)

    def _prior_bound(self):
        low, high = self._target_range()
        return 0.5 * (high - low)

    def _n_auto_classes(self):
        return 1

    def _total(self, target):
        low, high = self._target_range()
        return np.array([np.sum(target - 0.5 * (low + high))])

    def _start(self, total, n):
        low, high = self._target_range()
        mean = np.clip(0.5 * (low + high) + total[0] / n, low, high)
        return np.array([mean]), 1.0

    def _count_round(self, counts, intercept):
        return None

    def _residuals(self, F, target):
        h = self._residual_bound()
        return np.clip(target[:, None] - F, -h, h)

    def _set_release(self, intercept, scores):
        self.intercept_ = float(intercept[0])
        self.term_scores_ = [s[:, 0].copy() for s in scores]

    def predict(self, X):
        """Predict with the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or DataFrame

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``intercept_`` plus every feature's bin score.
        """
        return self._raw_scores(X)[:, 0]
