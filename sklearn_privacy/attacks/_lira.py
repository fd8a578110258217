"""Likelihood-ratio membership inference (LiRA, Carlini et al., 2022) with shadow models."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..utils import noise_generator
from ..utils.fixes import HasMethods, NumberInterval, validate_params
from ._membership import MembershipInferenceResult, evaluate_scores
from ._reference import LOGIT_CAP, fit_reference_models, log_proba
from ._validation import check_members, check_target, n_rows

_SD_FLOOR = 1e-6


def _statistic(estimator, X, y):
    """Per-example LiRA statistic: logit of the true-class confidence, or -squared error.

    For a classifier ``log p_y - log(sum_{j != y} p_j)`` (the "logit scaling" of
    Carlini et al., which makes the shadow distributions close to Gaussian); for a
    regressor minus the squared error. The log-probabilities come from
    ``decision_function`` when it is the model's logit (exact in both tails; see
    :func:`~sklearn_privacy.attacks._reference.log_proba`); otherwise from the
    probabilities, with the statistic clamped symmetrically to ``+-LOGIT_CAP`` (36.7,
    the largest logit float64 probabilities resolve), so that a confident row of either
    class saturates at the same magnitude.
    """
    y = np.asarray(y)
    if is_classifier(estimator):
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(
                "LiRA on a classifier needs predict_proba (the statistic is the logit of the "
                f"true-class probability); {type(estimator).__name__} has none."
            )
        _, stat, exact = true_class_logs(estimator, X, y)
        if exact:
            return stat
        # probabilities of exactly 0 or 1: the same cap on both sides
        stat = np.where(np.isnan(stat), 0.0, stat)
        return np.clip(stat, -LOGIT_CAP, LOGIT_CAP)
    return -(np.asarray(estimator.predict(X), dtype=float) - y.astype(float)) ** 2


@dataclass
class LiRAResult(MembershipInferenceResult):
    """:class:`MembershipInferenceResult` plus the shadow-model statistics.

    ``shadow_statistics`` has shape (n_reference_models, n_population), ``shadow_in`` the matching
    boolean membership of every population row in every shadow training set, and
    ``target_statistics`` the target model's statistic on every population row.

    Parameters
    ----------
    attack : str
        ``"lira_online"`` or ``"lira_offline"``.
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
        LiRA scores of the members (population rows in ``members``).
    scores_nonmembers : ndarray of shape (n_nonmembers,)
        LiRA scores of the non-members.
    eval_members : ndarray of int
        Indices into ``scores_members`` of the members in the evaluation part.
    eval_nonmembers : ndarray of int
        Indices into ``scores_nonmembers`` of the non-members in the evaluation part.
    eval_member_decisions : ndarray of bool or None
        Decision ("member") of the thresholded attack on each evaluation member.
    eval_nonmember_decisions : ndarray of bool or None
        Decision of the thresholded attack on each evaluation non-member.
    shadow_statistics : ndarray of shape (n_reference_models, n_population)
        Statistic of every shadow model on every population row: the logit of the
        true-class confidence (classifiers) or minus the squared error (regressors).
    shadow_in : ndarray of bool of shape (n_reference_models, n_population)
        Whether each population row is in each shadow model's training set.
    target_statistics : ndarray of shape (n_population,)
        The same statistic for the target model.

    See Also
    --------
    lira : The attack that returns this result.
    MembershipInferenceResult : The fields shared by all membership attacks.
    RMIAResult : The result of :func:`rmia`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy.attacks import lira
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = LogisticRegression().fit(X[:20], y[:20])
    >>> res = lira(clf, X, y, np.arange(20), n_reference_models=4, random_state=0)
    >>> res.attack, res.shadow_statistics.shape, res.shadow_in.shape
    ('lira_online', (4, 40), (4, 40))
    >>> res.target_statistics.shape
    (40,)
    """

    shadow_statistics: np.ndarray = field(default=None, repr=False)
    shadow_in: np.ndarray = field(default=None, repr=False)
    target_statistics: np.ndarray = field(default=None, repr=False)


def true_class_logs(estimator, X, y):
    """``(log_py, logit, exact)`` of a classifier with class probabilities: the
    log-probability of every row's true class, its logit against the other classes
    (``log p_y - log sum_{k != y} p_k``; NaN where both are 0) and whether the
    log-probabilities are exact (:func:`~sklearn_privacy.attacks._reference.log_proba`).
    One query of the model serves LiRA's statistic and RMIA's."""
    y = np.asarray(y)
    log_p, exact = log_proba(estimator, X)
    classes = np.asarray(estimator.classes_)
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    if not np.all(classes[pos] == y):
        raise ValueError("y contains labels the estimator was not trained on.")
    rows = np.arange(len(y))
    log_py = log_p[rows, pos]
    others = log_p.copy()
    others[rows, pos] = -np.inf
    with np.errstate(invalid="ignore"):
        logit = log_py - logsumexp(others, axis=1)
    return log_py, logit, exact


def _gaussian_params(stats, mask, global_variance):
    """Per-example mean and standard deviation of ``stats`` over shadows where ``mask``."""
    count = mask.sum(axis=0)
    safe = np.maximum(count, 1)
    mean = np.where(mask, stats, 0.0).sum(axis=0) / safe
    resid = np.where(mask, stats - mean[None, :], 0.0)
    if global_variance:
        dof = max(int(np.sum(np.maximum(count - 1, 0))), 1)
        std = np.full(stats.shape[1], np.sqrt(np.sum(resid**2) / dof))
    else:
        std = np.sqrt((resid**2).sum(axis=0) / np.maximum(count - 1, 1))
    return mean, np.maximum(std, _SD_FLOOR), count


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "members": ["array-like"],
        "n_reference_models": [NumberInterval(Integral, 2, None, closed="left")],
        "online": ["boolean"],
        "global_variance": ["boolean"],
        "fit_params": [dict, None],
        "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=False,  # fits the reference models
)
def lira(estimator, X, y, members, *, n_reference_models: int = 16, online: bool = True,
         global_variance: bool = False, fit_params: dict | None = None,
         known_fraction: float = 0.5, n_jobs=None, verbose: int = 0,
         random_state=None) -> LiRAResult:
    """Likelihood-ratio attack (LiRA) of Carlini et al. (2022) against a fitted model.

    Threat model: the adversary knows the training algorithm (``clone(estimator)``), can
    sample from the data distribution (the population ``X, y``, which contains the target
    model's training set) and queries the target model's confidences. It trains
    ``n_reference_models`` shadow models on random halves of the population -- a balanced design
    in which every example is in exactly half of the shadow training sets -- and for
    every example fits Gaussians to the statistic (the logit of the
    true-class confidence; minus the squared error for regressors) over the shadows that
    did (``IN``) and did not (``OUT``) train on it.

    * online: score = log N(s; mu_in, sd_in) - log N(s; mu_out, sd_out);
    * offline: score = log P(OUT statistic <= s) (one-sided test against OUT only).

    Parameters
    ----------
    estimator : fitted estimator
        The target model; it is cloned (hyper-parameters only) for the shadow models.
        Every ``random_state`` parameter (also of Pipeline steps) is re-seeded per shadow.
    X, y : array-like
        The population. Shadow models are trained on random halves of it. ``X`` may be an
        array, a DataFrame (strings, categories: use a pipeline as the estimator) or a
        sparse matrix; it is passed to the models untouched and indexed by position.
    members : array-like of bool of shape (n_population,) or of int indices
        Rows of the population in the target model's training set (ground truth used to
        score the attack; the shadow models never see it): a boolean mask, or distinct
        integer row positions. An integer array of length ``n_population`` holding only
        0 and 1 is refused as ambiguous (it looks like a 0/1 mask; pass it as
        ``members.astype(bool)``).
    n_reference_models : int, default=16
        Number of shadow models (at least 4 with per-example variances).
    online : bool, default=True
        ``True``: score each example by the likelihood ratio of the IN and OUT
        Gaussians; ``False``: by the one-sided test against the OUT Gaussian only.
    global_variance : bool, default=False
        One pooled variance for all examples (recommended by Carlini et al. for fewer
        than 64 shadows) instead of per-example variances.
    fit_params : dict, default=None
        Passed to every shadow ``fit``; entries with one value per row of ``X`` (such as
        ``sample_weight``) are restricted to each model's training rows, as in
        :func:`~sklearn.model_selection.cross_validate`.
    known_fraction : float, default=0.5
        Fraction of members / non-members on which the balanced-accuracy threshold is
        chosen; the other metrics use the remaining rows.
    n_jobs : int, default=None
        Shadow fits run in parallel through :class:`joblib.Parallel`; inside
        ``with joblib.parallel_config(backend="dask"):`` (a ``dask.distributed`` client
        running) they are distributed over the cluster. The result depends on
        ``random_state`` only, not on the backend or ``n_jobs``.
    verbose : int, default=0
        0 prints nothing; 1 prints ``[lira] done k of N reference models fitted`` about
        ten times; 2 after every model, with joblib's own messages.
    random_state : int, RandomState, Generator or None
        Shadow splits, shadow seeds and the known/evaluation split. ``None`` draws them
        from fresh OS entropy (never numpy's global state).

    Returns
    -------
    result : :class:`LiRAResult`
        The attack's metrics on the evaluation part (one global threshold chosen on the
        known part), the per-example LiRA scores of the members and non-members and the
        shadow and target statistics.

    Raises
    ------
    ValueError
        ``y`` not 1-D or of the wrong length, ``members`` ambiguous, out of range, with
        duplicates or leaving fewer than 2 members / non-members, bad ``n_reference_models``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import lira
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 4)); y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> members = np.zeros(300, bool); members[:150] = True
    >>> tree = DecisionTreeClassifier(min_samples_leaf=3, random_state=0).fit(X[:150], y[:150])
    >>> res = lira(tree, X, y, members, n_reference_models=8, random_state=0)
    >>> bool(res.auc > 0.6)
    True
    """
    check_is_fitted(estimator)
    n = n_rows(X)
    y = check_target(y, n)
    mask = check_members(members, n)
    n_reference_models = int(n_reference_models)
    online, global_variance = bool(online), bool(global_variance)
    if not global_variance and n_reference_models < 4:
        raise ValueError(
            "Per-example variances need at least 2 IN and 2 OUT shadow models per example: "
            "use n_reference_models >= 4 or global_variance=True (got "
            f"n_reference_models={n_reference_models})."
        )
    rng = noise_generator(random_state)
    # balanced design (Carlini et al.): every example is IN exactly half of the shadows
    shadow_in, stats = fit_reference_models(estimator, X, y, n_reference_models, outputs=_statistic,
                                            rng=rng, fit_params=fit_params, n_jobs=n_jobs,
                                            verbose=verbose, who="lira")
    target = _statistic(estimator, X, y)
    mu_out, sd_out, _ = _gaussian_params(stats, ~shadow_in, global_variance)
    if online:
        mu_in, sd_in, _ = _gaussian_params(stats, shadow_in, global_variance)
        score = norm.logpdf(target, mu_in, sd_in) - norm.logpdf(target, mu_out, sd_out)
    else:
        score = norm.logcdf(target, mu_out, sd_out)
    if not np.all(np.isfinite(score)):
        raise ValueError(
            "LiRA scores are NaN or infinite for some examples (the target or shadow models "
            "returned NaN outputs); check the models' predictions on X."
        )
    res = evaluate_scores(mask, score, thresholds="global",
                          known_fraction=known_fraction, random_state=rng,
                          attack="lira_online" if online else "lira_offline")
    return LiRAResult(**vars(res), shadow_statistics=stats, shadow_in=shadow_in,
                      target_statistics=target)
