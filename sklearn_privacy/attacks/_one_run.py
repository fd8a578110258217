"""Privacy auditing with one training run (Steinke, Nasr & Jagielski, NeurIPS 2023).

``m`` canaries are each included in the training set independently with probability 1/2;
the model is trained **once**; the auditor scores every canary, guesses "included" for the
``k_plus`` highest scores and "excluded" for the ``k_minus`` lowest, and abstains on the
rest. If training is (epsilon, delta)-DP with respect to the canaries, the number of correct
guesses is stochastically dominated by a binomial law (the paper's Theorem 3.1 for
delta = 0 and its delta > 0 extension), which turns the observed count into a lower bound on
epsilon at a stated confidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from scipy.stats import binom
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import child_seeds, noise_generator
from ..utils._pipeline import split_pipeline
from ..utils._progress import run_tasks
from ..utils._random import seeded_clone
from ..utils.fixes import HasMethods, NumberInterval, StrOptions, validate_params
from ._membership import membership_scores
from ._reference import per_row_params
from ._validation import (
    check_finite_scores,
    check_membership_truth,
    check_same_columns,
    check_target,
    is_frame,
    n_rows,
    take_rows,
)

SCORES = ("loss", "whitebox")
CANARIES = ("mislabel", "given", "fil_worst")
_FRACTIONS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


# ---------------------------------------------------------------------------- the bound
_COUNT = NumberInterval(Integral, 0, None, closed="left")


@validate_params(
    {
        "n_guesses": [_COUNT],
        "n_correct": [_COUNT],
        "epsilon": [NumberInterval(Real, 0, None, closed="left")],
        "delta": [NumberInterval(Real, 0, 1, closed="both")],
        "n_canaries": [NumberInterval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def one_run_p_value(n_guesses: int, n_correct: int, epsilon: float, *, delta: float = 0.0,
                    n_canaries: int | None = None) -> float:
    """Probability of at least ``n_correct`` correct guesses out of ``n_guesses`` under DP.

    For an (epsilon, delta)-DP training algorithm and canaries included independently with
    probability 1/2, the number ``W`` of correct guesses satisfies (Steinke, Nasr &
    Jagielski, 2023, Theorem 3.1 and its delta > 0 version)::

        P[W >= v] <= P[B >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= B < v] / i,
        B ~ Binomial(r, e^eps / (1 + e^eps)),

    with ``r = n_guesses``, ``v = n_correct`` and ``m = n_canaries``.

    Parameters
    ----------
    n_guesses : int >= 0
        Number of canaries the auditor guessed on (``r``; abstentions excluded).
    n_correct : int in [0, n_guesses]
        Number of correct guesses (``v``).
    epsilon : float >= 0
        The epsilon of the null hypothesis.
    delta : float in [0, 1], default=0.0
        The delta of the null hypothesis.
    n_canaries : int >= 1 or None
        Number of canaries ``m`` (needed when ``delta > 0``; at least ``n_guesses``).

    Returns
    -------
    p_value : float
        The upper bound on ``P[W >= n_correct]``, clipped to 1.

    Examples
    --------
    >>> from sklearn_privacy.attacks import one_run_p_value
    >>> round(one_run_p_value(100, 60, 0.0), 4)   # a fair coin guessing 60 of 100
    0.0284
    """
    r, v = _check_counts(n_guesses, n_correct, n_canaries)
    return _p_value(r, v, epsilon, delta, n_canaries)


def _p_value(r, v, epsilon, delta, n_canaries):
    """:func:`one_run_p_value` of checked counts."""
    q = float(expit(epsilon))
    p = float(binom.sf(v - 1, r, q)) if v > 0 else 1.0
    if delta > 0 and v > 0:
        if n_canaries is None:
            raise ValueError("n_canaries is required when delta > 0 (the bound grows with "
                             "2 * n_canaries * delta).")
        # S_i = P[v - i <= B < v] for i = 1..v
        s = np.cumsum(binom.pmf(np.arange(v - 1, -1, -1), r, q))
        p += 2.0 * n_canaries * delta * float(np.max(s / np.arange(1, v + 1)))
    return min(p, 1.0)


@validate_params(
    {
        "n_guesses": [_COUNT],
        "n_correct": [_COUNT],
        "n_canaries": [NumberInterval(Integral, 1, None, closed="left"), None],
        "delta": [NumberInterval(Real, 0, 1, closed="left")],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "n_tests": [NumberInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def one_run_epsilon_bound(n_guesses: int, n_correct: int, *, n_canaries: int | None = None,
                          delta: float = 0.0, confidence: float = 0.95,
                          n_tests: int = 1) -> float:
    """Lower bound on epsilon from the counts of a one-run audit.

    The largest epsilon for which :func:`one_run_p_value` is below ``(1 - confidence) /
    n_tests``: with probability at least ``confidence`` over the canaries' inclusion and
    the training randomness, an (epsilon', delta)-DP algorithm with ``epsilon' <`` the
    returned value could not have produced this many correct guesses. ``n_tests > 1``
    applies a Bonferroni correction when the guess counts were picked among ``n_tests``
    candidates after seeing the scores.

    Parameters
    ----------
    n_guesses, n_correct : int >= 0
        Guesses made and guesses correct (``n_correct <= n_guesses``).
    n_canaries : int >= 1 or None
        Number of canaries (required when ``delta > 0``; at least ``n_guesses``).
    delta : float in [0, 1), default=0.0
        The delta of the null hypothesis.
    confidence : float in (0, 1), default=0.95
        Probability with which the bound holds.
    n_tests : int >= 1, default=1
        Number of candidate guess counts the count was chosen from (Bonferroni).

    Returns
    -------
    epsilon : float
        The lower bound (0 when the guesses show nothing at this confidence).

    Examples
    --------
    >>> from sklearn_privacy.attacks import one_run_epsilon_bound
    >>> round(one_run_epsilon_bound(1000, 900, n_canaries=1000), 3)
    2.021
    """
    r, v = _check_counts(n_guesses, n_correct, n_canaries)
    level = (1.0 - confidence) / n_tests

    def p(eps):
        return _p_value(r, v, eps, delta, n_canaries)

    if r == 0 or p(0.0) >= level:
        return 0.0
    hi = 1.0
    while p(hi) < level:
        hi *= 2.0
        if hi > 1e3:  # every guess right: the bound grows like log(r); cap the search
            return hi
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if p(mid) < level:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return lo


def _generator(random_state) -> np.random.Generator:
    """A Generator for the audit's draws (fresh OS entropy for ``None``)."""
    return np.random.default_rng(int(child_seeds(noise_generator(random_state), 1)[0]))


def _check_counts(n_guesses, n_correct, n_canaries=None):
    if n_correct > n_guesses:
        raise ValueError(f"n_correct ({n_correct}) cannot exceed n_guesses ({n_guesses}).")
    if n_canaries is not None and n_guesses > n_canaries:
        raise ValueError(f"n_guesses ({n_guesses}) cannot exceed n_canaries ({n_canaries}): "
                         "the audit guesses at most once per canary.")
    return int(n_guesses), int(n_correct)


# ---------------------------------------------------------------------------- result
@dataclass
class OneRunAuditResult:
    """Outcome of a one-run audit: the bound, the guesses and the statement behind it.

    Returned by :func:`one_run_audit` and :func:`one_run_audit_scores`. The bound is a
    formal lower bound (it holds with probability ``confidence`` whatever the scores),
    unlike the single-model ``epsilon_lower_bound`` of a membership attack.

    Parameters
    ----------
    epsilon_lower_bound : float
        With probability at least ``confidence``, the audited training is not
        (epsilon, ``delta``)-DP for any epsilon below this value. 0 when the guesses show
        nothing.
    confidence : float
        Confidence of the statement (over the canaries' inclusion and the training
        randomness; the Bonferroni correction over ``n_tests`` candidate guess counts is
        included).
    delta : float
        The delta the bound is for.
    n_canaries : int
        Number of canaries ``m``.
    members : ndarray of bool, shape (n_canaries,)
        Which canaries were in the training set (the audit's secret coin flips).
    scores : ndarray of shape (n_canaries,)
        The auditor's score of every canary (higher: "included").
    guesses : ndarray of int8, shape (n_canaries,)
        +1 guessed included, -1 guessed excluded, 0 abstained.
    k_plus, k_minus : int
        Number of "included" and "excluded" guesses of the chosen test.
    n_guesses, n_correct : int
        Guesses made and guesses correct.
    n_tests : int
        Number of candidate ``(k_plus, k_minus)`` the best bound was chosen from.
    attack : str
        How canaries were scored (``"loss"``, ``"loss (calibrated by k reference models)"``,
        ``"whitebox"``, ``"given"``).
    claimed_epsilon, claimed_delta : float
        The claim of the audited release (``inf`` when it claims nothing).
    claim_source : str
        Where the claim was read.

    See Also
    --------
    one_run_audit : Audit an estimator with one training run.
    canary_audit : Audit with many releases on one neighbouring pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import one_run_audit_scores
    >>> rng = np.random.default_rng(0)
    >>> members = rng.random(2000) < 0.5
    >>> scores = members + rng.normal(scale=0.5, size=2000)   # a leaky mechanism
    >>> res = one_run_audit_scores(members, scores, k_plus=100, k_minus=100)
    >>> res.n_guesses, res.n_correct
    (200, 200)
    >>> round(res.epsilon_lower_bound, 2)
    4.19
    """

    epsilon_lower_bound: float
    confidence: float
    delta: float
    n_canaries: int
    members: np.ndarray = field(repr=False)
    scores: np.ndarray = field(repr=False)
    guesses: np.ndarray = field(repr=False)
    k_plus: int = 0
    k_minus: int = 0
    n_guesses: int = 0
    n_correct: int = 0
    n_tests: int = 1
    attack: str = "given"
    claimed_epsilon: float = float("inf")
    claimed_delta: float = 0.0
    claim_source: str = "not given"

    def roc_point(self, *, confidence: float | None = None) -> dict:
        """The audit's "included" guesses as one ROC point, with Clopper--Pearson limits.

        ``tpr`` is the share of included canaries guessed "included", ``fpr`` the share of
        excluded canaries guessed "included" (the ``k_plus`` highest scores; abstentions
        and "excluded" guesses count as negatives). ``tpr_low``, ``tpr_high`` and
        ``fpr_low``, ``fpr_high`` are Clopper--Pearson limits, each one-sided at ``(1 +
        confidence) / 2`` so that a statement using ``tpr_low`` and ``fpr_high`` together
        holds at ``confidence``; :meth:`MembershipROCDisplay.plot_bound
        <sklearn_privacy.attacks.MembershipROCDisplay.plot_bound>` flags a curve with
        ``max_tpr(fpr_high) < tpr_low``.

        What the point means: for each canary, given the other canaries' coin flips, the
        guess is a membership test of that canary, so under an f-DP guarantee each
        canary's (FPR, TPR) lies under the curve, and so does their average (the curve
        is concave). The limits treat the canaries as independent trials, which one
        shared training run does not make them: they are an approximation, and the
        formal statement of the audit is ``epsilon_lower_bound``. The audit adds or
        leaves out each canary, while the library's claims are for replacing one row.

        Parameters
        ----------
        confidence : float in (0, 1) or None, default=None
            ``None``: the audit's ``confidence``.

        Returns
        -------
        point : dict
            ``tpr``, ``tpr_low``, ``tpr_high``, ``fpr``, ``fpr_low``, ``fpr_high``,
            ``n_members``, ``n_nonmembers``.
        """
        from scipy.stats import beta

        conf = self.confidence if confidence is None else confidence
        if isinstance(conf, bool) or not isinstance(conf, Real) or not 0 < conf < 1:
            raise ValueError(f"confidence must be a number in (0, 1); got {conf!r}.")
        one_sided = (1 + float(conf)) / 2
        inc = np.asarray(self.members, dtype=bool)
        said = np.asarray(self.guesses) == 1

        def cp(k, n):
            if n == 0:
                return 0.0, 0.0, 1.0
            lo = float(beta.ppf(1 - one_sided, k, n - k + 1)) if k > 0 else 0.0
            hi = float(beta.ppf(one_sided, k + 1, n - k)) if k < n else 1.0
            return k / n, lo, hi

        n_in, n_out = int(inc.sum()), int((~inc).sum())
        tpr, tpr_low, tpr_high = cp(int(np.sum(said & inc)), n_in)
        fpr, fpr_low, fpr_high = cp(int(np.sum(said & ~inc)), n_out)
        return {"tpr": tpr, "tpr_low": tpr_low, "tpr_high": tpr_high, "fpr": fpr,
                "fpr_low": fpr_low, "fpr_high": fpr_high, "n_members": n_in,
                "n_nonmembers": n_out}

    @property
    def violates_claim(self) -> bool:
        """Whether the bound refutes the claimed epsilon (at this confidence).

        Only meaningful when ``delta`` is at least the claimed delta.
        """
        return bool(np.isfinite(self.claimed_epsilon)
                    and self.delta >= self.claimed_delta
                    and self.epsilon_lower_bound > self.claimed_epsilon)

    @property
    def statement(self) -> str:
        """The audit's conclusion in one sentence."""
        s = (f"With {self.confidence:.0%} confidence the training is not "
             f"({self.epsilon_lower_bound:.3g}, {self.delta:.3g})-DP for any smaller epsilon "
             f"({self.n_correct} of {self.n_guesses} guesses correct on {self.n_canaries} "
             "canaries, one training run).")
        if np.isfinite(self.claimed_epsilon):
            verdict = "refuted" if self.violates_claim else "not refuted"
            s += f" The claimed epsilon = {self.claimed_epsilon:.3g} is {verdict}."
        return s

    def __repr__(self) -> str:
        claim = ("no finite claim" if not np.isfinite(self.claimed_epsilon)
                 else f"claimed {self.claimed_epsilon:.4g}")
        return (f"OneRunAuditResult(epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
                f"confidence={self.confidence}, delta={self.delta:.3g}, "
                f"correct={self.n_correct}/{self.n_guesses} of {self.n_canaries} canaries, "
                f"attack={self.attack!r}, {claim}; a formal lower bound)")


# ---------------------------------------------------------------------------- from scores
def _candidates(m, k_plus, k_minus):
    if k_plus is not None or k_minus is not None:
        kp = 0 if k_plus is None else k_plus
        km = 0 if k_minus is None else k_minus
        if kp + km > m:
            raise ValueError(f"k_plus + k_minus = {kp + km} exceeds the {m} canaries; "
                             "guess on at most every canary once.")
        if kp + km == 0:
            raise ValueError("k_plus and k_minus are both 0: the audit makes no guess.")
        return [(int(kp), int(km))]
    cands = set()
    for f in _FRACTIONS:
        r = max(1, int(round(f * m)))
        cands.add((r // 2 + r % 2, r // 2))      # balanced
        if f < 1.0:
            cands.add((r, 0))                    # "included" guesses only
    return sorted(cands)


def _guesses(scores, kp, km, rng):
    """+1 for the ``kp`` highest scores, -1 for the ``km`` lowest (ties broken at random)."""
    tiebreak = rng.random(scores.size)
    order = np.lexsort((tiebreak, scores))        # ascending by score, random among ties
    g = np.zeros(scores.size, dtype=np.int8)
    if km:
        g[order[:km]] = -1
    if kp:
        g[order[scores.size - kp:]] = 1
    return g


@validate_params(
    {
        "members": ["array-like"],
        "scores": ["array-like"],
        "k_plus": [NumberInterval(Integral, 0, None, closed="left"), None],
        "k_minus": [NumberInterval(Integral, 0, None, closed="left"), None],
        "delta": [NumberInterval(Real, 0, 1, closed="left")],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
        "attack": [str],
        "claimed_epsilon": [NumberInterval(Real, 0, None, closed="both")],
        "claimed_delta": [NumberInterval(Real, 0, 1, closed="both")],
        "claim_source": [str],
    },
    prefer_skip_nested_validation=True,
)
def one_run_audit_scores(members, scores, *, k_plus: int | None = None,
                         k_minus: int | None = None, delta: float = 0.0,
                         confidence: float = 0.95, random_state=None,
                         attack: str = "given", claimed_epsilon: float = float("inf"),
                         claimed_delta: float = 0.0,
                         claim_source: str = "not given") -> OneRunAuditResult:
    """One-run lower bound on epsilon from the inclusion coin flips and canary scores.

    The mechanism-level entry of :func:`one_run_audit`: ``members``, the independent fair
    coin flips that decided each canary's inclusion, and any ``scores`` computed from one
    output of the audited algorithm (higher meaning "included"), in the ``(y_true,
    y_score)`` order of :func:`sklearn.metrics.roc_curve`. The guesses are the
    ``k_plus`` highest and ``k_minus`` lowest scores. When neither is given, the bound is
    the best over a fixed grid of candidates -- guesses on 0.2 %, 0.5 %, 1 %, 2 %, 5 %,
    10 %, 20 %, 50 % and 100 % of the canaries, each split evenly between "included" and
    "excluded", and each but the last also as "included"-only guesses (at most 17
    candidates, fewer when small fractions round to the same count) -- with a Bonferroni
    correction for the number of candidates (``n_tests`` of the result), so the
    confidence statement holds for the reported bound.

    Parameters
    ----------
    members : array-like of bool, shape (n_canaries,)
        Whether each canary was included (True or 1). The statement is valid only if
        these were independent fair coin flips made before training.
    scores : array-like of shape (n_canaries,)
        The auditor's score of every canary.
    k_plus, k_minus : int or None
        Fixed numbers of "included" / "excluded" guesses (no correction needed).
    delta : float, default=0.0
        The delta of the bound.
    confidence : float, default=0.95
        Probability with which the bound holds.
    random_state : int, RandomState, Generator or None
        Breaks ties between equal scores at the guess boundaries.
    attack : str, default="given"
        How the scores were computed (recorded in the result).
    claimed_epsilon : float, default=inf
        The audited release's claimed epsilon (recorded; sets ``violates_claim``).
    claimed_delta : float, default=0.0
        Its claimed delta.
    claim_source : str, default="not given"
        Where the claim was read.

    Returns
    -------
    result : OneRunAuditResult
        The bound, the guesses and their counts.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import one_run_audit_scores
    >>> rng = np.random.default_rng(1)
    >>> members = rng.random(10_000) < 0.5
    >>> eps = 2.0   # randomised response on each canary's bit: exactly eps-DP
    >>> keep = rng.random(10_000) < np.exp(eps) / (1 + np.exp(eps))
    >>> out = np.where(keep, members, ~members).astype(float)
    >>> res = one_run_audit_scores(members, out, k_plus=5000, k_minus=5000,
    ...                            random_state=0)
    >>> 1.8 < res.epsilon_lower_bound <= eps
    True
    """
    s = check_finite_scores(scores, "scores")
    inc = check_membership_truth(members, s.size)
    m = s.size
    if m == 0:
        raise ValueError("scores is empty; a one-run audit needs canaries.")
    rng = _generator(random_state)
    cands = _candidates(m, k_plus, k_minus)
    best = None
    truth = np.where(inc, 1, -1)
    for kp, km in cands:
        g = _guesses(s, kp, km, rng)
        r = kp + km
        v = int(np.sum(g == truth))
        eps = one_run_epsilon_bound(r, v, n_canaries=m, delta=delta, confidence=confidence,
                                    n_tests=len(cands))
        # the largest bound; among equal bounds (e.g. all 0) the test with most guesses
        if best is None or eps > best[0] or (eps == best[0] and r > best[4]):
            best = (eps, g, kp, km, r, v)
    eps, g, kp, km, r, v = best
    return OneRunAuditResult(
        epsilon_lower_bound=eps, confidence=confidence, delta=float(delta), n_canaries=m,
        members=inc, scores=s, guesses=g, k_plus=kp, k_minus=km, n_guesses=r, n_correct=v,
        n_tests=len(cands), attack=attack, claimed_epsilon=float(claimed_epsilon),
        claimed_delta=float(claimed_delta), claim_source=claim_source,
    )


# ---------------------------------------------------------------------------- canaries
def _stack_rows(X, C):
    """Rows of ``X`` followed by the canary rows ``C`` (same container type)."""
    if is_frame(X):
        import pandas as pd

        return pd.concat([X, C], axis=0, ignore_index=True)
    if sp.issparse(X) or sp.issparse(C):
        return sp.vstack([sp.csr_matrix(X), sp.csr_matrix(C)], format="csr")
    return np.concatenate([np.asarray(X), np.asarray(C)], axis=0)


def _fil_final(estimator):
    from ..fil._base import BaseFILEstimator

    final = split_pipeline(estimator)[1] if hasattr(estimator, "steps") else estimator
    return final if isinstance(final, BaseFILEstimator) else None


def _make_canaries(kind, estimator, X, y, X_canaries, y_canaries, m, rng):
    """``(X_c, y_c)`` for ``m`` canaries of the requested ``kind``."""
    classifier = is_classifier(estimator)
    if X_canaries is not None:
        check_same_columns(X_canaries, X, "X_canaries")
    if kind == "given":
        if X_canaries is None or y_canaries is None:
            raise ValueError("canaries='given' needs X_canaries and y_canaries.")
        mc = n_rows(X_canaries, "X_canaries")
        return X_canaries, check_target(y_canaries, mc, param="y_canaries",
                                        x_param="X_canaries")
    if kind == "fil_worst":
        fil = _fil_final(estimator)
        if fil is None or hasattr(estimator, "steps") or is_frame(X) or sp.issparse(X):
            raise ValueError("canaries='fil_worst' needs a FIL estimator (not a pipeline) "
                             "fitted on a dense numeric array; use 'mislabel' otherwise.")
        d = np.asarray(X).shape[1]
        radius = fil.data_norm if getattr(fil, "data_norm", None) is not None else float(
            np.max(np.linalg.norm(np.asarray(X, dtype=float), axis=1)))
        # orthonormal directions (a random rotation): at most one canary per feature, so
        # that the canaries' influences on the one released vector can be told apart
        m = min(m, d)
        Q, _ = np.linalg.qr(rng.standard_normal((d, m)))
        U = radius * Q.T
        if classifier:
            classes = np.unique(y)
            yc = classes[rng.integers(0, classes.size, size=m)]
        else:
            yv = np.asarray(y, dtype=float)
            bound = getattr(fil, "target_bound", None)
            big = bound if bound is not None else float(np.max(np.abs(yv)))
            yc = big * rng.choice([-1.0, 1.0], size=m)
        return U, yc
    # "mislabel": copies of rows of the pool with a wrong label / a far target
    pool_X = X if X_canaries is None else X_canaries
    pool_y = y if y_canaries is None else y_canaries
    n_pool = n_rows(pool_X, "X_canaries" if X_canaries is not None else "X")
    pool_y = check_target(pool_y, n_pool, param="y_canaries" if y_canaries is not None
                          else "y")
    idx = rng.choice(n_pool, size=m, replace=m > n_pool)
    Xc = take_rows(pool_X, idx)
    if is_frame(Xc):
        Xc = Xc.reset_index(drop=True)
    yc = np.asarray(pool_y)[idx]
    if classifier:
        classes = np.unique(np.asarray(y))
        if classes.size < 2:
            raise ValueError("canaries='mislabel' needs at least two classes in y.")
        pos = np.searchsorted(classes, yc)
        shift = rng.integers(1, classes.size, size=m)
        yc = classes[(pos + shift) % classes.size]
    else:
        yv = np.asarray(y, dtype=float)
        spread = float(np.std(yv)) or 1.0
        yc = yc.astype(float) + 5.0 * spread * rng.choice([-1.0, 1.0], size=m)
    return Xc, yc


# ---------------------------------------------------------------------------- scoring
def _loss_scores(model, Xc, yc):
    return membership_scores(model, Xc, yc, attack="loss")


def _logit_scores(model, Xc, yc):
    """Stable per-canary statistic for calibration: log-odds of the true class (or -loss)."""
    if not is_classifier(model) or not hasattr(model, "predict_proba"):
        return _loss_scores(model, Xc, yc)
    proba = np.asarray(model.predict_proba(Xc), dtype=float)
    pos = np.searchsorted(np.asarray(model.classes_), yc)
    p = proba[np.arange(len(yc)), np.clip(pos, 0, proba.shape[1] - 1)]
    p = np.clip(p, 1e-300, 1.0)
    q = np.clip(1.0 - p, 1e-300, 1.0)
    return np.log(p) - np.log(q)


def _seeded_if_unset(estimator, rng):
    """``clone(estimator)`` whose ``random_state`` parameters left at None get a seed from
    ``rng`` (never numpy's global state); explicit seeds are the caller's and are kept.

    Nothing is drawn from ``rng`` when no such parameter is None.
    """
    est = clone(estimator)
    names = [k for k, v in est.get_params(deep=True).items()
             if (k == "random_state" or k.endswith("__random_state")) and v is None]
    if names:
        est.set_params(**dict.fromkeys(names, int(child_seeds(rng, 1)[0])))
    return est


def _fit_reference(estimator, X, y, seed, fit_params, Xc, yc):
    est = seeded_clone(estimator, seed)
    est.fit(X, y, **fit_params)
    return _logit_scores(est, Xc, yc)


def _whitebox_scores(release, base, Xc, yc):
    """Per-canary likelihood-ratio statistic on the released parameters.

    ``base`` is the exact (unperturbed) FIL fit on the non-canary rows. To first order,
    including canary ``i`` moves the minimiser by ``u_i = -H^-1 g_i`` (``g_i`` its loss
    gradient at the base minimiser, up to a common scale), so the release is
    ``theta_base + sum_i S_i u_i + N(0, sigma^2 I)``. With at most as many canaries as
    parameters (and linearly independent ``u_i``), the inclusions are estimated jointly by
    least squares and each estimate is divided by its noise standard deviation; with
    more canaries, the release is projected on each normalised ``u_i``. Either way the
    score is a function of the release alone, so the audit's bound stays valid whatever
    the quality of the linearisation.
    """
    eng = base._audit_engine()
    # a penalised intercept is the coefficient of a constant column the engine holds
    Xc = base._with_intercept_column(np.asarray(Xc, dtype=float))
    fi = eng.fit_intercept
    Xa = np.hstack([Xc, np.ones((Xc.shape[0], 1))]) if fi else Xc
    if is_classifier(base):
        yv = (np.asarray(yc) == base.classes_[1]).astype(float)
    else:
        yv = np.asarray(yc, dtype=float)
    l1, _, _ = eng.loss.derivatives(Xa @ eng.theta, yv)
    U = -(Xa * l1[:, None]) @ eng.H_inv            # rows: -H^-1 g_i (H symmetric)
    shift = release._released_theta() - eng.theta
    if U.shape[0] <= U.shape[1]:
        G = U @ U.T
        try:
            Ginv = np.linalg.inv(G)
        except np.linalg.LinAlgError:
            Ginv = None
        if Ginv is not None and np.all(np.isfinite(Ginv)) and np.all(np.diag(Ginv) > 0):
            return (Ginv @ (U @ shift)) / np.sqrt(np.diag(Ginv))
    norms = np.linalg.norm(U, axis=1)
    norms[norms == 0] = 1.0
    return (U @ shift) / norms


def _claim_of(model):
    """(epsilon, delta, source) of the fitted model's claim."""
    try:
        from ..privacy import privacy_claim
    except ImportError:  # pragma: no cover - the claim package predates this module
        privacy_claim = None
    if privacy_claim is not None:
        c = privacy_claim(model, allow_seeded=True)
        return float(c.epsilon), float(c.delta), "privacy_claim"
    final = split_pipeline(model)[1] if hasattr(model, "steps") else model
    eps = getattr(final, "epsilon_", getattr(final, "epsilon_spent_", np.inf))
    dlt = getattr(final, "delta", getattr(final, "delta_spent_", 0.0))
    return float(eps), float(dlt or 0.0), "epsilon_ of the final step"


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "n_canaries": [NumberInterval(Integral, 1, None, closed="left")],
        "canaries": [StrOptions(set(CANARIES))],
        "X_canaries": ["array-like", "sparse matrix", None],
        "y_canaries": ["array-like", None],
        "attack": [StrOptions(set(SCORES))],
        "n_reference_models": [NumberInterval(Integral, 0, None, closed="left")],
        "k_plus": [NumberInterval(Integral, 0, None, closed="left"), None],
        "k_minus": [NumberInterval(Integral, 0, None, closed="left"), None],
        "delta": [NumberInterval(Real, 0, 1, closed="left"), None],
        "confidence": [NumberInterval(Real, 0, 1, closed="neither")],
        "fit_params": [dict, None],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=False,  # fits the user's estimator
)
def one_run_audit(estimator, X, y, *, n_canaries: int = 1000, canaries: str = "mislabel",
                  X_canaries=None, y_canaries=None, attack: str = "loss",
                  n_reference_models: int = 0, k_plus: int | None = None,
                  k_minus: int | None = None, delta: float | None = None,
                  confidence: float = 0.95, fit_params: dict | None = None, n_jobs=None,
                  verbose: int = 0, random_state=None) -> OneRunAuditResult:
    """Audit the privacy of any training algorithm with **one** training run.

    The procedure of Steinke, Nasr & Jagielski ("Privacy Auditing with One (1) Training
    Run", NeurIPS 2023): ``n_canaries`` canary rows are each added to ``(X, y)``
    independently with probability 1/2, ``clone(estimator)`` is fitted once on the result,
    every canary is scored, and the auditor guesses "included" for the highest scores and
    "excluded" for the lowest (abstaining on the rest). If the training algorithm is
    (epsilon, delta)-DP with respect to one row (add/remove), the number of correct
    guesses is dominated by ``Binomial(guesses, e^eps / (1 + e^eps))`` (plus a delta term),
    which :func:`one_run_epsilon_bound` turns into a lower bound at ``confidence``.

    Threat model and validity. The bound holds for the training algorithm as run here
    (the estimator's own randomness included) with respect to the canary rows; it is a
    *lower* bound: a small value does not prove privacy.

    Neighbouring relation. The audit adds or removes canaries (add/remove-one), while
    the claims of this library (:func:`~sklearn_privacy.privacy_claim`) are for
    replacing one row with ``n`` public. The two relate one way only: (epsilon, delta)-DP
    under add/remove implies (2 epsilon, (1 + e^epsilon) delta)-DP under replace-one (a
    replacement is a removal then an addition), but a replace-one guarantee says nothing
    about a change of ``n``. So a one-run bound above a replace-one claim refutes the
    claim only for an algorithm that is also add/remove DP at the claimed epsilon; the
    replace-one audit of a claim is :func:`canary_audit` on a
    :func:`worst_case_neighbours` pair. Guess counts chosen from a grid
    after seeing the scores are paid for with a Bonferroni correction. As the paper shows,
    one-run audits are loose for the Gaussian mechanism at moderate epsilon: expect a
    bound well under the true epsilon unless canaries are many and strong.

    Parameters
    ----------
    estimator : estimator or Pipeline
        Unfitted template (cloned). Its own ``random_state`` is left as given.
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        The non-canary training rows (always included). Passed to the estimator untouched,
        with the included canaries appended.
    y : array-like of shape (n_samples,)
        Labels / targets of ``X``.
    n_canaries : int, default=1000
        Number of generated canaries (ignored for ``canaries="given"``).
    canaries : {"mislabel", "given", "fil_worst"}, default="mislabel"
        ``"mislabel"``: copies of rows of ``X_canaries`` (or of ``X``) with a wrong label
        (classifiers: another class at random; regressors: the target moved by 5 standard
        deviations); ``"given"``: the rows ``X_canaries, y_canaries`` as they are;
        ``"fil_worst"``: for a FIL estimator, orthonormal directions (a random rotation)
        scaled to the ``data_norm`` sphere (the largest rows the DP view allows), with
        random labels (regression: targets at ``+-target_bound``); at most one canary per
        feature (``n_canaries`` is capped at ``n_features``), so that their influences on
        the single released vector can be separated; scored best with
        ``attack="whitebox"``.
    X_canaries, y_canaries : optional
        Canary pool or canaries.
    attack : {"loss", "whitebox"}, default="loss"
        ``"loss"``: black box, minus each canary's loss under the fitted model (calibrated
        by ``n_reference_models`` reference models trained without any canary when given:
        z-score of the log-odds of the canary's label against theirs, the offline
        likelihood-ratio attack). ``"whitebox"``: for FIL estimators whose released
        parameters are public, the projection of the release on each canary's influence
        direction (needs one exact fit on ``X`` alone, which does not involve the canaries).
    n_reference_models : int, default=0
        Reference models for the calibrated black-box score (fitted with ``n_jobs``).
    k_plus, k_minus : int or None
        Fixed guess counts; by default the best of a fixed grid, Bonferroni-corrected.
    delta : float or None
        The delta of the bound; ``None`` takes the claimed delta of the fitted release
        (0 when it claims nothing).
    confidence : float, default=0.95
        Probability with which the bound holds.
    fit_params : dict or None
        Passed to ``fit`` (sample-aligned parameters are not supported).
    n_jobs : int or None
        Joblib parallelism of the reference models (any joblib backend, including dask).
    verbose : int, default=0
        0 prints nothing; 1 prints what is fitted and ``[one_run_audit] done k of N
        reference models fitted`` about ten times; 2 after every reference model, with
        joblib's own messages.
    random_state : int, RandomState, Generator or None
        The audit's own randomness (coin flips, canary generation, tie breaks, reference
        seeds, and the seed of every ``random_state`` parameter of ``estimator`` left at
        None; explicit seeds are kept). ``None`` draws fresh OS entropy.

    Returns
    -------
    result : OneRunAuditResult
        The bound, the guesses, the counts, the claim of the fitted release (read with
        :func:`sklearn_privacy.privacy_claim`) and a one-sentence ``statement``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import one_run_audit
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> res = one_run_audit(DecisionTreeClassifier(random_state=0), X, y,
    ...                     n_canaries=400, random_state=0)
    >>> res.epsilon_lower_bound > 1     # a fully grown tree memorises mislabelled rows
    True
    """
    n, y, fit_params = _check_inputs(X, y, attack, n_reference_models, fit_params)
    rng = _generator(random_state)
    Xc, yc = _make_canaries(canaries, estimator, X, y, X_canaries, y_canaries,
                            int(n_canaries), rng)
    members, model = _fit_with_canaries(estimator, X, y, Xc, yc, fit_params, rng, verbose)
    if attack == "whitebox":
        s, label = _whitebox_of(estimator, model, X, y, Xc, yc, fit_params, rng), "whitebox"
    elif n_reference_models:
        s = _calibrated_loss_scores(estimator, model, X, y, Xc, yc, fit_params,
                                    int(n_reference_models), n_jobs, verbose, rng)
        label = f"loss (calibrated by {n_reference_models} reference models)"
    else:
        s, label = _loss_scores(model, Xc, yc), "loss"
    return _audit_of_scores(model, members, s, label, k_plus=k_plus, k_minus=k_minus,
                            delta=delta, confidence=confidence, rng=rng)


def _check_inputs(X, y, attack, n_reference_models, fit_params):
    """``(n, y, fit_params)``: an attack's options that go together, labels of ``X``'s
    rows, and fit parameters without per-row entries (the canaries have none)."""
    if attack == "whitebox" and n_reference_models:
        raise ValueError("n_reference_models applies to attack='loss' only.")
    n = n_rows(X)
    y = check_target(y, n)
    fit_params = dict(fit_params or {})
    per_row = per_row_params(fit_params, n)
    if per_row:
        raise ValueError(
            f"fit_params[{per_row[0]!r}] has one entry per row of X, but the audit trains on "
            "X plus the included canaries, which have no entry; per-row fit parameters are "
            "not supported (repeat rows instead of weighting them).")
    return n, y, fit_params


def _fit_with_canaries(estimator, X, y, Xc, yc, fit_params, rng, verbose):
    """``(members, model)``: each canary included with probability 1/2, one fit."""
    n, m = n_rows(X), n_rows(Xc, "X_canaries")
    members = rng.random(m) < 0.5
    idx = np.flatnonzero(members)
    X_train = _stack_rows(X, take_rows(Xc, idx))
    y_train = np.concatenate([np.asarray(y), np.asarray(yc)[idx]])
    if verbose:
        print(f"[one_run_audit] fitting once on {n} rows + {idx.size} of {m} canaries")
    model = _seeded_if_unset(estimator, rng).fit(X_train, y_train, **fit_params)
    check_is_fitted(model)
    return members, model


def _whitebox_of(estimator, model, X, y, Xc, yc, fit_params, rng):
    """White-box scores of the canaries: the released FIL model against a fit without
    them."""
    fil = _fil_final(model)
    if fil is None or hasattr(model, "steps"):
        raise ValueError("attack='whitebox' needs a FIL estimator (not a pipeline) whose "
                         "released coef_/intercept_ are public; use attack='loss' for "
                         "other models.")
    if getattr(fil.coef_, "ndim", 1) == 2 and fil.coef_.shape[0] > 1:
        raise ValueError("attack='whitebox' supports binary and regression FIL models.")
    base = _seeded_if_unset(estimator, rng).fit(X, y, **fit_params)
    return _whitebox_scores(model, base, Xc, yc)


def _calibrated_loss_scores(estimator, model, X, y, Xc, yc, fit_params, n_reference_models,
                            n_jobs, verbose, rng):
    """The canaries' logit scores standardised by reference models trained without them."""
    m = n_rows(Xc, "X_canaries")
    seeds = child_seeds(rng, n_reference_models)
    if verbose:
        print(f"[one_run_audit] fitting {n_reference_models} reference models")
    ref = np.vstack(run_tasks(
        _fit_reference, [(estimator, X, y, int(seeds[k]), fit_params, Xc, yc)
                         for k in range(n_reference_models)],
        n_jobs=n_jobs, verbose=verbose, who="one_run_audit", unit="reference models fitted"))
    target = _logit_scores(model, Xc, yc)
    mu = ref.mean(axis=0)
    sd = ref.std(axis=0, ddof=1) if n_reference_models > 1 else np.ones(m)
    sd = np.where(sd > 0, sd, np.max(sd) if np.any(sd > 0) else 1.0)
    return (target - mu) / sd


def _audit_of_scores(model, members, s, label, *, k_plus, k_minus, delta, confidence, rng):
    """The one-run bound from the canaries' scores, next to the model's claim."""
    claimed_eps, claimed_delta, source = _claim_of(model)
    if delta is None:
        delta = claimed_delta if np.isfinite(claimed_eps) else 0.0
    return one_run_audit_scores(
        members, s, k_plus=k_plus, k_minus=k_minus, delta=delta, confidence=confidence,
        random_state=rng, attack=label, claimed_epsilon=claimed_eps,
        claimed_delta=claimed_delta, claim_source=source,
    )
