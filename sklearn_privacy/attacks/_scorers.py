"""Privacy attacks as scikit-learn scorers (higher score = better privacy)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv

from ..exceptions import PrivacyWarning
from ..utils import noise_generator
from ..utils._deprecation import DEPRECATED, renamed_parameter
from ..utils._pipeline import split_pipeline
from ..utils._warnings import warn_user
from ..utils.fixes import Hidden, NumberInterval, StrOptions, validate_params
from ._blackbox_inversion import fredrikson_inversion
from ._inversion import whitebox_inversion
from ._membership import _THRESHOLDS, ATTACKS, _attack_blocks
from ._validation import (
    check_target,
    is_frame,
    n_rows,
    take_rows,
)

_METRICS = ("auc", "advantage", "balanced_accuracy")


# ---------------------------------------------------------------- row identification
def _row_keys(X):
    """One sortable key per row; equal rows (by value) get equal keys."""
    if is_frame(X):
        import pandas as pd

        return pd.util.hash_pandas_object(X, index=False).to_numpy()
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.sum_duplicates()
        X.sort_indices()
        ind, dat, ptr = X.indices, X.data, X.indptr
        keys = np.empty(X.shape[0], dtype=object)
        for i in range(X.shape[0]):
            keys[i] = ind[ptr[i]:ptr[i + 1]].tobytes() + b"|" + dat[ptr[i]:ptr[i + 1]].tobytes()
        return keys
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {arr.shape}.")
    if arr.dtype.kind in "biuf":
        arr = np.ascontiguousarray(arr, dtype=np.float64) + 0.0  # -0.0 -> 0.0
        return arr.view(np.dtype((np.void, 8 * arr.shape[1]))).ravel()
    keys = np.empty(arr.shape[0], dtype=object)
    for i, row in enumerate(arr):
        keys[i] = repr(tuple(row.tolist()))
    return keys


def _ids(keys_pop, keys_fold):
    """Integer ids shared by equal keys of the two arrays."""
    both = np.concatenate([keys_pop, keys_fold])
    _, inv = np.unique(both, return_inverse=True)
    inv = inv.ravel()
    return inv[: len(keys_pop)], inv[len(keys_pop):]


def _fold_positions(ids_pop, ids_fold):
    """Positions in the population of the fold rows, equal rows matched as a multiset."""
    order = np.argsort(ids_pop, kind="stable")
    sorted_pop = ids_pop[order]
    fo = np.argsort(ids_fold, kind="stable")
    sf = ids_fold[fo]
    occ = np.empty(len(sf), dtype=np.int64)
    occ[fo] = np.arange(len(sf)) - np.searchsorted(sf, sf, side="left")
    start = np.searchsorted(sorted_pop, ids_fold, side="left")
    stop = np.searchsorted(sorted_pop, ids_fold, side="right")
    if not np.all(start + occ < stop):
        raise ValueError(
            "The evaluated rows are not rows of X_population: the membership scorer "
            "takes the members to be the population rows outside the evaluated "
            "fold, so pass the same X, y to the scorer and to fit / GridSearchCV."
        )
    return order[start + occ]


def _n_training_rows(estimator):
    """Number of rows the fitted estimator was trained on, when it says so reliably."""
    from ..fil._base import BaseFILEstimator

    _, final = split_pipeline(estimator)
    if isinstance(final, BaseFILEstimator):
        engine = final.__dict__.get("_audit")
        return None if engine is None else int(engine.n)
    if type(final).__name__ == "WERMClassifier" and hasattr(final, "sample_weight_"):
        return int(len(final.sample_weight_))
    n = getattr(final, "n_samples_fit_", None)
    if n is not None:
        return int(n)
    tree = getattr(final, "tree_", None)
    if tree is not None and not hasattr(final, "estimators_"):
        return int(tree.n_node_samples[0])
    return None


def _check_sample_index(sample_index, m, n):
    idx = np.asarray(sample_index)
    if idx.ndim != 1 or idx.shape[0] != m:
        raise ValueError(
            f"sample_index must hold one row position per row of the evaluated fold "
            f"({m}); got shape {idx.shape}. Pass sample_index=np.arange(n_samples) to the "
            "search's fit (with metadata routing enabled), not a fold's slice."
        )
    if idx.size and not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"sample_index must hold integer row positions; got dtype "
                        f"{idx.dtype}. Pass np.arange(n_samples).")
    if idx.size and (idx.min() < 0 or idx.max() >= n or np.unique(idx).size != idx.size):
        raise ValueError(
            f"sample_index must hold distinct row positions in [0, {n}) of X_population; "
            "pass np.arange(n_samples) to the search's fit."
        )
    return idx.astype(np.int64)


class _MembershipScorer:
    """Membership leakage of a fitted estimator on an evaluated fold (see the factories).

    Rows are located by position: from ``sample_index`` (metadata routing), from a
    pandas index that is unique in the population, or -- for arrays, where the fold
    carries no position -- by value, and then only where the outcome cannot depend on
    which of several identical rows is meant (see :meth:`_positions`).
    """

    def __init__(self, X, y, attack, thresholds, metric, known_fraction, random_state,
                 cv=None, sensitive_features=None, group=None, confidence=None):
        n = n_rows(X, "X_population")
        if y is not None and np.ndim(y) == 1 and len(y) != n:
            raise ValueError(f"X_population and y_population have different numbers of "
                             f"rows: {n} and {len(y)}; pass one label per row.")
        self.y = check_target(y, n, param="y_population", x_param="X_population")
        if n < 4:
            raise ValueError(f"X_population has {n} rows; a membership scorer needs at "
                             "least 4.")
        self.X = X
        self.attack, self.thresholds, self.metric = attack, thresholds, metric
        self.known_fraction, self.random_state = known_fraction, random_state
        self.cv, self.group, self.confidence = cv, group, confidence
        self.sensitive_features = sensitive_features
        self._index = X.index if is_frame(X) and X.index.is_unique else None
        self._keys = None  # value keys, computed on first use (arrays without positions)

    # -- metadata routing: the scorer consumes ``sample_index`` in ``score``
    def get_metadata_routing(self):
        """Metadata request of the scorer: ``sample_index`` (row positions) in ``score``.

        With ``sklearn.set_config(enable_metadata_routing=True)``, pass
        ``sample_index=np.arange(n_samples)`` to the search's ``fit``: it is split with
        the folds and tells the scorer the position of every evaluated row.

        Returns
        -------
        routing : MetadataRequest
        """
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="sample_index", alias=True)
        return request

    def _value_positions(self, X, y):
        """Fold positions matched by value, only where a fold row has a single match."""
        if self._keys is None:
            self._keys = _row_keys(self.X)
        kx_pop, kx_fold = _ids(self._keys, _row_keys(X))
        ky_pop, ky_fold = _ids(self.y, y)
        base = int(max(ky_pop.max(initial=0), ky_fold.max(initial=0))) + 1
        pop_keys = kx_pop * base + ky_pop
        held = _fold_positions(pop_keys, kx_fold * base + ky_fold)
        # a fold row with identical twins in the population: which copy is held out
        # decides the members' positions, hence the attack's known / evaluation split
        # and, for WERM, the rows' groups -- values cannot tell, so refuse
        _, inv, counts = np.unique(pop_keys, return_inverse=True, return_counts=True)
        twins = counts[inv.ravel()[held]] > 1
        if np.any(twins):
            raise ValueError(
                f"{int(twins.sum())} rows of the evaluated fold have identical copies "
                "(features and label) elsewhere in X_population, and an array carries no "
                "row positions, so the scorer cannot tell which copy was held out (the "
                "figure, and for WERM the rows' group, depend on it). Identify rows by "
                "position: pass X as a pandas DataFrame with a unique index (e.g. "
                "pd.DataFrame(X)), or enable metadata routing (sklearn.set_config("
                "enable_metadata_routing=True)) and pass sample_index=np.arange(n_samples) "
                "to the search's fit."
            )
        return held

    def _index_positions(self, X, y):
        """Positions from the fold's index labels, when they name the same rows."""
        if self._index is None or not is_frame(X):
            return None
        held = self._index.get_indexer(X.index)
        if np.any(held < 0) or not np.array_equal(self.y[held], y):
            return None
        if self._keys is None:
            self._keys = _row_keys(self.X)
        # the labels must point at the same rows (a search on a re-indexed copy of the
        # population would otherwise pair each fold row with another row's position)
        if not np.array_equal(self._keys[held], _row_keys(X)):
            return None
        return held

    def _positions(self, X, y, sample_index):
        """(positions of the fold rows in the population, y)."""
        m = n_rows(X)
        y = check_target(y, m)
        n = len(self.y)
        if sample_index is not None:
            held = _check_sample_index(sample_index, m, n)
        else:
            held = self._index_positions(X, y)
            if held is None:  # no usable index: by value (unique rows only, see above)
                return self._value_positions(X, y), y
        if not np.array_equal(self.y[held], y):
            raise ValueError(
                "The labels of the evaluated fold differ from y_population at the fold's "
                "row positions: pass the same X, y to the scorer and to fit / GridSearchCV."
            )
        return held, y

    def _members(self, estimator, held):
        n = len(self.y)
        if self.cv is not None:
            cv = check_cv(self.cv, self.y, classifier=is_classifier(estimator))
            target = np.sort(held)
            for train, test in cv.split(np.zeros((n, 1)), self.y):
                if test.size == target.size and np.array_equal(np.sort(test), target):
                    mask = np.zeros(n, bool)
                    mask[train] = True
                    return mask
                if (self.sensitive_features is None and train.size == target.size
                        and np.array_equal(np.sort(train), target)):
                    return None  # scored on its training set (return_train_score=True)
            raise ValueError(
                "The evaluated fold is not one of the test folds of cv: pass the same "
                "splitter (with a fixed random_state) to the scorer and to the search."
            )
        mask = np.ones(n, bool)
        mask[held] = False
        seen = _n_training_rows(estimator)
        plain = self.sensitive_features is None  # (WERM: the training set is not the complement)
        if plain and seen is not None and seen == held.size > mask.sum():
            # scored on its training set (return_train_score=True): the fold has the
            # training size and its complement is too small to be the training set
            return None
        if plain and seen is None and held.size > mask.sum():
            raise ValueError(
                f"The scored rows ({held.size}) outnumber the rest of the population "
                f"({int(mask.sum())}): they look like the training set (as with "
                "cross_validate(..., return_train_score=True)), but this estimator does not "
                "record how many rows it was trained on, so members and non-members cannot "
                "be told apart. Pass the splitter as cv= to make_membership_scorer (then the "
                "train score is the same attack as the test score), or drop "
                "return_train_score."
            )
        if seen is not None and seen != mask.sum():
            raise ValueError(
                f"The estimator was trained on {seen} rows but the population minus the "
                f"evaluated fold has {int(mask.sum())}: the folds are not complements of "
                "the training sets (e.g. ShuffleSplit with train_size + test_size < 1), so "
                "never-trained rows would count as members. Use a splitter whose test folds "
                "partition the data (KFold, StratifiedKFold, ...), or pass the splitter as "
                "cv= to the scorer so it reproduces each training set."
            )
        return mask

    def result(self, estimator, X, y, sample_index=None):
        """The membership attack behind the score, as a full result.

        Parameters
        ----------
        estimator : fitted estimator
            The candidate trained on the population minus the fold.
        X, y : the evaluated fold
            As the search passes them to the scorer.
        sample_index : array-like of int, default=None
            Row positions of the fold in the population (see the factories).

        Returns
        -------
        result : MembershipInferenceResult
            With its :meth:`~MembershipInferenceResult.confidence_interval`,
            :meth:`~MembershipInferenceResult.chance_level` and
            :meth:`~MembershipInferenceResult.summary`.
        """
        held, y = self._positions(X, y, sample_index)
        members = self._members(estimator, held)
        if members is None:
            # the scored rows are the training set: the same attack with the roles of the
            # fold and its complement exchanged (members: the fold, non-members: the rest)
            rest = np.setdiff1d(np.arange(len(self.y)), held)
            return self._attack(estimator, held, take_rows(self.X, rest), self.y[rest])
        nonmember_rows = np.arange(len(held))
        if self.sensitive_features is not None:
            members &= self.sensitive_features == self.group
            nonmember_rows = np.flatnonzero(self.sensitive_features[held] == self.group)
            if nonmember_rows.size < 2 or members.sum() < 2:
                raise ValueError(
                    f"group {self.group!r}: the fold holds {nonmember_rows.size} held-out "
                    f"rows and the training set {int(members.sum())} rows of this group; "
                    "the attack needs at least 2 of each (stratify the folds on the group)."
                )
        member_idx = np.flatnonzero(members)
        X_out = X if nonmember_rows.size == len(held) else take_rows(X, nonmember_rows)
        return self._attack(estimator, member_idx, X_out, y[nonmember_rows])

    def _attack(self, estimator, member_idx, X_out, y_out):
        # members from the population, non-members from the fold: scored block by block
        # (the two may be different containers, e.g. a frame and its fold's array)
        return _attack_blocks(
            estimator, [(take_rows(self.X, member_idx), self.y[member_idx], True),
                        (X_out, y_out, False)],
            attack=self.attack, thresholds=self.thresholds,
            known_fraction=self.known_fraction,
            random_state=noise_generator(self.random_state),
        )

    def __call__(self, estimator, X, y, sample_index=None):
        result = self.result(estimator, X, y, sample_index)
        metric = self.metric
        if self.confidence is None:
            value = {"auc": result.auc, "advantage": result.advantage,
                     "balanced_accuracy": result.balanced_accuracy}[metric]
        else:  # the conservative end: the upper confidence limit of the leakage
            value = result.confidence_interval(metric, confidence=self.confidence,
                                               random_state=0)[1]
        return -value if metric == "advantage" else 0.5 - value

    def __repr__(self):
        extra = "" if self.sensitive_features is None else f", group={self.group!r}"
        if self.confidence is not None:
            extra += f", confidence={self.confidence!r}"
        maker = ("make_membership_scorer" if self.sensitive_features is None
                 else "make_werm_membership_scorer")
        return (f"{maker}(attack={self.attack!r}, thresholds="
                f"{self.thresholds!r}, metric={self.metric!r}{extra})")


# validated when the scorer is made: inside a search, errors at scoring time become
# error_score (nan)
_MEMBERSHIP_SCORER_PARAMS = {
    "X_population": ["array-like", "sparse matrix"],
    "y_population": ["array-like"],
    "attack": [StrOptions(set(ATTACKS))],
    "thresholds": [StrOptions(set(_THRESHOLDS))],
    "metric": [StrOptions(set(_METRICS))],
    "known_fraction": [NumberInterval(Real, 0, 1, closed="neither")],
    "confidence": [NumberInterval(Real, 0, 1, closed="neither"), None],
    "random_state": ["random_state", np.random.Generator],
}


@validate_params(_MEMBERSHIP_SCORER_PARAMS, prefer_skip_nested_validation=True)
def make_membership_scorer(X_population, y_population, *, attack="confidence",
                           thresholds="auto", metric="auc", known_fraction=0.5,
                           cv=None, confidence=None, random_state=None):
    """Scorer measuring membership-inference leakage inside cross-validation.

    Design: the scorer is built on the population ``X_population, y_population`` that is
    passed to ``fit`` / ``GridSearchCV.fit``. When called on a fitted estimator and the
    evaluated fold ``(X, y)``, it takes the fold as the non-members and the rows the
    estimator was trained on as the members, and runs :func:`membership_inference`.
    ``X`` is passed untouched to the estimator: a DataFrame with string or categorical
    columns works with any pipeline.

    **Which rows the fold holds** is read by position, never guessed from values
    (identical rows are the normal case in real tables), in this order:

    1. ``sample_index``: with metadata routing enabled
       (``sklearn.set_config(enable_metadata_routing=True)``), pass
       ``sample_index=np.arange(n_samples)`` to the search's ``fit``; the search splits it
       with the folds and hands each fold's positions to the scorer (the scorer requests
       it, nothing else to set).
    2. A pandas ``X_population`` with a unique index: the fold keeps the index labels of
       its rows (scikit-learn indexes frames with ``iloc``), which give the positions.
    3. Arrays or sparse matrices without ``sample_index`` carry no positions. A fold
       row is then matched by value only if it is the single population row with its
       features and label; a fold holding a row with an identical copy elsewhere raises a
       ``ValueError`` naming the two routes above, since the figure (the attack's random
       known / evaluation split is drawn over positions; WERM's groups are per row)
       depends on which copy was held out.

    **Which rows are members.** By default the members are the population rows outside
    the fold, which is right only when the training set is the fold's complement
    (``KFold``, ``StratifiedKFold``, ``GroupKFold``, an integer ``cv``). A splitter whose
    training sets are smaller (``ShuffleSplit(train_size=0.2, test_size=0.2)``) would
    silently count never-trained rows as members; the scorer refuses it with a
    ``ValueError`` when the estimator reports how many rows it was trained on (FIL and
    IRFIL estimators, ``WERMClassifier``, nearest neighbours, single decision trees,
    also as the last step of a pipeline). For other estimators such a splitter cannot be
    detected: pass it as ``cv`` (with a fixed ``random_state``), and the scorer reproduces
    each split and takes its actual training rows as the members, for any splitter.

    Train scores (``return_train_score=True``) of this scorer are meaningless: called on
    the training fold it would take the held-out rows as the members.

    Parameters
    ----------
    X_population, y_population : array-like, DataFrame or sparse matrix
        Everything given to ``fit`` of the search (at least 4 rows), and its labels.
    attack : {"gap", "confidence", "entropy", "modified_entropy", "loss"}, default="confidence"
        Membership score of the attack; see :func:`membership_scores`.
    thresholds : {"auto", "global", "per_class"}, default="auto"
        One threshold, or one per true class; ``"auto"`` is per class except for
        ``attack="gap"``. See :func:`membership_inference`.
    metric : {"auc", "advantage", "balanced_accuracy"}, default="auc"
        The score is ``0.5 - auc`` (default), ``-advantage`` or ``0.5 -
        balanced_accuracy``; higher is better privacy. The default and the balanced
        accuracy have chance level exactly 0: a model that carries no membership signal
        scores 0 on average at every evaluation size, so "leakage under 0.05" means an
        AUC under 0.55. The advantage (``max TPR - FPR``, the former default) is a
        maximum over thresholds and reads about ``0.89 / sqrt(n)`` for a leak-free model
        on ``n`` evaluation members and non-members (0.08-0.11 on a few hundred rows), so
        a bound on it below that level excludes every model; see
        :meth:`MembershipInferenceResult.chance_level`.
    known_fraction : float in (0, 1), default=0.5
        Fraction of the members and of the non-members on which the attack chooses its
        threshold(s); see :func:`membership_inference`.
    cv : int, cross-validation generator or None, default=None
        The splitter of the search, to reproduce the training sets (see above). Splitters
        that need ``groups`` are not supported here.
    confidence : float in (0, 1) or None, default=None
        ``None``: score the point estimate of ``metric``. A level such as ``0.95``: score
        the conservative end of its two-sided bootstrap interval (minus the upper limit
        of the leakage; :meth:`MembershipInferenceResult.confidence_interval`), so that a
        score above ``-bound`` says the leakage is under ``bound`` at that confidence on
        the fold. The full result of a fold (intervals, chance levels) is
        ``scorer.result(estimator, X_fold, y_fold)``.
    random_state : int, RandomState, Generator or None, default=None
        Known/evaluation split of the attack. ``None`` draws it from fresh OS entropy at
        every call (never numpy's global state).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_index=None) -> float``: minus the attack's
        ``metric`` (shifted so that 0 is chance level for ``"auc"`` and
        ``"balanced_accuracy"``) on the evaluated fold; higher is better privacy.
        ``scorer.result(estimator, X, y)`` returns the full
        :class:`MembershipInferenceResult`.

    Raises
    ------
    ValueError
        Bad parameters (at construction); at scoring time, a fold that is not part of the
        population or, as described above, a splitter whose training sets are not the
        folds' complements.

    See Also
    --------
    refit_under_leakage_bound : ``refit`` callable picking the most useful candidate
        under a leakage bound.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import make_membership_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 4)); y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> scorer = make_membership_scorer(X, y, random_state=0)
    >>> scores = cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=3,
    ...                          scoring=scorer)
    >>> scores.round(2)    # 0.5 - AUC: a fully grown tree leaks membership
    array([-0.17, -0.1 , -0.09])
    """
    return _MembershipScorer(X_population, y_population, attack, thresholds, metric,
                             known_fraction, random_state, cv=cv, confidence=confidence)


@validate_params({**_MEMBERSHIP_SCORER_PARAMS, "data_source": ["array-like", None],
                  "sensitive_features": ["array-like", Hidden(StrOptions({DEPRECATED}))]},
                 prefer_skip_nested_validation=True)
def make_werm_membership_scorer(X_population, y_population, data_source=None, *, group=0,
                                attack="confidence", thresholds="auto",
                                metric="auc", known_fraction=0.5, cv=None,
                                confidence=None, random_state=None,
                                sensitive_features=DEPRECATED):
    """Membership leakage of one group of rows (WERM's training or reference data).

    For a :class:`~sklearn_privacy.WERMClassifier` searched over ``w`` (the estimator
    receives ``data_source`` as a fit parameter, split with the folds), this scorer
    attacks only the rows of group ``group``: members are that group's rows of the
    training set, non-members that group's rows of the evaluated fold (the same
    distribution). ``group=0`` measures the training data's leakage, ``group=1`` the
    reference data's: WERM trades one for the other (Kaplan et al., Section 2.2). Rows of
    a group with weight 0 (``w = 0`` drops the reference rows) are given to ``fit`` but
    not learnt from; their measured leakage is then that of non-members.

    Parameters
    ----------
    X_population, y_population : array-like, DataFrame or sparse matrix
        Everything given to ``fit`` of the search (at least 4 rows), and its labels.
    data_source : array-like of shape (n_samples,)
        Data set of every population row, as passed to ``WERMClassifier.fit`` (0 =
        training, 1 = reference). Required.
    group : int, default=0
        The group whose membership is attacked.
    attack : {"gap", "confidence", "entropy", "modified_entropy", "loss"}, default="confidence"
        Membership score of the attack; see :func:`membership_scores`.
    thresholds : {"auto", "global", "per_class"}, default="auto"
        One threshold, or one per true class; ``"auto"`` is per class except for
        ``attack="gap"``. See :func:`membership_inference`.
    metric : {"auc", "advantage", "balanced_accuracy"}, default="auc"
        The score is ``0.5 - auc``, ``-advantage`` or ``0.5 - balanced_accuracy`` of the
        attack on the group's rows (chance level 0 for ``"auc"`` and
        ``"balanced_accuracy"``; see :func:`make_membership_scorer`).
    known_fraction : float in (0, 1), default=0.5
        Fraction of the members and of the non-members on which the attack chooses its
        threshold(s).
    cv : int, cross-validation generator or None, default=None
        The splitter of the search, to reproduce the training sets; see
        :func:`make_membership_scorer`.
    confidence : float in (0, 1) or None, default=None
        Score the conservative end of the metric's bootstrap interval; see
        :func:`make_membership_scorer`.
    random_state : int, RandomState, Generator or None, default=None
        Known/evaluation split of the attack. ``None`` draws it from fresh OS entropy at
        every call (never numpy's global state).
    sensitive_features : array-like of shape (n_samples,)
        Deprecated old name of ``data_source``; removed in 0.4.

        .. deprecated:: 0.3
           Use ``data_source``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``: minus the attack's ``metric`` (shifted so
        that 0 is chance level) on the group's rows; higher is better privacy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import KFold, cross_validate
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy import WERMClassifier
    >>> from sklearn_privacy.attacks import make_werm_membership_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 4)); y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> g = rng.randint(0, 2, size=400)
    >>> scoring = {f"group{k}": make_werm_membership_scorer(X, y, g, group=k) for k in (0, 1)}
    >>> out = cross_validate(WERMClassifier(DecisionTreeClassifier(random_state=0), w=0.0),
    ...                      X, y, cv=KFold(2, shuffle=True, random_state=0),
    ...                      scoring=scoring, params={"data_source": g})
    >>> bool(out["test_group0"].mean() < -0.1), bool(out["test_group1"].mean() > -0.1)
    (True, True)
    """
    n = n_rows(X_population, "X_population")
    data_source = renamed_parameter(data_source, sensitive_features, old="sensitive_features",
                                    new="data_source", where="make_werm_membership_scorer")
    if data_source is None:
        raise TypeError("make_werm_membership_scorer needs data_source: the data set of "
                        "every population row (0 = training, 1 = reference).")
    groups = check_target(data_source, n, param="data_source", x_param="X_population")
    if not np.any(groups == group):
        raise ValueError(f"group {group!r} does not occur in data_source "
                         f"({np.unique(groups)[:10].tolist()}).")
    return _MembershipScorer(X_population, y_population, attack, thresholds, metric,
                             known_fraction, random_state, cv=cv, sensitive_features=groups,
                             group=group, confidence=confidence)


class _RefitUnderBound:
    def __init__(self, utility, leakage, bound, on_infeasible):
        self.utility, self.leakage = utility, leakage
        self.bound, self.on_infeasible = bound, on_infeasible

    def __call__(self, cv_results):
        cols = {}
        for which, name in (("utility", self.utility), ("leakage", self.leakage)):
            key = f"mean_test_{name}"
            if key not in cv_results:
                available = sorted(k[len("mean_test_"):] for k in cv_results
                                   if k.startswith("mean_test_"))
                raise ValueError(f"{which}={name!r} is not a score of the search; "
                                 f"available: {available}.")
            cols[which] = np.asarray(cv_results[key], dtype=float)
        leak = -cols["leakage"]  # the leakage scorers are negated (higher = more private)
        utility = cols["utility"]
        ok = np.isfinite(leak) & np.isfinite(utility) & (leak <= self.bound)
        if np.any(ok):
            return int(np.flatnonzero(ok)[np.argmax(utility[ok])])
        finite = np.isfinite(leak)
        least = int(np.flatnonzero(finite)[np.argmin(leak[finite])]) if finite.any() else None
        detail = ("every candidate's leakage is NaN (failed scoring)" if least is None else
                  f"the smallest mean leakage is {leak[least]:.4g} (candidate {least}, "
                  f"{cv_results['params'][least]})")
        msg = (f"No candidate has a mean {self.leakage!r} leakage under the bound "
               f"{self.bound:g}: {detail}. Raise the bound, extend the grid towards more "
               "privacy, or check that the bound is above the metric's chance level.")
        if self.on_infeasible != "warn" or least is None:  # only "warn" relaxes the bound
            raise ValueError(msg)
        warn_user(msg + f" Refitting the least leaky candidate ({least}).", PrivacyWarning,
                      stacklevel=2)
        return least

    def __repr__(self):
        return (f"refit_under_leakage_bound(utility={self.utility!r}, leakage="
                f"{self.leakage!r}, bound={self.bound!r}, on_infeasible="
                f"{self.on_infeasible!r})")


@validate_params(
    {
        "utility": [str],
        "leakage": [str],
        "bound": [NumberInterval(Real, -np.inf, np.inf, closed="neither")],
        "on_infeasible": [StrOptions({"raise", "warn"})],
    },
    prefer_skip_nested_validation=True,
)
def refit_under_leakage_bound(utility: str, leakage: str, bound: float, *,
                              on_infeasible: str = "raise"):
    """``refit`` callable: the most useful candidate whose mean leakage is under a bound.

    For a multi-metric search (``GridSearchCV(..., scoring={utility: ..., leakage:
    make_membership_scorer(...)}, refit=refit_under_leakage_bound(...))``): among the
    candidates with ``-mean_test_<leakage> <= bound`` (the library's leakage scorers are
    negated), the one with the largest ``mean_test_<utility>``. When no candidate meets
    the bound it says so -- it never falls back silently to an arbitrary candidate.

    Choose the bound above the leakage metric's chance level: with the default
    ``metric="auc"`` of :func:`make_membership_scorer` the chance level is 0 and ``bound``
    is the excess AUC over 0.5 allowed. The advantage metric reads about 0.1 on a few
    hundred rows for a model that never saw them, so a bound of 0.05 on it excludes
    every model.

    Parameters
    ----------
    utility : str
        Name of the utility score in the search's ``scoring`` dict (larger is better).
    leakage : str
        Name of the leakage score (a negated leakage, as the library's scorers return).
    bound : float
        Largest acceptable mean leakage.
    on_infeasible : {"raise", "warn"}, default="raise"
        No candidate under the bound: raise a ``ValueError`` (the search fails and
        reports it), or warn and refit the least leaky candidate.

    Returns
    -------
    refit : callable
        ``refit(cv_results) -> int``, the index of the chosen candidate.

    Raises
    ------
    ValueError
        At refit time, when no candidate meets the bound (``on_infeasible="raise"``) or
        when a score name is not in the search.

    Examples
    --------
    >>> from sklearn_privacy.attacks import refit_under_leakage_bound
    >>> cv_results = {"params": [{"sigma": 0.01}, {"sigma": 1.0}, {"sigma": 10.0}],
    ...               "mean_test_acc": [0.90, 0.85, 0.70],
    ...               "mean_test_mia": [-0.20, -0.04, 0.01]}
    >>> refit_under_leakage_bound("acc", "mia", bound=0.05)(cv_results)
    1
    >>> refit_under_leakage_bound("acc", "mia", bound=-0.1)(cv_results)
    Traceback (most recent call last):
    ...
    ValueError: No candidate has a mean 'mia' leakage under the bound -0.1: the smallest ...
    """
    return _RefitUnderBound(utility, leakage, float(bound), on_infeasible)


class _InversionScorer:
    def __init__(self, sensitive_features, candidates, attack, n_draws, random_state):
        self.sensitive_features, self.candidates = sensitive_features, candidates
        self.attack, self.n_draws, self.random_state = attack, n_draws, random_state

    def __call__(self, estimator, X, y):
        if self.attack == "fredrikson":
            result = fredrikson_inversion(estimator, X, y,
                                          sensitive_features=self.sensitive_features,
                                          candidates=self.candidates)
            return -result.accuracy
        result = whitebox_inversion(
            estimator, X, sensitive_features=self.sensitive_features,
            candidates=self.candidates, prior="empirical" if self.attack == "map" else None,
            n_draws=self.n_draws, random_state=self.random_state,
        )
        return -result.accuracy

    def __repr__(self):
        return f"make_attribute_inversion_scorer(attack={self.attack!r})"


@validate_params(
    {
        "sensitive_features": [Integral, str, "array-like"],
        "candidates": ["array-like", None],
        "attack": [StrOptions({"whitebox", "map", "fredrikson"})],
        "n_draws": [NumberInterval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def make_attribute_inversion_scorer(sensitive_features, candidates=None, *,
                                    attack="whitebox", n_draws=20, random_state=None):
    """Scorer measuring attribute inversion; the score is minus the attack's accuracy.

    ``attack="whitebox"`` and ``"map"`` play the adversary of the FIL threat model against
    the fitted estimator's own training rows, using its in-memory audit state (so they
    need a FIL estimator, possibly as the last step of a pipeline). ``sensitive_features``
    are the columns that estimator sees (indices or names of its ``feature_names_in_``) or,
    through a pipeline, one original feature of the raw input (e.g. ``"race"``; see
    :func:`whitebox_inversion`): levels given in ``candidates`` are then pushed through
    the preprocessing with the evaluated rows. The audit state lives only on the
    in-memory fitted estimator, never in a dump, and the white-box scorer attacks the
    training rows (the evaluated fold serves only to push levels). ``n_draws`` simulated
    releases are averaged. ``attack="fredrikson"`` is the black-box attack of
    :func:`fredrikson_inversion` on the evaluated rows (any estimator or pipeline).

    Parameters
    ----------
    sensitive_features : int, str or array-like of int / str
        The attribute: columns the estimator sees (a binary column or a one-hot block),
        or one original feature through a pipeline (white-box attacks) or of a raw
        DataFrame (``"fredrikson"``). See :func:`whitebox_inversion` and
        :func:`fredrikson_inversion`.
    candidates : array-like, default=None
        Possible values of the attribute (encoded rows, or levels of an original
        feature); ``None`` reads them from the data.
    attack : {"whitebox", "map", "fredrikson"}, default="whitebox"
        ``"whitebox"``: :func:`whitebox_inversion` with a uniform prior (maximum
        likelihood); ``"map"``: the same with the empirical prior of the training data;
        ``"fredrikson"``: :func:`fredrikson_inversion` on the evaluated rows.
    n_draws : int >= 1 or None, default=20
        Simulated releases of the white-box attacks (``None``: attack the actual
        release). Not used by ``"fredrikson"``.
    random_state : int, RandomState, Generator or None, default=None
        Noise of the simulated releases (white-box attacks); ``None`` draws from fresh OS
        entropy.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``: minus the attack's accuracy (the fraction
        of attribute values recovered); higher is better privacy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import make_attribute_inversion_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(300, 3)), rng.randint(0, 2, size=300)])
    >>> y = X @ [1.0, -1.0, 0.5, 1.0] + 0.1 * rng.normal(size=300)
    >>> grid = GridSearchCV(FILLinearRegression(alpha=1e-2, random_state=0),
    ...                     {"sigma": [1e-4, 1.0]}, cv=3,
    ...                     scoring={"r2": "r2", "inv": make_attribute_inversion_scorer([3])},
    ...                     refit="inv").fit(X, y)
    >>> grid.best_params_["sigma"], round(float(grid.cv_results_["mean_test_inv"][0]), 2)
    (1.0, -1.0)
    """
    return _InversionScorer(sensitive_features, candidates, attack, n_draws, random_state)
