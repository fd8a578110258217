"""Differentially private hyperparameter selection by random stopping."""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..exceptions import AuditStateUnavailableError
from ..privacy import StepClaim, TradeoffCurve
from ..privacy._tradeoff import RiskTarget
from ..utils._provenance import record_fit_provenance
from ..utils._random import child_seeds, noise_generator
from ..utils._weights import weights_are_public
from ..utils.fixes import (
    Interval,
    StrOptions,
    _fit_context,
    _num_samples,
    _safe_indexing,
    routing_enabled,
)
from ._accounting import runs_gamma, selection_bound, selection_profile
from ._candidates import (
    _check_candidate,
    _final_step,
    _verify_fitted,
    _with_budget,
)

__all__ = ["RandomStoppingSearch"]


def _set_random_states(estimator, seed):
    """Every nested ``random_state`` set to ``seed`` (``None``: fresh entropy), skipping
    the inside of frozen estimators (fitted elsewhere, their parameters are fixed)."""
    params = estimator.get_params(deep=True)
    frozen = [k for k, v in params.items() if isinstance(v, FrozenEstimator)]
    names = [k for k in params
             if (k == "random_state" or k.endswith("__random_state"))
             and not any(k.startswith(f + "__") for f in frozen)]
    if names:
        estimator.set_params(**dict.fromkeys(names, seed))
    return estimator


def _indexable(a):
    """Frames, series, arrays and sparse matrices as given; other array-likes as arrays."""
    if issparse(a):
        return a if a.format in ("csr", "csc") else a.tocsr()  # row indexing
    if hasattr(a, "iloc") or isinstance(a, np.ndarray):
        return a
    return np.asarray(a)


def _accuracy_rows(estimator, X, y):
    return (np.asarray(estimator.predict(X)) == np.asarray(y)).astype(float)


def _one_run(estimator, params, seed, X_tr, y_tr, X_va, y_va, fit_params, scoring,
             n_val, budget=None):
    """One candidate run: ``(fitted candidate, mean clipped validation score, the
    warnings its fit raised)``; the score noise is added by the caller."""
    # an estimator given as a setting (a pipeline step to swap in) is cloned per run
    params = {k: (clone(v) if isinstance(v, BaseEstimator) else v)
              for k, v in params.items()}
    candidate = _set_random_states(
        _with_budget(clone(estimator).set_params(**params), budget), seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        candidate.fit(X_tr, y_tr, **fit_params)
        rows = (_accuracy_rows(candidate, X_va, y_va) if scoring == "accuracy"
                else np.asarray(scoring(candidate, X_va, y_va), dtype=float))
    if rows.shape != (n_val,):
        raise ValueError(f"scoring must return one score per row ({n_val}); got shape "
                         f"{rows.shape}.")
    # a non-finite score counts as 0 (a fixed rule: no failure that one row decides)
    rows = np.nan_to_num(rows, nan=0.0, posinf=1.0, neginf=0.0)
    messages = [(w.category.__name__, str(w.message)) for w in caught]
    return candidate, float(np.mean(np.clip(rows, 0.0, 1.0))), messages


def _check_rows(X, y):
    """``(X, y, y values)``: indexable, one finite target per row."""
    if y is None:
        raise ValueError("RandomStoppingSearch requires y to be passed, but the target y "
                         "is None.")
    X, y = _indexable(X), _indexable(y)
    if isinstance(y, np.ndarray) and y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    y_values = np.asarray(y)
    if y_values.dtype.kind in "fc" and not np.all(np.isfinite(y_values)):
        # a bad target in the validation part would never reach the candidate
        raise ValueError("Input y contains NaN or infinity: every row needs a finite "
                         "target.")
    n = _num_samples(X)
    if _num_samples(y) != n:
        raise ValueError(f"X has {n} rows but y has {_num_samples(y)}: give one target "
                         "per row.")
    return X, y, y_values


def _training_params(routed, train, n):
    """``(fit parameters cut to the training rows, their sample weights or None)``."""
    routed_train = {k: (_safe_indexing(v, train)
                        if hasattr(v, "__len__") and not isinstance(v, str | dict)
                        and _num_samples(v) == n else v)
                    for k, v in routed.items()}
    weights = [v for k, v in routed_train.items()
               if k.split("__")[-1] == "sample_weight" and v is not None]
    sw = np.asarray(weights[0], dtype=np.float64) if weights else None
    return routed_train, sw


def _draw_settings(rng, n_runs, n_settings, seeded, scale):
    """``(setting, seed, score noise)`` of every run, all drawn before any fit.

    In the order setting, seed, score noise for each run; the runs are then independent.
    """
    draws = []
    for _ in range(n_runs):
        k = int(rng.choice(n_settings))
        seed = int(child_seeds(rng, 1)[0]) if seeded else None
        draws.append((k, seed, float(rng.laplace(0.0, scale))))
    return draws


def _estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)
    return check


class RandomStoppingSearch(MetaEstimatorMixin, BaseEstimator):
    """Differentially private hyperparameter selection by random stopping.

    Runs a randomised candidate ``K`` times on the private rows and releases only the
    best run; ``K`` is drawn, independently of the data, from the geometric distribution
    on ``{1, 2, ...}`` with mean ``mean_runs`` (after every run the search stops with
    probability ``1 / mean_runs``: Liu & Talwar's random stopping) or, with
    ``distribution="logarithmic"``, from Papernot & Steinke's logarithmic law of the same
    mean. One candidate run:

    1. draw one setting uniformly from ``param_grid`` (independently of the data);
    2. train ``clone(estimator)`` with it on the training part of a random,
       data-independent split (``validation_fraction`` of the rows held out; the split
       is drawn once per ``fit``), with a DP mechanism: a FIL estimator's Gaussian output
       perturbation (``data_norm`` set, ``fit_intercept=False``, ``alpha > 0``) or
       ``PrivateMulticalibrator(mechanism="numeric_sparse")`` over a frozen base;
    3. score it on the validation part with a DP score: the mean of per-row scores in
       ``[0, 1]`` (accuracy by default) plus Laplace noise of scale
       ``1 / (n_validation * score_epsilon)`` (one row moves the mean by at most
       ``1 / n_validation``).

    Read more in the :ref:`User Guide <private_selection>`.

    Parameters
    ----------
    estimator : estimator object
        The candidate model: :class:`~sklearn_privacy.DPLogisticRegression` or
        :class:`~sklearn_privacy.DPLinearRegression` (pure or Gaussian),
        :class:`~sklearn_privacy.FILLogisticRegression` or
        :class:`~sklearn_privacy.FILLinearRegression` in their DP view,
        :class:`~sklearn_privacy.DPBoostingClassifier` and
        :class:`~sklearn_privacy.DPBoostingRegressor`, the constant
        models :class:`~sklearn_privacy.dummy.DPDummyClassifier` and
        :class:`~sklearn_privacy.dummy.DPDummyRegressor`,
        :class:`~sklearn_privacy.PrivateMulticalibrator` with
        ``mechanism="numeric_sparse"`` over a ``FrozenEstimator``, or a
        :class:`~sklearn.pipeline.Pipeline` ending in one of them whose other steps are
        data-independent (``FunctionTransformer`` with a function not derived from the
        private rows, ``OneHotEncoder(categories=[...])``,
        ``FrozenEstimator``, a ``ColumnTransformer`` of those, or any step whose
        ``__sklearn_privacy_claim__`` says ``"data_independent"``); anything else is
        refused at fit.
    param_grid : dict or list of dicts
        Finite grid of settings (as for :class:`~sklearn.model_selection.GridSearchCV`,
        nested names such as ``"filogisticregression__alpha"`` for pipelines). Every
        setting counts in the accounting, drawn or not: the guarantee is that of the
        least private setting.
    mean_runs : float >= 1, default=10
        Expected number of runs ``E[K]``; ``1`` runs exactly once.
    distribution : {"geometric", "logarithmic"}, default="geometric"
        Law of ``K`` (see
        :func:`~sklearn_privacy.model_selection.random_stopping_epsilon`):
        ``"geometric"`` is random stopping, ``(3 epsilon, 0)`` for ``(epsilon, 0)``-DP candidates;
        ``"logarithmic"`` (``P[K = k]`` proportional to ``(1 - gamma)^k / k``) costs
        less, ``(2 epsilon, 0)``, and has a heavier tail of long searches.
    score_epsilon : float > 0, default=0.1
        Budget of each run's Laplace-noised validation score.
    validation_fraction : float in (0, 1), default=0.25
        Share of the rows held out for scoring (rounded to the nearest count, at least
        one row in each part). The training part is ``n - n_validation`` rows, which is
        what the candidates' sensitivity is computed for.
    scoring : "accuracy" or callable, default="accuracy"
        ``"accuracy"``: per-row correctness of ``predict``. A callable
        ``scoring(estimator, X, y)`` must return one score per row; values are clipped to
        ``[0, 1]`` (row by row, so the sensitivity of the mean stays ``1 / n``).
    delta : float in (0, 1), default=1e-5
        The delta of the reported total (Gaussian candidates only; pure-DP candidates give
        ``delta = 0`` when that bound is the smaller one).
    n_jobs : int or None, default=None
        Number of candidate runs fitted in parallel (joblib; ``None`` is 1 unless in a
        ``joblib.parallel_config`` context, ``-1`` all processors). ``K``, the
        settings, the seeds and the score noise are drawn before any run, so the release
        does not depend on ``n_jobs``.
    verbose : int, default=0
        ``> 0``: print one line per run (its setting and noisy score, and ``K``). The
        printed text is the transcript of the search, which the guarantee does not
        cover (see Notes): it is for the fitting session only, never to be published.
    random_state : None, int, RandomState or Generator, default=None
        Source of the split, ``K``, the settings drawn, the score noise and the
        candidates' noise (every nested ``random_state`` of a candidate is overwritten:
        ``None``, or a child seed of a fixed ``random_state``). ``None`` draws fresh OS
        entropy; a fixed value makes every draw reproducible and the release
        **non-private** (tests only).
    risk : RiskTarget or None, default=None
        The risk accepted for the whole release (winner, setting and score), e.g.
        ``RiskTarget(tpr=0.05, fpr=0.01)``. The search then sets the ``epsilon`` of every
        candidate's final estimator to the largest value whose selection curve
        (``tradeoff_``) meets the target, with ``score_epsilon`` as given, from the
        grid, the number of training rows, the label set and the declared weights only,
        before any row is read (the value is ``planned_epsilon_``). The final
        estimator needs an ``epsilon`` parameter, and ``param_grid`` must not set it.
        ``None``: every candidate keeps its own budget.

    Attributes
    ----------
    best_estimator_ : estimator
        The winning run's model, trained on the training part only (refitting it on all
        rows would be a further release, not covered).
    best_params_ : dict
        The winning run's setting.
    best_score_ : float
        The winning run's *noisy* validation score (released with the winner).
    epsilon_ : float
        Total epsilon of the release (``best_estimator_``, ``best_params_``,
        ``best_score_``) at ``delta_``.
    delta_ : float
        The delta at which ``epsilon_`` holds (``0.0`` for a pure-DP total).
    epsilon_reason_ : str
        The theorem and the quantities behind ``epsilon_``.
    tradeoff_ : TradeoffCurve
        The release's trade-off curve (largest TPR of any membership attack at each
        FPR), built from the selection's whole privacy profile: the Renyi-DP bound of
        Papernot & Steinke converted at every epsilon (and the pure-DP bound when it
        applies). Conservative (a bound, not the exact curve), and far below the curve
        of the single pair ``(epsilon_, delta_)``. Read by
        :func:`~sklearn_privacy.privacy.tradeoff_curve` and ``privacy_claim(search)``.
    planned_epsilon_ : float or None
        The ``epsilon`` given to every candidate from ``risk`` (``None`` without it).
    candidate_gaussian_mu_ : float
        Largest ``sensitivity / sigma`` of a Gaussian training mechanism over the grid.
    candidate_epsilon_ : float
        Largest epsilon of a pure-DP training mechanism over the grid.
    n_validation_ : int
        Number of held-out rows (a function of ``n`` only).
    n_features_in_ : int
        Number of features seen during fit (from ``best_estimator_``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    classes_ : ndarray
        Class labels (classifiers; treated as public).

    See Also
    --------
    sklearn_privacy.model_selection.random_stopping_epsilon : The accountant behind ``epsilon_``.
    sklearn.model_selection.GridSearchCV : Non-private selection: its choice depends on
        every row without any bound.

    Notes
    -----
    **Guarantee and threat model.** Neighbouring data sets differ in the values of one
    row (replacement; ``n``, the grid and every other parameter are public). The
    adversary is computationally unbounded, sees
    ``best_estimator_``, ``best_params_`` and ``best_score_`` and knows everything else.
    One candidate run is DP with respect to the rows: the training rows are seen only by
    the training mechanism (the score is post-processing of the model for them), the
    validation rows only by the Laplace score (parallel composition), and the drawn
    setting is data-independent. The total is the smaller of two bounds. For pure
    candidates, an ``(epsilon, 0)``-DP candidate gives a ``(3 epsilon, 0)``-DP selection
    with the geometric law (Liu & Talwar, 2019) and ``(2 epsilon, 0)`` with the
    logarithmic one. In Renyi DP (which covers Gaussian candidates), Papernot & Steinke
    (2022), Theorem 2 (``eta = 1`` geometric, ``eta = 0`` logarithmic), converted to
    ``(epsilon, delta)``. See
    :func:`~sklearn_privacy.model_selection.random_stopping_epsilon`.

    **Not guaranteed, hence not released.** The number of runs ``K`` is independent of the
    data, but the theorems need it *secret*: given ``K = k`` the release is the best of
    ``k`` runs, whose privacy loss grows with ``k``. Likewise the transcript of all runs
    (their settings and scores) is not covered. Both are audit state (:attr:`n_runs_`,
    :attr:`audit_results_`): available in the fitting session, never written to a
    pickle/joblib dump, and not to be published. A fixed ``random_state`` voids the
    guarantee. Stratified or data-dependent splits would void it too, which is why the
    split is a plain random permutation of positions.

    **Every run counts, nothing else is said.** The search makes all its draws (``K``,
    the settings, the seeds, the score noise) before it fits a candidate, and every run
    is scored and counted: no run is discarded or redrawn because of an outcome on the
    rows (a redraw would make the release depend on whether one row lets a certificate
    pass). The objective-perturbation candidates certify every fit by construction
    (their solver finishes to a data-independent step count); a non-finite per-row score
    counts as 0. The warnings of the candidate fits are not re-emitted (which of them
    fire depends on the settings drawn and on the rows): they are kept in the audit
    state (``audit_results_["warnings"]``), with ``K`` and the transcript.

    **Candidates and their accounting.** Objective perturbation
    (:class:`~sklearn_privacy.DPLogisticRegression`,
    :class:`~sklearn_privacy.DPLinearRegression`) with ``delta=0`` and the constant
    models (:class:`~sklearn_privacy.dummy.DPDummyClassifier`,
    :class:`~sklearn_privacy.dummy.DPDummyRegressor`) are ``(epsilon, 0)``-DP
    candidates at their own ``epsilon``; Gaussian objective perturbation (``delta >
    0``) enters through its Renyi-DP curve
    (``sklearn_privacy.mechanisms._objective_perturbation.gaussian_objective_rdp``, derived there),
    FIL output perturbation through its Gaussian ``sensitivity / sigma`` or its pure
    epsilon, private boosting (:class:`~sklearn_privacy.DPBoostingClassifier`,
    :class:`~sklearn_privacy.DPBoostingRegressor`) at its pure epsilon (``delta=0``) or
    its exact Gaussian-DP ``mu`` (``delta > 0``). A grid may mix them: the accounting
    takes, order by order, the largest.
    Include the constant model in the grid (e.g. a list of two grids, one with
    ``"estimator"`` replaced) so that the selection is never silently worse than a
    constant: see the user guide.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLogisticRegression
    >>> from sklearn_privacy.model_selection import RandomStoppingSearch
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
    >>> base = FILLogisticRegression(fit_intercept=False, data_norm=1.0, sigma=0.5)
    >>> search = RandomStoppingSearch(base, {"alpha": [0.01, 0.1]}, mean_runs=5,
    ...                               score_epsilon=0.5).fit(X, y)
    >>> sorted(search.best_params_)
    ['alpha']
    >>> round(search.epsilon_, 2)        # the whole release: model, setting and score
    2.26
    >>> search.__sklearn_privacy_claim__().kind
    'dp'
    """

    _selects_on_rows = True  # candidates fitted here record it (fit_provenance_)
    _records_fit_provenance = True  # a missing record makes the claim inf

    _parameter_constraints: dict = {
        "estimator": [BaseEstimator],
        "param_grid": [dict, list],
        "mean_runs": [Interval(Real, 1, None, closed="left")],
        "distribution": [StrOptions({"geometric", "logarithmic"})],
        "score_epsilon": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "scoring": [StrOptions({"accuracy"}), callable],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
        "risk": [RiskTarget, None],
    }

    def __init__(self, estimator, param_grid, *, mean_runs=10.0, distribution="geometric",
                 score_epsilon=0.1, validation_fraction=0.25, scoring="accuracy",
                 delta=1e-5, n_jobs=None, verbose=0, random_state=None, risk=None):
        self.risk = risk
        self.estimator = estimator
        self.param_grid = param_grid
        self.mean_runs = mean_runs
        self.distribution = distribution
        self.score_epsilon = score_epsilon
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.delta = delta
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = copy.deepcopy(inner.classifier_tags)
        tags.regressor_tags = copy.deepcopy(inner.regressor_tags)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.string = inner.input_tags.string
        tags.input_tags.categorical = inner.input_tags.categorical
        tags.target_tags.required = True
        tags.non_deterministic = True
        return tags

    def _grid(self):
        try:
            grid = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"param_grid: {exc}") from exc
        if not grid:
            raise ValueError("param_grid is empty: give at least one setting.")
        return grid

    def _split_sizes(self, n):
        if isinstance(n, Integral) and n < 2:
            raise ValueError("RandomStoppingSearch needs at least 2 rows of X (one to train, "
                             f"one to score); got n_samples = {n}.")
        n_val = int(round(self.validation_fraction * n))
        n_val = min(max(n_val, 1), n - 1)
        return n - n_val, n_val

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Select a setting privately and release the winning run.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            The private rows, passed to the candidates untouched (row subsets only).
        y : array-like of shape (n_samples,)
            Targets.
        **fit_params : dict
            Parameters passed to every candidate's ``fit`` (with metadata routing
            enabled, those the candidate requests; otherwise all of them). A parameter
            with one value per row (``sample_weight``) is cut to the training rows like
            ``X``. Weights must be declared public
            (:func:`~sklearn_privacy.utils.public_weights`): row-dependent weights void
            every candidate's guarantee, so they are refused before any row is read.

        Returns
        -------
        self : object
            The fitted search.

        Raises
        ------
        ValueError
            A candidate without a DP guarantee (the message names the setting and the
            reason), a data-dependent preprocessing step, undeclared weights, an empty
            grid, fewer than two rows, or ``X`` and ``y`` of different lengths.
        TypeError
            A candidate estimator whose privacy the search cannot account for.
        """
        X, y, y_values = _check_rows(X, y)
        n = _num_samples(X)
        routed = self._route_fit_params(fit_params)
        n_train, n_val = self._split_sizes(n)
        n_classes = self._n_classes(y_values)
        grid = self._grid()

        rng = noise_generator(self.random_state)
        order = rng.permutation(n)
        train, val = np.sort(order[:n_train]), np.sort(order[n_train:])
        routed_train, sw = _training_params(routed, train, n)
        # the plan (every candidate's budget and the accounting) reads n, the grid, the
        # label set and the declared weights only: it is fixed before any row is read
        budget = (None if self.risk is None else
                  self._plan_budget(grid, n_train, n_classes, sw))
        mus, pures, curves = self._account_grid(grid, n_train, n_classes, sw, budget)
        mu_max, pure_max = max(mus), max(pures)
        total, pure_total = selection_bound(self.mean_runs, self.score_epsilon, mu_max,
                                            pure_max, self.delta, self.distribution,
                                            extra_rdp=curves)
        tradeoff = self._tradeoff(mu_max, pure_max, curves, total,
                                  0.0 if pure_total else float(self.delta))

        X_tr, y_tr = _safe_indexing(X, train), _safe_indexing(y, train)
        X_va, y_va = _safe_indexing(X, val), _safe_indexing(y, val)
        n_runs = self._draw_runs(rng)
        seeded = self.random_state is not None
        scale = 1.0 / (n_val * float(self.score_epsilon))
        draws = _draw_settings(rng, n_runs, len(grid), seeded, scale)
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_one_run)(self.estimator, grid[k], seed, X_tr, y_tr, X_va, y_va,
                              routed_train, self.scoring, n_val, budget)
            for k, seed, _ in draws)
        best, runs, caught = self._select(draws, results, grid, mus, pures)
        self.best_estimator_ = best[2]
        self.best_params_ = dict(grid[best[0]])
        self.best_score_ = best[1]
        self.candidate_gaussian_mu_ = float(mu_max)
        self.candidate_epsilon_ = float(pure_max)
        self.n_validation_ = int(n_val)
        self.epsilon_ = float(total)
        self.delta_ = 0.0 if pure_total else float(self.delta)
        self.epsilon_reason_ = self._reason(pure_total, mu_max, pure_max, n_train, n_val)
        self.planned_epsilon_ = budget
        self.tradeoff_ = tradeoff
        self._audit = {"n_runs": n_runs,
                       "params": [dict(grid[k]) for k, _ in runs],
                       "scores": np.array([s for _, s in runs]),
                       "warnings": caught}
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.best_estimator_, attr):
                setattr(self, attr, getattr(self.best_estimator_, attr))
        record_fit_provenance(self)
        return self

    def _route_fit_params(self, fit_params):
        """The candidates' fit parameters (routed when routing is on); weights public."""
        routed = (process_routing(self, "fit", **fit_params).estimator.fit
                  if routing_enabled() else dict(fit_params))
        for key, value in routed.items():
            if key.split("__")[-1] == "sample_weight" and value is not None \
                    and not weights_are_public(value):
                raise ValueError(
                    f"{key} is not declared public: weights computed from the rows "
                    "(balanced classes, group sizes) are data and void every candidate's "
                    "guarantee. Declare weights fixed before the rows were seen with "
                    "sklearn_privacy.utils.public_weights(...).")
        return routed

    def _select(self, draws, results, grid, mus, pures):
        """``(best (setting, noisy score, candidate), runs, warnings)`` over the runs.

        Every fitted candidate is checked against its accounting before its noisy score
        counts.
        """
        best, runs, caught = None, [], []
        for i, ((k, _, noise), (candidate, mean, messages)) in enumerate(
                zip(draws, results, strict=True)):
            _verify_fitted(candidate, mus[k], pures[k])
            score = mean + noise
            runs.append((k, score))
            caught.extend(messages)
            if best is None or score > best[1]:
                best = (k, score, candidate)
            if self.verbose:
                print(f"[RandomStoppingSearch] run {i + 1} of {len(draws)}: setting "
                      f"{grid[k]}, noisy score {score:.4g}")
        return best, runs, caught

    def _account_grid(self, grid, n_train, n_classes, sample_weight, budget):
        """``(mus, pures, rdp_curves)`` of every setting of the grid (public inputs)."""
        mus, pures, curves = [], [], []
        final, path = _final_step(self.estimator)
        eps_key = "__".join([*path, "epsilon"])
        for params in grid:
            if budget is not None and eps_key in params:
                raise ValueError(
                    f"param_grid setting {params} sets {eps_key!r}, but risk sets every "
                    "candidate's epsilon; remove it from param_grid or leave risk=None.")
            candidate = _with_budget(clone(self.estimator).set_params(**params), budget)
            try:
                mu, pure, curve = _check_candidate(candidate, n_train, n_classes,
                                                   sample_weight)
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"param_grid setting {params}: {exc}") from exc
            mus.append(mu)
            pures.append(pure)
            if curve is not None and curve.key not in {c.key for c in curves}:
                curves.append(curve)
        return mus, pures, curves

    def _tradeoff(self, mu, pure, curves, epsilon, delta) -> TradeoffCurve:
        """The selection's trade-off curve from its privacy profile (conservative)."""
        eps, deltas = selection_profile(self.mean_runs, self.score_epsilon, mu, pure,
                                        self.distribution, extra_rdp=curves)
        return TradeoffCurve.from_profile(eps, deltas, claim=(epsilon, delta))

    def _plan_budget(self, grid, n_train, n_classes, sample_weight) -> float:
        """The largest candidate ``epsilon`` whose selection meets ``risk``.

        The selection's curve grows with the candidates' epsilon, so a bisection on
        ``log epsilon`` finds it; every input is public (the grid, the number of
        training rows, the label set, the declared weights)."""
        risk = self.risk

        def meets(log_eps):
            budget = float(np.exp(log_eps))
            mus, pures, curves = self._account_grid(grid, n_train, n_classes,
                                                    sample_weight, budget)
            total, is_pure = selection_bound(self.mean_runs, self.score_epsilon,
                                             max(mus), max(pures), self.delta,
                                             self.distribution, extra_rdp=curves)
            curve = self._tradeoff(max(mus), max(pures), curves, total,
                                   0.0 if is_pure else float(self.delta))
            return risk.is_met_by(curve)

        lo, hi = np.log(1e-6), np.log(1e3)
        if not meets(lo):
            raise ValueError(
                f"risk={risk} cannot be met: the validation score alone (score_epsilon="
                f"{self.score_epsilon!r}) over mean_runs={self.mean_runs!r} runs exceeds "
                "it. Use a smaller score_epsilon or mean_runs, or accept a larger risk.")
        if meets(hi):
            return float(np.exp(hi))
        while hi - lo > 1e-3:
            mid = 0.5 * (lo + hi)
            if meets(mid):
                lo = mid
            else:
                hi = mid
        return float(np.exp(lo))

    def get_metadata_routing(self):
        """Get metadata routing of this object.

        ``fit`` parameters are routed to the candidate's ``fit`` (row-aligned ones cut to
        the training rows).

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRouter
            The routing information.
        """
        return MetadataRouter(owner=type(self).__name__).add(
            estimator=self.estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"))

    def _n_classes(self, y_values) -> int:
        """Number of classes of the accounting: the declared ``classes`` of the final
        estimator when it has them (public), else the labels found in ``y`` (a claim
        then stays inf through the candidate's undeclared ``classes_``)."""
        if not is_classifier(self.estimator):
            return 0
        final, _ = _final_step(self.estimator)
        declared = getattr(final, "classes", None)
        if declared is not None:
            return int(np.unique(np.asarray(declared)).size)
        return int(np.unique(y_values).size)

    def __sklearn_privacy_attributes__(self):
        """The winner, its setting and its noisy score are the selection's output;
        the rest is computed from public parameters and the number of rows."""
        return {"best_estimator_": "dp", "best_params_": "dp", "best_score_": "dp",
                "candidate_gaussian_mu_": "constant", "candidate_epsilon_": "constant",
                "n_validation_": "constant", "epsilon_": "constant", "delta_": "constant",
                "epsilon_reason_": "constant", "planned_epsilon_": "constant",
                "tradeoff_": "constant"}

    def _draw_runs(self, rng) -> int:
        """``K`` from its law (independent of the data)."""
        if self.mean_runs == 1:
            return 1
        gamma = runs_gamma(float(self.mean_runs), self.distribution)
        if self.distribution == "geometric":
            return int(rng.geometric(gamma))
        return int(rng.logseries(1.0 - gamma))

    def _reason(self, pure_total, mu, pure, n_train, n_val):
        if pure_total:
            which = ("an (eps, 0)-DP candidate gives a (3 eps, 0)-DP selection (Liu & "
                     "Talwar 2019)" if self.distribution == "geometric" else
                     "an (eps, 0)-DP candidate gives a (2 eps, 0)-DP selection (Papernot & "
                     "Steinke 2022, Theorem 2, eta = 0)")
        else:
            which = (f"Papernot & Steinke (2022), Theorem 2 ({self.distribution} K, Renyi "
                     f"DP), converted at delta={self.delta}")
        return (f"private selection, {self.distribution} number of runs with mean "
                f"{self.mean_runs}: {which}; "
                f"candidate: training on {n_train} rows (Gaussian sensitivity/sigma <= "
                f"{mu:.4g}, pure epsilon <= {pure:.4g}), Laplace score on {n_val} other rows "
                f"(epsilon {self.score_epsilon}); assumes random_state=None and that the "
                "number of runs and the other runs stay secret.")

    # ------------------------------------------------------------------ claim
    def __sklearn_privacy_claim__(self) -> StepClaim:
        """The claim of the released selection (winning model, setting and score).

        Returns
        -------
        claim : StepClaim
            ``kind="dp"`` with ``epsilon_``, ``delta_`` and ``epsilon_reason_``; the
            winner's own ``epsilon_`` is part of it and must not be added again.
        """
        check_is_fitted(self)
        return StepClaim(name=type(self).__name__.lower(), estimator=type(self).__name__,
                         kind="dp", epsilon=self.epsilon_, delta=self.delta_,
                         reason=self.epsilon_reason_,
                         tradeoff=self.__dict__.get("tradeoff_"))

    # ------------------------------------------------------------------ audit state
    def _audit_state(self):
        check_is_fitted(self)
        state = self.__dict__.get("_audit")
        if state is None:
            raise AuditStateUnavailableError(
                "RandomStoppingSearch was loaded from a pickle/joblib dump: the number of "
                "runs and the transcript of all runs are not covered by the privacy "
                "guarantee and are never serialised.")
        return state

    @property
    def n_runs_(self) -> int:
        """Number of runs ``K`` of the last fit: audit state, never pickled.

        Publishing it voids the guarantee (see Notes).
        """
        return self._audit_state()["n_runs"]

    @property
    def audit_results_(self) -> dict:
        """Every run's setting, noisy score and warnings: audit state, never pickled.

        ``params`` and ``scores`` in run order; ``warnings``: (category name, text) of
        every warning the candidate fits raised.

        Not covered by the guarantee (see Notes).
        """
        state = self._audit_state()
        return {"params": list(state["params"]), "scores": state["scores"].copy(),
                "warnings": list(state["warnings"])}

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_audit", None)
        return state

    # ------------------------------------------------------------------ delegation
    @property
    def classes_(self):
        """Class labels of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.classes_

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input rows, passed to ``best_estimator_`` untouched.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions of the winning run's model.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input rows, passed to ``best_estimator_`` untouched.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities of the winning run's model, columns in ``classes_`` order.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input rows, passed to ``best_estimator_`` untouched.

        Returns
        -------
        scores : ndarray
            Decision values of the winning run's model.
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y):
        """Score of ``best_estimator_`` on ``X``, ``y`` (its own ``score`` method).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Evaluation rows.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        score : float
            What ``best_estimator_.score`` returns (accuracy for a classifier, R^2 for
            a regressor). Not private: ``X``, ``y`` are the caller's evaluation data.
        """
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)
