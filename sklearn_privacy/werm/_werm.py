"""Weighted empirical risk minimisation over training and reference data (WERM)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    validate_data,
)

from ._theory import effective_sample_size


def _estimator_has(attr):
    def check(self):
        est = getattr(self, "estimator_", None)
        if est is None:
            est = self.estimator if self.estimator is not None else LogisticRegression()
        return hasattr(est, attr)

    return check


class WERMClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Weighted ERM over training and reference data (Kaplan et al., PETS 2024).

    Fits ``estimator`` to minimise ``(1 - w) L_T + w L_R``: the average loss on the
    training rows and on the reference rows, weighted by ``1 - w`` and ``w``. Rows say
    which data set they belong to through the sample-aligned fit parameter
    ``sample_group`` (0 = training, 1 = reference), so cross-validation splits it with
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
        Classifier whose ``fit`` accepts ``sample_weight``; cloned. ``None`` means
        :class:`~sklearn.linear_model.LogisticRegression`.
    w : float in [0, 1], default=0.5
        Weight of the reference group (group 1) when ``group_weights`` is None.
    group_weights : dict or None, default=None
        ``{group label: weight}`` for any number of groups; weights non-negative, summing
        to 1. Overrides ``w``.
    max_iter : int or None, default=None
        Early stopping (WERM-ES): sets the inner estimator's ``max_iter`` (epochs for
        :class:`~sklearn.neural_network.MLPClassifier`, iterations for solvers) to this
        value. Convergence warnings of the shortened fit are expected.

    Attributes
    ----------
    estimator_ : classifier
        The fitted inner estimator.
    classes_ : ndarray
        Class labels (those seen by the inner estimator).
    group_labels_ : ndarray
        Groups present in the fit data, sorted.
    group_sizes_ : ndarray
        Total user weight (number of rows without ``sample_weight``) of each group.
    group_weights_ : ndarray
        Weight ``w_g`` of each group, aligned with ``group_labels_``.
    n_eff_ : float
        Effective sample size ``1 / sum_g w_g^2 / N_g`` (Theorem 3.2).
    epsilon_ratio_ : float
        ``eps_T / eps_R = (1 - w) / w * N_R / N_T`` for the two-group setting (``nan`` when
        the fit data do not hold exactly groups 0 and 1; ``inf`` when ``w = 0``).
    relative_epsilon_ : ndarray
        ``(w_g / N_g) / max_h (w_h / N_h)`` per group: the privacy loss of each group
        relative to the most exposed one.
    sample_weight_ : ndarray of shape (n_samples,)
        Per-row weights given to the inner estimator, 0 for the rows it does not receive.
    n_iter_ : int or ndarray
        The inner estimator's ``n_iter_``, when it has one.
    n_features_in_ : int
    feature_names_in_ : ndarray

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
    leak too.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import WERMClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    >>> group = np.repeat([0, 1], [100, 300])          # 100 training, 300 reference rows
    >>> clf = WERMClassifier(LogisticRegression(), w=0.5).fit(X, y, sample_group=group)
    >>> clf.group_sizes_, clf.n_eff_, clf.epsilon_ratio_
    (array([100., 300.]), 300.0, 3.0)
    >>> clf.sample_weight_[[0, -1]]     # 0.5/100 and 0.5/300, rescaled to mean 1
    array([2.        , 0.66666667])
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "w": [Interval(Real, 0, 1, closed="both")],
        "group_weights": [dict, None],
        "max_iter": [Interval(Real, 1, None, closed="left"), None],
    }

    def __init__(self, estimator=None, w=0.5, *, group_weights=None, max_iter=None):
        self.estimator = estimator
        self.w = w
        self.group_weights = group_weights
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator if self.estimator is not None else LogisticRegression()
        inner_tags = inner.__sklearn_tags__()
        tags.input_tags.sparse = inner_tags.input_tags.sparse
        tags.input_tags.allow_nan = inner_tags.input_tags.allow_nan
        return tags

    # ------------------------------------------------------------------ weights
    def _group_weight_map(self, labels):
        if self.group_weights is None:
            unknown = set(labels.tolist()) - {0, 1}
            if unknown:
                raise ValueError(
                    f"sample_group has labels {sorted(unknown)} besides 0 (training) and 1 "
                    "(reference); give their weights with group_weights={label: weight}."
                )
            return {0: 1.0 - self.w, 1: float(self.w)}
        gw = {k: float(v) for k, v in self.group_weights.items()}
        values = np.array(list(gw.values()))
        if np.any(~np.isfinite(values)) or np.any(values < 0) or not np.isclose(values.sum(), 1):
            raise ValueError(
                "group_weights must map group labels to non-negative weights summing to 1; "
                f"got {self.group_weights!r}."
            )
        missing = set(labels.tolist()) - set(gw)
        if missing:
            raise ValueError(
                f"sample_group has labels {sorted(missing)} that are not keys of "
                "group_weights; give every group a weight (0 to ignore it)."
            )
        return gw

    def _row_weights(self, groups, sample_weight, explicit):
        labels = np.unique(groups)
        if not explicit:
            # no sample_group: every row is a training row, plain (weighted) ERM
            if self.group_weights is not None:
                self._group_weight_map(np.array([]))  # validates the values only
            gmap = {labels[0].item(): 1.0}
        else:
            gmap = self._group_weight_map(labels)
            empty = sorted(str(g) for g, wg in gmap.items()
                           if wg > 0 and not np.any(groups == g))
            if empty:
                raise ValueError(
                    f"Group(s) {empty} have positive weight but no rows in sample_group. "
                    "Pass rows of every weighted group (in cross-validation, use a splitter "
                    "stratified on the group, e.g. StratifiedKFold on sample_group), or set "
                    "its weight to 0 with w / group_weights."
                )
        weights = np.array([gmap[g.item() if hasattr(g, "item") else g] for g in labels])
        sizes = np.array([sample_weight[groups == g].sum() for g in labels])
        starved = [str(g) for g, size, wg in zip(labels, sizes, weights, strict=True)
                   if wg > 0 and size <= 0]
        if starved:
            raise ValueError(
                f"Group(s) {starved} have positive weight but all their sample_weight is 0, "
                "which leaves no row to fit that group's loss; give them positive "
                "sample_weight or weight 0."
            )
        per_row = np.zeros(groups.shape[0])
        for g, size, wg in zip(labels, sizes, weights, strict=True):
            if wg > 0:
                mask = groups == g
                per_row[mask] = wg * sample_weight[mask] / size
        # rescale to the total user weight of the rows the inner estimator receives (those
        # of positive weight): mean 1 over them without sample_weight, so regularisation
        # (C, alpha) keeps its meaning, and integer sample_weight stays equivalent to
        # repeated rows
        kept = per_row > 0
        return labels, sizes, weights, per_row * (sample_weight[kept].sum() / per_row.sum())

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_group=None, sample_weight=None, **fit_params):
        """Fit the inner estimator on the weighted rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_group : array-like of shape (n_samples,), default=None
            Data set of each row: 0 = training, 1 = reference (or the keys of
            ``group_weights``). ``None``: every row is a training row and the fit is plain
            (optionally ``sample_weight``-weighted) ERM. Every group of positive weight
            must have rows; groups of weight 0 may be absent.
        sample_weight : array-like of shape (n_samples,), default=None
            Extra non-negative per-row weights, multiplied into the WERM weights.
        **fit_params : dict
            Other parameters for the inner estimator's ``fit`` (with metadata routing
            enabled, only those it requested).

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=None,
                             ensure_all_finite=not self.__sklearn_tags__().input_tags.allow_nan)
        n = X.shape[0]
        if sample_group is None:
            groups = np.zeros(n, dtype=int)
        else:
            groups = column_or_1d(sample_group, warn=True)
            if groups.shape[0] != n:
                raise ValueError(
                    f"sample_group has {groups.shape[0]} entries but X has {n} rows; pass one "
                    "group label per row (0 = training, 1 = reference)."
                )
            if groups.dtype.kind == "f" and not np.all(np.isfinite(groups)):
                raise ValueError("sample_group contains NaN or infinity.")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(sw < 0) or not np.all(np.isfinite(sw)):
            raise ValueError("sample_weight must be finite and non-negative.")
        labels, sizes, weights, per_row = self._row_weights(
            groups, sw, explicit=sample_group is not None)

        estimator = clone(self.estimator if self.estimator is not None else LogisticRegression())
        if not has_fit_parameter(estimator, "sample_weight"):
            raise TypeError(
                f"estimator {type(estimator).__name__} does not accept sample_weight in fit; "
                "WERM needs per-row weights. Use a classifier whose fit takes sample_weight "
                "(e.g. LogisticRegression, SGDClassifier, HistGradientBoostingClassifier, "
                "or MLPClassifier from scikit-learn 1.7 on)."
            )
        if self.max_iter is not None:
            if "max_iter" not in estimator.get_params():
                raise ValueError(
                    f"max_iter={self.max_iter} (early stopping) needs an inner estimator with "
                    f"a max_iter parameter; {type(estimator).__name__} has none."
                )
            estimator.set_params(max_iter=int(self.max_iter))
        if _routing_enabled():
            routed = process_routing(self, "fit", **fit_params).estimator.fit
        else:
            routed = fit_params
        keep = per_row > 0
        if keep.all():  # no copy of X when every row has positive weight
            estimator.fit(X, y, sample_weight=per_row, **routed)
        else:
            idx = np.flatnonzero(keep)
            routed = {
                k: (_safe_indexing(v, idx) if hasattr(v, "__len__") and len(v) == n else v)
                for k, v in routed.items()
            }
            estimator.fit(_safe_indexing(X, idx), _safe_indexing(y, idx),
                          sample_weight=per_row[keep], **routed)
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
        if labels.tolist() == [0, 1]:
            w_t, w_r = weights
            self.epsilon_ratio_ = (float("inf") if w_r == 0
                                   else float(w_t / w_r * sizes[1] / sizes[0]))
        else:
            self.epsilon_ratio_ = float("nan")
        return self

    def get_metadata_routing(self):
        """Route extra fit parameters to the inner estimator (``sample_weight`` is ours)."""
        router = MetadataRouter(owner=self.__class__.__name__).add_self_request(self)
        inner = self.estimator if self.estimator is not None else LogisticRegression()
        router.add(estimator=inner, method_mapping=MethodMapping().add(caller="fit",
                                                                       callee="fit"))
        return router

    # ------------------------------------------------------------------ delegation
    def _inner_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse=["csr", "csc"], dtype=None, reset=False,
                             ensure_all_finite=not self.__sklearn_tags__().input_tags.allow_nan)

    def predict(self, X):
        """Predict class labels with the inner estimator."""
        X = self._inner_X(X)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the inner estimator."""
        X = self._inner_X(X)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the inner estimator."""
        X = self._inner_X(X)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the inner estimator."""
        X = self._inner_X(X)
        return self.estimator_.decision_function(X)
