"""Output-perturbed least squares with Fisher information loss."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import validate_named
from . import _dask
from ._base import THREAT_MODEL_DOC, BaseFILEstimator, private_copy
from ._glm import SQUARED


class FILLinearRegression(RegressorMixin, BaseFILEstimator):
    __doc__ = """Least squares released with Gaussian output perturbation, with its FIL.

    Minimises :math:`\\sum_i \\omega_i (\\theta^\\top \\tilde x_i - y_i)^2 / 2 +
    n\\alpha/2 \\lVert w \\rVert^2` exactly (one Cholesky solve; ``n`` is the total
    sample weight, the intercept is not penalised) and releases the minimiser plus
    :math:`\\mathcal N(0, \\sigma^2 I)` noise. The Fisher information loss of every
    training value, example, attribute, group or of the whole data set is available
    while the estimator is in memory (:attr:`eta_`, :meth:`eta`,
    :meth:`fisher_information`).

    Parameters
    ----------
    sigma : float, default=1.0
        Standard deviation of the Gaussian noise added to every released parameter.
    alpha : float, default=1e-3
        L2 penalty, the FIL paper's :math:`\\lambda` (penalty ``n alpha / 2 ||w||^2``).
        ``alpha=0`` is ordinary least squares and needs a full-rank design.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (it is perturbed too).
    random_state : int, RandomState instance or None, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); a fixed seed makes the noise reproducible (tests only).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released (noise-perturbed) coefficients.
    intercept_ : float
        Released (noise-perturbed) intercept; 0.0 when ``fit_intercept=False``.
    eta_ : ndarray of shape (n_samples,)
        Per-example Fisher information loss (audit state, not serialised).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.
{THREAT_MODEL_DOC}
    See Also
    --------
    FILLogisticRegression : the same for binary logistic regression.
    IRFILLinearRegression : reweights examples to equalise their eta.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=200)
    >>> reg = FILLinearRegression(sigma=0.01, alpha=1e-3, random_state=0).fit(X, y)
    >>> reg.coef_.round(1)
    array([ 1. , -2. ,  0.5])
    >>> reg.eta_.shape
    (200,)
    >>> bool(reg.eta(rows=[0, 1]) >= reg.eta_[:2].max())   # a group leaks at least its worst member
    True
    """.replace("{THREAT_MODEL_DOC}", THREAT_MODEL_DOC)

    _loss = SQUARED

    _parameter_constraints: dict = {
        k: v for k, v in BaseFILEstimator._parameter_constraints.items()
        if k not in ("tol", "max_iter")
    }

    def __init__(self, sigma=1.0, *, alpha=1e-3, fit_intercept=True, random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the exact minimiser and release it with Gaussian noise.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights :math:`\\omega_i` (they enter the Jacobians too).

        Returns
        -------
        self : object
        """
        if _dask.is_dask_collection(X):
            return _dask.fit(self, X, y, sample_weight)
        self._validate_params()
        X_in = X
        X, y = validate_named(self, X, y, dtype=np.float64, y_numeric=True,
                             accept_sparse=["csr", "csc"])
        X = private_copy(X, X_in)
        sw = self._validated_sample_weight(sample_weight, X)
        self.__dict__.pop("_eta_cache", None)
        theta, _, engine = self._fit_exact(X, y.astype(np.float64), sw)
        self._audit = engine
        self._release(theta)
        return self

    def predict(self, X):
        """Predict with the released (perturbed) parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False, accept_sparse=["csr", "csc"])
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
