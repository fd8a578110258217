"""Empirical privacy audits: Clopper-Pearson lower bounds on epsilon and canary audits."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.stats import beta

from ..privacy import PrivacyClaim, privacy_claim
from ..utils import child_seeds, noise_generator
from ..utils._progress import run_tasks
from ..utils._random import seeded_clone
from ..utils.fixes import HasMethods, NumberInterval, validate_params
from ._membership import MembershipInferenceResult, _split_known
from ._validation import (
    check_finite_scores,
    check_membership_truth,
    check_same_columns,
    is_frame,
    n_rows,
)


@dataclass
class EpsilonLowerBoundResult:
    """A one-sided Clopper-Pearson lower bound on epsilon and the counts behind it.

    Returned by :func:`epsilon_lower_bound` (and held in ``CanaryAuditResult.bound``):
    the distinguishing test chosen on the known part of the trials and its counts on the
    evaluation part, from which the bound is computed.

    Parameters
    ----------
    epsilon_lower_bound : float
        The lower bound (0 when the test shows nothing). The same name as
        ``CanaryAuditResult.epsilon_lower_bound``.
    delta : float
        The delta the bound is for.
    confidence : float
        The confidence level of the bound.
    threshold : float
        The test: "positive" when ``score >= threshold`` (``orientation="greater"``) or
        ``score <= threshold`` (``"less"``), chosen on the known part.
    orientation : {"greater", "less"}
        Whether high (``"greater"``) or low (``"less"``) scores point to the positives.
    true_positives : int
        Positive trials (members / releases with the canary) of the evaluation part that
        the test calls positive.
    false_positives : int
        Negative trials of the evaluation part that the test calls positive.
    n_positive : int
        Number of positive trials in the evaluation part.
    n_negative : int
        Number of negative trials in the evaluation part.
    tpr_lower : float
        One-sided Clopper-Pearson lower bound on the true positive rate, at level
        ``(1 - confidence) / 2``.
    fpr_upper : float
        One-sided Clopper-Pearson upper bound on the false positive rate, at level
        ``(1 - confidence) / 2``.
    formal : bool, default=True
        Whether the figure is a statistically valid lower bound on the mechanism's
        epsilon: True for trials that are independent releases on one neighbouring pair
        (:func:`canary_audit`, or ``scores`` the caller vouches for), False when computed
        from one model's member and non-member examples (a
        :class:`MembershipInferenceResult`), where it measures that model's
        average-example leakage and is not a formal bound. The repr says so.

    See Also
    --------
    epsilon_lower_bound : Compute this bound from scores or a membership result.
    canary_audit : Audit a training algorithm on one neighbouring pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import epsilon_lower_bound
    >>> members = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    >>> scores = members.astype(float)  # a test that never errs
    >>> res = epsilon_lower_bound(members=members, scores=scores, random_state=0)
    >>> res.orientation, res.true_positives, res.false_positives, res.n_positive
    ('greater', 25, 0, 25)
    >>> round(res.epsilon_lower_bound, 2), round(res.fpr_upper, 3)  # 25 trials per class
    (1.84, 0.137)
    """

    epsilon_lower_bound: float
    delta: float
    confidence: float
    threshold: float
    orientation: str
    true_positives: int
    false_positives: int
    n_positive: int
    n_negative: int
    tpr_lower: float
    fpr_upper: float
    formal: bool = True

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in (
            "epsilon_lower_bound", "delta", "confidence", "threshold", "orientation",
            "true_positives", "false_positives", "n_positive", "n_negative", "tpr_lower",
            "fpr_upper", "formal"))
        note = "" if self.formal else (
            "  # heuristic: from one model's members and non-members, not a formal bound "
            "on epsilon")
        return f"{type(self).__name__}({fields}){note}"


def _cp_upper(k, n, level):
    """One-sided Clopper-Pearson upper bound of a binomial proportion (k of n)."""
    k = np.asarray(k, dtype=float)
    full = k >= n
    out = beta.ppf(1.0 - level, np.where(full, 1.0, k + 1.0), np.where(full, 1.0, n - k))
    return np.where(full, 1.0, out)


def _bound(tp, fp, n_pos, n_neg, delta, level):
    """Lower bound of epsilon from the counts (vectorised over thresholds).

    With ``FPR_hi`` and ``FNR_hi`` one-sided upper bounds at level ``level`` each,
    ``max(log((1 - delta - FNR_hi) / FPR_hi), log((1 - delta - FPR_hi) / FNR_hi), 0)``.
    """
    fpr_hi = _cp_upper(fp, n_neg, level)
    fnr_hi = _cp_upper(n_pos - np.asarray(tp), n_pos, level)
    num1, num2 = 1.0 - delta - fnr_hi, 1.0 - delta - fpr_hi
    e1 = np.where(num1 > 0, np.log(np.where(num1 > 0, num1, 1.0) / fpr_hi), -np.inf)
    e2 = np.where(num2 > 0, np.log(np.where(num2 > 0, num2, 1.0) / fnr_hi), -np.inf)
    return np.maximum(np.maximum(e1, e2), 0.0), 1.0 - fnr_hi, fpr_hi


def _choose_test(s_pos, s_neg, delta, level):
    """(orientation, threshold) maximising the bound on the known part."""
    best = (-np.inf, "greater", -np.inf)
    for orientation, sign in (("greater", 1.0), ("less", -1.0)):
        a, b = sign * s_pos, sign * s_neg
        values = np.unique(np.concatenate([a, b]))
        tp = a.size - np.searchsorted(np.sort(a), values, side="left")
        fp = b.size - np.searchsorted(np.sort(b), values, side="left")
        eps, _, _ = _bound(tp, fp, a.size, b.size, delta, level)
        i = int(np.argmax(eps))
        if eps[i] > best[0]:
            # cut midway to the next lower value: same decisions on the known part
            t = values[i] if i == 0 else 0.5 * (values[i] + values[i - 1])
            best = (float(eps[i]), orientation, sign * t)
    return best[1], float(best[2])


@validate_params(
    {
        "result": [MembershipInferenceResult, None],
        "members": ["array-like", None],
        "scores": ["array-like", None],
        "delta": [NumberInterval(Real, 0, 1, closed="left")],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def epsilon_lower_bound(result: MembershipInferenceResult | None = None, *, members=None,
                        scores=None, delta: float = 0.0, confidence: float = 0.95,
                        known_fraction: float = 0.5,
                        random_state=None) -> EpsilonLowerBoundResult:
    """One-sided Clopper-Pearson lower bound on epsilon from a distinguishing test.

    For an ``(epsilon, delta)``-DP mechanism ``M``, neighbouring data sets ``D, D'`` and
    every event ``S``: ``P[M(D') in S] <= exp(epsilon) P[M(D) in S] + delta``, and the
    same with ``D, D'`` swapped. A test that calls "positive" (``D'``) when the score
    passes a threshold has a true-positive rate ``TPR = P[M(D') in S]`` and a
    false-positive rate ``FPR = P[M(D) in S]``; applying the inequality to ``S`` and to
    its complement gives (Kairouz et al., 2015; Jagielski et al., 2020; Nasr et al., 2021)

    .. math::

        \\epsilon \\ge \\max\\Big(\\log\\frac{1 - \\delta - \\mathrm{FNR}}{\\mathrm{FPR}},\\;
                              \\log\\frac{1 - \\delta - \\mathrm{FPR}}{\\mathrm{FNR}}\\Big).

    The rates are replaced by one-sided Clopper-Pearson upper bounds ``FPR_hi`` and
    ``FNR_hi``, each at level ``(1 - confidence) / 2``: by the union bound both hold at
    once with probability at least ``confidence``, and then both terms (the right-hand
    sides decrease in ``FPR`` and ``FNR``) are valid lower bounds, so their maximum is.
    The test (threshold and whether high or low scores point to ``D'``) is chosen on a
    known part of the trials to maximise the same bound there; the counts come from the
    remaining evaluation part only, so the choice does not bias the bound.

    What the figure means depends on where the trials come from. From independent
    releases on a fixed pair ``D, D'`` (:func:`canary_audit`) it is a statistically valid
    lower bound on the epsilon of the mechanism (at the given delta). From one model and
    many member / non-member examples (a :class:`MembershipInferenceResult`) the trials
    are not independent runs of one neighbouring pair; the figure then measures the
    average-example leakage of that model and is not a formal bound on its epsilon.

    Parameters
    ----------
    result : MembershipInferenceResult, optional
        Scores of members (positives) and non-members (negatives) with the result's own
        known / evaluation split (``eval_members``, ``eval_nonmembers``). Exclusive with
        ``members`` and ``scores``.
    members : array-like of bool of shape (n_trials,), optional
        With ``scores``: True (or 1) for trials on ``D'`` (members), False (or 0) for
        trials on ``D`` (non-members) -- the ``y_true`` of
        :func:`sklearn.metrics.roc_curve`.
    scores : array-like of shape (n_trials,), optional
        With ``members``: one finite score per trial.
    delta : float in [0, 1), default=0.0
        The delta of the ``(epsilon, delta)`` guarantee the bound is for.
    confidence : float in (0, 1), default=0.95
        Probability with which the bound holds (each Clopper-Pearson bound at level
        ``(1 - confidence) / 2``).
    known_fraction : float in (0, 1), default=0.5
        With ``scores``: share of each class used to choose the test (at least one trial
        of each class in each part).
    random_state : int, RandomState, Generator or None, default=None
        With ``scores``: the known / evaluation split (``None``: fresh OS entropy).

    Returns
    -------
    result : :class:`EpsilonLowerBoundResult`
        The lower bound ``epsilon_lower_bound`` (0 when the test shows nothing), the chosen test
        (``threshold``, ``orientation``), its counts on the evaluation part and the
        Clopper-Pearson bounds on its rates.

    Raises
    ------
    ValueError
        Neither or both of ``result`` and ``members, scores``; NaN scores; ``members``
        not boolean or of the wrong length; too few trials for a known and an
        evaluation part; ``delta`` or ``confidence`` out of range.
    TypeError
        ``result`` not a membership result; non-numeric parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import epsilon_lower_bound
    >>> rng = np.random.RandomState(0)
    >>> eps = 1.0  # randomised response: P[1 | D'] = e / (1 + e), P[1 | D] = 1 / (1 + e)
    >>> p = np.exp(eps) / (1 + np.exp(eps))
    >>> scores = np.r_[rng.uniform(size=4000) < p, rng.uniform(size=4000) < 1 - p]
    >>> members = np.r_[np.ones(4000, bool), np.zeros(4000, bool)]
    >>> res = epsilon_lower_bound(members=members, scores=scores, random_state=0)
    >>> bool(0.7 < res.epsilon_lower_bound <= 1.0)
    True
    """
    delta, confidence = float(delta), float(confidence)
    level = (1.0 - confidence) / 2.0
    if result is not None and (scores is not None or members is not None):
        raise ValueError("Pass either result or members and scores, not both.")
    if result is not None:
        s_pos, s_neg, k_pos, k_neg, e_pos, e_neg = _parts_of_result(result)
    else:
        s_pos, s_neg, k_pos, k_neg, e_pos, e_neg = _parts_of_trials(
            members, scores, known_fraction, random_state)
    orientation, threshold = _choose_test(s_pos[k_pos], s_neg[k_neg], delta, level)
    a, b = s_pos[e_pos], s_neg[e_neg]
    if orientation == "greater":
        tp, fp = int(np.sum(a >= threshold)), int(np.sum(b >= threshold))
    else:
        tp, fp = int(np.sum(a <= threshold)), int(np.sum(b <= threshold))
    eps, tpr_lo, fpr_hi = _bound(tp, fp, a.size, b.size, delta, level)
    return EpsilonLowerBoundResult(
        epsilon_lower_bound=float(eps), delta=delta, confidence=confidence,
        threshold=threshold,
        orientation=orientation, true_positives=tp, false_positives=fp,
        n_positive=int(a.size), n_negative=int(b.size), tpr_lower=float(tpr_lo),
        fpr_upper=float(fpr_hi), formal=result is None,
    )


def _parts_of_result(result):
    """``(s_pos, s_neg, k_pos, k_neg, e_pos, e_neg)`` of a membership result: the scores
    and the known / evaluation indices of its own split."""
    s_pos = np.asarray(result.scores_members, dtype=float)
    s_neg = np.asarray(result.scores_nonmembers, dtype=float)
    e_pos = np.asarray(result.eval_members, dtype=int)
    e_neg = np.asarray(result.eval_nonmembers, dtype=int)
    k_pos = np.setdiff1d(np.arange(s_pos.size), e_pos)
    k_neg = np.setdiff1d(np.arange(s_neg.size), e_neg)
    if min(k_pos.size, k_neg.size, e_pos.size, e_neg.size) == 0:
        raise ValueError("result has an empty known or evaluation part; rerun the attack "
                         "with a known_fraction closer to 0.5.")
    return s_pos, s_neg, k_pos, k_neg, e_pos, e_neg


def _parts_of_trials(members, scores, known_fraction, random_state):
    """``(s_pos, s_neg, k_pos, k_neg, e_pos, e_neg)`` of trials: the scores of each class
    and a random split of each into a known part (the test) and an evaluation part."""
    if scores is None:
        raise ValueError("Pass result (a membership result) or members and scores.")
    s = check_finite_scores(scores, "scores")
    if members is None:
        raise ValueError("members is None; pass True for trials on D' (members) and "
                         "False for trials on D (non-members), one per score.")
    if s.size < 4:
        raise ValueError(f"scores has {s.size} entries; an audit needs at least 2 trials "
                         "of each class (one to choose the test, one to count).")
    lab = check_membership_truth(members, s.size)
    s_pos, s_neg = s[lab], s[~lab]
    for size, who in ((s_pos.size, "member (True)"), (s_neg.size, "non-member (False)")):
        k = int(round(known_fraction * size))
        if not 1 <= k <= size - 1:
            raise ValueError(
                f"members: {size} {who} trials with known_fraction={known_fraction} leave "
                "the known or the evaluation part empty; pass more trials of each class."
            )
    rng = noise_generator(random_state)
    k_pos, e_pos = _split_known(s_pos.size, rng, known_fraction)
    k_neg, e_neg = _split_known(s_neg.size, rng, known_fraction)
    return s_pos, s_neg, k_pos, k_neg, e_pos, e_neg


# --------------------------------------------------------------------------- canary audit
@dataclass
class CanaryAuditResult:
    """Outcome of :func:`canary_audit`.

    The empirical lower bound on epsilon from releases trained on ``D`` and on its
    neighbour ``D'``, next to what the releases claim; ``violates_claim`` says whether
    the bound refutes the claim.

    Parameters
    ----------
    epsilon_lower_bound : float
        The empirical lower bound (``bound.epsilon_lower_bound``).
    claimed_epsilon : float
        The claim of the published object, read through
        :func:`sklearn_privacy.privacy_claim` (``allow_seeded=True``: the audit picks
        the seeds) on every release: the largest epsilon over the releases. ``inf``
        when any step of the release was fitted on the rows without a guarantee (e.g.
        a ``StandardScaler`` before a DP model): nothing is claimed, nothing can be
        refuted.
    claimed_delta : float
        The delta of that claim.
    bound : EpsilonLowerBoundResult
        The test and the counts.
    statistics_original : ndarray of shape (n_releases,)
        The statistic of every release trained on ``D``.
    statistics_replaced : ndarray of shape (n_releases,)
        The statistic of every release trained on ``D'``.
    claim : PrivacyClaim or None
        The claim with the largest epsilon over the releases, step by step (its
        ``reasons`` say why it is infinite).
    claim_source : str
        Where the claim came from.

    Attributes
    ----------
    violates_claim : bool
        Whether ``epsilon_lower_bound`` exceeds ``claimed_epsilon`` (False when nothing
        is claimed).

    See Also
    --------
    canary_audit : The audit that returns this result.
    epsilon_lower_bound : The bound computed from the two samples of statistics.
    EpsilonLowerBoundResult : The test and counts held in ``bound``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn_privacy.attacks import canary_audit
    >>> class NoisyMean(BaseEstimator):  # claims epsilon=0.1 but adds no noise
    ...     def __init__(self, random_state=None):
    ...         self.random_state = random_state
    ...     def fit(self, X, y=None):
    ...         self.mean_, self.epsilon_ = X[:, 0].mean(), 0.1
    ...         return self
    ...     def __sklearn_privacy_attributes__(self):  # declares mean_ as DP output
    ...         return {"mean_": "dp", "epsilon_": "constant"}
    >>> X = np.zeros((10, 1)); y = np.zeros(10)
    >>> res = canary_audit(NoisyMean(), X, y, 0, [1.0], 0.0,
    ...                    attack=lambda est: est.mean_, n_releases=20, random_state=0)
    >>> res.claimed_epsilon, res.statistics_replaced[:2], res.violates_claim
    (0.1, array([0.1, 0.1]), True)
    >>> res.claim_source
    'privacy_claim(release, allow_seeded=True): largest epsilon over the 40 releases'
    """

    epsilon_lower_bound: float
    claimed_epsilon: float | None
    claimed_delta: float | None
    bound: EpsilonLowerBoundResult
    statistics_original: np.ndarray = field(repr=False)
    statistics_replaced: np.ndarray = field(repr=False)
    claim: PrivacyClaim | None = field(default=None, repr=False)
    claim_source: str = "privacy_claim(release, allow_seeded=True)"

    def roc_scores(self):
        """``(members, scores)`` of the releases, for an ROC against the proven curve.

        Returns
        -------
        members : ndarray of bool, shape (2 n_releases,)
            True for the releases trained on ``D'`` (with the replacement row, the
            positives of the audit), False for those trained on ``D``.
        scores : ndarray of shape (2 n_releases,)
            Their statistics, negated when the audit's test found low values pointing to
            ``D'`` (``bound.orientation == "less"``), so higher always means "with the
            row". Feed them to
            :meth:`MembershipROCDisplay.from_predictions
            <sklearn_privacy.attacks.MembershipROCDisplay.from_predictions>`, or use
            :meth:`MembershipROCDisplay.from_canary_audit
            <sklearn_privacy.attacks.MembershipROCDisplay.from_canary_audit>`.
        """
        s_in = np.asarray(self.statistics_replaced, dtype=float)
        s_out = np.asarray(self.statistics_original, dtype=float)
        sign = -1.0 if getattr(self.bound, "orientation", "greater") == "less" else 1.0
        members = np.r_[np.ones(s_in.size, dtype=bool), np.zeros(s_out.size, dtype=bool)]
        return members, sign * np.r_[s_in, s_out]

    def tpr_at(self, fpr: float = 0.01, *, confidence: float = 0.95) -> dict:
        """The audit's TPR at false-positive rate at most ``fpr``, with confidence limits.

        The threshold is the ``(k + 1)``-th largest statistic of the ``D`` releases,
        ``k = floor(fpr n_releases)``; ``fpr_high`` bounds the threshold's true FPR (the
        ``Beta(k + 1, n - k)`` quantile) and ``tpr_low``, ``tpr_high`` are the
        Clopper--Pearson interval of the TPR, jointly at ``confidence`` (each one-sided at
        ``(1 + confidence) / 2``). The releases are independent, so the statement is
        exact: a curve with ``max_tpr(fpr_high) < tpr_low`` is refuted at ``confidence``.

        Parameters
        ----------
        fpr : float in (0, 1), default=0.01
            The largest false-positive rate of the threshold.
        confidence : float in (0, 1), default=0.95
            Joint coverage of ``fpr_high`` and the TPR interval.

        Returns
        -------
        point : dict
            ``tpr``, ``tpr_low``, ``tpr_high``, ``fpr`` (empirical), ``fpr_high``.
        """
        from ..privacy._tradeoff import empirical_point

        _check_unit(fpr, "fpr")
        _check_unit(confidence, "confidence")
        members, scores = self.roc_scores()
        return empirical_point(scores[members], scores[~members], fpr=float(fpr),
                               confidence=float(confidence))

    @property
    def violates_claim(self) -> bool:
        """Whether the lower bound exceeds the claimed epsilon (the claim is refuted)."""
        return self.claimed_epsilon is not None and self.epsilon_lower_bound > \
            self.claimed_epsilon

    def __str__(self) -> str:
        verdict = "REFUTED" if self.violates_claim else "not refuted"
        head = (f"canary audit: lower bound {self.epsilon_lower_bound:.4g} vs claimed "
                f"{self.claimed_epsilon:.4g} at delta {self.claimed_delta:.3g} -- claim "
                f"{verdict} (claim from {self.claim_source})")
        return head if self.claim is None else head + "\n" + str(self.claim)


def _check_unit(value, name):
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.")


def _output_at(estimator, x_row):
    """Default attack: the release's output at the replacement row."""
    for method in ("decision_function", "predict_proba", "predict"):
        if hasattr(estimator, method):
            out = np.asarray(getattr(estimator, method)(x_row), dtype=float)
            return float(out.reshape(out.shape[0], -1)[0, -1])
    raise ValueError("attack=None needs decision_function, predict_proba or predict; "
                     f"{type(estimator).__name__} has none. Pass attack=callable.")


def _fit_one(estimator, X, y, seed, fit_params):
    est = seeded_clone(estimator, seed)
    return est.fit(X, y, **fit_params)


def _evaluate(est, attack, claim=None):
    """(attack, claim) of one fitted release (``claim`` given: reused as is)."""
    value = attack(est)
    try:
        value = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"attack must return one real number per release; got "
                         f"{value!r}.") from None
    if not np.isfinite(value):
        raise ValueError(f"attack returned {value!r}; it must return a finite number.")
    if claim is None:
        claim = privacy_claim(est, allow_seeded=True)
    return value, claim


def _release(estimator, X, y, seed, fit_params, attack):
    return _evaluate(_fit_one(estimator, X, y, seed, fit_params), attack)


def _redraws(fitted, seeds, attack):
    """Releases of one fitted output-perturbation model with fresh noise (one per seed).

    Release ``k`` is the release of a refit with ``random_state=np.random.default_rng(
    seeds[k])`` (a Generator: seeding one is ~10x cheaper than a legacy RandomState).
    """
    claim = privacy_claim(fitted, allow_seeded=True)  # a redraw changes only the noise
    return [_evaluate(fitted._redraw_release(np.random.default_rng(int(seed))), attack,
                      claim)
            for seed in seeds]


def _aligned_row(x_new, X):
    """A replacement row with column labels, put in the column order of the frame ``X``.

    A DataFrame row, or a Series indexed by column names, is matched by name; a Series
    with a default (0, 1, ...) index and a plain sequence stay positional.
    """
    import pandas as pd

    if is_frame(x_new):
        frame = x_new
    elif isinstance(x_new, pd.Series) and not isinstance(x_new.index, pd.RangeIndex):
        frame = x_new.to_frame().T
    else:
        return x_new
    check_same_columns(frame, X, "x_replacement")
    return frame[list(X.columns)]


def _replace_row(X, y, index, x_new, y_new):
    """``D'``: copies of ``X, y`` with row ``index`` replaced by ``(x_new, y_new)``."""
    n = n_rows(X)
    if not -n <= index < n:
        raise ValueError(f"index={index} is out of range for {n} rows (valid: {-n}..{n - 1}).")
    index = int(index) % n
    if is_frame(X):
        Xp = X.copy()
        x_new = _aligned_row(x_new, X)
        row = x_new.iloc[0] if is_frame(x_new) else list(np.ravel(np.asarray(x_new,
                                                                              dtype=object)))
        if len(row) != X.shape[1]:
            raise ValueError(f"x_replacement has {len(row)} values; X has {X.shape[1]} "
                             "columns.")
        Xp.iloc[index] = row if not is_frame(x_new) else row.to_numpy()
        x_row = Xp.iloc[[index]]
    else:
        if sp.issparse(x_new):
            x_new = x_new.toarray()
        row = np.asarray(x_new)
        if row.ndim == 2 and row.shape[0] == 1:
            row = row[0]
        d = X.shape[1] if hasattr(X, "shape") else len(np.asarray(X)[0])
        if row.ndim != 1 or row.shape[0] != d:
            raise ValueError(f"x_replacement must be one row of {d} values; got shape "
                             f"{row.shape}.")
        if sp.issparse(X):
            Xp = sp.lil_matrix(X, copy=True)
            Xp[index] = row
            Xp = Xp.tocsr().astype(X.dtype)
            x_row = Xp[[index]]
        else:
            Xp = np.array(X, copy=True)
            if Xp.dtype.kind in "fc" and row.dtype.kind not in "biufc":
                raise TypeError("x_replacement must hold numbers like X; got dtype "
                                f"{row.dtype}.")
            Xp[index] = row
            x_row = Xp[index:index + 1]
    yp = np.array(y, copy=True)
    yp[index] = y_new
    if not np.all(yp[index] == np.asarray(y_new)):
        raise ValueError(f"y_replacement={y_new!r} cannot be stored in y of dtype {yp.dtype} "
                         "without changing it; pass a label of the same type as y.")
    return Xp, yp, x_row


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "index": [NumberInterval(Integral, None, None, closed="neither")],
        "x_replacement": ["array-like", "sparse matrix"],
        "attack": [callable, None],
        "n_releases": [NumberInterval(Integral, 4, None, closed="left")],
        "delta": [NumberInterval(Real, 0, 1, closed="left"), None],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "fit_params": [dict, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=False,  # fits the user's estimator
)
def canary_audit(estimator, X, y, index: int, x_replacement, y_replacement, *,
                 attack=None, n_releases: int = 200, delta: float | None = None,
                 confidence: float = 0.95, known_fraction: float = 0.5,
                 fit_params: dict | None = None, refit: bool = True, n_jobs=None,
                 verbose: int = 0, random_state=None) -> CanaryAuditResult:
    """Audit a randomised training algorithm on one neighbouring pair ``D, D'``.

    ``D = (X, y)``; ``D'`` is ``D`` with row ``index`` replaced by ``(x_replacement,
    y_replacement)`` -- the replace-one relation of the library's DP components.
    ``n_releases`` releases are trained on each, ``attack`` maps every release to one
    number, and :func:`epsilon_lower_bound` turns the two samples into a lower bound on
    epsilon (``D'`` the positives), valid for the fixed pair whatever the statistic if both
    are chosen without looking at these releases. A bound above ``claimed_epsilon`` (the
    :func:`~sklearn_privacy.privacy_claim` of the whole release) refutes the claim at that
    confidence; a bound below it proves nothing about the claim, it reports how much of it
    this pair and this test exhibit. Strong audits use a worst-case pair (a row that moves
    the released quantity by the full sensitivity) and a statistic that follows the
    release's most sensitive coordinate.

    Parameters
    ----------
    estimator : estimator
        Unfitted template, cloned per release with every ``random_state`` parameter (also
        of Pipeline steps and inner estimators) set to a distinct seed. The claim of every
        fitted release is :func:`sklearn_privacy.privacy_claim` with ``allow_seeded=True``
        (the audit sets the seeds and never publishes them): every step of a Pipeline
        counts (a ``StandardScaler`` before a DP model makes it ``inf``); estimators of
        other libraries that report ``epsilon_`` / ``epsilon_spent_`` (and ``delta_`` /
        ``delta_spent_``) are read as self-reported DP steps, so they can be audited.
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        Training rows of ``D``, passed to ``fit`` of every release.
    y : array-like of shape (n_samples,)
        Labels / targets of ``D``.
    index : int
        Row of ``D`` replaced in ``D'`` (negative values count from the end).
    x_replacement : array-like of shape (n_features,) or DataFrame of one row
        The row that replaces row ``index`` of ``X`` in ``D'`` (the canary); with a
        DataFrame ``X``, a one-row DataFrame or a Series indexed by column names is matched
        by name.
    y_replacement : scalar
        Its label / target, of the same type as ``y``.
    attack : callable, default=None
        ``attack(fitted_release) -> float``, e.g. the projection of the released
        coefficients on the direction the replacement moves them. ``None``: the output at
        the replacement row (``decision_function``, else the last column of
        ``predict_proba``, else ``predict``). Must be picklable for process / cluster
        backends (a module-level function or a :func:`functools.partial` of one).
    n_releases : int, default=200
        Releases per data set (at least 4).
    delta : float in [0, 1) or None, default=None
        ``None``: the releases' reported delta (``delta_`` / ``delta_spent_``), else 0.
    confidence : float in (0, 1), default=0.95
        Probability with which the lower bound holds; see :func:`epsilon_lower_bound`.
    known_fraction : float in (0, 1), default=0.5
        Share of the releases used to choose the test.
    fit_params : dict, default=None
        Passed to every ``fit``.
    refit : bool, default=True
        True: every release is a full refit (any randomised training algorithm). False,
        for output-perturbation estimators whose training is a deterministic exact fit
        followed by one noise draw (the FIL estimators): ``D`` and ``D'`` are fitted once
        each and every release is drawn from that fit through the same release code as
        ``fit`` with ``random_state=np.random.default_rng(seed)``: exactly the releases of
        refits with that ``random_state`` (a defect in the noise code still shows), at one
        noise draw each, so the tens of thousands a large epsilon needs take seconds. It
        cannot detect a defect of the deterministic fit that depends on ``random_state``;
        other estimators (which cannot redraw their release) get a TypeError.
    n_jobs : int, default=None
        Releases are trained through :class:`joblib.Parallel` (any backend, e.g. dask);
        with ``refit=False`` the draws run in this process (they need the fits' in-memory
        audit state, which is never serialised).
    verbose : int, default=0
        0 prints nothing; 1 prints ``[canary_audit] done k of N releases refitted``
        about ten times (``refit=True``); 2 after every release, with joblib's own
        messages.
    random_state : int, RandomState, Generator or None, default=None
        Release seeds and the known / evaluation split; ``None``: fresh OS entropy.

    Returns
    -------
    result : :class:`CanaryAuditResult`
        The lower bound on epsilon, the claimed epsilon and delta, the test and its counts
        (``bound``) and the statistic of every release on ``D`` and on ``D'``.

    Raises
    ------
    ValueError, TypeError
        Bad ``index``, ``n_releases``, ``delta`` or ``confidence``, a replacement of the
        wrong width or type, a statistic that is not one finite number; ``refit=False``
        for an estimator that cannot redraw its release (not a FIL estimator).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn_privacy.attacks import canary_audit
    >>> class NoisyMean(BaseEstimator):  # Laplace mechanism on a mean of values in [0, 1]
    ...     def __init__(self, epsilon=1.0, random_state=None):
    ...         self.epsilon, self.random_state = epsilon, random_state
    ...     def fit(self, X, y=None):
    ...         rng = np.random.RandomState(self.random_state)
    ...         self.mean_ = X[:, 0].mean() + rng.laplace(0, 1 / (len(X) * self.epsilon))
    ...         self.epsilon_ = self.epsilon
    ...         return self
    ...     def __sklearn_privacy_attributes__(self):   # what its fitted state is
    ...         return {"mean_": "dp", "epsilon_": "constant"}
    >>> X = np.zeros((10, 1)); y = np.zeros(10)
    >>> res = canary_audit(NoisyMean(epsilon=1.0), X, y, 0, [1.0], 0.0,
    ...                    attack=lambda est: est.mean_, n_releases=1000, random_state=0)
    >>> bool(0.5 < res.epsilon_lower_bound <= 1.0), res.claimed_epsilon  # true value: 1
    (True, 1.0)
    """
    y, Xp, yp, attack = _neighbouring_pair(estimator, X, y, index, x_replacement,
                                           y_replacement, refit, attack)
    rng = noise_generator(random_state)
    stats, claim = _release_statistics(estimator, (X, y), (Xp, yp), attack,
                                       child_seeds(rng, 2 * int(n_releases)),
                                       fit_params or {}, refit, n_jobs, verbose)
    return _canary_result(stats, claim, delta, confidence, known_fraction, rng)


def _neighbouring_pair(estimator, X, y, index, x_replacement, y_replacement, refit,
                       attack):
    """``(y, X', y', attack)`` of the audited pair (the default attack reads the output at
    the replacement row); ``refit=False`` only for an estimator that can redraw."""
    n = n_rows(X)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be 1-D with one entry per row of X ({n}); got shape "
                         f"{y.shape}.")
    Xp, yp, x_row = _replace_row(X, y, index, x_replacement, y_replacement)
    if not refit and not callable(getattr(estimator, "_redraw_release", None)):
        raise TypeError(
            f"refit=False needs an output-perturbation estimator with the audit hook "
            f"_redraw_release(random_state) (e.g. the FIL estimators); "
            f"{type(estimator).__name__} has none. Use refit=True.")
    if attack is None:
        attack = functools.partial(_output_at, x_row=x_row)
    return y, Xp, yp, attack


def _release_statistics(estimator, original, replaced, attack, seeds, fit_params, refit,
                        n_jobs, verbose):
    """``(attack statistics, largest claim)`` of the releases: on ``D`` first, then ``D'``.

    ``len(seeds) // 2`` releases of each, refitted (in parallel) or, with
    ``refit=False``, redrawn from one fit of each data set.
    """
    n_releases = len(seeds) // 2
    if refit:
        jobs = [(*original, int(seeds[k])) for k in range(n_releases)]
        jobs += [(*replaced, int(seeds[n_releases + k])) for k in range(n_releases)]
        out = run_tasks(_release, [(estimator, A, b, seed, fit_params, attack)
                                   for A, b, seed in jobs],
                        n_jobs=n_jobs, verbose=verbose, who="canary_audit",
                        unit="releases refitted")
    else:
        fits = [_fit_one(estimator, A, b, int(seeds[k]), fit_params)
                for (A, b), k in ((original, 0), (replaced, n_releases))]
        out = [o for side in (0, 1)
               for o in _redraws(fits[side], seeds[side * n_releases:(side + 1) * n_releases],
                                 attack)]
    stats = np.array([o[0] for o in out])
    return stats, max((o[1] for o in out), key=lambda c: (c.epsilon, c.delta))


def _canary_result(stats, claim, delta, confidence, known_fraction, rng):
    """The lower bound from the two samples of statistics, next to the largest claim.

    ``delta=None`` takes the claim's delta (0 for a non-private claim).
    """
    n_releases = stats.size // 2
    if delta is None:
        delta = min(float(claim.delta), 1.0 - 1e-12) if claim.is_private else 0.0
    members = np.r_[np.zeros(n_releases, bool), np.ones(n_releases, bool)]
    bound = epsilon_lower_bound(members=members, scores=stats, delta=float(delta),
                                confidence=float(confidence),
                                known_fraction=float(known_fraction), random_state=rng)
    return CanaryAuditResult(
        epsilon_lower_bound=bound.epsilon_lower_bound, claimed_epsilon=float(claim.epsilon),
        claimed_delta=float(claim.delta), bound=bound, statistics_original=stats[:n_releases],
        statistics_replaced=stats[n_releases:], claim=claim,
        claim_source=("privacy_claim(release, allow_seeded=True): largest epsilon over the "
                      f"{2 * n_releases} releases"),
    )
