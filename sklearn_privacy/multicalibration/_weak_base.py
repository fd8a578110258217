"""Full-batch gradient-descent logistic regression (the weak base of the multicalibration paper)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import errors_name, validate_named
from ..utils.fixes import Interval, _check_sample_weight, _fit_context


class GradientDescentLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression fitted by plain full-batch gradient descent.

    Minimises the mean log loss with ``max_iter`` steps of size ``learning_rate`` from
    zero, without penalty. With ``learning_rate=0.1``, ``max_iter=1500`` and no intercept
    this is the base classifier of Fishman, Mugunthan & Tanzer's Adult experiment: on
    standardised Adult it stops far from the optimum (test accuracy about 0.80, against
    0.85 for :class:`~sklearn.linear_model.LogisticRegression`), which is why
    multicalibration appears to improve accuracy there. It is kept, outside the public
    API, to reproduce that experiment; use a solved model for anything else.

    Parameters
    ----------
    learning_rate : float, default=0.1
        Step size of every gradient step (on the mean log loss, so it does not scale
        with the number of samples).
    max_iter : int, default=1500
        Number of gradient steps; there is no convergence test.
    fit_intercept : bool, default=False
        Whether to fit an (unpenalised) intercept.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Coefficients of the log-odds of ``classes_[1]``.
    intercept_ : ndarray of shape (1,)
        Intercept of the log-odds (0 when ``fit_intercept=False``).
    classes_ : ndarray of shape (2,)
        The two class labels, sorted.
    n_iter_ : int
        Number of steps taken (always ``max_iter``).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`, when ``X`` had string column names.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : Logistic regression solved to optimality.
    sklearn_privacy.PrivateMulticalibrator : Post-processes such a base classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.multicalibration._weak_base import (
    ...     GradientDescentLogisticRegression)
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]]); y = np.array([0, 0, 1, 1])
    >>> GradientDescentLogisticRegression().fit(X, y).predict([[-3.0], [3.0]])
    array([0, 1])
    """

    _parameter_constraints: dict = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, learning_rate=0.1, max_iter=1500, fit_intercept=False):
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Run gradient descent on the (weighted) mean log loss.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (standardise it: the step size is not adapted to its scale).
        y : array-like of shape (n_samples,)
            Binary target, exactly two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples in the mean log loss (None: uniform).

        Returns
        -------
        self : GradientDescentLogisticRegression
            The fitted estimator.

        Raises
        ------
        ValueError
            Fewer than 2 samples, not exactly 2 classes, or a diverging descent.
        """
        X, y = validate_named(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if X.shape[0] < 2:
            raise ValueError(f"Logistic regression needs at least 2 samples; got n_samples = "
                             f"{X.shape[0]}.")
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if self.classes_.size != 2:
            raise ValueError(
                "Only binary classification is supported. GradientDescentLogisticRegression "
                f"needs y with exactly 2 classes; got {self.classes_.size}."
            )
        n, d = X.shape
        with errors_name("sample_weight"):
            sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        sw = sw / sw.sum()
        w = np.zeros(d)
        b = 0.0
        with np.errstate(over="ignore", invalid="ignore"):  # divergence checked below
            for _ in range(self.max_iter):
                r = sw * (expit(X @ w + b) - y01)
                w -= self.learning_rate * (X.T @ r)
                if self.fit_intercept:
                    b -= self.learning_rate * r.sum()
        if not (np.all(np.isfinite(w)) and np.isfinite(b)):
            raise ValueError(
                "Gradient descent diverged (non-finite coefficients): standardise X or "
                f"lower learning_rate (got {self.learning_rate!r})."
            )
        self.coef_ = w[None, :]
        self.intercept_ = np.array([b])
        self.n_iter_ = self.max_iter
        return self

    def decision_function(self, X):
        """Compute the log-odds of ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            ``X @ coef_[0] + intercept_[0]``.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X):
        """Compute the probabilities of both classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``; each column is computed
            directly, not as one minus the other, so small probabilities stay accurate.
        """
        z = self.decision_function(X)
        return np.column_stack([expit(-z), expit(z)])  # each side exact, no 1 - p

    def predict(self, X):
        """Predict the most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the log-odds are positive, ``classes_[0]`` elsewhere.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
