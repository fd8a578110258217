"""Output-perturbed least squares with Fisher information loss."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._glm._core import SQUARED
from ..utils._validation import validate_named
from ..utils.fixes import Interval
from ._base import BaseFILEstimator
from ._params import (
    ALPHA_AUTO_DOC,
    DP_ATTRS_DOC,
    DP_PARAMS_LSQ_EPS_DOC,
    EPSILON_CONSTRAINTS,
    INTERCEPT_SCALING_DOC,
    NOISE_ATTRS_DOC,
    SIGMA_DOC,
    THREAT_MODEL_DOC,
)


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
{SIGMA}    alpha : float, "auto" or None, default=None
        L2 penalty, the FIL paper's :math:`\\lambda` (penalty ``n alpha / 2 ||w||^2``).
        ``None``: ``"auto"`` when ``epsilon`` is set (a DP release; a fixed small
        penalty makes the noise swamp the model), else ``1e-3``, the FIL paper's
        setting.
{ALPHA_AUTO}        ``alpha=0`` is ordinary least squares and needs a full-rank design.
        The penalty is per-sample: the objective is the (weighted) mean loss plus
        ``alpha / 2 ||w||^2``, so ``FILLinearRegression(alpha=a)`` has the minimiser of
        ``Ridge(alpha=n_samples * a)``, ``FILLogisticRegression(alpha=a)`` that of
        ``LogisticRegression(C=1 / (n_samples * a))`` and ``FILPoissonRegressor(alpha=a)``
        that of ``PoissonRegressor(alpha=a)`` (``n_samples``: the total sample weight).
    fit_intercept : bool, default=True
        Fit an intercept (it is perturbed too), unpenalised unless ``intercept_scaling``
        is given.
{INTERCEPT_SCALING}{DP_PARAMS}    random_state : int, RandomState, Generator or None, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); a fixed seed makes the noise reproducible (tests only). An
        instance is copied by :func:`~sklearn.base.clone`, so clones draw the same noise:
        fitting with one emits a :class:`~sklearn_privacy.exceptions.PrivacyWarning`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released (noise-perturbed) coefficients.
    intercept_ : float
        Released (noise-perturbed) intercept; 0.0 when ``fit_intercept=False``.
    eta_ : ndarray of shape (n_samples,)
        Per-example Fisher information loss (audit state, not serialised).
{DP_ATTRS}{NOISE_ATTRS}    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    FILLogisticRegression : The same for binary logistic regression.
    IRFILLinearRegression : Reweights examples to equalise their eta.
{THREAT_MODEL_DOC}
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
    """.replace("{THREAT_MODEL_DOC}", THREAT_MODEL_DOC).replace(
        "{DP_PARAMS}", DP_PARAMS_LSQ_EPS_DOC).replace("{DP_ATTRS}", DP_ATTRS_DOC).replace(
        "{NOISE_ATTRS}", NOISE_ATTRS_DOC).replace("{SIGMA}", SIGMA_DOC).replace(
        "{ALPHA_AUTO}", ALPHA_AUTO_DOC).replace(
        "{INTERCEPT_SCALING}", INTERCEPT_SCALING_DOC)

    _loss = SQUARED
    _y_numeric = True

    _parameter_constraints: dict = {
        k: v for k, v in BaseFILEstimator._parameter_constraints.items()
        if k not in ("tol", "max_iter")
    }
    _parameter_constraints["target_bound"] = [Interval(Real, 0, None, closed="neither"), None]
    _parameter_constraints.update(EPSILON_CONSTRAINTS)

    def __init__(self, sigma=None, *, alpha=None, fit_intercept=True, intercept_scaling=None,
                 data_norm=None, target_bound=None, epsilon=None, delta=1e-5,
                 random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.data_norm = data_norm
        self.target_bound = target_bound
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def predict(self, X):
        """Predict with the released (perturbed) parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``X @ coef_ + intercept_``, with the noise-perturbed parameters.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False, accept_sparse=["csr", "csc"])
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
