"""Relative membership inference (RMIA, Zarifzadeh, Liu & Shokri, 2024) with reference models."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import noise_generator
from ..utils.fixes import HasMethods, NumberInterval, validate_params
from ._lira import LiRAResult
from ._membership import evaluate_scores
from ._reference import fit_reference_models, log_proba
from ._validation import check_members, check_target, n_rows

_LOG_LOW, _LOG_HIGH = float(np.log(2.0**-53)), float(np.log1p(-(2.0**-53)))


def _log_true_class_proba(estimator, X, y):
    """``log Pr(y | x, model)``: the log-probability of the true class.

    From ``decision_function`` when it is the model's logit (exact in both tails, see
    :func:`~sklearn_privacy.attacks._reference.log_proba`); otherwise from the
    probabilities, clamped symmetrically to ``[log(2**-53), log1p(-2**-53)]``, the
    probabilities float64 resolves on both sides of a confident prediction.
    """
    if not is_classifier(estimator) or not hasattr(estimator, "predict_proba"):
        raise ValueError(
            "RMIA needs a classifier with predict_proba (its test compares probabilities of "
            f"the true label); {type(estimator).__name__} has none."
        )
    log_p, exact = log_proba(estimator, X)
    classes = np.asarray(estimator.classes_)
    y = np.asarray(y)
    if log_p.shape != (len(y), len(classes)):
        raise ValueError(
            f"predict_proba returned shape {log_p.shape}; expected ({len(y)}, {len(classes)})."
        )
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    if not np.all(classes[pos] == y):
        raise ValueError("y contains labels the estimator was not trained on.")
    out = log_p[np.arange(len(y)), pos]
    if exact:
        return out
    return np.clip(out, _LOG_LOW, _LOG_HIGH)


def _log_marginal(log_p, in_mask, online, offline_a):
    """``log Pr(x)`` of every row from the reference models' ``log Pr(x | theta')``.

    Online: the mean of ``Pr(x | theta')`` over all reference models (IN and OUT for the
    row in equal numbers). Offline: ``(1/2)((1 + a) Pr_OUT(x) + (1 - a))`` with
    ``Pr_OUT(x)`` the mean over the models that did not train on the row.
    """
    k = log_p.shape[0]
    if online:
        return logsumexp(log_p, axis=0) - np.log(k)
    out = ~in_mask
    log_out = logsumexp(np.where(out, log_p, -np.inf), axis=0) - np.log(out.sum(axis=0))
    if offline_a == 1.0:
        return log_out
    return np.logaddexp(np.log1p(offline_a) + log_out, np.log1p(-offline_a)) - np.log(2.0)


@dataclass
class RMIAResult(LiRAResult):
    """:class:`LiRAResult` of RMIA: ``shadow_statistics`` holds ``log Pr(x | theta')``.

    ``shadow_statistics`` (n_reference_models, n_population) is the log-probability of the true
    label under every reference model, ``shadow_in`` the reference models' training
    membership, ``target_statistics`` the target model's log-probability of the true
    label; ``population_rows`` are the rows used as the population samples ``z``, and
    ``log_ratio`` is ``log(Pr(x | theta) / Pr(x))`` for every row.

    Parameters
    ----------
    attack : str
        ``"rmia_online"`` or ``"rmia_offline"``.
    balanced_accuracy : float
        Balanced accuracy on the evaluation part of the threshold chosen on the known
        part (0.5 = no better than guessing).
    advantage : float
        Membership advantage, the maximum of TPR - FPR over the ROC curve of the
        evaluation part.
    auc : float
        Area under that ROC curve.
    tpr_at_fpr : dict of float to float
        True positive rate at a false positive rate of at most ``0.001`` and ``0.01``
        (keys).
    thresholds : dict
        ``{None: t}``: the global threshold chosen on the known part.
    scores_members : ndarray of shape (n_members,)
        RMIA scores (fractions in [0, 1]) of the members (population rows in ``members``).
    scores_nonmembers : ndarray of shape (n_nonmembers,)
        RMIA scores (fractions in [0, 1]) of the non-members.
    eval_members : ndarray of int
        Indices into ``scores_members`` of the members in the evaluation part.
    eval_nonmembers : ndarray of int
        Indices into ``scores_nonmembers`` of the non-members in the evaluation part.
    eval_member_decisions : ndarray of bool or None
        Decision ("member") of the thresholded attack on each evaluation member.
    eval_nonmember_decisions : ndarray of bool or None
        Decision of the thresholded attack on each evaluation non-member.
    shadow_statistics : ndarray of shape (n_reference_models, n_population)
        Log-probability of the true label of every population row under every
        reference model.
    shadow_in : ndarray of bool of shape (n_reference_models, n_population)
        Whether each population row is in each reference model's training set.
    target_statistics : ndarray of shape (n_population,)
        Log-probability of the true label of every population row under the target
        model.
    population_rows : ndarray of int
        Sorted indices of the population rows used as the samples ``z``.
    log_ratio : ndarray of shape (n_population,)
        ``log(Pr(x | theta) / Pr(x))`` of every population row.
    offline_a : float or None, default=None
        The ``offline_a`` used by the offline attack; ``None`` for the online attack.
    gamma : float, default=1.0
        Threshold of the pairwise likelihood ratio.

    See Also
    --------
    rmia : The attack that returns this result.
    LiRAResult : The result of :func:`lira`.
    MembershipInferenceResult : The fields shared by all membership attacks.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy.attacks import rmia
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = LogisticRegression().fit(X[:20], y[:20])
    >>> res = rmia(clf, X, y, np.arange(20), online=False, random_state=0)
    >>> res.attack, res.offline_a, res.gamma
    ('rmia_offline', 0.33, 1.0)
    >>> res.shadow_statistics.shape, res.log_ratio.shape
    ((4, 40), (40,))
    """

    population_rows: np.ndarray = field(default=None, repr=False)
    log_ratio: np.ndarray = field(default=None, repr=False)
    offline_a: float | None = None
    gamma: float = 1.0


def _check_inputs(estimator, X, y, members, n_population):
    """``(y, members mask, n_population)``: a fitted target, labels and members of ``X``'s
    rows, and ``n_population`` an int of at most that many rows (or None: every row)."""
    check_is_fitted(estimator)
    n = n_rows(X)
    y = check_target(y, n)
    mask = check_members(members, n)
    if n_population is None:
        return y, mask, None
    n_population = int(n_population)
    if n_population > n:
        raise ValueError(
            f"n_population={n_population} exceeds the {n} population rows; pass at most "
            f"{n} (or None for every row)."
        )
    return y, mask, n_population


def _log_ratios(target, log_p, ref_in, online, offline_a):
    """``log Pr(x | theta) - log Pr(x)`` of every row, finite."""
    log_ratio = target - _log_marginal(log_p, ref_in, online, offline_a)
    if not np.all(np.isfinite(log_ratio)):
        raise ValueError(
            "RMIA ratios are NaN or infinite for some rows (the target or reference models "
            "returned NaN probabilities); check the models' predictions on X."
        )
    return log_ratio


def _pairwise_scores(log_ratio, n_population, gamma, rng):
    """``(z rows, score)``: the share of the ``z`` that each row beats by a factor gamma.

    Computed for all rows at once in the log domain, one sort of the ``z`` ratios and one
    binary search per row (no pairwise matrix).
    """
    n = log_ratio.size
    if n_population is None:
        z_rows = np.arange(n)
    else:
        z_rows = np.sort(rng.permutation(n)[:n_population])
    # LR(x, z) >= gamma  <=>  log_ratio[z] <= log_ratio[x] - log(gamma)
    z_sorted = np.sort(log_ratio[z_rows])
    score = np.searchsorted(z_sorted, log_ratio - np.log(gamma), side="right") / z_rows.size
    return z_rows, score


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "members": ["array-like"],
        "n_reference_models": [NumberInterval(Integral, 2, None, closed="left")],
        "online": ["boolean"],
        "offline_a": [NumberInterval(Real, 0, 1, closed="both")],
        "gamma": [NumberInterval(Real, 0, np.inf, closed="neither")],
        "n_population": [NumberInterval(Integral, 1, None, closed="left"), None],
        "fit_params": [dict, None],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=False,  # fits the reference models
)
def rmia(estimator, X, y, members, *, n_reference_models: int = 4, online: bool = True,
         offline_a: float = 0.33, gamma: float = 1.0, n_population: int | None = None,
         fit_params: dict | None = None, known_fraction: float = 0.5, n_jobs=None,
         verbose: int = 0, random_state=None) -> RMIAResult:
    """Relative membership inference attack (RMIA) of Zarifzadeh, Liu & Shokri (2024).

    Threat model: as :func:`lira`. The adversary knows the training algorithm
    (``clone(estimator)``), holds the population ``X, y`` (which contains the target
    model's training set, the adversary not knowing which rows) and queries the target
    model's probability of the true label, :math:`\\Pr(x \\mid \\theta)`. It trains
    ``n_reference_models`` reference models on random halves of the population (the balanced
    design of :func:`lira`, through the same fitting code: every row is in the training
    set of exactly ``n_reference_models // 2`` of them) and tests the target row ``x`` against
    population samples ``z`` by the pairwise likelihood ratio

    .. math::

        LR_\\theta(x, z) = \\frac{\\Pr(x \\mid \\theta) / \\Pr(x)}
                                {\\Pr(z \\mid \\theta) / \\Pr(z)},
        \\qquad
        \\mathrm{score}(x) = \\frac{|\\{z : LR_\\theta(x, z) \\ge \\gamma\\}|}{|Z|}.

    :math:`\\Pr(\\cdot)` is the mean of :math:`\\Pr(\\cdot \\mid \\theta')` over the
    reference models: over all of them (``online=True``; half of them trained on the
    row), or, with ``online=False``, over the models that did not train on the row only,
    corrected by the paper's linear approximation of the IN models,
    :math:`\\Pr(x) = \\tfrac12((1 + a)\\Pr_{OUT}(x) + (1 - a))`. ``x`` and every ``z``
    use the same rule. The ``z`` are rows of the population (all of them, or
    ``n_population`` drawn at random): since the adversary does not know the target's
    training set, some ``z`` are members, as in any population sample that overlaps it.

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba``
        The target model; cloned (hyper-parameters only) for the reference models, whose
        ``random_state`` parameters (also of Pipeline steps) are re-seeded per model.
    X, y : array-like
        The population (array, DataFrame or sparse matrix, passed to the models untouched
        and indexed by position) and its labels.
    members : array-like of bool of shape (n_population,) or of int indices
        Rows of the population in the target model's training set (ground truth used to
        score the attack only), as in :func:`lira`.
    n_reference_models : int, default=4
        Number of reference models (at least 2, so that every row has an OUT model).
    online : bool, default=True
        Use the reference models that trained on the row (``True``) or only those that did
        not (``False``, with the ``offline_a`` correction).
    offline_a : float in [0, 1], default=0.33
        The paper's ``a`` (offline only): :math:`\\Pr_{IN}(x) \\approx a \\Pr_{OUT}(x) + 1 - a`.
        ``1`` uses :math:`\\Pr_{OUT}` alone; smaller values assume that training on a row
        raises its probability more.
    gamma : float > 0, default=1.0
        Threshold of the pairwise likelihood ratio.
    n_population : int or None, default=None
        Number of population samples ``z`` drawn without replacement from the rows of
        ``X``; ``None`` uses every row.
    fit_params : dict, default=None
        Passed to every reference ``fit``; entries with one value per row of ``X`` (such as
        ``sample_weight``) are restricted to each model's training rows, as in
        :func:`~sklearn.model_selection.cross_validate`.
    known_fraction : float in (0, 1), default=0.5
        As in :func:`lira` (threshold chosen on the known part).
    n_jobs : int, default=None
        Reference fits run through :class:`joblib.Parallel` (``joblib.parallel_config``
        chooses the backend, e.g. ``"dask"`` on a ``dask.distributed`` cluster); the result
        depends on ``random_state`` only.
    verbose : int, default=0
        0 prints nothing; 1 prints ``[rmia] done k of N reference models fitted`` about
        ten times; 2 after every model, with joblib's own messages.
    random_state : int, RandomState, Generator or None
        Reference training sets and seeds, the ``z`` sample and the known/evaluation split;
        ``None`` draws them from fresh OS entropy (never numpy's global state).

    Returns
    -------
    result : :class:`RMIAResult`
        A :class:`LiRAResult` (and :class:`MembershipInferenceResult`): ``auc``,
        ``tpr_at_fpr``, ``advantage``, ``balanced_accuracy``, the per-row scores in
        ``scores_members`` / ``scores_nonmembers`` (fractions in [0, 1]), the reference
        models' log-probabilities and the ``z`` rows.

    Raises
    ------
    ValueError
        Not a classifier with ``predict_proba``; ``y`` not 1-D or of the wrong length; bad
        ``members`` (see :func:`lira`); ``n_reference_models`` below 2; ``offline_a`` outside
        [0, 1]; ``gamma`` not positive; ``n_population`` outside 1..n_population rows.
    TypeError
        Non-numeric parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import rmia
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 4)); y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> members = np.zeros(300, bool); members[:150] = True
    >>> tree = DecisionTreeClassifier(min_samples_leaf=3, random_state=0).fit(X[:150], y[:150])
    >>> res = rmia(tree, X, y, members, n_reference_models=4, random_state=0)
    >>> bool(res.auc > 0.6)
    True
    """
    y, mask, n_population = _check_inputs(estimator, X, y, members, n_population)
    online, offline_a, gamma = bool(online), float(offline_a), float(gamma)
    target = _log_true_class_proba(estimator, X, y)  # checks the target before any fit
    rng = noise_generator(random_state)
    ref_in, log_p = fit_reference_models(estimator, X, y, int(n_reference_models),
                                         outputs=_log_true_class_proba, rng=rng,
                                         fit_params=fit_params, n_jobs=n_jobs,
                                         verbose=verbose, who="rmia")
    log_ratio = _log_ratios(target, log_p, ref_in, online, offline_a)
    z_rows, score = _pairwise_scores(log_ratio, n_population, gamma, rng)
    res = evaluate_scores(mask, score, thresholds="global",
                          known_fraction=known_fraction, random_state=rng,
                          attack="rmia_online" if online else "rmia_offline")
    return RMIAResult(**vars(res), shadow_statistics=log_p, shadow_in=ref_in,
                      target_statistics=target, population_rows=z_rows,
                      log_ratio=log_ratio, offline_a=None if online else offline_a,
                      gamma=gamma)
