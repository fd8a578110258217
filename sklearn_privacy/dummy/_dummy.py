"""Constant (intercept-only) models released with Laplace noise."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from ..privacy._tradeoff import RiskTarget, epsilon_value
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    OUTSIDE_LABELS_STATE,
    encode_declared_labels,
    errors_name,
    label_set_sentence,
    void_outside_labels,
)
from ..utils.fixes import Interval, _fit_context, _num_samples, validate_data

_NOTES = """
    **Threat model and guarantee.** Neighbouring data sets differ in the values of one
    row (replacement); ``n``, the number of features and every parameter are public. The
    features are never read (only their number, and ``n``). The release is pure
    ``epsilon``-DP (``delta = 0``) for an adversary who sees everything the fitted object
    holds. A fixed ``random_state`` makes the noise reproducible and the release
    non-private (tests only); ``epsilon_reason_`` says so and
    :func:`~sklearn_privacy.privacy_claim` is then ``inf``.

    **What is not guaranteed.** Floating-point effects in sampling the noise are not
    covered (as for every DP library); steps fitted before this one on the same rows are
    not covered (:func:`~sklearn_privacy.privacy_claim` states the claim of the whole
    published object).
"""


class _DPDummyBase(BaseEstimator):
    """Shared fit skeleton of the DP constant models (not for direct use)."""

    def _start(self, X, y):
        # X is read for its shape only: any dtype, missing values allowed
        validate_data(self, X, accept_sparse=True, dtype=None, ensure_all_finite=False)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the "
                             "target y is None.")
        n = _num_samples(X)
        with errors_name("y"):
            y = column_or_1d(y, warn=True)
        if y.shape[0] != n:
            raise ValueError(f"y must be one-dimensional with one value per row of X "
                             f"({n}); got shape {y.shape}.")
        if n < 1:
            raise ValueError("X has no rows: at least one row is needed.")
        warn_shared_noise(type(self).__name__, self.random_state, stacklevel=4)
        return y, n

    def _noise_note(self):
        rs = self.random_state
        if rs is None:
            return " epsilon_ assumes fresh noise: random_state=None draws it from OS entropy."
        return (f" epsilon_ assumes fresh noise, but random_state={rs!r} makes the noise "
                "reproducible or shared by clones: this release is not private as "
                "published; use random_state=None.")

    def __getstate__(self):
        # the count of rows with a label outside the declared classes: private channel
        state = dict(super().__getstate__())
        state.pop(OUTSIDE_LABELS_STATE, None)
        return state

    def __sklearn_privacy_claim__(self):
        """The step claim: ``dp`` with ``(epsilon_, 0)``.

        Returns
        -------
        claim : StepClaim
        """
        from ..privacy import StepClaim

        check_is_fitted(self)
        name = type(self).__name__
        return StepClaim("", name, "dp", float(self.epsilon_), 0.0,
                         self.epsilon_reason_ + label_set_sentence(self))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = True
        return tags


class DPDummyClassifier(ClassifierMixin, _DPDummyBase):
    __doc__ = """Predicts the noisy most frequent class: an intercept-only classifier, pure DP.

    The class counts are released with independent Laplace noise of scale ``2 /
    epsilon`` (replacing one row moves two counts by one: L1 sensitivity 2); the class
    frequencies are the noisy counts clipped at 0 and normalised (uniform when every
    clipped count is 0). ``predict`` returns the class of the largest frequency,
    ``predict_proba`` the frequencies, whatever the features. It is the baseline a
    private model has to beat, with a claim of its own, so that
    :class:`~sklearn_privacy.RandomStoppingSearch` can select among the
    candidates *and* the constant (user guide: :ref:`private_selection`).

    Parameters
    ----------
    epsilon : float > 0 or RiskTarget, default=1.0
        The privacy budget of the release, or a
        :class:`~sklearn_privacy.privacy.RiskTarget` (the largest pure epsilon meeting it).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, declared. ``None``: ``classes_`` is the set found in
        ``y``, which one row can change, so :func:`~sklearn_privacy.privacy_claim` is
        ``inf``. Declared: a declared label with no row still gets a noisy count, and a
        row whose label is outside the set (any value, ``NaN`` included) stays a row
        (``n`` is unchanged) but is counted in no class, so no label value makes the fit
        fail. One replaced row then moves the counts by at most 2 in L1 (one count down
        and one up, or one count alone when either label is outside), the sensitivity
        the noise is set for. How many rows were outside is kept in the private channel
        ``_labels_outside_classes`` (never pickled), without a warning.
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); anything else is for tests only.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels (``classes`` sorted when declared).
    class_prior_ : ndarray of shape (n_classes,)
        The released class frequencies (noisy counts clipped at 0, normalised).
    epsilon_ : float
        ``epsilon``.
    delta_ : float
        ``0.0``.
    epsilon_reason_ : str
        What the guarantee covers.
    n_features_in_ : int
        Number of features seen during fit (never read otherwise).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    DPDummyRegressor : The constant model for regression (scikit-learn's
        ``DummyClassifier(strategy="prior")`` is the non-private counterpart).

    Notes
    -----{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.dummy import DPDummyClassifier
    >>> X = np.zeros((1000, 2)); y = np.r_[np.zeros(700), np.ones(300)].astype(int)
    >>> clf = DPDummyClassifier(epsilon=1.0, classes=[0, 1]).fit(X, y)
    >>> clf.predict(X[:3])
    array([0, 0, 0])
    >>> clf.epsilon_, clf.delta_
    (1.0, 0.0)
    """.replace("{NOTES}", _NOTES)

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "classes": ["array-like", None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, epsilon=1.0, *, classes=None, random_state=None):
        self.epsilon = epsilon
        self.classes = classes
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Release the noisy class frequencies of ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows (only their number and width are read).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        y, _ = self._start(X, y)
        known = None
        if self.classes is not None:
            y, known = void_outside_labels(self, self.classes, y)
        with errors_name("y"):
            check_classification_targets(y)
            if self.classes is not None:
                classes, idx = encode_declared_labels(self.classes, y)
            else:
                classes, idx = np.unique(y, return_inverse=True)
        if known is not None:          # rows outside the classes are counted nowhere
            idx = idx[known]
        rng = noise_generator(self.random_state)
        noise = rng.laplace(0.0, 2.0 / epsilon_value(self.epsilon, 0.0), size=classes.size)
        counts = np.bincount(idx, minlength=classes.size).astype(np.float64)
        clipped = np.maximum(counts + noise, 0.0)
        total = clipped.sum()
        self.classes_ = classes
        self.class_prior_ = (clipped / total if total > 0
                             else np.full(classes.size, 1.0 / classes.size))
        self.epsilon_ = epsilon_value(self.epsilon, 0.0)
        self.delta_ = 0.0
        self.epsilon_reason_ = (
            "pure epsilon-DP for replacing the values of any one row (n and every "
            "parameter public): the class counts with Laplace noise of scale 2 / epsilon "
            f"= {2.0 / epsilon_value(self.epsilon, 0.0):.6g} (one row moves two counts by "
            "one), then "
            "clipped at 0 and normalised (post-processing)." + self._noise_note())
        record_fit_provenance(self, certificate=True)
        return self

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``):
        ``class_prior_`` is the mechanism's output; ``classes_`` is public only when
        declared with ``classes=``; the rest comes from the parameters."""
        kinds = {"class_prior_": "dp", "epsilon_": "constant", "delta_": "constant",
                 "epsilon_reason_": "constant"}
        if "classes_" in self.__dict__:
            declared = self.classes
            ok = declared is not None and np.array_equal(
                np.unique(np.asarray(declared)), self.classes_)
            kinds["classes_"] = "public" if ok else (
                "rows", "the label set found in y: one row with a new label changes "
                        "classes_; pass classes=[...] (the public label set)")
        return kinds

    def predict_proba(self, X):
        """The released class frequencies, for every row.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        validate_data(self, X, accept_sparse=True, dtype=None, ensure_all_finite=False,
                      reset=False)
        return np.tile(self.class_prior_, (_num_samples(X), 1))

    def predict(self, X):
        """The class of the largest released frequency, for every row.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True  # a constant, by design
        return tags


class DPDummyRegressor(RegressorMixin, _DPDummyBase):
    __doc__ = """Predicts the noisy clipped mean of y: an intercept-only regressor, pure DP.

    The targets are clipped to the declared ``[low, high]`` (``[-target_bound,
    target_bound]`` for a number; row by row, without a warning: whether a value was
    clipped is a fact about one row); their mean, which one replaced row moves by at
    most ``(high - low) / n``, is released with Laplace noise of scale ``(high - low) /
    (n epsilon)`` and clipped to the same interval (post-processing). It is the baseline
    a private regressor has to beat, with a claim of its own (user guide:
    :ref:`private_selection`).

    Parameters
    ----------
    epsilon : float > 0 or RiskTarget, default=1.0
        The privacy budget of the release, or a
        :class:`~sklearn_privacy.privacy.RiskTarget` (the largest pure epsilon meeting it).
    target_bound : float > 0 or (low, high)
        Declared range of ``y`` (required; from public knowledge of the target's range,
        never from the rows): a number :math:`B` stands for ``(-B, B)``.
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); anything else is for tests only.

    Attributes
    ----------
    constant_ : float
        The released prediction.
    noise_scale_ : float
        Scale of the Laplace noise, ``(high - low) / (n epsilon)`` (public).
    epsilon_ : float
        ``epsilon``.
    delta_ : float
        ``0.0``.
    epsilon_reason_ : str
        What the guarantee covers.
    n_features_in_ : int
        Number of features seen during fit (never read otherwise).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    DPDummyClassifier : The constant model for classification (scikit-learn's
        ``DummyRegressor(strategy="mean")`` is the non-private counterpart).

    Notes
    -----{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.dummy import DPDummyRegressor
    >>> X = np.zeros((10_000, 1)); y = np.full(10_000, 0.25)
    >>> reg = DPDummyRegressor(epsilon=1.0, target_bound=1.0).fit(X, y)
    >>> bool(abs(reg.constant_ - 0.25) < 0.01), reg.epsilon_
    (True, 1.0)
    """.replace("{NOTES}", _NOTES)

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "target_bound": [Interval(Real, 0, None, closed="neither"), tuple, list, None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, epsilon=1.0, *, target_bound=None, random_state=None):
        self.epsilon = epsilon
        self.target_bound = target_bound
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Release the noisy clipped mean of ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows (only their number and width are read).
        y : array-like of shape (n_samples,)
            Real targets.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.target_bound is None:
            raise ValueError(
                "DPDummyRegressor: target_bound is required (a declared bound on |y|; the "
                "noise is calibrated to it). Choose it from public knowledge of the "
                "target's range, not from the rows.")
        y, n = self._start(X, y)
        with errors_name("y"):
            y = check_array(y, ensure_2d=False, dtype=np.float64)
        low, high = self._target_range()
        scale = (high - low) / (n * epsilon_value(self.epsilon, 0.0))
        rng = noise_generator(self.random_state)
        noise = float(rng.laplace(0.0, scale))
        clipped = np.clip(y, low, high)
        self.constant_ = float(np.clip(clipped.mean() + noise, low, high))
        self.noise_scale_ = float(scale)
        self.epsilon_ = epsilon_value(self.epsilon, 0.0)
        self.delta_ = 0.0
        self.epsilon_reason_ = (
            "pure epsilon-DP for replacing the values of any one row (n and every "
            "parameter public): the mean of the targets clipped to the declared range "
            f"[{low!r}, {high!r}], with Laplace noise of scale (high - low) / (n "
            f"epsilon) = {scale:.6g}, then clipped to the same interval "
            "(post-processing)." + self._noise_note())
        record_fit_provenance(self, certificate=True)
        return self

    def _target_range(self):
        """``(low, high)`` of the declared ``target_bound`` (a number ``B``: ``(-B, B)``)."""
        tb = self.target_bound
        if isinstance(tb, (tuple, list)):
            if len(tb) != 2:
                raise ValueError("DPDummyRegressor: target_bound must be a number B > 0 "
                                 f"or a pair (low, high); got {tb!r}.")
            try:
                low, high = float(tb[0]), float(tb[1])
            except (TypeError, ValueError):
                raise ValueError("DPDummyRegressor: target_bound=(low, high) needs two "
                                 f"numbers; got {tb!r}.") from None
            if not (np.isfinite(low) and np.isfinite(high) and low < high):
                raise ValueError("DPDummyRegressor: target_bound=(low, high) needs finite "
                                 f"low < high; got {tb!r}.")
            return low, high
        return -float(tb), float(tb)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # a constant, by design
        return tags

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``)."""
        return {"constant_": "dp", "noise_scale_": "constant", "epsilon_": "constant",
                "delta_": "constant", "epsilon_reason_": "constant"}

    def predict(self, X):
        """The released constant, for every row.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        validate_data(self, X, accept_sparse=True, dtype=None, ensure_all_finite=False,
                      reset=False)
        return np.full(_num_samples(X), self.constant_)
