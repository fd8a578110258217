"""Black-box membership inference: threshold attacks on model outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import noise_generator
from ..utils._intervals import auc_delong, balanced_accuracy_interval
from ..utils._validation import errors_name
from ..utils.fixes import HasMethods, NumberInterval, StrOptions, validate_params
from ._roc import (
    METRICS,
    allowed_false_positives,
    batched_metric,
    bootstrap_weights,
    permutation_weights,
    roc_counts,
)
from ._validation import (
    check_choice,
    check_finite_scores,
    check_fraction,
    check_members,
    check_membership_truth,
    check_positive_int,
    check_target,
    n_rows,
)

ATTACKS = ("gap", "confidence", "entropy", "modified_entropy", "loss")
_TINY = 1e-30


def _true_class_proba(estimator, X, y):
    with errors_name("X"):   # X reaches the model untouched: its messages may not name X
        proba = np.asarray(estimator.predict_proba(X), dtype=float)
    classes = np.asarray(estimator.classes_)
    if proba.shape != (len(y), len(classes)):
        raise ValueError(
            f"predict_proba returned shape {proba.shape}; expected ({len(y)}, {len(classes)}) "
            "(one probability per example and class)."
        )
    pos = np.searchsorted(classes, y)
    pos = np.clip(pos, 0, len(classes) - 1)
    known = classes[pos] == y
    if not np.all(known):
        raise ValueError(
            "y contains labels the estimator was not trained on "
            f"({np.unique(np.asarray(y)[~known])[:5].tolist()}); membership attacks need "
            "the true label of every queried example among estimator.classes_."
        )
    return proba, pos


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "attack": [StrOptions(set(ATTACKS))],
    },
    prefer_skip_nested_validation=True,
)
def membership_scores(estimator, X, y, *, attack: str = "confidence") -> np.ndarray:
    """Per-example membership score of a fitted model: higher means "more likely member".

    Parameters
    ----------
    estimator : fitted classifier (``predict_proba``) or regressor (``predict``)
        The fitted model that is attacked or audited.
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        Passed untouched to the estimator (which validates it).
    y : array-like of shape (n_samples,)
        True labels / targets of the queried examples (1-D, one per row of ``X``).
    attack : {"gap", "confidence", "entropy", "modified_entropy", "loss"}
        ``"gap"``: 1 if the prediction is correct, else 0 (the gap attack);
        ``"confidence"``: the probability of the true class :math:`p_y`;
        ``"entropy"``: minus the entropy of the predicted distribution;
        ``"modified_entropy"``: minus the modified entropy of Song & Mittal (2021),
        :math:`-(1-p_y)\\log p_y - \\sum_{j \\neq y} p_j \\log(1 - p_j)`;
        ``"loss"``: minus the loss (cross-entropy for classifiers, squared error for
        regressors; the attack of Yeom et al., 2018). Regressors support ``"loss"`` only.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Membership score of each row of ``X``, in the row order of ``X``; higher means
        "more likely a member" for every ``attack``.

    Raises
    ------
    ValueError
        Unknown ``attack``; ``y`` not 1-D or not one entry per row of ``X``; empty ``X``;
        labels the estimator was not trained on.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy.attacks import membership_scores
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> membership_scores(clf, X, y, attack="gap")
    array([1., 1., 1., 1.])
    """
    check_is_fitted(estimator)
    n = n_rows(X)
    if n == 0:
        raise ValueError("X is empty; membership scores need at least one example.")
    y = check_target(y, n)
    if not is_classifier(estimator) or not hasattr(estimator, "predict_proba"):
        if attack == "loss":
            with errors_name("X"):
                pred = np.asarray(estimator.predict(X), dtype=float)
            return -(pred - y.astype(float)) ** 2
        if attack == "gap" and is_classifier(estimator):
            return (estimator.predict(X) == y).astype(float)
        raise ValueError(
            f"attack={attack!r} needs a classifier with predict_proba; for regressors (or "
            "classifiers without probabilities) use attack='loss' (or 'gap')."
        )
    if attack == "gap":
        return (estimator.predict(X) == y).astype(float)
    proba, pos = _true_class_proba(estimator, X, y)
    rows = np.arange(len(y))
    p_y = proba[rows, pos]
    if attack == "confidence":
        return p_y
    if attack == "loss":
        return np.log(np.maximum(p_y, _TINY))
    if attack == "entropy":
        return np.sum(proba * np.log(np.maximum(proba, _TINY)), axis=1)
    others = proba.copy()
    others[rows, pos] = 0.0
    mentr = -(1 - p_y) * np.log(np.maximum(p_y, _TINY)) - np.sum(
        others * np.log(np.maximum(1 - others, _TINY)), axis=1
    )
    return -mentr


def _best_threshold(s_in, s_out):
    """Threshold maximising balanced accuracy of ``score >= t`` (member) on known data."""
    if s_in.size == 0 or s_out.size == 0:
        return -np.inf
    values = np.unique(np.concatenate([s_in, s_out]))
    s_in_sorted, s_out_sorted = np.sort(s_in), np.sort(s_out)
    tpr = 1.0 - np.searchsorted(s_in_sorted, values, side="left") / s_in.size
    tnr = np.searchsorted(s_out_sorted, values, side="left") / s_out.size
    best = int(np.argmax(tpr + tnr))
    # place the cut midway to the next lower score: same decisions on the known data,
    # a margin for unseen scores
    return values[best] if best == 0 else 0.5 * (values[best] + values[best - 1])


@dataclass
class MembershipInferenceResult:
    """Outcome of a membership inference attack on held-out members and non-members.

    ``balanced_accuracy`` uses the thresholds chosen on the known half; ``advantage``
    (max TPR - FPR), ``auc`` and ``tpr_at_fpr`` are read off the ROC curve of the raw
    scores on the evaluation half (per-class thresholds change only the balanced
    accuracy).

    Parameters
    ----------
    attack : str
        Name of the attack that produced the scores (``"custom"`` for scores passed to
        :func:`evaluate_scores` directly).
    balanced_accuracy : float
        Balanced accuracy of the thresholded attack on the evaluation part (0.5 = no
        better than guessing).
    advantage : float
        Membership advantage, the maximum of TPR - FPR over the ROC curve of the
        evaluation part.
    auc : float
        Area under that ROC curve.
    tpr_at_fpr : dict of float to float
        True positive rate at a false positive rate of at most ``0.001`` and ``0.01``
        (keys), by the exact count rule: the largest TPR of a threshold with at most
        ``floor(level * n)`` false positives among the ``n`` evaluation non-members (so
        with 100 non-members, "1% FPR" allows one false positive). NaN when ``level <
        1 / n``: the evaluation part does not resolve that rate (see
        :attr:`fpr_resolution`).
    thresholds : dict
        Threshold chosen on the known part: ``{None: t}`` for a global threshold, or
        one entry per class label for per-class thresholds.
    scores_members : ndarray of shape (n_members,)
        Scores of all the members (known and evaluation parts).
    scores_nonmembers : ndarray of shape (n_nonmembers,)
        Scores of all the non-members (known and evaluation parts).
    eval_members : ndarray of int
        Indices into ``scores_members`` of the members in the evaluation part.
    eval_nonmembers : ndarray of int
        Indices into ``scores_nonmembers`` of the non-members in the evaluation part.
    eval_member_decisions : ndarray of bool or None, default=None
        Decision ("member") of the thresholded attack on each evaluation member.
    eval_nonmember_decisions : ndarray of bool or None, default=None
        Decision of the thresholded attack on each evaluation non-member.

    See Also
    --------
    membership_inference : Run a threshold membership attack on a fitted model.
    evaluate_scores : Build this result from per-example membership scores.
    MembershipROCDisplay : Plot the ROC curve of the attack.

    Notes
    -----
    Every figure comes with its uncertainty and its chance level for the evaluation
    size: :meth:`confidence_interval` (stratified percentile bootstrap over the
    evaluation rows), :meth:`null_distribution` and :meth:`chance_level` (the metric
    when membership labels are permuted among the scores: 0.5 for the AUC and the
    balanced accuracy, clearly positive for the advantage on small sets), and
    :meth:`summary` for all of them at once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import evaluate_scores
    >>> members = [True, True, True, True, False, False, False, False]
    >>> res = evaluate_scores(members, [4.0, 3.0, 2.5, 2.0, 1.0, 0.5, 0.0, -1.0],
    ...                       random_state=0)
    >>> res.attack, res.balanced_accuracy, res.auc
    ('custom', 1.0, 1.0)
    >>> res.scores_members[res.eval_members].shape
    (2,)
    >>> rng = np.random.RandomState(0)   # no signal: the advantage is positive by luck
    >>> noise = evaluate_scores(np.arange(400) < 200, rng.normal(size=400), random_state=0)
    >>> round(noise.advantage, 3), round(noise.chance_level("advantage", random_state=0), 3)
    (0.15, 0.084)
    >>> low, high = noise.confidence_interval("auc")
    >>> bool(low < 0.5 < high), noise.chance_level("auc")
    (True, 0.5)
    """

    attack: str
    balanced_accuracy: float
    advantage: float
    auc: float
    tpr_at_fpr: dict
    thresholds: dict
    scores_members: np.ndarray = field(repr=False)
    scores_nonmembers: np.ndarray = field(repr=False)
    eval_members: np.ndarray = field(repr=False)
    eval_nonmembers: np.ndarray = field(repr=False)
    eval_member_decisions: np.ndarray | None = field(default=None, repr=False)
    eval_nonmember_decisions: np.ndarray | None = field(default=None, repr=False)

    # ------------------------------------------------------------ uncertainty
    @property
    def fpr_resolution(self) -> float:
        """Smallest false positive rate the evaluation part resolves: 1 / n_nonmembers.

        One false positive among the evaluation non-members is already this rate; a TPR
        "at" a smaller FPR is a TPR at zero false positives, reported as NaN.
        """
        return 1.0 / max(len(self.eval_nonmembers), 1)

    def _eval_pool(self):
        s_in = np.asarray(self.scores_members, dtype=float)[np.asarray(self.eval_members)]
        s_out = np.asarray(self.scores_nonmembers, dtype=float)[
            np.asarray(self.eval_nonmembers)]
        return s_in, s_out

    def _decisions(self):
        if self.eval_member_decisions is None or self.eval_nonmember_decisions is None:
            raise ValueError("This result holds no threshold decisions (built without "
                             "evaluate_scores); balanced_accuracy cannot be resampled.")
        return np.r_[np.asarray(self.eval_member_decisions, dtype=float),
                     np.asarray(self.eval_nonmember_decisions, dtype=float)]

    def _check_metric(self, metric, fpr):
        check_choice(metric, METRICS, "metric")
        if metric == "tpr_at_fpr":
            if fpr is None:
                raise ValueError("metric='tpr_at_fpr' needs fpr=..., the false positive "
                                 "rate (e.g. fpr=0.01).")
            fpr = check_fraction(fpr, "fpr")
            n_out = len(self.eval_nonmembers)
            if allowed_false_positives(fpr, n_out) < 1:
                raise ValueError(
                    f"fpr={fpr} is not resolved by the {n_out} evaluation non-members (one "
                    f"false positive is already an FPR of {1 / n_out:.3g}); pass "
                    f"fpr >= {1 / n_out:.3g} or evaluate on more non-members."
                )
        return fpr

    def _batched(self, metric, fpr, w_in, w_out):
        s_in, s_out = self._eval_pool()
        decisions = self._decisions() if metric == "balanced_accuracy" else None
        return batched_metric(np.r_[s_in, s_out], w_in, w_out, metric, level=fpr,
                              decisions=decisions)

    def _resampled(self, metric, fpr, weights, rng, size, max_elements=4_000_000):
        """``metric`` under ``size`` weightings, drawn and evaluated in bounded chunks."""
        n_in, n_out = len(self.eval_members), len(self.eval_nonmembers)
        step = max(1, max_elements // (n_in + n_out))
        out = []
        for start in range(0, size, step):
            w_in, w_out = weights(rng, n_in, n_out, min(step, size - start))
            out.append(self._batched(metric, fpr, w_in, w_out))
        return np.concatenate(out)

    def metric_value(self, metric: str = "auc", *, fpr: float | None = None) -> float:
        """The point estimate of ``metric`` on the evaluation part.

        Parameters
        ----------
        metric : {"auc", "advantage", "balanced_accuracy", "tpr_at_fpr"}, default="auc"
            The metric; ``"tpr_at_fpr"`` needs ``fpr``.
        fpr : float in (0, 1), default=None
            False positive rate of ``"tpr_at_fpr"``: the largest TPR with at most
            ``floor(fpr * n_nonmembers)`` false positives (must be at least 1).

        Returns
        -------
        value : float
            The metric on the evaluation members and non-members.
        """
        fpr = self._check_metric(metric, fpr)
        s_in, s_out = self._eval_pool()
        w_in = np.r_[np.ones(s_in.size), np.zeros(s_out.size)][None, :]
        return float(self._batched(metric, fpr, w_in, 1.0 - w_in)[0])

    def confidence_interval(self, metric: str = "auc", *, fpr: float | None = None,
                            confidence: float = 0.95, n_resamples: int = 1000,
                            random_state=None) -> tuple[float, float]:
        """Two-sided confidence interval of ``metric`` on the evaluation rows.

        One method per metric, the same wherever the library shows the metric (report
        tables, figure legends):

        * ``"auc"``: DeLong's nonparametric variance on the logit scale
          (deterministic; ``n_resamples`` and ``random_state`` are not used);
        * ``"balanced_accuracy"``: the MOVER sum of the Wilson intervals of the true
          positive and true negative rates of the fixed decisions (deterministic; the
          percentile bootstrap under-covered, 93.4 % at a nominal 95 %);
        * ``"advantage"`` and ``"tpr_at_fpr"``: stratified percentile bootstrap (members
          and non-members resampled separately, their numbers kept).

        The threshold(s) chosen on the known part stay fixed, so the interval covers the
        sampling of the evaluation rows, not the choice of threshold. Coverage of each
        is measured by simulation in ``benchmarks/bench_interval_coverage.py``.

        Parameters
        ----------
        metric : {"auc", "advantage", "balanced_accuracy", "tpr_at_fpr"}, default="auc"
            The metric (see :meth:`metric_value`).
        fpr : float in (0, 1), default=None
            With ``metric="tpr_at_fpr"``.
        confidence : float in (0, 1), default=0.95
            Coverage of the interval.
        n_resamples : int, default=1000
            Bootstrap resamples (all evaluated at once, vectorised), for the
            bootstrapped metrics.
        random_state : int, RandomState, Generator or None, default=None
            Resampling; ``None`` draws from fresh OS entropy.

        Returns
        -------
        (low, high) : tuple of float
            The lower and upper limits of the interval.
        """
        fpr = self._check_metric(metric, fpr)
        confidence = check_fraction(confidence, "confidence")
        n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=10)
        if metric == "auc":
            return auc_delong(*self._eval_pool(), confidence)[1:3]
        if metric == "balanced_accuracy":
            d = self._decisions()
            n_in = len(self.eval_members)
            return balanced_accuracy_interval(d[:n_in].sum(), n_in,
                                              (1.0 - d[n_in:]).sum(), d.size - n_in,
                                              confidence)[1:]
        rng = noise_generator(random_state)
        values = self._resampled(metric, fpr, bootstrap_weights, rng, n_resamples)
        alpha = (1.0 - confidence) / 2.0
        low, high = np.quantile(values, [alpha, 1.0 - alpha])
        return float(low), float(high)

    def null_distribution(self, metric: str = "auc", *, fpr: float | None = None,
                          n_permutations: int = 1000, random_state=None) -> np.ndarray:
        """Sample the null distribution of ``metric``: membership independent of scores.

        The evaluation scores are kept and the member / non-member labels are permuted
        among them (as many members and non-members as in the result): the distribution
        of the metric for an attack, or a model, that carries no membership signal, at
        this evaluation size. Its mean is the chance level (:meth:`chance_level`), its
        upper quantiles what a leak-free model reads by luck.

        Parameters
        ----------
        metric : {"auc", "advantage", "balanced_accuracy", "tpr_at_fpr"}, default="auc"
            The metric (see :meth:`metric_value`).
        fpr : float in (0, 1), default=None
            With ``metric="tpr_at_fpr"``.
        n_permutations : int, default=1000
            Random relabellings (evaluated at once, vectorised).
        random_state : int, RandomState, Generator or None, default=None
            Relabelling; ``None`` draws from fresh OS entropy.

        Returns
        -------
        values : ndarray of shape (n_permutations,)
            The metric under each relabelling.
        """
        fpr = self._check_metric(metric, fpr)
        n_permutations = check_positive_int(n_permutations, "n_permutations", minimum=10)
        rng = noise_generator(random_state)
        return self._resampled(metric, fpr, permutation_weights, rng, n_permutations)

    def chance_level(self, metric: str = "auc", *, fpr: float | None = None,
                     n_permutations: int = 1000, random_state=None) -> float:
        """Mean of ``metric`` under no membership signal, at this evaluation size.

        Exactly 0.5 for ``"auc"`` (the Mann-Whitney statistic of exchangeable scores,
        ties counted one half) and for ``"balanced_accuracy"`` (thresholds chosen on the
        known part, independent of the evaluation labels). For ``"advantage"`` (a maximum
        over thresholds, positive under the null: about ``0.89 / sqrt(n)`` for ``n``
        members and ``n`` non-members) and ``"tpr_at_fpr"`` it is the mean of
        :meth:`null_distribution`.

        Parameters
        ----------
        metric : {"auc", "advantage", "balanced_accuracy", "tpr_at_fpr"}, default="auc"
            The metric (see :meth:`metric_value`).
        fpr : float in (0, 1), default=None
            With ``metric="tpr_at_fpr"``.
        n_permutations : int, default=1000
            Relabellings of the permutation estimate.
        random_state : int, RandomState, Generator or None, default=None
            Relabelling; ``None`` draws from fresh OS entropy.

        Returns
        -------
        chance : float
            The expected metric of an attack without membership signal.
        """
        fpr = self._check_metric(metric, fpr)
        if metric in ("auc", "balanced_accuracy"):
            return 0.5
        return float(np.mean(self.null_distribution(
            metric, fpr=fpr, n_permutations=n_permutations, random_state=random_state)))

    def summary(self, *, confidence: float = 0.95, n_resamples: int = 1000,
                random_state=None) -> dict:
        """Every metric with its confidence interval and its chance level.

        Parameters
        ----------
        confidence : float in (0, 1), default=0.95
            Coverage of the bootstrap intervals.
        n_resamples : int, default=1000
            Bootstrap resamples and permutations.
        random_state : int, RandomState, Generator or None, default=None
            Resampling and relabelling.

        Returns
        -------
        summary : dict
            ``{name: {"value", "low", "high", "chance_level"}}`` for ``"auc"``,
            ``"advantage"``, ``"balanced_accuracy"`` (when the result holds decisions)
            and ``"tpr_at_fpr=<level>"`` for the resolved levels of ``tpr_at_fpr``.
        """
        entries = [("auc", None), ("advantage", None)]
        if self.eval_member_decisions is not None:
            entries.append(("balanced_accuracy", None))
        n_out = len(self.eval_nonmembers)
        entries += [("tpr_at_fpr", lv) for lv in sorted(self.tpr_at_fpr)
                    if allowed_false_positives(lv, n_out) >= 1]
        out = {}
        for metric, lv in entries:
            key = metric if lv is None else f"tpr_at_fpr={lv:g}"
            low, high = self.confidence_interval(metric, fpr=lv, confidence=confidence,
                                                 n_resamples=n_resamples,
                                                 random_state=random_state)
            out[key] = {"value": self.metric_value(metric, fpr=lv), "low": low,
                        "high": high,
                        "chance_level": self.chance_level(metric, fpr=lv,
                                                          n_permutations=n_resamples,
                                                          random_state=random_state)}
        return out


def _split_known(n, rng, known_fraction):
    perm = rng.permutation(n)
    k = int(round(known_fraction * n))
    return np.sort(perm[:k]), np.sort(perm[k:])


_THRESHOLDS = ("auto", "global", "per_class")


def _resolve_thresholds(thresholds, has_labels, attack=None):
    """The rule ``thresholds="auto"`` stands for (see :func:`evaluate_scores`)."""
    if thresholds != "auto":
        return thresholds
    return "per_class" if has_labels and attack != "gap" else "global"


@validate_params(
    {
        "members": ["array-like"],
        "scores": ["array-like"],
        "y": ["array-like", None],
        "thresholds": [StrOptions(set(_THRESHOLDS))],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
        "attack": [str],
    },
    prefer_skip_nested_validation=True,
)
def evaluate_scores(members, scores, *, y=None, thresholds: str = "auto",
                    known_fraction: float = 0.5, random_state=None,
                    attack: str = "custom") -> MembershipInferenceResult:
    """Score a membership attack from per-example scores (higher = member).

    The arguments come in the order of :func:`sklearn.metrics.roc_curve`: the truth
    (``members``), then the score. Members and non-members are each split at random into
    a known part (fraction ``known_fraction``, used to choose the threshold(s)) and an
    evaluation part. Each part needs at least one member and one non-member: with ``n``
    members the known part holds ``round(known_fraction * n)`` of them, which must lie in
    ``1 .. n - 1`` (and likewise for the non-members); at least 2 members and 2
    non-members in any case.

    Parameters
    ----------
    members : array-like of bool of shape (n_samples,)
        Membership truth of each scored row: True (or 1) for a member (trained on),
        False (or 0) for a non-member.
    scores : array-like of shape (n_samples,)
        Finite membership score of each row (higher means "more likely a member").
    y : array-like of shape (n_samples,), default=None
        True class label of each row, for per-class thresholds.
    thresholds : {"auto", "global", "per_class"}, default="auto"
        ``"global"``: one threshold for all rows; ``"per_class"``: one per class label
        (Song & Mittal; needs ``y``; a label missing from the known members or
        non-members gets the global threshold); ``"auto"``: ``"per_class"`` when ``y``
        is given, ``"global"`` otherwise. The thresholds used are in the result's
        ``thresholds`` (``{None: t}`` for a global one).
    known_fraction : float in (0, 1), default=0.5
        Fraction of the members and of the non-members used to choose the threshold(s);
        the rest is used to evaluate the attack.
    random_state : int, RandomState, Generator or None, default=None
        Random split into known and evaluation parts; ``None`` draws it from fresh OS
        entropy (never numpy's global state).
    attack : str, default="custom"
        Name stored in the result.

    Returns
    -------
    result : :class:`MembershipInferenceResult`
        Result of a membership attack; ``scores_members`` and ``scores_nonmembers`` hold
        ``scores[members]`` and ``scores[~members]`` in row order.

    Raises
    ------
    ValueError
        NaN or infinite scores (a model returning NaN would otherwise read as "no
        leakage"), ``members`` not boolean or of another length than ``scores``, inputs
        too small for both parts, ``y`` of the wrong length, ``thresholds="per_class"``
        without ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import evaluate_scores
    >>> rng = np.random.RandomState(0)
    >>> members = np.r_[np.ones(2000, bool), np.zeros(2000, bool)]
    >>> scores = np.r_[rng.normal(1.0, 1, 2000), rng.normal(0.0, 1, 2000)]
    >>> res = evaluate_scores(members, scores, random_state=0)
    >>> bool(abs(res.auc - 0.760) < 0.02)  # Phi(1 / sqrt(2)) for unit-variance Gaussians
    True
    """
    scores = check_finite_scores(scores, "scores")
    members = check_membership_truth(members, scores.size)
    if y is not None:
        y = check_target(y, scores.size, param="y", x_param="scores")
    thresholds = _resolve_thresholds(thresholds, y is not None)
    if thresholds == "per_class" and y is None:
        raise ValueError("thresholds='per_class' needs y, the class label of every scored "
                         "row; pass y=... or thresholds='global'.")
    s_in, s_out = scores[members], scores[~members]
    if s_in.size < 2 or s_out.size < 2:
        raise ValueError(
            "Membership attacks need at least 2 members and 2 non-members; members holds "
            f"{s_in.size} members and {s_out.size} non-members."
        )
    for size, who in ((s_in.size, "members"), (s_out.size, "non-members")):
        k = int(round(known_fraction * size))
        if not 1 <= k <= size - 1:
            part = "known (threshold-choosing)" if k < 1 else "evaluation"
            raise ValueError(
                f"known_fraction={known_fraction} leaves the {part} part of the {size} "
                f"{who} empty: round(known_fraction * {size}) must be in 1..{size - 1}. "
                "Pass more examples or a known_fraction closer to 0.5."
            )
    rng = noise_generator(random_state)
    k_in, e_in = _split_known(s_in.size, rng, known_fraction)
    k_out, e_out = _split_known(s_out.size, rng, known_fraction)
    if thresholds == "global":
        t = _best_threshold(s_in[k_in], s_out[k_out])
        chosen = {None: t}
        pred_in, pred_out = s_in[e_in] >= t, s_out[e_out] >= t
    else:
        chosen, pred_in, pred_out = _per_class_decisions(
            s_in, s_out, y[members], y[~members], np.unique(y), k_in, k_out, e_in, e_out)
    bal = 0.5 * (pred_in.mean() + 1.0 - pred_out.mean())
    auc, advantage, at = _roc_summary(s_in[e_in], s_out[e_out])
    return MembershipInferenceResult(
        attack=attack, balanced_accuracy=float(bal), advantage=advantage,
        auc=auc, tpr_at_fpr=at, thresholds=chosen, scores_members=s_in,
        scores_nonmembers=s_out, eval_members=e_in, eval_nonmembers=e_out,
        eval_member_decisions=pred_in, eval_nonmember_decisions=pred_out,
    )


def _per_class_decisions(s_in, s_out, y_in, y_out, classes, k_in, k_out, e_in, e_out):
    """``(thresholds, member decisions, non-member decisions)`` with one threshold per
    class chosen on the known part (the global one for a class missing from it)."""
    chosen = {}
    pred_in = np.zeros(e_in.size, bool)
    pred_out = np.zeros(e_out.size, bool)
    global_t = _best_threshold(s_in[k_in], s_out[k_out])
    for c in classes:
        a, b = k_in[y_in[k_in] == c], k_out[y_out[k_out] == c]
        t = _best_threshold(s_in[a], s_out[b]) if a.size and b.size else global_t
        chosen[c.item() if hasattr(c, "item") else c] = t
        pred_in[y_in[e_in] == c] = s_in[e_in][y_in[e_in] == c] >= t
        pred_out[y_out[e_out] == c] = s_out[e_out][y_out[e_out] == c] >= t
    return chosen, pred_in, pred_out


def _roc_summary(a, b):
    """``(auc, advantage, tpr at fpr 0.1% and 1%)`` of member scores ``a`` against
    non-member scores ``b``."""
    pooled = np.r_[a, b]
    w_in = np.r_[np.ones(a.size), np.zeros(b.size)][None, :]
    tp, fp = roc_counts(pooled, w_in, 1.0 - w_in)
    tpr, fpr = tp[0] / a.size, fp[0] / b.size
    # trapezoidal area under the ROC polyline (ties: one diagonal step, credit 1/2)
    auc = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)
    at = {}
    for level in (0.001, 0.01):
        # exact count rule: at most floor(level * n_nonmembers) false positives; a level
        # below one false positive is not resolved by this evaluation size (NaN)
        k = allowed_false_positives(level, b.size)
        at[level] = float(tpr[fp[0] <= k].max()) if k >= 1 else float("nan")
    return auc, float(np.max(tpr - fpr)), at


def _attack_blocks(estimator, blocks, *, attack, thresholds, known_fraction, random_state):
    """Score ``[(X_part, y_part, is_member), ...]`` and evaluate the attack on them."""
    scores, y, members = [], [], []
    for X_part, y_part, is_member in blocks:
        scores.append(membership_scores(estimator, X_part, y_part, attack=attack))
        y.append(np.asarray(y_part))
        members.append(np.full(len(y_part), is_member))
    return evaluate_scores(np.concatenate(members), np.concatenate(scores),
                           y=np.concatenate(y),
                           thresholds=_resolve_thresholds(thresholds, True, attack),
                           known_fraction=known_fraction, random_state=random_state,
                           attack=attack)


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "members": ["array-like"],
        "attack": [StrOptions(set(ATTACKS))],
        "thresholds": [StrOptions(set(_THRESHOLDS))],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def membership_inference(estimator, X, y, members, *, attack: str = "confidence",
                         thresholds: str = "auto", known_fraction: float = 0.5,
                         random_state=None) -> MembershipInferenceResult:
    """Run a black-box threshold membership inference attack on a fitted model.

    Threat model (WERM paper, Section 2.2): the adversary queries the model's outputs on
    an example with its true label and knows a fraction of the members and of the
    non-members (``known_fraction``), on which it picks the threshold(s) maximising
    balanced accuracy; the attack is then scored on the remaining members and
    non-members.

    Parameters
    ----------
    estimator : fitted classifier or regressor
        The fitted model that is attacked or audited.
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        Members and non-members of the model's training set. Passed untouched to the
        estimator, so it may hold strings or categories if the estimator accepts them.
    y : array-like of shape (n_samples,)
        True labels / targets of ``X``.
    members : array-like of bool of shape (n_samples,) or of int indices
        Rows of ``X`` in the model's training set (the ground truth the attack is scored
        against): a boolean mask, or distinct integer row positions (as in :func:`lira`
        and :func:`rmia`).
    attack : {"gap", "confidence", "entropy", "modified_entropy", "loss"}, default="confidence"
        See :func:`membership_scores`.
    thresholds : {"auto", "global", "per_class"}, default="auto"
        ``"global"``: one threshold; ``"per_class"``: one per true class (Song & Mittal;
        the WERM evaluation); ``"auto"``: ``"per_class"``, except ``"global"`` for
        ``attack="gap"`` (the gap attack of Yeom et al. is one rule: "member" when the
        prediction is correct).
    known_fraction : float in (0, 1), default=0.5
        Fraction of the members and of the non-members the adversary knows and uses to
        choose the threshold(s); the attack is evaluated on the rest.
    random_state : int, RandomState, Generator or None, default=None
        Split into known and evaluation parts; ``None`` draws it from fresh OS entropy
        (never numpy's global state).

    Returns
    -------
    result : :class:`MembershipInferenceResult`
        ``balanced_accuracy`` (0.5 = no better than guessing), ``advantage``, ``auc``,
        ``tpr_at_fpr`` ({0.001: ..., 0.01: ...}), the chosen ``thresholds`` and the
        per-example scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import membership_inference
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 5)); y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> members = np.arange(400) < 200
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X[members], y[members])  # overfits
    >>> res = membership_inference(tree, X, y, members, attack="confidence", random_state=0)
    >>> bool(res.balanced_accuracy > 0.6), bool(res.advantage > 0.2)
    (True, True)
    """
    n = n_rows(X)
    y = check_target(y, n)
    mask = check_members(members, n)
    scores = membership_scores(estimator, X, y, attack=attack)
    return evaluate_scores(mask, scores, y=y,
                           thresholds=_resolve_thresholds(thresholds, True, attack),
                           known_fraction=known_fraction, random_state=random_state,
                           attack=attack)
