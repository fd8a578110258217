"""Multicalibration post-processing (HKRR) with honest differential privacy."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ..exceptions import PrivacyWarning, StatisticalWarning
from ..mechanisms import NumericSparse
from ..privacy._tradeoff import RiskTarget, epsilon_value
from ..utils import noise_generator
from ..utils._buckets import MAX_N_BINS, cell_statistics, score_buckets
from ..utils._groups import as_groups, membership_matrix
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    OUTSIDE_LABELS_STATE,
    encode_declared_labels,
    void_outside_labels,
)
from ..utils._warnings import warn_user
from ..utils.fixes import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _num_samples,
    validate_estimator_params,
)
from ._cell_power import (  # noqa: F401 (the cell probabilities' tests import them here)
    _laplace_difference_sf,
    _smallest_cell,
    _update_probability,
    cell_settings,
    warn_few_updates,
)
from ._inputs import _check_2d, group_data, input_perturbation, validation_split
from ._passes import replay, run_loop, select_on_validation, warn_small_cells

#: Largest number of (group, bucket) cells per pass under NumericSparse (each is a query).
MAX_PRIVATE_CELLS = 100_000


class PrivateMulticalibrator(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Post-process a binary classifier to multicalibration, optionally with DP.

    The predicted probability :math:`p(x)` of ``estimator`` is corrected on calibration
    data so that in every *cell* -- the members of a group whose current :math:`p` falls
    in one of ``n_bins`` equal-width buckets -- the average residual is small. The fit is
    the multicalibration loop of Hébert-Johnson et al. (HKRR; Algorithm 1 of Fishman,
    Mugunthan & Tanzer): passes over the cells in a fixed order (groups in the given order,
    preceded by the whole population; buckets from low to high), each cell queried through
    an oracle (their Algorithm 2); a positive answer ``r`` shifts :math:`p` by ``r`` on that
    cell, clipped to [0, 1]. Passes repeat until one makes no update (or ``max_iter``).
    The fitted predictor is the ordered list of updates ``updates_``, replayed on any X at
    prediction time (vectorised over rows).

    ``X`` is passed to the base estimator untouched (a pandas DataFrame with string or
    ``category`` columns and a :class:`~sklearn.compose.ColumnTransformer` pipeline work),
    and the groups are evaluated on the same frame -- or, when given, on
    ``sensitive_features``: columns the base model does not see (as fairlearn's
    ``ThresholdOptimizer`` does), passed to ``fit``, ``predict_proba``, ``predict`` and
    ``score`` alike (metadata routing: ``set_fit_request(sensitive_features=True)`` etc.).

    A model trained on other data is passed as
    ``estimator=sklearn.frozen.FrozenEstimator(model)``: it is used as is (never refitted,
    also after ``clone`` in ``GridSearchCV``), which the private guarantee requires.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        Binary base classifier (``None``: :class:`~sklearn.linear_model.LogisticRegression`),
        fitted on the calibration data, or a :class:`sklearn.frozen.FrozenEstimator` of a
        fitted model, used as is.
    groups : sequence, default=()
        Group specifications: a binary column (position or DataFrame column name), a
        tuple of columns and/or predicates (their conjunction), a callable
        ``data -> bool mask`` (e.g. :class:`~sklearn_privacy.multicalibration.ColumnPredicate`
        such as ``ColumnPredicate("race", "==", "Black")``) or a
        :class:`~sklearn_privacy.multicalibration.Group` (see
        :func:`~sklearn_privacy.multicalibration.conjunction_groups`). Evaluated on
        ``sensitive_features`` when given, else on ``X``.
    calibration_tol : float in (0, 1), default=0.1
        Target error (the alpha of alpha-multicalibration; called ``alpha`` before 0.2):
        a cell is updated while its mean residual exceeds ``calibration_tol`` in
        absolute value (with NumericSparse, while its noisy residual sum exceeds the
        threshold).
    n_bins : int in [1, 2**53], default=10
        Under NumericSparse, ``(len(groups) + 1) * n_bins`` may not exceed 100,000.
    mechanism : {None, "numeric_sparse", "input_perturbation"}, default=None
        How the calibration data are protected (see the Notes): not at all, by the
        NumericSparse oracle (``(epsilon, 0)``-DP with respect to the calibration rows,
        provided the base model was not trained or selected on them), or by Gaussian
        noise on the features (no guarantee claimed).
    epsilon : float or RiskTarget, default=1.0
        Privacy budget of the mechanism; ignored when ``mechanism=None``. A
        :class:`~sklearn_privacy.privacy.RiskTarget` sets the largest epsilon whose claim
        meets it (pure for NumericSparse, at ``delta`` for input perturbation).
    delta : float, default=1e-5
        Only for input perturbation (the package-wide default; the paper's experiments
        use 1e-3).
    max_updates : int or None, default=None
        NumericSparse's ``c``. None: the paper's Figure 1 choice
        :math:`\\sqrt{m\\epsilon}/\\sqrt{\\ln(|C|/\\beta) + \\ln|C|}` with beta = 0.05,
        :math:`|C|` the number of cells, at least 1.
    min_cell_size : int or None, default=None
        ``m``. None: 20 without privacy; with NumericSparse Theorem 2's
        :math:`\\ln|C| / (\\alpha^2\\epsilon)`, alpha being ``calibration_tol``. See
        :meth:`smallest_correctable_cell` for the cells a private fit can correct.
    threshold : float or None, default=None
        NumericSparse's public threshold on the residual sum (None:
        ``calibration_tol * m``).
    max_iter : int, default=100
        Maximum passes over the cells.
    clip_proba : float in [0, 0.5), default=0.0
        Every prediction -- the base model's, and each one after an update -- is
        projected onto ``[clip_proba, 1 - clip_proba]`` instead of [0, 1]. With 0 an update
        that overshoots sets predictions to exactly 0 or 1, and each such row whose label
        disagrees costs an unbounded log-loss (34.5 nats under scikit-learn's
        ``log_loss`` clipping); a small positive value (e.g. 0.01) avoids that without
        changing the stopping rule: at convergence every cell with at least
        ``min_cell_size`` members still has ``|mean(y - p)| <= calibration_tol``, and for
        ``clip_proba < calibration_tol`` each update still lowers the squared error on the
        calibration data by at least ``size * (calibration_tol**2 - clip_proba**2)``, so
        the loop terminates. A public constant: it does not change the privacy accounting.
        See the Notes on the `multicalibration` package's final mapping.
    validation_fraction : float in (0, 1) or None, default=None
        Without privacy only: hold out this fraction of the calibration rows (stratified
        by label; the base model, when fitted here, does not see them either), run the
        loop on the rest, then keep the prefix of ``updates_`` with the smallest
        largest cell error on the held-out rows (cells of at least ``min_cell_size``
        rows scaled to the held-out size); ``validation_errors_`` records that error
        after each prefix. Updates of small cells fit sampling noise (a mean of ``s``
        labels has standard error up to ``0.5 / sqrt(s)``); without this option the fit
        warns when an update shifted a cell by less than twice the standard error of
        its mean residual.
        Refused with a mechanism (the check reads the held-out rows exactly).
    random_state : None, int, RandomState or Generator, default=None
        Noise source, see :func:`~sklearn_privacy.utils.noise_generator` (``None``: fresh
        OS entropy, never numpy's global state; required for a private release). A fixed
        seed makes the noise reproducible (tests only); an instance is copied by
        :func:`~sklearn.base.clone`, so clones draw the same noise: fitting with one under
        a noisy mechanism emits a :class:`~sklearn_privacy.exceptions.PrivacyWarning`.
    verbose : int, default=0
        With 1 or more, one line per pass over the cells: the pass number, the number of
        updates and, without privacy, the largest cell error met during the pass (under
        NumericSparse the number of noisy answers left instead: the cell errors are not
        computed, that would read the data outside the budget).

    Attributes
    ----------
    estimator_ : the fitted base classifier
    classes_ : ndarray of shape (2,)
    groups_ : list of Group (``groups_[0]`` is the whole population)
    updates_ : list of (group index, bucket, shift)
    n_updates_ : int
    n_queries_ : int
    n_iter_ : int
        Number of passes over the cells run (at most ``max_iter``).
    n_rounds_ : int
        Same as ``n_iter_`` (its name before 0.2).
    epsilon_ : float
        Privacy budget of the whole fit (``inf`` when no guarantee holds: no mechanism,
        input perturbation, or a base model fitted on the calibration data): the
        guarantee for the rows this estimator receives, assuming fresh noise
        (``random_state=None``); a fixed seed or a shared generator voids it for the
        published object.
    delta_ : float
        Its delta (0 under NumericSparse, 1 when no guarantee holds).
    epsilon_reason_ : str
        Why ``epsilon_`` is what it is (which setting voids the guarantee when it is
        ``inf``).
    min_cell_size_ : int
    largest_cell_sizes_ : ndarray of int, one per entry of ``groups_``
        Size of each group's largest (group, bucket) cell of the base model's
        predictions on the calibration rows. A diagnostic for the data owner: exact
        counts, outside any privacy budget; :func:`~sklearn_privacy.utils.strip_for_release`
        removes it. Under NumericSparse the fit warns (StatisticalWarning) when a group's is
        below the size :meth:`smallest_correctable_cell` gives for a residual of 1 at
        probability 1/2 (about ``min_cell_size_`` or more): that group can then be
        corrected only by chance.
    largest_cell_size_ : int
        The largest of ``largest_cell_sizes_`` (removed by ``strip_for_release`` too).
    validation_errors_ : ndarray of shape (n_updates + 1,)
        Only with ``validation_fraction``: the held-out error after each prefix of the
        updates (index 0: the base model); ``updates_`` keeps the prefix of its argmin.
    max_updates_ : int or None
    history_ : list of dict
        Per pass over the cells: ``round``, ``n_updates`` and (without privacy)
        ``max_cell_error_seen``, the largest cell error met during the pass.
    feature_noise_std_ : float
        Input perturbation only.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    sensitive_features_in_ : dict or None
        ``{"n_columns": k, "names": [...] or None}`` when fitted with
        ``sensitive_features``; None otherwise.

    See Also
    --------
    sklearn_privacy.metrics.multicalibration_error : The error this estimator reduces.
    sklearn_privacy.mechanisms.NumericSparse : The mechanism behind
        ``mechanism="numeric_sparse"``.
    sklearn.calibration.CalibratedClassifierCV : Calibration of the whole population
        only, without privacy.

    Notes
    -----
    **Mechanisms.** ``mechanism=None`` (no privacy): a cell with at least
    ``min_cell_size`` members is updated by its exact mean residual when that exceeds
    ``calibration_tol`` in absolute value. At convergence every such cell has
    ``|mean(y - p)| <= calibration_tol`` on the calibration data.

    ``mechanism="numeric_sparse"``: every cell query goes through one
    :class:`~sklearn_privacy.mechanisms.NumericSparse` instance with budget ``epsilon``
    and at most ``max_updates`` positive answers. Derivation of the guarantee
    (neighbouring calibration sets differ in one individual, replaced):

    * The predictor before each query is a function of earlier *noisy* outputs only, and
      the cell order and the groups are public, so each query is chosen adaptively from
      released information -- allowed by NumericSparse.
    * Test value: :math:`|\\sum_{cell}(y - p)|`; replacing one individual changes it by
      at most 2 (its residual leaves, another enters, each in [-1, 1]). Public threshold
      ``threshold`` (default ``calibration_tol * min_cell_size``). There is no separate, uncounted
      size check: cells with fewer than ``threshold`` members cannot reach the threshold
      except through noise. (The paper's size check :math:`|S_i| + Lap(\\epsilon\\sqrt{j})`
      accesses the data outside the budget and its noise grows with epsilon instead of
      shrinking; its threshold :math:`2\\omega N` uses the exact, private cell count;
      neither is implemented.)
    * A positive test releases the noisy residual sum (sensitivity 2) and the noisy cell
      count (sensitivity 1); if the noisy count is at least ``min_cell_size`` the update is
      ``clip(sum / count, -1, 1)``, computed from released values only (the paper divides
      by the exact count); otherwise the answer is discarded (post-processing; it still
      counts towards ``max_updates``).
    * Budget: one NumericSparse run with ``c = max_updates_`` positive answers,
      ``eps1 = eps / 2`` for the threshold tests and ``eps / 4`` for each of the two
      answer coordinates. Noise: threshold ``T + Lap(2 c 2 / eps1) = T + Lap(8c/eps)``,
      redrawn after every positive answer; test ``|sum| + Lap(4 c 2 / eps1) =
      |sum| + Lap(16c/eps)``; answers ``sum + Lap(c 2 / (eps/4)) = sum + Lap(8c/eps)`` and
      ``count + Lap(c 1 / (eps/4)) = count + Lap(4c/eps)``. The tests are ``c`` runs of
      AboveThreshold with budget ``eps1 / c`` each (Dwork & Roth, Theorem 3.23) and the
      answers ``2c`` Laplace releases with budget ``eps / (4c)`` each, so by basic
      composition the whole fit is ``(eps1 + eps/4 + eps/4, 0) = (epsilon, 0)``-DP, however
      many cells are queried below the threshold; the mechanism halts after exactly ``c``
      positive answers (the paper's ``q.count >= i`` should read ``>= j``).
      ``epsilon_`` reports ``epsilon`` once a query is made.
    * Threat model: the adversary sees ``updates_`` (hence every prediction) and knows
      everything except whether one individual's (features, label) row was replaced. The
      groups, ``n_bins``, ``calibration_tol``, ``min_cell_size``, ``threshold``, ``max_updates`` and
      the base model are public: they must not be chosen by looking at the calibration
      data, and the base model must not have been trained on it: pass
      ``FrozenEstimator(model)`` of a model trained on other rows. The estimator cannot
      check where a frozen model came from; the guarantee holds only if it was not
      trained (or selected) on the calibration rows. An unfrozen base is fitted on the
      calibration rows without privacy: ``epsilon_`` is ``inf`` and a
      :class:`~sklearn_privacy.exceptions.PrivacyWarning` says so. The number of
      calibration rows and the label set are treated as public (input validation reads
      them). A fixed ``random_state`` makes the noise reproducible and the release
      non-private.
    * Every (group, bucket) cell is a query, empty or not (skipping empty cells would read
      the data outside the budget), so a pass costs ``(len(groups) + 1) * n_bins``
      queries; it is limited to ``MAX_PRIVATE_CELLS`` (100,000) and a larger product is
      refused with a ValueError. Without privacy only the occupied cells are visited
      (an empty cell never updates), so ``n_bins`` may be as large as ``2**53``.
    * Defaults follow the paper: ``min_cell_size`` from Theorem 2, ``max_updates`` from
      Figure 1 (both functions of public quantities only).

    **Computation.** Each group's bucket sums and counts come from one ``bincount`` over
    its members per pass and are kept current as updates move rows; a cell's mean is
    recomputed from its rows only when it may be updated (or hold the largest error of
    the pass), so a pass costs O(total group size) plus O(group size) per update, and the
    updates equal those of a direct cell-by-cell scan bit for bit.

    **Comparison with the multicalibration package (HKRR).** Its fit uses the same
    additive update projected onto [0, 1], but its ``predict`` ends by replacing every
    prediction with the mean *calibration* prediction of its bucket (whole population).
    That mapping is what keeps its predictions away from exactly 0 and 1 (a prediction
    driven to 0 by an overshooting update becomes the bucket mean), hence its lower test
    log-loss on a poorly calibrated base; it also merges the groups' predictions within a
    bucket and raises the log-loss of a well calibrated base. ``clip_proba`` keeps the
    useful part (no prediction at exactly 0 or 1) without that merge.

    ``mechanism="input_perturbation"``: the paper's alternative -- Gaussian noise of
    variance :math:`c\\,G^2 T \\log(1/\\delta) / (n(n-1)\\epsilon^2)` is added to the
    calibration *features* (after Kang et al.'s DP-ERM analysis) and the non-private loop
    runs on the noisy features with the **exact labels** (group membership and the base
    model's scores are computed on the noisy features; an unfrozen base model is fitted
    on them too; groups on ``sensitive_features`` use the exact values). Labels are not
    protected and the loop is not the ERM that analysis covers, so no end-to-end
    guarantee is claimed: ``epsilon_`` is ``inf``, ``delta_`` is 1 and a
    :class:`~sklearn_privacy.exceptions.PrivacyWarning` says so; ``feature_noise_std_``
    reports the noise used (``c = 8``, ``G = 1``, ``T = 1500``, the paper's settings). It
    needs numeric features (an array, a sparse matrix is refused, or a numeric
    DataFrame, passed on as a DataFrame with the same columns).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import PrivateMulticalibrator
    >>> from sklearn_privacy.metrics import multicalibration_error
    >>> rng = np.random.RandomState(0)
    >>> g = rng.randint(0, 2, size=4000)
    >>> X = np.column_stack([rng.normal(size=4000), g])
    >>> y = (rng.uniform(size=4000) < np.where(g == 1, 0.8, 0.2) * (X[:, 0] > 0) + 0.1)
    >>> y = y.astype(int)
    >>> base = LogisticRegression().fit(X, y)       # linear: misses the interaction
    >>> mc = PrivateMulticalibrator(FrozenEstimator(base), groups=[1], calibration_tol=0.05)
    >>> _ = mc.fit(X, y)
    >>> G = np.column_stack([np.ones(4000, bool), g == 1])
    >>> before = multicalibration_error(y, base.predict_proba(X)[:, 1], G, min_size=20)
    >>> after = multicalibration_error(y, mc.predict_proba(X)[:, 1], G, min_size=20)
    >>> bool(after <= 0.05 < before)
    True
    """

    #: fit records fit_provenance_: a missing record makes the claim inf
    _records_fit_provenance = True

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "groups": ["array-like", list, tuple],
        "calibration_tol": [Interval(Real, 0, 1, closed="neither")],
        "n_bins": [Interval(Integral, 1, MAX_N_BINS, closed="both")],
        "mechanism": [StrOptions({"numeric_sparse", "input_perturbation"}), None],
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_updates": [Interval(Integral, 1, None, closed="left"), None],
        "min_cell_size": [Interval(Integral, 1, None, closed="left"), None],
        "threshold": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "clip_proba": [Interval(Real, 0, 0.5, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, groups=(), *, calibration_tol=0.1, n_bins=10,
                 mechanism=None, epsilon=1.0, delta=1e-5, max_updates=None,
                 min_cell_size=None, threshold=None, max_iter=100, clip_proba=0.0,
                 validation_fraction=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.groups = groups
        self.calibration_tol = calibration_tol
        self.n_bins = n_bins
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.max_updates = max_updates
        self.min_cell_size = min_cell_size
        self.threshold = threshold
        self.max_iter = max_iter
        self.validation_fraction = validation_fraction
        self.clip_proba = clip_proba
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        base = self.estimator if self.estimator is not None else LogisticRegression()
        tags.input_tags.sparse = (get_tags(base).input_tags.sparse
                                  and self.mechanism != "input_perturbation")
        return tags

    # ------------------------------------------------------------------ helpers
    def _base_proba(self, X):
        proba = np.asarray(self.estimator_.predict_proba(X), dtype=float)
        if proba.ndim != 2 or proba.shape[1] != 2 or not np.all(np.isfinite(proba)):
            raise ValueError(
                "The base estimator's predict_proba must return finite probabilities of "
                f"shape (n_samples, 2); got shape {proba.shape}."
            )
        return np.clip(proba[:, 1], 0.0, 1.0)

    def _proba_bounds(self):
        return float(self.clip_proba), 1.0 - float(self.clip_proba)

    def _resolve_base(self):
        """(base estimator, used as fitted?): a ``FrozenEstimator`` is used as fitted."""
        base = self.estimator if self.estimator is not None else LogisticRegression()
        if isinstance(base, FrozenEstimator):
            check_is_fitted(base)
            return base, True
        return base, False

    # ------------------------------------------------------------------ fit
    def _epsilon_number(self) -> float:
        """``epsilon``, or for a :class:`~sklearn_privacy.privacy.RiskTarget` the largest
        epsilon whose claim meets it (pure for NumericSparse, at ``delta`` otherwise)."""
        delta = 0.0 if self.mechanism == "numeric_sparse" else float(self.delta)
        return epsilon_value(self.epsilon, delta)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, sensitive_features=None):
        """Fit (or take a frozen) base classifier and run the multicalibration loop.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Calibration features, passed to the base estimator untouched.
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like or DataFrame of shape (n_samples, n_sensitive), \
                default=None
            Columns on which the groups are evaluated instead of ``X`` (the base model
            does not see them). If given, pass them to ``predict_proba`` too.

        Returns
        -------
        self : PrivateMulticalibrator
            The fitted estimator.

        Raises
        ------
        ValueError
            Fewer than 2 rows, labels not binary, rows of ``X``, ``y`` and
            ``sensitive_features`` not aligned, groups referring to unknown columns,
            ``(len(groups) + 1) * n_bins`` above 100,000 under NumericSparse, an epsilon
            too small for input perturbation.

        Warns
        -----
        PrivacyWarning
            ``mechanism="numeric_sparse"`` with a base fitted on the calibration rows, or
            ``mechanism="input_perturbation"``: no differential-privacy guarantee.
        StatisticalWarning
            Under NumericSparse, groups without a cell large enough to be corrected (see
            ``largest_cell_sizes_``), or a budget of ``max_updates_`` answers spent before
            the last cell; without privacy and without
            ``validation_fraction``, updates smaller than twice the standard error of the
            cell's mean residual (they may fit noise).
        """
        base, frozen = self._resolve_base()
        n, y, classes, y01, known = self._check_fit_data(X, y, base, frozen)
        self._tol, self._max_iter = float(self.calibration_tol), int(self.max_iter)
        private = self.mechanism == "numeric_sparse"
        if self.mechanism in ("numeric_sparse", "input_perturbation"):
            warn_shared_noise(type(self).__name__, self.random_state, stacklevel=3)
        rng = noise_generator(self.random_state)
        Xc = X
        val = None
        if self.validation_fraction is not None:
            val = validation_split(self, y01, rng)
        self.feature_noise_std_ = 0.0
        if self.mechanism == "input_perturbation":
            Xc, self.feature_noise_std_ = input_perturbation(self, X, n, rng)
        self._warn_no_guarantee(private, frozen)
        self._fit_base(base, frozen, Xc, y, val, classes)
        self.classes_ = classes
        self.sensitive_features_in_ = None
        Z = group_data(self, Xc, sensitive_features, n, fitting=True)
        self.groups_ = as_groups(self.groups)
        if private:
            _check_private_cells(len(self.groups_), self.n_bins)
        M = membership_matrix(self.groups_, Z)
        if known is not None:       # no count, no residual: a member of no cell
            M[~known] = False
        p = self._base_proba(Xc)
        if not private:
            # (under NumericSparse this check would itself read the calibration data
            # outside the budget: empty groups are allowed there and simply never update)
            _check_no_empty_group(M, self.groups_)
        m, c, thr = cell_settings(self, len(self.groups_), private)
        self.min_cell_size_ = m
        ns = None
        if private:
            self.max_updates_ = c
            ns = NumericSparse(self._epsilon_number(), c, thr, test_sensitivity=2.0,
                               answer_sensitivities=[2.0, 1.0], test_fraction=0.5,
                               random_state=rng)
        else:
            self.max_updates_ = self.max_updates
        resid_y = y01.astype(float)
        self._record_largest_cells(p, M)
        if val is None:
            run_loop(self, p, M, resid_y, m, ns)
        else:
            fit_rows, val_rows = val
            run_loop(self, p[fit_rows], M[fit_rows], resid_y[fit_rows], m, ns)
            select_on_validation(self, p[val_rows], M[val_rows], resid_y[val_rows], m,
                                       fit_rows.size)
        if private:
            warn_few_updates(self, n, thr)
            self._warn_halted(ns)
        elif val is None:
            warn_small_cells(self)
        self._set_guarantee(private, frozen, ns)
        record_fit_provenance(self)
        return self

    def _check_fit_data(self, X, y, base, frozen):
        """``(n, y, classes, y01, known)`` of the calibration rows: aligned, finite,
        binary. Under NumericSparse with a frozen base, the label set is the base's
        (public): a row whose label is outside it stays, ``known`` is False there, and it
        is a member of no cell (``known`` is None otherwise)."""
        _check_2d(X)
        validate_data(self, X, skip_check_array=True)
        n = _num_samples(X)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]}.")
        if n < 2:
            raise ValueError("Multicalibration needs calibration data with at least 2 "
                             f"samples; got n_samples = {n}.")
        known, declared = None, None
        if frozen and self.mechanism == "numeric_sparse":
            declared = np.asarray(getattr(base, "classes_", []))
            if declared.size == 2:
                y, known = void_outside_labels(self, declared, y)
            else:
                declared = None
        if declared is None and y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity; pass finite binary labels.")
        check_classification_targets(y)
        if declared is not None:
            classes, y01 = encode_declared_labels(declared, y)
        else:
            classes, y01 = np.unique(y, return_inverse=True)
        if classes.size != 2:
            raise ValueError(
                "Only binary classification is supported. PrivateMulticalibrator needs y "
                f"with exactly 2 classes; got {classes.size}."
            )
        return n, y, classes, y01, known

    def _warn_no_guarantee(self, private, frozen):
        """Warn when the chosen mechanism cannot give a guarantee for this fit."""
        if self.mechanism == "input_perturbation":
            warn_user(
                "mechanism='input_perturbation' adds noise to the features only: the labels "
                "are used exactly, so no differential-privacy guarantee is claimed "
                "(epsilon_ = inf). Use mechanism='numeric_sparse' with a "
                "FrozenEstimator base for an (epsilon, 0)-DP release.",
                PrivacyWarning, stacklevel=2,
            )
        elif private and not frozen:
            warn_user(
                "mechanism='numeric_sparse' with a base estimator fitted on the calibration "
                "rows: the base model sees them without any privacy, so the release has no "
                "guarantee (epsilon_ = inf). Train the base model on other data and "
                "pass estimator=FrozenEstimator(model).",
                PrivacyWarning, stacklevel=2,
            )

    def _fit_base(self, base, frozen, Xc, y, val, classes):
        """Set ``estimator_`` (frozen, or fitted on the rows not held out) with our labels."""
        if frozen:
            self.estimator_ = base
        elif val is None:
            self.estimator_ = clone(base).fit(Xc, y)
        else:  # the held-out rows stay unseen by the base model too
            self.estimator_ = clone(base).fit(_safe_indexing(Xc, val[0]), y[val[0]])
        base_classes = np.asarray(getattr(self.estimator_, "classes_", []))
        if base_classes.size != 2 or not np.array_equal(base_classes, classes):
            raise ValueError(
                f"The base classifier's {base_classes.size} classes differ from the 2 "
                "labels of the calibration data (the values are not shown: a label can "
                "identify a row); fit the base model on the same label set."
            )

    def _record_largest_cells(self, p, M):
        """Largest (group, bucket) cell of the base predictions, for the data owner.

        Exact counts, outside any privacy budget; never pickled under NumericSparse, and
        strip_for_release removes them.
        """
        b0 = score_buckets(np.clip(p, *self._proba_bounds()), self.n_bins)
        self.largest_cell_sizes_ = np.array(
            [int(s.max()) if s.size else 0 for _, _, s in cell_statistics(b0, p, M)],
            dtype=np.int64)
        self.largest_cell_size_ = int(self.largest_cell_sizes_.max(initial=0))

    def _warn_halted(self, ns):
        """Warn when NumericSparse's budget of answers ran out before the last cell."""
        if ns.halted_:
            warn_user(
                f"The private fit stopped after max_updates_={self.max_updates_} noisy "
                f"answers ({self.n_updates_} updates) in pass {self.n_iter_}: cells "
                "later in the order (groups in the order given, after the whole "
                "population; buckets from low to high) may not have been corrected. "
                "Put the groups that matter most first, or raise max_updates (each "
                "answer's noise grows with it).", StatisticalWarning, stacklevel=2)

    def _set_guarantee(self, private, frozen, ns):
        """``epsilon_``, ``delta_`` and ``epsilon_reason_`` of this fit."""
        if private and frozen:
            self.epsilon_, self.delta_ = ns.epsilon_, 0.0
            self.epsilon_reason_ = (
                "NumericSparse answers every cell query with Laplace noise: "
                f"(epsilon={self.epsilon_:.6g}, 0)-DP for the calibration rows given the "
                "frozen base model")
        else:
            # no mechanism, input perturbation (exact labels) or a base model fitted on
            # the calibration rows without privacy: no guarantee
            self.epsilon_, self.delta_ = float("inf"), 1.0
            self.epsilon_reason_ = (
                "mechanism=None: the updates are computed from the calibration rows "
                "without noise" if self.mechanism is None else
                "mechanism='input_perturbation' perturbs the features only and uses the "
                "labels exactly" if not private else
                "the base model is fitted on the calibration rows inside this fit without "
                "a guarantee of its own (privacy_claim composes a DP base)")

    #: Exact counts and flags computed from the calibration rows outside the budget:
    #: kept in memory for the data owner, never pickled under NumericSparse.
    _EXACT_STATE = ("largest_cell_sizes_", "largest_cell_size_", "_update_noise")

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop(OUTSIDE_LABELS_STATE, None)
        if self.mechanism == "numeric_sparse":
            for key in self._EXACT_STATE:
                state.pop(key, None)
        return state

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published attributes under ``mechanism="numeric_sparse"``.

        The updates and everything counted from NumericSparse's answers are its output;
        the cell settings come from public parameters; ``classes_`` must equal the frozen
        base's (public) labels. Without the mechanism nothing is covered.
        """
        if self.mechanism != "numeric_sparse":
            why = ("rows", f"mechanism={self.mechanism!r}: computed from the calibration "
                           "rows without noise")
            return dict.fromkeys(("updates_", "history_", "largest_cell_sizes_",
                                  "largest_cell_size_", "_update_noise", "n_updates_",
                                  "validation_errors_"), why)
        base_classes = np.asarray(getattr(self.estimator_, "classes_", []))
        kinds = {"_tol": "constant", "_max_iter": "constant",
                 "feature_noise_std_": "constant", "estimator_": "child",
                 "sensitive_features_in_": "schema", "groups_": "constant",
                 "min_cell_size_": "constant", "max_updates_": "constant",
                 "updates_": "dp", "history_": "dp", "n_queries_": "dp", "n_iter_": "dp",
                 "n_rounds_": "dp", "n_updates_": "dp", "epsilon_": "constant",
                 "delta_": "constant", "epsilon_reason_": "constant",
                 "validation_errors_": ("rows", "exact held-out errors that select the "
                                        "prefix of the updates; leave "
                                        "validation_fraction=None")}
        # fit refuses labels other than the base's: classes_ is the base's label set,
        # public for a frozen base, checked with the base's own attributes otherwise
        kinds["classes_"] = ("public" if np.array_equal(base_classes, self.classes_)
                             else ("rows", "the labels found in y differ from the base's"))
        return kinds

    def __sklearn_privacy_claim__(self):
        """Step claims for :func:`sklearn_privacy.privacy_claim`: this loop and its base.

        ``mechanism="numeric_sparse"``: ``(epsilon, 0)``-DP for the calibration rows
        given the base model (NumericSparse's guarantee holds for any fixed base). A
        frozen base is data-independent (it must have been fitted on other data); a base
        fitted here on the same rows is walked and composed (adaptive composition), so a
        DP base keeps the claim finite where ``epsilon_`` (this step alone) is inf.
        Without a mechanism, or with input perturbation: non-private.
        """
        from ..privacy import StepClaim
        from ..privacy._compose import step_claims
        check_is_fitted(self)
        name = type(self).__name__
        frozen = isinstance(self.estimator, FrozenEstimator)
        if self.mechanism == "numeric_sparse":
            eps = float(self.epsilon_) if frozen else self._epsilon_number()
            own = StepClaim("", name, "dp", eps, 0.0, (
                "NumericSparse answers every cell query with Laplace noise: "
                f"(epsilon={eps:.6g}, 0)-DP for the calibration rows given the base model; "
                "the groups, bins and thresholds are public parameters and the label set "
                "(classes_) is public by the threat model"))
        elif self.mechanism == "input_perturbation":
            own = StepClaim("", name, "non_private", float("inf"), 0.0, (
                "mechanism='input_perturbation' perturbs the features only and uses the "
                "labels exactly: no guarantee; use mechanism='numeric_sparse'"))
        else:
            own = StepClaim("", name, "non_private", float("inf"), 0.0, (
                "mechanism=None: the updates are computed from the calibration rows without "
                "noise; use mechanism='numeric_sparse'"))
        if frozen:
            base = StepClaim("estimator_", type(self.estimator_).__name__,
                             "data_independent", 0.0, 0.0, (
                                 "frozen base: used as fitted, which holds only if it was "
                                 "fitted on other data than the calibration rows"))
            return [own, base]
        return [own] + step_claims(self.estimator_, "estimator_")

    # ------------------------------------------------------------------ settings

    def smallest_correctable_cell(self, miscalibration, *, probability=0.5):
        """Smallest cell NumericSparse corrects with the given probability (before fitting).

        Computed from the parameters alone (public quantities: the number of groups,
        ``n_bins``, ``calibration_tol``, ``epsilon``, ``min_cell_size``, ``max_updates``,
        ``threshold``), so it can be called on an unfitted estimator to choose epsilon,
        the groups or the bins before spending the budget. For a cell of ``s`` rows whose
        mean residual is ``miscalibration`` in absolute value, the probability of an
        update at its query is that of passing the noisy threshold test,
        :math:`P(|r| s + L_t - L_T \\ge T)` with :math:`L_t \\sim Lap(16c/\\epsilon)` and
        :math:`L_T \\sim Lap(8c/\\epsilon)` (exact: the difference of two Laplace
        variables has a closed-form tail), times that of the released count reaching the
        minimum, :math:`P(s + L_n \\ge m)` with :math:`L_n \\sim Lap(4c/\\epsilon)`. The
        returned ``s`` is the smallest size whose product reaches ``probability``. It
        concerns one query with a fresh threshold and ignores that the budget of ``c``
        positive answers may already be spent on other cells, so it is a lower bound on
        the cell sizes a fit can correct.

        Parameters
        ----------
        miscalibration : float in (0, 1]
            Absolute mean residual ``|mean(y - p)|`` of the cell.
        probability : float in (0, 1), default=0.5
            Required probability that the query updates the cell.

        Returns
        -------
        size : int
            The smallest cell size (rows of the calibration data) reaching
            ``probability``. Compare it with your calibration set: with ``n`` rows and
            ``n_bins`` buckets a group's cells hold about ``n * group share / n_bins``
            rows (more in the buckets where the base model's predictions concentrate).

        Raises
        ------
        ValueError
            ``mechanism`` is not ``"numeric_sparse"`` (without privacy every cell of
            ``min_cell_size`` rows is corrected), or an argument out of range.

        Examples
        --------
        >>> from sklearn_privacy import PrivateMulticalibrator
        >>> mc = PrivateMulticalibrator(groups=list(range(12)), mechanism="numeric_sparse",
        ...                             epsilon=1.0)
        >>> mc.smallest_correctable_cell(0.2)
        504
        >>> mc.set_params(epsilon=8.0).smallest_correctable_cell(0.2)
        64
        """
        if self.mechanism != "numeric_sparse":
            raise ValueError(
                "smallest_correctable_cell describes mechanism='numeric_sparse'; without "
                "privacy every cell of at least min_cell_size rows whose mean residual "
                f"exceeds calibration_tol is corrected (mechanism={self.mechanism!r})."
            )
        for name, value in (("miscalibration", miscalibration), ("probability", probability)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
                raise TypeError(f"{name} must be a real number; got {value!r}.")
        if not 0 < miscalibration <= 1:
            raise ValueError(f"miscalibration must be in (0, 1] (an absolute mean residual); "
                             f"got {miscalibration!r}.")
        if not 0 < probability < 1:
            raise ValueError(f"probability must be in (0, 1); got {probability!r}.")
        validate_estimator_params(self)
        self._tol = float(self.calibration_tol)
        m, c, thr = cell_settings(self, len(as_groups(self.groups)), True)
        return _smallest_cell(float(miscalibration), float(probability), m, c, thr,
                              self._epsilon_number())

    # ------------------------------------------------------------------ predict
    def predict_proba(self, X, *, sensitive_features=None):
        """Multicalibrated probabilities: the base model's, with the updates replayed.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Passed to the base estimator untouched.
        sensitive_features : array-like or DataFrame, default=None
            Required (same columns) if and only if the fit used them.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        check_is_fitted(self)
        _check_2d(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        n = _num_samples(X)
        Z = group_data(self, X, sensitive_features, n, fitting=False)
        M = membership_matrix(self.groups_, Z)
        p = replay(self, self._base_proba(X), M)
        return np.column_stack([1.0 - p, p])

    def predict(self, X, *, sensitive_features=None):
        """Predict the class whose multicalibrated probability is above 1/2.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Passed to the base estimator untouched.
        sensitive_features : array-like or DataFrame, default=None
            Required (same columns) if and only if the fit used them.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where :meth:`predict_proba` gives it more than 1/2.
        """
        p = self.predict_proba(X, sensitive_features=sensitive_features)[:, 1]
        return self.classes_[(p > 0.5).astype(int)]

    def score(self, X, y, sample_weight=None, *, sensitive_features=None):
        """Return the accuracy of :meth:`predict` on ``X`` against ``y``.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Passed to the base estimator untouched.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples in the accuracy.
        sensitive_features : array-like or DataFrame, default=None
            Required (same columns) if and only if the fit used them.

        Returns
        -------
        score : float
            Fraction (weighted by ``sample_weight``) of correctly predicted rows.
        """
        return accuracy_score(y, self.predict(X, sensitive_features=sensitive_features),
                              sample_weight=sample_weight)


def _check_private_cells(n_groups, n_bins):
    """Refuse more (group, bucket) cells per pass than NumericSparse may query."""
    n_cells = n_groups * n_bins
    if n_cells > MAX_PRIVATE_CELLS:
        raise ValueError(
            f"Under mechanism='numeric_sparse' every (group, bucket) cell is a query, "
            f"empty or not: {n_groups} groups (whole population included) x "
            f"n_bins={n_bins} = {n_cells} cells per pass exceeds the limit of "
            f"{MAX_PRIVATE_CELLS:,}. Use fewer bins (n_bins=10 is usual) or fewer groups."
        )


def _check_no_empty_group(M, groups):
    """Refuse groups without a member in the calibration rows (exact fits only)."""
    sizes = M[:, 1:].sum(axis=0)
    empty = [groups[1 + k].name for k in np.flatnonzero(sizes == 0)]
    if empty and len(empty) == len(groups) - 1:
        raise ValueError(
            f"All {len(empty)} groups are empty on the calibration data (no row is a "
            "member of any of them): check the column indices and predicates, or "
            "pass groups=() to calibrate the whole population only."
        )
    if empty:
        raise ValueError(
            f"Groups without any member in the calibration data: {empty}. Drop them, "
            "for instance with conjunction_groups(..., X=X, min_size=...)."
        )
