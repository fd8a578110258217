"""Output-perturbed Poisson regression (log link) with Fisher information loss."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._glm._core import POISSON, SingularHessianError
from ..utils._validation import validate_named
from . import _dask
from ._base import BaseFILEstimator
from ._irfil import _IRFIL_DOC, _IRFILMixin
from ._params import THREAT_MODEL_DOC

#: Why the DP view gives no epsilon for the Poisson loss.
POISSON_EPSILON_REASON = (
    "no DP guarantee: the Poisson loss l(z, y) = exp(z) - y z has derivative "
    "l' = exp(z) - y, which is unbounded in the linear predictor z and in the count y, so "
    "no Lipschitz constant L bounds how far one row can move the minimiser (the "
    "strong-convexity sensitivity bound 2 L R / (n alpha) needs a finite L). Bounding it "
    "would need a bounded count and a bounded linear predictor, which this estimator "
    "does not enforce."
)

_POISSON_NOTES = THREAT_MODEL_DOC.split("    **Differential privacy view**")[0] + """\
    **Differential privacy view.** None: ``epsilon_`` is always ``inf`` and
    ``epsilon_reason_`` says why -- the derivative of the loss in the linear predictor,
    :math:`e^z - y`, is unbounded, so the Lipschitz argument behind the sensitivity of
    the other FIL estimators does not apply. :meth:`sigma_for_epsilon` raises. The FIL
    figures above (a local, unbiased-adversary measure) are what this estimator reports.

    **Objective conventions.** scikit-learn's
    :class:`~sklearn.linear_model.PoissonRegressor` minimises
    :math:`\\frac{1}{2 W} \\sum_i s_i\\, D(y_i, e^{z_i}) + \\frac{\\alpha}{2}
    \\lVert w \\rVert^2` with the unit Poisson deviance
    :math:`D(y, \\mu) = 2 (y \\log(y/\\mu) - y + \\mu)` and :math:`W = \\sum_i s_i`. Half the
    deviance is :math:`e^z - y z` plus a term free of :math:`z`, so that objective is this
    estimator's divided by :math:`W`: ``PoissonRegressor(alpha=a)`` and
    ``FILPoissonRegressor(alpha=a)`` have the same minimiser, with or without
    ``sample_weight``.
"""


class FILPoissonRegressor(RegressorMixin, BaseFILEstimator):
    __doc__ = """Poisson regression (log link) released with output perturbation, with its FIL.

    Minimises :math:`\\sum_i \\omega_i\\,[e^{z_i} - y_i z_i] + n\\alpha/2 \\lVert w \\rVert^2`
    (:math:`z_i = \\theta^\\top \\tilde x_i`, ``n`` the total sample weight, the intercept
    not penalised) to machine precision with Newton's method and releases the minimiser
    plus :math:`\\mathcal N(0, \\sigma^2 I)` noise. Predictions are the expected counts
    :math:`e^{z}`. The Fisher information loss of any subset of the training values
    (counts included, as the label) is available while the estimator is in memory
    (:attr:`eta_`, :meth:`eta`, :meth:`fisher_information`). For count targets (visits,
    claims, admissions) that are non-negative; ``y`` need not be integer.

    Parameters
    ----------
    sigma : float, default=1.0
        Standard deviation of the Gaussian noise added to every released parameter.
    alpha : float, default=1.0
        L2 penalty (penalty ``n alpha / 2 ||w||^2``); the same number as
        :class:`~sklearn.linear_model.PoissonRegressor`'s ``alpha`` (see Notes), whose
        default it shares. ``alpha=0`` needs a full-rank design.
        The penalty is per-sample: the objective is the (weighted) mean loss plus
        ``alpha / 2 ||w||^2``, so ``FILLinearRegression(alpha=a)`` has the minimiser of
        ``Ridge(alpha=n_samples * a)``, ``FILLogisticRegression(alpha=a)`` that of
        ``LogisticRegression(C=1 / (n_samples * a))`` and ``FILPoissonRegressor(alpha=a)``
        that of ``PoissonRegressor(alpha=a)`` (``n_samples``: the total sample weight).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (it is perturbed too).
    tol : float, default=1e-12
        Newton's method stops when the step is below ``tol`` relative to the parameters.
    max_iter : int, default=100
        Maximum number of Newton iterations.
    random_state : int, RandomState instance or None, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); a fixed seed makes the noise reproducible (tests only).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released (noise-perturbed) coefficients (on the log scale).
    intercept_ : float
        Released (noise-perturbed) intercept; 0.0 when ``fit_intercept=False``.
    eta_ : ndarray of shape (n_samples,)
        Per-example Fisher information loss (audit state, not serialised).
    n_iter_ : int
        Newton steps taken.
    epsilon_ : float
        Always ``inf`` (see Notes).
    sensitivity_ : float
        Always ``inf``.
    delta_ : float
        ``0.0`` (no guarantee is claimed at any delta).
    epsilon_reason_ : str
        Why there is no DP guarantee.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    FILLinearRegression : The same for least squares.
    sklearn_privacy.fil.audit : FIL of a fitted scikit-learn ``PoissonRegressor``.
{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.fil import FILPoissonRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3, 0.0] + 1.0))
    >>> reg = FILPoissonRegressor(sigma=0.01, alpha=1e-3, random_state=0).fit(X, y)
    >>> reg.coef_.round(1)
    array([ 0.5, -0.3,  0. ])
    >>> reg.predict(X[:2]).round(1)
    array([6.2, 5. ])
    >>> reg.epsilon_
    inf
    """.replace("{NOTES}", _POISSON_NOTES)

    _loss = POISSON
    _y_numeric = True

    _parameter_constraints: dict = {
        k: v for k, v in BaseFILEstimator._parameter_constraints.items()
        if k not in ("data_norm", "delta")
    }

    def __init__(self, sigma=1.0, *, alpha=1.0, fit_intercept=True, tol=1e-12,
                 max_iter=100, random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit the exact minimiser and release it with Gaussian noise.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Training data (converted once to a private float64 copy).
        y : array-like of shape (n_samples,)
            Non-negative targets (counts), with a positive weighted sum.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights :math:`\\omega_i` (they enter the Jacobians too).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if _dask.is_dask_collection(X) or _dask.is_dask_collection(y):
            raise TypeError(
                "FILPoissonRegressor does not take dask collections; compute X and y into "
                "memory (numpy or scipy.sparse) first."
            )
        return super().fit(X, y, sample_weight)

    # no data_norm / target_bound: nothing to bound
    data_norm = None

    def _encode_target(self, y, sample_weight):
        y = np.asarray(y, dtype=np.float64)
        if np.any(y < 0):
            raise ValueError(
                f"y: FILPoissonRegressor needs non-negative targets (counts); got "
                f"{int(np.count_nonzero(y < 0))} negative value(s), smallest {float(y.min())!r}."
            )
        if not np.sum(sample_weight * y) > 0:
            raise ValueError(
                "y: every target with positive sample_weight is 0, so the Poisson "
                "minimiser does not exist (the fitted mean is driven to 0, the intercept "
                "to -inf). Give at least one positive count."
            )
        return y

    def _bounded(self, X, y):
        return X, y

    def _fit_exact(self, X, y, sample_weight, theta_init=None):
        if theta_init is None and self.fit_intercept:
            # start at the intercept-only fit (log of the weighted mean count), as
            # scikit-learn does: Newton from 0 on exp(z) can take many damped steps
            theta_init = np.zeros(X.shape[1] + 1)
            theta_init[-1] = np.log(np.sum(sample_weight * y) / np.sum(sample_weight))
        msg = ("The unpenalised Poisson minimiser does not exist (or is not resolvable "
               "in floating point): some direction of the features only lowers the "
               "fitted mean of zero counts (e.g. a column that is non-zero only where "
               "y = 0), so Newton's method drives a coefficient towards -inf. Use a "
               "positive L2 penalty (alpha > 0).")
        try:
            out = super()._fit_exact(X, y, sample_weight, theta_init=theta_init)
        except SingularHessianError as exc:
            if "separable" not in str(exc):
                raise
            raise SingularHessianError(msg) from exc
        if self.alpha == 0:
            # Without a penalty the iterations can stall on a flat direction (the
            # Jacobi-equilibrated Hessian hides it): a zero count fitted with a mean
            # below 1e-10 of the average count marks a coefficient running to -inf.
            mu = out[2].l2  # l'' = exp(z), the fitted means
            mean = np.sum(sample_weight * y) / np.sum(sample_weight)
            zero = (y == 0) & (sample_weight > 0)
            if np.any(mu[zero] < 1e-10 * mean):
                raise SingularHessianError(msg)
        return out

    def _account(self, sample_weight, gradient_norm=None):
        self.sensitivity_ = float("inf")
        self.certified_distance_ = float("inf")
        self.epsilon_ = float("inf")
        self.delta_ = 0.0
        self.epsilon_reason_ = POISSON_EPSILON_REASON

    def sigma_for_epsilon(self, epsilon: float, delta: float | None = None) -> float:
        """Not available: the Poisson release has no DP guarantee.

        Parameters
        ----------
        epsilon : float
            Target privacy loss (ignored).
        delta : float or None, default=None
            Target delta (ignored).

        Returns
        -------
        sigma : float
            Never returns.

        Raises
        ------
        ValueError
            Always, with ``epsilon_reason_``.
        """
        check_is_fitted(self)
        raise ValueError(f"sigma_for_epsilon: {self.epsilon_reason_}")

    def score(self, X, y, sample_weight=None):
        """D^2, the fraction of Poisson deviance explained (as ``PoissonRegressor``).

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            Non-negative true counts.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            ``1 - D(y, predict(X)) / D(y, mean(y))`` with the Poisson deviance ``D``.
        """
        from sklearn.metrics import d2_tweedie_score

        return d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight, power=1)

    def predict(self, X):
        """Predict expected counts with the released (perturbed) parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``exp(X @ coef_ + intercept_)``.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False, accept_sparse=["csr", "csc"])
        return np.exp(np.asarray(X @ self.coef_).ravel() + self.intercept_)


_POISSON_TOL = """    tol : float, default=1e-12
        Tolerance of each Newton solve, as in :class:`FILPoissonRegressor`.
"""
_POISSON_EXTRA = """    max_iter : int, default=100
        Maximum Newton iterations per fit.
"""
_POISSON_DP_ATTRS = """    epsilon_ : float
        Always ``inf``: neither the Poisson loss (see :class:`FILPoissonRegressor`) nor
        data-dependent weights admit the sensitivity bound.
    sensitivity_ : float
        Always ``inf``.
    delta_ : float
        ``0.0``.
    epsilon_reason_ : str
        Why there is no DP guarantee.
"""


class IRFILPoissonRegressor(_IRFILMixin, FILPoissonRegressor):
    _parameter_constraints: dict = {
        **FILPoissonRegressor._parameter_constraints,
        **_IRFILMixin._irfil_constraints,
    }

    def __init__(self, sigma=1.0, *, alpha=1.0, fit_intercept=True, tol=1e-12, max_iter=100,
                 eta_max_iter=10, eta_tol=None, sensitive_features=None, constrained=False,
                 store_eta=False, weight_bounds=None, verbose=0, random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.eta_max_iter = eta_max_iter
        self.eta_tol = eta_tol
        self.sensitive_features = sensitive_features
        self.constrained = constrained
        self.store_eta = store_eta
        self.weight_bounds = weight_bounds
        self.verbose = verbose
        self.random_state = random_state


IRFILPoissonRegressor.__doc__ = (
    """Poisson regression (log link) with iteratively reweighted FIL.
""" + _IRFIL_DOC.format(alpha_default="1.0", extra_params=_POISSON_TOL + _POISSON_EXTRA,
                        tol_param="", base="FILPoissonRegressor", dp_params="",
                        dp_attrs=_POISSON_DP_ATTRS).replace(
        "\n    (``data_norm`` still scales the rows). The audit state",
        "\n    (nor does the Poisson loss admit one). The audit state").replace(
        " Called ``tol`` before version 0.3.", "") + """
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.fil import FILPoissonRegressor, IRFILPoissonRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3, 0.0] + 1.0))
    >>> plain = FILPoissonRegressor(alpha=1e-2, random_state=0).fit(X, y)
    >>> fair = IRFILPoissonRegressor(alpha=1e-2, eta_max_iter=10, random_state=0).fit(X, y)
    >>> cv = lambda e: e.std() / e.mean()
    >>> bool(cv(fair.eta_) < 0.05 < cv(plain.eta_))
    True
    """
)
