"""Multicalibration post-processing (HKRR) with honest differential privacy."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..mechanisms import NumericSparse
from ..metrics._multicalibration import score_buckets
from ._groups import as_groups, membership_matrix


class PrivateMulticalibrator(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Post-process a binary classifier to multicalibration, optionally with DP.

    The predicted probability :math:`p(x)` of ``estimator`` is corrected on calibration
    data so that in every *cell* -- the members of a group whose current :math:`p` falls
    in one of ``n_bins`` equal-width buckets -- the average residual is small. The fit is
    the multicalibration loop of Hébert-Johnson et al. (HKRR; Algorithm 1 of Fishman,
    Mugunthan & Tanzer): passes over the cells in a fixed order (groups in the given order,
    preceded by the whole population; buckets from low to high), each cell queried through
    an oracle (their Algorithm 2); a positive answer ``r`` shifts :math:`p` by ``r`` on that
    cell, clipped to [0, 1]. Passes repeat until one makes no update (or ``max_rounds``).
    The fitted predictor is the ordered list of updates ``updates_``, replayed on any X at
    prediction time (vectorised over rows).

    Notes
    -----
    **Mechanisms.** ``mechanism=None`` (no privacy): a cell with at least
    ``min_cell_size`` members is updated by its exact mean residual when that exceeds
    ``alpha`` in absolute value. At convergence every such cell has
    ``|mean(y - p)| <= alpha`` on the calibration data.

    ``mechanism="numeric_sparse"``: every cell query goes through one
    :class:`~sklearn_privacy.mechanisms.NumericSparse` instance with budget ``epsilon``
    and at most ``max_updates`` positive answers. Derivation of the guarantee
    (neighbouring calibration sets differ in one individual, replaced):

    * The predictor before each query is a function of earlier *noisy* outputs only, and
      the cell order and the groups are public, so each query is chosen adaptively from
      released information -- allowed by NumericSparse.
    * Test value: :math:`|\\sum_{cell}(y - p)|`; replacing one individual changes it by
      at most 2 (its residual leaves, another enters, each in [-1, 1]). Public threshold
      ``threshold`` (default ``alpha * min_cell_size``). There is no separate, uncounted
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
      ``epsilon_spent_`` reports ``epsilon`` once a query is made.
    * Threat model: the adversary sees ``updates_`` (hence every prediction) and knows
      everything except whether one individual's (features, label) row was replaced. The
      groups, ``n_bins``, ``alpha``, ``min_cell_size``, ``threshold``, ``max_updates`` and
      the base model are public: they must not be chosen by looking at the calibration
      data, and the base model must not have been trained on it (``prefit=True`` with a
      model trained elsewhere). With ``prefit=False`` the base model is fitted on the same
      data without privacy and ``epsilon_spent_`` is ``inf``. The number of calibration
      rows and the label set are treated as public (input validation reads them). A fixed
      ``random_state`` makes the noise reproducible and the release non-private.
    * Defaults follow the paper: ``min_cell_size`` from Theorem 2, ``max_updates`` from
      Figure 1 (both functions of public quantities only).

    ``mechanism="input_perturbation"``: the paper's alternative -- Gaussian noise of
    variance :math:`c\\,G^2 T \\log(1/\\delta) / (n(n-1)\\epsilon^2)` is added to the
    calibration *features* (after Kang et al.'s DP-ERM analysis) and the non-private loop
    runs on the noisy features with the **exact labels** (group membership and the base
    model's scores are computed on the noisy features; with ``prefit=False`` the base
    model is fitted on them too). Labels are not protected and the loop is not the ERM
    that analysis covers, so no end-to-end guarantee is claimed: ``epsilon_spent_`` is
    ``inf`` and ``delta_spent_`` is 1; ``feature_noise_std_`` reports the noise used
    (``c = 8``, ``G = 1``, ``T = 1500``, the paper's settings).

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        Binary base classifier (``None``: :class:`~sklearn.linear_model.LogisticRegression`).
    groups : sequence, default=()
        Group specifications: a binary column index, a tuple of column indices (their
        conjunction), a callable ``X -> bool mask`` or a
        :class:`~sklearn_privacy.multicalibration.Group` (see
        :func:`~sklearn_privacy.multicalibration.conjunction_groups`).
    alpha : float in (0, 1), default=0.1
    n_bins : int, default=10
    mechanism : {None, "numeric_sparse", "input_perturbation"}, default=None
    epsilon : float, default=1.0
    delta : float, default=1e-3
        Only for input perturbation.
    max_updates : int or None, default=None
        NumericSparse's ``c``. None: the paper's Figure 1 choice
        :math:`\\sqrt{m\\epsilon}/\\sqrt{\\ln(|C|/\\beta) + \\ln|C|}` with beta = 0.05,
        :math:`|C|` the number of cells, at least 1.
    min_cell_size : int or None, default=None
        ``m``. None: 20 without privacy; Theorem 2's :math:`\\ln|C| / (\\alpha^2\\epsilon)`
        with NumericSparse.
    threshold : float or None, default=None
        NumericSparse's public threshold on the residual sum (None: ``alpha * m``).
    max_rounds : int, default=100
        Maximum passes over the cells.
    prefit : bool, default=False
        Use ``estimator`` as fitted; otherwise a clone is fitted on ``X, y`` first.
    random_state : int, RandomState instance or None, default=None
        Noise source (``None``: fresh entropy, required for a private release).

    Attributes
    ----------
    estimator_ : the fitted base classifier
    classes_ : ndarray of shape (2,)
    groups_ : list of Group (``groups_[0]`` is the whole population)
    updates_ : list of (group index, bucket, shift)
    n_updates_ : int
    n_queries_ : int
    n_rounds_ : int
    epsilon_spent_ : float
        Privacy budget of the whole fit (``inf`` when no guarantee holds: no mechanism,
        input perturbation, or a base model fitted on the calibration data).
    delta_spent_ : float
    min_cell_size_ : int
    max_updates_ : int or None
    history_ : list of dict
        Per pass over the cells: ``round``, ``n_updates`` and (without privacy)
        ``max_cell_error_seen``, the largest cell error met during the pass.
    feature_noise_std_ : float
        Input perturbation only.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import PrivateMulticalibrator
    >>> from sklearn_privacy.metrics import multicalibration_error
    >>> rng = np.random.RandomState(0)
    >>> g = rng.randint(0, 2, size=4000)
    >>> X = np.column_stack([rng.normal(size=4000), g])
    >>> y = (rng.uniform(size=4000) < np.where(g == 1, 0.8, 0.2) * (X[:, 0] > 0) + 0.1)
    >>> y = y.astype(int)
    >>> base = LogisticRegression().fit(X, y)       # linear: misses the interaction
    >>> mc = PrivateMulticalibrator(base, groups=[1], alpha=0.05, prefit=True)
    >>> _ = mc.fit(X, y)
    >>> G = np.column_stack([np.ones(4000, bool), g == 1])
    >>> before = multicalibration_error(y, base.predict_proba(X)[:, 1], G, min_size=20)
    >>> after = multicalibration_error(y, mc.predict_proba(X)[:, 1], G, min_size=20)
    >>> bool(after <= 0.05 < before)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "groups": ["array-like", list, tuple],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "mechanism": [StrOptions({"numeric_sparse", "input_perturbation"}), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_updates": [Interval(Integral, 1, None, closed="left"), None],
        "min_cell_size": [Interval(Integral, 1, None, closed="left"), None],
        "threshold": [Interval(Real, 0, None, closed="left"), None],
        "max_rounds": [Interval(Integral, 1, None, closed="left")],
        "prefit": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, groups=(), *, alpha=0.1, n_bins=10, mechanism=None,
                 epsilon=1.0, delta=1e-3, max_updates=None, min_cell_size=None,
                 threshold=None, max_rounds=100, prefit=False, random_state=None):
        self.estimator = estimator
        self.groups = groups
        self.alpha = alpha
        self.n_bins = n_bins
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.max_updates = max_updates
        self.min_cell_size = min_cell_size
        self.threshold = threshold
        self.max_rounds = max_rounds
        self.prefit = prefit
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ helpers
    def _base_proba(self, X):
        proba = self.estimator_.predict_proba(X)
        return np.asarray(proba, dtype=float)[:, 1].copy()

    def _replay(self, p, M):
        b = score_buckets(p, self.n_bins)
        for g, bucket, shift in self.updates_:
            cell = M[:, g] & (b == bucket)
            p[cell] = np.clip(p[cell] + shift, 0.0, 1.0)
            b[cell] = score_buckets(p[cell], self.n_bins)
        return p

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit (or take) the base classifier and run the multicalibration loop.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration features (group columns included).
        y : array-like of shape (n_samples,)
            Binary labels.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if X.shape[0] < 2:
            raise ValueError("Multicalibration needs calibration data with at least 2 "
                             f"samples; got n_samples = {X.shape[0]}.")
        classes, y01 = np.unique(y, return_inverse=True)
        if classes.size != 2:
            raise ValueError(
                "Only binary classification is supported. PrivateMulticalibrator needs y "
                f"with exactly 2 classes; got {classes.size}."
            )
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        Xc = X
        self.feature_noise_std_ = 0.0
        if self.mechanism == "input_perturbation":
            # Kang et al.: sigma^2 = c G^2 T log(1/delta) / (n (n - 1) eps^2), c = 8, G = 1,
            # T = 1500 (the paper's settings)
            var = 8.0 * 1.0 * 1500 * math.log(1 / self.delta) / (n * max(n - 1, 1)
                                                                 * self.epsilon**2)
            self.feature_noise_std_ = math.sqrt(var)
            Xc = X + rng.normal(0.0, self.feature_noise_std_, size=X.shape)

        base = self.estimator if self.estimator is not None else LogisticRegression()
        if self.prefit:
            check_is_fitted(base)
            self.estimator_ = base
        else:
            self.estimator_ = clone(base).fit(Xc, y)
        base_classes = np.asarray(self.estimator_.classes_)
        if base_classes.size != 2 or not np.array_equal(base_classes, classes):
            raise ValueError(
                f"The base classifier's classes {base_classes.tolist()} differ from the "
                f"labels of the calibration data {classes.tolist()}."
            )
        self.classes_ = classes
        self.groups_ = as_groups(self.groups)
        M = membership_matrix(self.groups_, Xc)
        p = self._base_proba(Xc)
        n_cells = len(self.groups_) * self.n_bins
        private = self.mechanism == "numeric_sparse"
        if not private:
            # (under NumericSparse this check would itself read the calibration data
            # outside the budget: empty groups are allowed there and simply never update)
            sizes = M[:, 1:].sum(axis=0)
            empty = [self.groups_[1 + k].name for k in np.flatnonzero(sizes == 0)]
            if empty and len(empty) == len(self.groups_) - 1:
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
        if self.min_cell_size is not None:
            m = int(self.min_cell_size)
        elif private:
            m = max(1, math.ceil(math.log(max(n_cells, 2)) / (self.alpha**2 * self.epsilon)))
        else:
            m = 20
        self.min_cell_size_ = m
        self.updates_ = []
        self.history_ = []
        self.n_queries_ = 0
        resid_y = y01.astype(float)
        if private:
            c = self.max_updates
            if c is None:
                beta = 0.05
                c = max(1, int(math.sqrt(m * self.epsilon)
                               / math.sqrt(math.log(n_cells / beta) + math.log(n_cells))))
            self.max_updates_ = int(c)
            thr = self.alpha * m if self.threshold is None else float(self.threshold)
            ns = NumericSparse(self.epsilon, self.max_updates_, thr, test_sensitivity=2.0,
                               answer_sensitivities=[2.0, 1.0], test_fraction=0.5,
                               random_state=rng)
        else:
            self.max_updates_ = self.max_updates
        b = score_buckets(p, self.n_bins)
        rounds = 0
        for rounds in range(1, self.max_rounds + 1):
            n_upd = 0
            worst = 0.0
            for g in range(len(self.groups_)):
                for bucket in range(self.n_bins):
                    cell = M[:, g] & (b == bucket)
                    self.n_queries_ += 1
                    if private:
                        resid = float(np.sum(resid_y[cell] - p[cell]))
                        answer = ns.query(abs(resid), [resid, cell.sum()])
                        if answer is None:
                            continue
                        # skip cells whose released size is below m (post-processing of a
                        # noisy answer); the shift divides by released values only
                        if answer[1] < m:
                            continue
                        shift = float(np.clip(answer[0] / answer[1], -1.0, 1.0))
                    else:
                        size = int(cell.sum())
                        if size < m:
                            continue
                        r = float(np.mean(resid_y[cell] - p[cell]))
                        worst = max(worst, abs(r))
                        if abs(r) <= self.alpha:
                            continue
                        if self.max_updates is not None and len(self.updates_) >= \
                                self.max_updates:
                            continue
                        shift = r
                    p[cell] = np.clip(p[cell] + shift, 0.0, 1.0)
                    b[cell] = score_buckets(p[cell], self.n_bins)
                    self.updates_.append((g, bucket, shift))
                    n_upd += 1
            self.history_.append({"round": rounds, "n_updates": n_upd,
                                  "max_cell_error_seen": worst})
            if n_upd == 0 or (private and ns.halted_):
                break
        self.n_rounds_ = rounds
        self.n_updates_ = len(self.updates_)
        if private and self.prefit:
            self.epsilon_spent_, self.delta_spent_ = ns.epsilon_spent_, 0.0
        elif private:
            # the base model was fitted on the same data without any privacy
            self.epsilon_spent_, self.delta_spent_ = float("inf"), 1.0
        elif self.mechanism == "input_perturbation":
            self.epsilon_spent_, self.delta_spent_ = float("inf"), 1.0
        else:
            self.epsilon_spent_, self.delta_spent_ = float("inf"), 1.0
        return self

    # ------------------------------------------------------------------ predict
    def predict_proba(self, X):
        """Multicalibrated probabilities: the base model's, with the updates replayed."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        M = membership_matrix(self.groups_, X)
        p = self._replay(self._base_proba(X), M)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class with probability above 1/2."""
        p = self.predict_proba(X)[:, 1]
        return self.classes_[(p > 0.5).astype(int)]
