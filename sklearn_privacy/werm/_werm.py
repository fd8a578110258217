"""Weighted empirical risk minimisation over training and reference data (WERM)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    validate_data,
)

from ..utils._deprecation import DEPRECATED, renamed_parameter
from ..utils._validation import errors_name, validate_named
from ..utils.fixes import (
    HasMethods,
    Interval,
    _check_sample_weight,
    _fit_context,
    _num_samples,
    _safe_indexing,
    routing_enabled,
)
from ._theory import effective_sample_size


def _is_frame(X) -> bool:
    """A pandas/polars-like data frame (passed through to the inner estimator)."""
    return hasattr(X, "columns") and hasattr(X, "shape") and not hasattr(X, "tocsr")


def _two_group_roles(labels):
    """(training label, reference label) when ``labels`` name the two WERM groups."""
    present = labels.tolist()
    if labels.dtype.kind in "biuf" and set(present) <= {0, 1}:
        return (present[present.index(0)] if 0 in present else 0,
                present[present.index(1)] if 1 in present else 1)
    if labels.dtype.kind in "UO" and all(isinstance(v, str) for v in present) \
            and set(present) <= {"train", "reference"}:
        return "train", "reference"
    return None


def _estimator_has(attr):
    def check(self):
        est = getattr(self, "estimator_", None)
        if est is None:
            est = self._validate_estimator()
        return hasattr(est, attr)

    return check


class WERMClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Weighted ERM over training and reference data (Kaplan et al., PETS 2024).

    Fits ``estimator`` to minimise ``(1 - w) L_T + w L_R``: the average loss on the
    training rows and on the reference rows, weighted by ``1 - w`` and ``w``. Rows say
    which data set they belong to through the sample-aligned fit parameter
    ``data_source`` (0 = training, 1 = reference), so cross-validation splits it with
    ``X``. More groups are allowed with ``group_weights`` (Appendix A.2): the loss is
    ``sum_g w_g L_g`` and each row of group ``g`` weighs ``w_g / N_g``.

    The per-row weights are multiplied by any user ``sample_weight`` (within a group,
    ``L_g`` is then the weighted average), rows of weight 0 (groups of weight 0, rows of
    ``sample_weight`` 0) are dropped before the inner fit, and the weights of the remaining
    rows are rescaled to mean 1 over them (to their total ``sample_weight`` when one is
    given), so the inner estimator's regularisation (``C``, ``alpha``) keeps its meaning:
    ``w = 0`` is exactly the inner estimator fitted on the training rows alone.

    Parameters
    ----------
    estimator : classifier, default=None
        Classifier whose ``fit`` accepts ``sample_weight``, or a
        :class:`~sklearn.pipeline.Pipeline` whose final step is one (the weights go to
        that step only: ``<last step>__sample_weight`` with metadata routing off; with
        routing on the final step is set to request ``sample_weight`` and preprocessing
        steps that accept weights need an explicit request, as usual in scikit-learn);
        cloned. ``None`` means :class:`~sklearn.linear_model.LogisticRegression`.
    w : float in [0, 1] or None, default=None
        Weight of the reference group when ``group_weights`` is None. A number requires
        ``data_source`` in ``fit``, with groups labelled 0 (training) and 1 (reference),
        ``False``/``True``, or ``"train"``/``"reference"``. ``None`` weighs each group by
        its share of the rows (``w = N_R / N``, the ``"equal_privacy"`` setting of
        :func:`~sklearn_privacy.werm.weight_for_setting`, which maximises ``N_eff``): the
        fit is then plain ERM over all rows, ``data_source`` is optional and may hold any
        labels. A number given without ``data_source`` is an error rather than a silent
        plain ERM, so a grid search over ``w`` that forgot to pass the groups fails loudly.
    group_weights : dict or None, default=None
        ``{group label: weight}`` for any number of groups; weights non-negative, summing
        to 1. Overrides ``w``; requires ``data_source``.

    Attributes
    ----------
    epsilon_ : float
        ``inf``: WERM is an empirical defence without a differential-privacy guarantee.
    delta_ : float
        0.
    epsilon_reason_ : str
        Why (see :func:`~sklearn_privacy.privacy_claim`).
    estimator_ : classifier
        The fitted inner estimator.
    classes_ : ndarray
        Class labels (those seen by the inner estimator).
    group_labels_ : ndarray
        Groups present in the fit data, sorted (for the two WERM groups, the training
        label first: ``["train", "reference"]``).
    group_sizes_ : ndarray
        Total user weight (number of rows without ``sample_weight``) of each group.
    group_weights_ : ndarray
        Weight ``w_g`` of each group, aligned with ``group_labels_``.
    n_eff_ : float
        Effective sample size ``1 / sum_g w_g^2 / N_g`` (Theorem 3.2).
    epsilon_ratio_ : float
        ``eps_T / eps_R = (1 - w) / w * N_R / N_T`` for the two-group setting (``nan`` when
        the fit data do not hold exactly a training and a reference group; ``inf`` when
        ``w = 0``).
    relative_epsilon_ : ndarray
        ``(w_g / N_g) / max_h (w_h / N_h)`` per group: the privacy loss of each group
        relative to the most exposed one.
    sample_weight_ : ndarray of shape (n_samples,)
        Per-row weights given to the inner estimator, 0 for the rows it does not receive.
        Data-dependent: it reveals the group of every training row (see
        :func:`sklearn_privacy.utils.strip_for_release`).
    n_iter_ : int or ndarray
        The inner estimator's ``n_iter_``, when it has one.
    n_features_in_ : int
    feature_names_in_ : ndarray
        Column names, when ``X`` is a DataFrame (which reaches the inner estimator as it
        is).

    See Also
    --------
    sklearn_privacy.werm.weight_for_setting : The reference weight ``w`` for each of the
        paper's privacy settings.
    sklearn_privacy.werm.epsilon_ratio : Relative privacy of the two groups for a weight.
    sklearn_privacy.attacks.make_werm_membership_scorer : Empirical membership leakage of
        each group, for model selection.

    Notes
    -----
    **Guarantees.** WERM by itself adds no noise and gives no formal privacy guarantee.
    Its privacy statements are relative: Theorem 3.1 of the paper shows that *when the
    inner training is differentially private per sample* (e.g. DP-SGD with per-sample
    clipping), the privacy loss of a row of group ``g`` scales with ``w_g / N_g``, hence
    ``epsilon_ratio_``. With an ordinary learner the weights only shift how much each
    group is fitted; the paper (and ``examples/werm_mnist_adult.py``) measures the
    resulting membership-inference accuracy empirically, and its threat model is the
    black-box adversary of its Section 2.2 who sees model outputs and knows half of the
    members and non-members. Reference rows *are* used for training: with ``w > 0`` they
    leak too (no warning is raised for this: it is the trade-off the method exposes, and
    no guarantee is claimed for them).

    **What the fitted model holds.** ``sample_weight_`` (the group of every row) and
    whatever the inner estimator stores; an SVC keeps its support vectors and a
    nearest-neighbours model every row. See the user guide's "What a fitted model holds"
    and :func:`sklearn_privacy.utils.strip_for_release` before publishing a model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import WERMClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    >>> group = np.repeat([0, 1], [100, 300])          # 100 training, 300 reference rows
    >>> clf = WERMClassifier(LogisticRegression(), w=0.5).fit(X, y, data_source=group)
    >>> clf.group_sizes_, clf.n_eff_, clf.epsilon_ratio_
    (array([100., 300.]), 300.0, 3.0)
    >>> clf.sample_weight_[[0, -1]]     # 0.5/100 and 0.5/300, rescaled to mean 1
    array([2.        , 0.66666667])
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "w": [Interval(Real, 0, 1, closed="both"), None],
        "group_weights": [dict, None],
    }

    def __init__(self, estimator=None, w=None, *, group_weights=None):
        self.estimator = estimator
        self.w = w
        self.group_weights = group_weights

    def _validate_estimator(self):
        """The inner estimator as configured (not cloned): ``estimator`` or the default.

        The one place where ``estimator=None`` is resolved to
        :class:`~sklearn.linear_model.LogisticRegression`; tags, metadata routing,
        ``available_if`` and ``fit`` all read the inner estimator through it.
        """
        return self.estimator if self.estimator is not None else LogisticRegression()

    def __sklearn_privacy_claim__(self):
        """Non-private for :func:`sklearn_privacy.privacy_claim`: WERM reweights the
        training loss to lower membership advantage, an empirical defence with no
        differential-privacy guarantee."""
        from ..privacy import StepClaim
        return StepClaim("", type(self).__name__, "non_private", float("inf"), 0.0, (
            "WERM lowers measured membership advantage by reweighting; it makes no "
            "differential-privacy claim (its models are fitted on the rows without noise)"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self._validate_estimator()
        inner_tags = inner.__sklearn_tags__()
        tags.input_tags.sparse = inner_tags.input_tags.sparse
        tags.input_tags.allow_nan = inner_tags.input_tags.allow_nan
        return tags

    # ------------------------------------------------------------------ weights
    def _check_weight_params(self):
        if isinstance(self.w, bool | np.bool_):
            raise TypeError(f"w must be a number in [0, 1] or None; got the boolean {self.w!r}.")
        if self.group_weights is None:
            return None
        gw = {}
        for key, value in self.group_weights.items():
            if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
                raise TypeError(
                    f"group_weights must map group labels to real weights; got {value!r} "
                    f"(type {type(value).__name__}) for group {key!r}."
                )
            gw[key] = float(value)
        values = np.array(list(gw.values()))
        if (values.size == 0 or np.any(~np.isfinite(values)) or np.any(values < 0)
                or not np.isclose(values.sum(), 1)):
            raise ValueError(
                "group_weights must map group labels to non-negative weights summing to 1; "
                f"got {self.group_weights!r}."
            )
        return gw

    def _group_weight_map(self, labels, gw, sizes):
        """Weight of each present label (``labels`` ordered, ``sizes`` aligned)."""
        if gw is not None:
            missing = [g for g in labels.tolist() if g not in gw]
            if missing:
                raise ValueError(
                    f"data_source has labels {missing} that are not keys of "
                    "group_weights; give every group a weight (0 to ignore it)."
                )
            empty = sorted(str(g) for g, wg in gw.items()
                           if wg > 0 and g not in set(labels.tolist()))
            weights = np.array([gw[g] for g in labels.tolist()])
        elif self.w is None:
            # size-proportional weights: plain ERM over every row, whatever the labels
            return np.asarray(sizes / sizes.sum(), dtype=float)
        else:
            roles = _two_group_roles(labels)
            if roles is None:
                raise ValueError(
                    f"data_source has labels {labels.tolist()}; with w, the two groups must "
                    "be labelled 0 (training) and 1 (reference), False/True, or 'train' and "
                    "'reference'. Give other labels their weights with "
                    "group_weights={label: weight}."
                )
            train, ref = roles
            gmap = {train: 1.0 - float(self.w), ref: float(self.w)}
            empty = [str(k) for k, wg in gmap.items()
                     if wg > 0 and k not in set(labels.tolist())]
            weights = np.array([gmap[g] for g in labels.tolist()])
        if empty:
            raise ValueError(
                f"Group(s) {sorted(empty)} have positive weight but no rows in data_source. "
                "Pass rows of every weighted group (in cross-validation, use a splitter "
                "stratified on the group, e.g. StratifiedKFold on data_source), or set "
                "its weight to 0 with w / group_weights."
            )
        return weights

    def _row_weights(self, groups, sample_weight):
        gw = self._check_weight_params()
        labels, inverse = np.unique(groups, return_inverse=True)
        roles = _two_group_roles(labels)
        if roles is not None and len(labels) == 2 and labels[0] != roles[0]:
            # training group first, whatever the sort order of the labels
            labels, inverse = labels[::-1], 1 - inverse
        sizes = np.bincount(inverse, weights=sample_weight, minlength=len(labels))
        weights = self._group_weight_map(labels, gw, sizes)
        starved = [str(g) for g, size, wg in zip(labels, sizes, weights, strict=True)
                   if wg > 0 and size <= 0]
        if starved:
            raise ValueError(
                f"Group(s) {starved} have positive weight but all their sample_weight is 0, "
                "which leaves no row to fit that group's loss; give them positive "
                "sample_weight or weight 0."
            )
        per_group = np.divide(weights, sizes, out=np.zeros_like(weights), where=sizes > 0)
        per_row = per_group[inverse] * sample_weight
        # rescale to the total user weight of the rows the inner estimator receives (those
        # of positive weight): mean 1 over them without sample_weight, so regularisation
        # (C, alpha) keeps its meaning, and integer sample_weight stays equivalent to
        # repeated rows
        kept = per_row > 0
        return labels, sizes, weights, per_row * (sample_weight[kept].sum() / per_row.sum())

    def _check_data_source(self, data_source, n):
        if data_source is None:
            if self.w is not None or self.group_weights is not None:
                setting = (f"w={self.w!r}" if self.group_weights is None
                           else "group_weights")
                raise ValueError(
                    f"{setting} weighs groups of rows, but fit received no data_source, so "
                    "there are no reference rows to weigh. Pass data_source (0 = training, "
                    "1 = reference) to fit; in GridSearchCV / cross_validate pass "
                    "it as a fit parameter (params={'data_source': g}) and, with metadata "
                    "routing on, call set_fit_request(data_source=True); in a Pipeline pass "
                    "<step>__data_source=g. For plain ERM over all rows leave w=None."
                )
            return np.zeros(n, dtype=int)
        groups = np.asarray(data_source)
        if groups.ndim == 2 and groups.shape[1] == 1:
            groups = groups.ravel()
        if groups.ndim != 1:
            raise ValueError(
                "data_source must be 1-D (one group label per row); got shape "
                f"{groups.shape}."
            )
        if groups.shape[0] != n:
            raise ValueError(
                f"data_source has {groups.shape[0]} entries but X has {n} rows; pass one "
                "group label per row (0 = training, 1 = reference)."
            )
        if groups.dtype.kind == "f" and not np.all(np.isfinite(groups)):
            raise ValueError("data_source contains NaN or infinity; give every row a group.")
        if groups.dtype.kind == "O":
            missing = np.equal(groups, None) | (groups != groups)
            if np.any(missing):
                raise ValueError(
                    f"data_source has {int(missing.sum())} missing labels (None or NaN); "
                    "give every row a group."
                )
            try:
                np.unique(groups)
            except TypeError:
                kinds = sorted({type(v).__name__ for v in groups.tolist()})
                raise ValueError(
                    f"data_source mixes label types {kinds}; use labels of one type "
                    "(e.g. 0/1 or 'train'/'reference')."
                ) from None
        elif groups.dtype.kind not in "biuU":
            if groups.dtype.kind != "f":
                raise TypeError(
                    f"data_source must hold integer, boolean or string labels; got dtype "
                    f"{groups.dtype}."
                )
        return groups

    def _check_inner(self):
        estimator = clone(self._validate_estimator())
        if not is_classifier(estimator):
            raise TypeError(
                f"estimator must be a classifier whose fit accepts sample_weight; got "
                f"{type(estimator).__name__}, which is not a classifier. Use e.g. "
                "LogisticRegression, SGDClassifier or a Pipeline ending in a classifier."
            )
        if has_fit_parameter(estimator, "sample_weight"):
            return estimator, "sample_weight"
        if isinstance(estimator, Pipeline):
            name, last = estimator.steps[-1]
            if has_fit_parameter(last, "sample_weight"):
                if routing_enabled():
                    # the WERM weights must reach the final classifier of our own clone
                    last.set_fit_request(sample_weight=True)
                    return estimator, "sample_weight"
                return estimator, f"{name}__sample_weight"
        raise TypeError(
            f"estimator {type(estimator).__name__} does not accept sample_weight in fit; "
            "WERM needs per-row weights. Use a classifier whose fit takes sample_weight "
            "(e.g. LogisticRegression, SGDClassifier, HistGradientBoostingClassifier, "
            "or MLPClassifier from scikit-learn 1.7 on), or a Pipeline ending in one."
        )

    def _validate_X(self, X, y="no_validation", *, reset):
        allow_nan = self.__sklearn_tags__().input_tags.allow_nan
        if _is_frame(X):
            # frames go to the inner estimator untouched (a ColumnTransformer selects columns
            # by name); only the number and names of the columns are checked here
            if isinstance(y, str) and y == "no_validation":
                return validate_data(self, X, skip_check_array=True, reset=reset)
            X, y = validate_data(self, X, y, skip_check_array=True, reset=reset)
            check_consistent_length(X, y)
            return X, column_or_1d(y, warn=True)
        kwargs = {"accept_sparse": ["csr", "csc"], "dtype": None, "reset": reset,
                  "ensure_all_finite": not allow_nan}
        return validate_named(self, X, y, **kwargs)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, data_source=None, sample_weight=None, *,
            sensitive_features=DEPRECATED, **fit_params):
        """Fit the inner estimator on the weighted rows.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            A DataFrame is passed to the inner estimator as it is (string and category
            columns included), so a ``Pipeline`` with a ``ColumnTransformer`` can select
            columns by name.
        y : array-like of shape (n_samples,)
            Target labels of the training and reference rows.
        data_source : array-like of shape (n_samples,), default=None
            Data set of each row: 0 = training, 1 = reference (``False``/``True`` and
            ``"train"``/``"reference"`` are accepted too), or the keys of
            ``group_weights``. Required whenever ``w`` or ``group_weights`` is set. With
            ``w=None`` and no ``group_weights`` it may be omitted (every row is a
            training row) and any labels are accepted: the fit is plain (optionally
            ``sample_weight``-weighted) ERM. Every group of positive weight must have rows;
            groups of weight 0 may be absent.
        sample_weight : array-like of shape (n_samples,), default=None
            Extra non-negative per-row weights, multiplied into the WERM weights.
        sensitive_features : array-like of shape (n_samples,)
            Deprecated old name of ``data_source`` (which data set a row comes from is not
            a sensitive attribute); removed in 0.4.

            .. deprecated:: 0.3
               Use ``data_source``.
        **fit_params : dict
            Other parameters for the inner estimator's ``fit`` (with metadata routing
            enabled, only those it requested).

        Returns
        -------
        self : WERMClassifier
            The fitted estimator (the inner one is ``estimator_``).

        Raises
        ------
        ValueError
            If ``w`` or ``group_weights`` is set but ``data_source`` is not given, if
            ``data_source`` has missing or unknown labels or the wrong length, or if a
            group of positive weight has no rows (or only rows of ``sample_weight`` 0).
        TypeError
            If ``estimator`` is not a classifier accepting ``sample_weight`` (directly, or
            in the final step of a ``Pipeline``), or ``w`` / ``group_weights`` values are
            not real numbers.
        """
        X, y = self._validate_X(X, y, reset=True)
        n = _num_samples(X)
        data_source = renamed_parameter(data_source, sensitive_features,
                                        old="sensitive_features", new="data_source",
                                        where="WERMClassifier.fit")
        groups = self._check_data_source(data_source, n)
        with errors_name("sample_weight"):
            sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(sw < 0) or not np.all(np.isfinite(sw)):
            raise ValueError("sample_weight must be finite and non-negative.")
        if not sw.any():  # older scikit-learn (1.6) lets an all-zero sample_weight through
            raise ValueError("Sample weights must contain at least one non-zero number; "
                             "sample_weight is 0 for every row.")
        labels, sizes, weights, per_row = self._row_weights(groups, sw)

        estimator, weight_key = self._check_inner()
        if routing_enabled():
            routed = process_routing(self, "fit", **fit_params).estimator.fit
        else:
            routed = fit_params
        keep = per_row > 0
        if keep.all():  # no copy of X when every row has positive weight
            estimator.fit(X, y, **{weight_key: per_row}, **routed)
        else:
            idx = np.flatnonzero(keep)
            routed = {
                k: (_safe_indexing(v, idx) if hasattr(v, "__len__") and len(v) == n else v)
                for k, v in routed.items()
            }
            estimator.fit(_safe_indexing(X, idx), _safe_indexing(y, idx),
                          **{weight_key: per_row[keep]}, **routed)
        self.estimator_ = estimator
        self.classes_ = estimator.classes_
        if hasattr(estimator, "n_iter_"):
            self.n_iter_ = estimator.n_iter_
        self.group_labels_ = labels
        self.group_sizes_ = sizes
        self.group_weights_ = weights
        self.sample_weight_ = per_row
        active = weights > 0
        self.n_eff_ = effective_sample_size(sizes[active], weights[active] / weights.sum())
        exposure = np.divide(weights, sizes, out=np.zeros_like(weights), where=sizes > 0)
        self.relative_epsilon_ = exposure / exposure.max()
        roles = _two_group_roles(labels)
        if roles is not None and len(labels) == 2:
            w_t, w_r = weights
            self.epsilon_ratio_ = (float("inf") if w_r == 0
                                   else float(w_t / w_r * sizes[1] / sizes[0]))
        else:
            self.epsilon_ratio_ = float("nan")
        claim = self.__sklearn_privacy_claim__()
        self.epsilon_, self.delta_, self.epsilon_reason_ = claim.epsilon, claim.delta, claim.reason
        return self

    def get_metadata_routing(self):
        """Get the metadata routing of this estimator.

        Extra ``fit`` parameters are routed to the inner estimator's ``fit``;
        ``sample_weight`` is consumed here (multiplied into the WERM weights).

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRouter
            The routing information of this estimator and of its inner estimator.
        """
        router = MetadataRouter(owner=self.__class__.__name__).add_self_request(self)
        inner = self._validate_estimator()
        router.add(estimator=inner, method_mapping=MethodMapping().add(caller="fit",
                                                                       callee="fit"))
        return router

    # ------------------------------------------------------------------ delegation
    def _inner_X(self, X):
        check_is_fitted(self)
        return self._validate_X(X, reset=False)

    def predict(self, X):
        """Predict class labels with the inner estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Data in the format the model was fitted on (a DataFrame reaches the inner
            estimator as it is).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The inner estimator's predicted labels.
        """
        X = self._inner_X(X)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Predict class probabilities with the inner estimator.

        Available when the inner estimator has ``predict_proba``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Data in the format the model was fitted on (a DataFrame reaches the inner
            estimator as it is).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The inner estimator's probabilities, columns in the order of ``classes_``.
        """
        X = self._inner_X(X)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Predict log class probabilities with the inner estimator.

        Available when the inner estimator has ``predict_log_proba``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Data in the format the model was fitted on (a DataFrame reaches the inner
            estimator as it is).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The inner estimator's log-probabilities, columns in the order of ``classes_``.
        """
        X = self._inner_X(X)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Compute the decision function of the inner estimator.

        Available when the inner estimator has ``decision_function``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Data in the format the model was fitted on (a DataFrame reaches the inner
            estimator as it is).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The inner estimator's decision values (one column per class beyond binary).
        """
        X = self._inner_X(X)
        return self.estimator_.decision_function(X)
