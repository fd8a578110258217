"""Shared machinery of the output-perturbed GLMs: fitting, release, audit state."""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._glm._bounds import (  # noqa: F401  (dense_row_norms, row_scale_factors: re-exported)
    BOUNDING_STATE,
    dense_row_norms,
    record_bounding,
    row_scale_factors,
)
from .._glm._core import fit_minimiser
from .._glm._rows import _scale_rows, private_copy
from ..mechanisms._laplace_norm import laplace_norm_fisher_sigma, laplace_norm_noise
from ..mechanisms._output_perturbation import (
    analytic_gaussian_epsilon,
    minimiser_sensitivity,
)
from ..privacy._tradeoff import RiskTarget
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    OUTSIDE_LABELS_STATE,
    errors_name,
    label_set_sentence,
    validate_named,
    zero_rows,
)
from ..utils._weights import weights_are_public
from ..utils.fixes import (
    Interval,
    _check_sample_weight,
    _fit_context,
    register_process_pool_reducer,
)
from ._audit_methods import FILAuditMixin
from ._dask import BACKEND as _dask
from ._eta._engine import FILEngine
from ._noise_plan import FILNoisePlanMixin, certificate_threshold


def _unit_weights(account_weights, n_rows):
    """Unit weights in the form ``_account`` reads: a vector, or a dask summary."""
    if isinstance(account_weights, np.ndarray):
        return np.ones(account_weights.shape[0])
    from ._dask import WeightSummary

    return WeightSummary(float(n_rows), 1.0)


def _rebuild_with_audit_state(cls, state):
    """Inverse of :func:`_reduce_with_audit_state`."""
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def _reduce_with_audit_state(estimator):
    """The whole estimator, audit state included: for joblib's process pool only.

    Registered for every FIL estimator class in the pool's own pickler (see
    ``utils.fixes.register_process_pool_reducer``), so the estimators that
    ``cross_validate(..., n_jobs=2, return_estimator=True)`` or a parallel search fit in a
    worker come back auditable. Every other pickle goes through ``__getstate__``, which
    drops the audit state.
    """
    return _rebuild_with_audit_state, (type(estimator), dict(estimator.__dict__))


class BaseFILEstimator(FILAuditMixin, FILNoisePlanMixin, BaseEstimator):
    """Base class of the output-perturbed GLMs (not for direct use).

    It holds what the FIL estimators share: parameter validation, the fit template
    (validation, encoding, sample weights, then the model's own solver), the Gaussian
    output perturbation, the (epsilon, delta) view and the FIL audit methods
    (:attr:`eta_`, :meth:`eta`, :meth:`fisher_information`, :meth:`sigma_for_eta`).
    Use it to recognise a FIL estimator; fit one of its subclasses.

    See Also
    --------
    sklearn_privacy.FILLinearRegression : Least squares with output perturbation.
    sklearn_privacy.FILLogisticRegression : Logistic regression with output perturbation.

    Examples
    --------
    >>> from sklearn_privacy import FILLogisticRegression, IRFILLinearRegression
    >>> from sklearn_privacy.fil._base import BaseFILEstimator
    >>> isinstance(FILLogisticRegression(), BaseFILEstimator)
    True
    >>> isinstance(IRFILLinearRegression(), BaseFILEstimator)
    True
    """

    #: fit records fit_provenance_: a missing record makes the claim inf
    _records_fit_provenance = True

    _parameter_constraints: dict = {
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), None],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither"), None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    }

    _loss = None  # GLMLoss, set by subclasses
    _y_numeric = False  # validate y as numeric (regressors)
    _coef_2d = False  # coef_ of shape (1, n_features), intercept_ of shape (1,) (classifiers)
    _data_dependent_weights = False  # IRFIL: the weights are a function of the data

    # ------------------------------------------------------------------ fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the exact minimiser and release it with Gaussian noise.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC), dask array} of shape \
                (n_samples, n_features)
            Training data (converted once to a private float64 copy). A
            :class:`dask.array.Array` chunked along its rows is read chunk by chunk and
            never loaded whole (user guide: "Scaling out").
        y : array-like of shape (n_samples,)
            Targets: real values for the regressors, exactly two classes for the
            classifiers.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights :math:`\\omega_i` (they enter the Jacobians too). For
            the IRFIL estimators they are the starting weights, read as numbers of
            identical individuals. Weights are data unless declared public with
            :func:`~sklearn_privacy.utils.public_weights`: undeclared weights are used
            in the fit, but ``epsilon_`` is ``inf`` and ``sensitivity_`` and the noise
            are those of unit weights (nothing published reads the weights).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        declared = weights_are_public(sample_weight)
        if _dask.is_dask_collection(X):
            if self._penalised_intercept():
                raise ValueError(
                    "intercept_scaling is not supported for dask input; append a constant "
                    "column to X yourself and use fit_intercept=False.")
            X, y, sw, account_weights = self._prepare_dask(X, y, sample_weight)
        else:
            X_in = X
            y, outside = self._void_outside_labels(y)
            X, y = validate_named(self, X, y, dtype=np.float64, y_numeric=self._y_numeric,
                                  accept_sparse=["csr", "csc"])
            X = private_copy(X, X_in)
            sw = self._validated_sample_weight(sample_weight, X)
            y = self._encode_target(y, sw)
            X = self._with_intercept_column(X)
            X = zero_rows(X, None if outside is None else ~outside)
            X, y = self._bounded(X, y)
            account_weights = sw
        if not declared:  # row-dependent weights: nothing published may read them
            account_weights = _unit_weights(account_weights, X.shape[0])
        self._plan_noise(X.shape[1], account_weights)
        self.__dict__.pop("_eta_cache", None)
        self._warn_shared_noise()
        theta = self._fit(X, y, sw)
        theta, by_count = self._finish_to_certificate(X, y, sw, account_weights, theta)
        self._release(theta)
        self._account(account_weights,
                      gradient_norm=(lambda: 0.0) if by_count else
                      (lambda: self._objective_gradient_norm(X, y, sw, theta)))
        if not declared:
            self._void_for_undeclared_weights()
        record_fit_provenance(self)
        return self

    def _prepare_dask(self, X, y, sample_weight):
        """Validation, encoding and bounding of dask input (see :mod:`._dask`).

        Returns ``(X, y, sample_weight, account_weights)``: ``X`` and ``y`` lazy and
        bounded (``data_norm`` / ``target_bound`` applied chunk by chunk, with the
        warnings of the in-memory path), the weights for ``_fit`` (``None``, a numpy
        vector or a dask column; an in-memory vector for IRFIL, whose reweighting
        updates all ``n`` of them) and what ``_account`` reads of them.
        """
        X, y, sw, account_weights = _dask.prepare(self, X, y, sample_weight)
        X, y = _dask.bounded(self, X, y)
        if self._data_dependent_weights:
            sw = _dask.weights_in_memory(sw, X.shape[0])
        return X, y, sw, account_weights

    def _bounded(self, X, y):
        """Rows scaled to norm ``data_norm`` (and targets clipped to ``target_bound``).

        Both act row by row, so a DP guarantee for the bounded data is also one for the
        caller's data; the fitted model and its audit figures describe the bounded data.
        """
        record_bounding(self, rows_scaled=0)
        if self.data_norm is not None:
            X = _scale_rows(X, float(self.data_norm), owner=self)
        bound = getattr(self, "target_bound", None)
        if bound is not None:
            outside = np.abs(y) > bound
            record_bounding(self, targets_clipped=np.count_nonzero(outside))
            if np.any(outside):
                y = np.clip(y, -bound, bound)
        return X, y

    def _account(self, sample_weight, gradient_norm=None):
        """``sensitivity_``, ``certified_distance_``, ``epsilon_`` and ``epsilon_reason_``.

        ``gradient_norm`` is a callable returning the norm of the gradient of the
        normalised objective at the fitted centre (see :meth:`_objective_gradient_norm`);
        it is compared with the data-independent threshold of :func:`certificate_threshold`
        and never stored.
        """
        sensitivity, reason = minimiser_sensitivity(
            loss=self._dp_loss_name(), alpha=self._alpha_value(), data_norm=self.data_norm,
            fit_intercept=self._solver_intercept(), sample_weight=sample_weight,
            target_bound=getattr(self, "target_bound", None),
            data_dependent_weights=self._data_dependent_weights)
        self.sensitivity_ = float(sensitivity)
        self.certified_distance_ = np.inf
        if np.isfinite(sensitivity):
            tau = certificate_threshold(sensitivity, self._alpha_value(), sample_weight)
            achieved = np.inf if gradient_norm is None else float(gradient_norm())
            if achieved <= tau:
                self.certified_distance_ = tau / self._alpha_value()
                reason += (
                    f" The released centre is certified within {self.certified_distance_!r}"
                    " (tau / alpha) of the exact minimiser: the normalised objective's "
                    f"gradient norm there is at most tau = {tau!r}, a threshold fixed by "
                    "the public parameters; epsilon_ uses sensitivity_ + 2 "
                    "certified_distance_.")
            else:
                sensitivity = np.inf
                reason = (
                    "no DP guarantee: the solver stopped before the centre it releases "
                    "could be certified close to the exact minimiser (gradient norm of "
                    f"the normalised objective above tau = {tau!r}; tol="
                    f"{self._newton_tol()!r}, max_iter={getattr(self, 'max_iter', None)!r}),"
                    " so sensitivity_ does not bound how far one row moves the release. "
                    "Use the default tol and a larger max_iter.")
        total = sensitivity + 2.0 * self.certified_distance_
        if self.noise_ == "laplace-norm":
            with np.errstate(over="ignore"):
                self.epsilon_ = float(total / self.noise_scale_) if np.isfinite(total) \
                    else np.inf
            self.delta_ = 0.0
            if np.isfinite(total):
                reason += (
                    f" The noise is Laplace-norm (density proportional to exp(-||b|| / s), "
                    f"s = {self.noise_scale_!r}: direction uniform, norm Gamma(p, s)), so the"
                    " release is pure epsilon-DP (delta = 0) with epsilon = (sensitivity_ + "
                    "2 certified_distance_) / s.")
        else:
            self.epsilon_ = (analytic_gaussian_epsilon(
                delta=float(self.delta), sigma=self._sigma_fit, sensitivity=total)
                if np.isfinite(total) else np.inf)
            self.delta_ = float(self.delta)
        if self._penalised_intercept() and np.isfinite(sensitivity):
            reason += (f" The intercept is the coefficient of a constant column of value "
                       f"intercept_scaling = {self.intercept_scaling!r}, penalised like the "
                       "others and counted in data_norm; intercept_ = intercept_scaling * "
                       "that coefficient (post-processing).")
        target = getattr(self, "epsilon", None)
        if isinstance(target, RiskTarget) and np.isfinite(self.epsilon_):
            reason += (f" The noise was set from the risk target {target} before the rows "
                       "were read (Gaussian noise: mu = sensitivity / sigma meets it exactly"
                       "; Laplace-norm noise: the largest pure epsilon that meets it).")
        self.epsilon_reason_ = reason + self._noise_note()

    def _finish_to_certificate(self, X, y, sw, account_weights, theta):
        """Certification that no row decides: ``(theta, certified_by_count)``.

        When the solver's centre fails the certificate's gradient test, accelerated
        gradient steps continue from it (or from 0, whichever has the smaller objective)
        until the test passes or a step count fixed by public quantities is reached, at
        which the centre is within ``tau / alpha`` of the exact minimiser whatever the
        rows (exact arithmetic). Proof: the normalised objective ``G`` is
        ``alpha``-strongly convex and ``L``-smooth with ``L = c R^2 + alpha`` (``c`` =
        1/4 logistic, 1 least squares, for rows of norm at most ``R``); ``||grad G(0)||
        <= g0 R`` (``g0`` = 1 logistic, ``target_bound`` least squares) bounds
        ``G(0) - G*`` by ``(g0 R)^2 / (2 alpha)``; Nesterov's constant-momentum scheme
        then gives ``||x_k - theta*||^2 <= 2 (1 - q)^k (g0 R / alpha)^2`` with ``q =
        sqrt(alpha / L)`` (the same argument as for objective perturbation in
        ``sklearn_privacy/mechanisms/_objective_perturbation.py``; multinomial: ``c = 1/2``,
        Boehning's bound). A dask fit runs the same steps, each gradient and objective
        value one pass over the row chunks (``_dask.normalised_objective``), so whether
        its release is certified, and what it claims, does not depend on the rows either.
        """
        K = len(getattr(self, "classes_", ()))
        multinomial = K > 2 and self._loss.name == "logistic"
        on_dask = _dask.is_dask_collection(X)
        if (sp.issparse(theta) or np.ndim(theta) != 1
                or self._loss.name not in ("logistic", "squared")):
            return theta, False
        sensitivity, _ = minimiser_sensitivity(
            loss=self._dp_loss_name(), alpha=self._alpha_value(), data_norm=self.data_norm,
            fit_intercept=self._solver_intercept(), sample_weight=account_weights,
            target_bound=getattr(self, "target_bound", None),
            data_dependent_weights=self._data_dependent_weights)
        if not np.isfinite(sensitivity):
            return theta, False
        alpha = self._alpha_value()
        tau = certificate_threshold(sensitivity, alpha, account_weights)
        if self._objective_gradient_norm(X, y, sw, theta) <= tau:
            return theta, False
        R = float(self.data_norm)
        logistic = self._loss.name == "logistic"
        g0 = 1.0 if logistic else float(self.target_bound)
        # Hessian bounds of a row's loss: 1/4, 1 and 1/2 (Boehning) times R^2
        L = (0.5 if multinomial else 0.25 if logistic else 1.0) * R * R + alpha
        q = float(np.sqrt(alpha / L))
        radius, d0 = tau / alpha, g0 * R / alpha
        steps = int(np.ceil(np.log(max(2.0 * d0 * d0 / (radius * radius), 1.0))
                            / -np.log1p(-q)))
        if on_dask:  # binary or least squares only (multinomial fits are in memory)
            value, grad = _dask.normalised_objective(self, X, y, sw)
        elif multinomial:
            from scipy.special import log_softmax

            total = float(np.sum(sw))
            rows, labels = np.arange(X.shape[0]), np.asarray(y).astype(np.intp)

            def grad(t):
                logp = log_softmax(np.asarray(X @ t.reshape(K, -1).T), axis=1)
                P = np.exp(logp)
                P[rows, labels] -= 1.0
                return np.asarray(X.T @ (sw[:, None] * P)).T.ravel() / total + alpha * t

            def value(t):
                logp = log_softmax(np.asarray(X @ t.reshape(K, -1).T), axis=1)
                return (-float(sw @ logp[rows, labels]) / total
                        + 0.5 * alpha * float(t @ t))
        else:
            total = float(np.sum(sw))

            def grad(t):
                z = np.asarray(X @ t, dtype=np.float64).ravel()
                return np.asarray(X.T @ (sw * self._loss.derivatives(z, y)[0])).ravel() \
                    / total + alpha * t

            def value(t):
                z = np.asarray(X @ t, dtype=np.float64).ravel()
                return float(sw @ self._loss.value(z, y)) / total \
                    + 0.5 * alpha * float(t @ t)

        x = np.asarray(theta, dtype=np.float64).copy()
        if not value(x) <= value(np.zeros_like(x)):
            x = np.zeros_like(x)
        beta = (1.0 - q) / (1.0 + q)
        z = x.copy()
        for k in range(1, steps + 1):
            x_new = z - grad(z) / L
            z = x_new + beta * (x_new - x)
            x = x_new
            if k % 8 == 0 and self._objective_gradient_norm(X, y, sw, x) <= tau:
                break
        if on_dask:
            self._audit = _dask.engine_at(self, X, y, sw, x)
        elif multinomial:
            from ._eta._multinomial import MultinomialFILEngine

            self._audit = MultinomialFILEngine(
                X, y, x, n_classes=K, alpha=alpha, fit_intercept=self.fit_intercept,
                sample_weight=sw)
        else:
            self._audit = FILEngine(X, y, x, loss=self._loss, alpha=alpha,
                                    fit_intercept=self._solver_intercept(),
                                    sample_weight=sw, copy=False)
        return x, True

    def _void_for_undeclared_weights(self):
        """``epsilon_`` inf: ``sample_weight`` was passed without being declared public."""
        self.epsilon_ = np.inf
        self.epsilon_reason_ = (
            "no DP guarantee: sample_weight was passed without being declared public, so "
            "it is treated as data (weights computed from the rows, such as "
            "compute_sample_weight('balanced', y) or group sizes, change when one row is "
            "replaced, and the sensitivity bound for fixed weights does not hold). "
            "sensitivity_ and the noise are those of unit weights (from n only). Declare "
            "weights fixed before the rows were seen with "
            "sklearn_privacy.utils.public_weights(sample_weight)." + self._noise_note())

    def _dp_loss_name(self) -> str:
        """The loss whose derivative bound the DP view uses (see ``minimiser_sensitivity``)."""
        return self._loss.name

    def _objective_gradient_norm(self, X, y, sample_weight, theta) -> float:
        """L2 norm of the gradient of ``(1/W) sum_i w_i l_i + (alpha/2)||theta||^2`` at
        ``theta`` (no intercept: the only case with a DP view), on the bounded data."""
        if _dask.is_dask_collection(X):
            g, total = _dask.objective_gradient(self, X, y, sample_weight, theta)
        else:
            z = X @ theta
            l1 = self._loss.derivatives(np.asarray(z, dtype=np.float64).ravel(), y)[0]
            total = float(np.sum(sample_weight))
            g = np.asarray(X.T @ (sample_weight * l1)).ravel()
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(np.linalg.norm(g / total + self._alpha_value() * theta))
        return value if np.isfinite(value) else np.inf

    def _noise_note(self) -> str:
        """What ``epsilon_`` assumes about the noise, and whether this fit's noise meets it."""
        rs = self.random_state
        if rs is None:
            return (" epsilon_ assumes fresh noise: random_state=None draws it from OS "
                    "entropy.")
        if isinstance(rs, (np.random.RandomState, np.random.Generator)):
            return (f" epsilon_ assumes fresh noise, but random_state is a "
                    f"{type(rs).__name__} instance: clones of this estimator (cross-"
                    "validation folds, a search's refit) copy its state and draw the same "
                    "noise, and its state is stored with the model. This release is not "
                    "private as published; use random_state=None.")
        # the seed itself is not printed: the text outlives a cleared random_state
        return (" epsilon_ assumes fresh noise, but random_state was set to an int seed, "
                "which makes the noise reproducible by anyone who knows or guesses it: "
                "this release is not private as published (fixed seeds are for tests and "
                "documentation); use random_state=None.")

    def _warn_shared_noise(self):
        """PrivacyWarning for a RandomState/Generator instance as ``random_state``."""
        warn_shared_noise(type(self).__name__, self.random_state, stacklevel=4)

    # ---------------------------------------------------- penalised intercept (DP view)
    def _penalised_intercept(self) -> bool:
        """Whether the intercept is the penalised coefficient of a constant column."""
        return bool(self.fit_intercept) and getattr(self, "intercept_scaling", None) is not None

    def _solver_intercept(self) -> bool:
        """Whether the solver fits an unpenalised intercept."""
        return bool(self.fit_intercept) and not self._penalised_intercept()

    def _with_intercept_column(self, X):
        """``X`` with a trailing column of ``intercept_scaling`` when the intercept is
        penalised (before ``data_norm``, so the bound applies to the augmented row)."""
        if not self._penalised_intercept():
            return X
        s = float(self.intercept_scaling)
        if sp.issparse(X):
            col = sp.csr_matrix(np.full((X.shape[0], 1), s))
            return sp.hstack([X, col], format="csr")
        return np.hstack([X, np.full((X.shape[0], 1), s)])

    def __sklearn_privacy_claim__(self):
        """The step claim of this release for :func:`sklearn_privacy.privacy_claim`.

        ``dp`` with ``(epsilon_, delta_)`` and ``gaussian_mu = (sensitivity_ + 2
        certified_distance_) / sigma`` when the DP view holds (the release is one Gaussian
        mechanism centred within ``certified_distance_`` of the exact minimiser),
        ``non_private`` with ``epsilon_reason_`` otherwise.
        """
        from ..privacy import StepClaim
        check_is_fitted(self)
        name = type(self).__name__
        if not np.isfinite(self.epsilon_):
            return StepClaim("", name, "non_private", np.inf, 0.0, self.epsilon_reason_)
        reason = self.epsilon_reason_ + label_set_sentence(self)
        if self.__dict__.get("noise_", "gaussian") != "gaussian":
            return StepClaim("", name, "dp", float(self.epsilon_), 0.0, reason)
        return StepClaim("", name, "dp", float(self.epsilon_), float(self.delta_), reason,
                         gaussian_mu=float(
                             (self.sensitivity_ + 2.0 * self.certified_distance_)
                             / self._sigma_fit))

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``).

        The released parameters are the Gaussian mechanism's output; the sensitivity, the
        certified distance and the claim are functions of the parameters and the number
        of rows (public); ``classes_`` is public only when declared with ``classes=``.
        """
        kinds = {"coef_": "dp", "intercept_": "dp", "_sigma_fit": "constant",
                 "sensitivity_": "constant", "certified_distance_": "constant",
                 "epsilon_": "constant", "delta_": "constant",
                 "epsilon_reason_": "constant", "_audit_stripped": "constant",
                 # the noise's kind and scale and the penalty used: functions of the
                 # parameters and the public n (set before the rows are read)
                 "noise_": "constant", "noise_scale_": "constant", "alpha_": "constant",
                 "_noise_plan": "constant", "_alpha_fit": "constant"}
        if "classes_" in self.__dict__:
            declared = getattr(self, "classes", None)
            if declared is None:
                kinds["classes_"] = ("rows", "the label set found in y: one row with a "
                                     "new label changes classes_ and the shape of coef_; "
                                     "pass classes=[...] (the public label set)")
            elif not (np.array_equal(np.asarray(declared), self.classes_)
                      and np.asarray(declared).dtype == self.classes_.dtype):
                kinds["classes_"] = ("rows", "classes_ differs from the declared classes")
            else:
                kinds["classes_"] = "public"
        return kinds

    def _void_outside_labels(self, y):
        """``(y, None)``: the regressors' targets are bounded, not labels (the
        classifier applies the declared-classes rule here)."""
        return y, None

    def _encode_target(self, y, sample_weight):
        """Validated ``y`` as the float64 target of the loss (regression: as given)."""
        return np.asarray(y, dtype=np.float64)

    def _fit(self, X, y, sample_weight):
        """Exact minimiser ``theta`` of the objective; sets the audit state."""
        theta, n_iter, engine = self._fit_exact(X, y, sample_weight)
        self._audit = engine
        if self._loss.name != "squared":
            self.n_iter_ = n_iter
        return theta

    def _validated_sample_weight(self, sample_weight, X):
        with errors_name("sample_weight"):
            sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if not np.all(np.isfinite(sw)):
            raise ValueError("sample_weight contains NaN or infinity; pass finite weights.")
        if np.any(sw < 0):
            raise ValueError("sample_weight must be non-negative; got negative weights.")
        if not np.any(sw > 0):
            raise ValueError("sample_weight: all weights are zero; at least one must be > 0.")
        return sw

    def _newton_tol(self):
        return getattr(self, "tol", 1e-12)

    def _fit_exact(self, X, y, sample_weight, theta_init=None):
        """Exact minimiser and its audit engine (``X`` must be private: see private_copy)."""
        if _dask.is_dask_collection(X):  # the same fit, by tree reductions over row chunks
            return _dask.fit_exact(self, X, y, sample_weight, theta_init=theta_init)
        # The fit hands over its last Hessian (and Cholesky factor): at theta for least
        # squares, at the last Newton iterate (within one step below ``tol``) for logistic
        # regression, so the audit engine does not build it a second time.
        theta, n_iter, hessian = fit_minimiser(
            X,
            y,
            loss=self._loss,
            alpha=self._alpha_value(),
            fit_intercept=self._solver_intercept(),
            sample_weight=sample_weight,
            theta_init=theta_init,
            tol=self._newton_tol(),
            max_iter=getattr(self, "max_iter", 100),
            return_hessian=True,
        )
        engine = FILEngine(
            X,
            y,
            theta,
            loss=self._loss,
            alpha=self._alpha_value(),
            fit_intercept=self._solver_intercept(),
            sample_weight=sample_weight,
            copy=False,
            hessian=hessian,
        )
        return theta, n_iter, engine

    def _perturbed(self, theta) -> np.ndarray:
        """``theta + N(0, sigma^2 I)``, the one noise draw of a release.

        The noise comes from :func:`sklearn_privacy.utils.noise_generator`: fresh OS
        entropy for ``random_state=None`` (numpy's global state is neither read nor
        advanced), the RandomState stream of an integer seed otherwise.
        """
        kind, scale = self._noise_for_release()
        rng = noise_generator(self.random_state)
        if kind == "gaussian":
            noise = rng.standard_normal(theta.shape)
        else:
            noise = laplace_norm_noise(rng, theta.size).reshape(theta.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            released = theta + scale * noise
        if not np.all(np.isfinite(released)):
            raise ValueError(
                f"the noise scale {scale!r} is so large that the released parameters "
                "overflow float64; use a smaller sigma (or a larger epsilon)."
            )
        self.noise_ = kind
        self.noise_scale_ = float(scale)
        # the FIL view: the Gaussian scale with the same Fisher information
        self._sigma_fit = (float(scale) if kind == "gaussian"
                           else laplace_norm_fisher_sigma(scale, theta.size))
        return released

    def _noise_for_release(self):
        """``(kind, scale)`` of the noise: planned from epsilon at fit, else ``sigma``."""
        plan = self.__dict__.get("_noise_plan")
        if plan is not None and getattr(self, "epsilon", None) is not None:
            return plan
        sigma = self.sigma
        return "gaussian", (1.0 if sigma is None else float(sigma))

    def _alpha_param(self):
        """``alpha`` with ``None`` resolved: ``"auto"`` when ``epsilon`` is set (a DP
        release), else ``1e-3`` (the FIL paper's setting)."""
        alpha = getattr(self, "alpha", None)
        if alpha is not None:
            return alpha
        return "auto" if getattr(self, "epsilon", None) is not None else 1e-3

    def _alpha_value(self) -> float:
        """The penalty of this fit: ``alpha``, or the value of the ``"auto"`` rule."""
        if isinstance(self._alpha_param(), str):
            return float(self.__dict__["_alpha_fit"])
        return float(self._alpha_param())

    def _n_released(self, n_columns: int) -> int:
        """Number of released parameters for ``n_columns`` solver columns."""
        per_class = int(n_columns) + int(self._solver_intercept())
        k = len(getattr(self, "classes_", ()))
        return per_class * k if k > 2 else per_class

    def _release(self, theta):
        """Set ``coef_``/``intercept_`` to ``theta + N(0, sigma^2 I)`` (see ``_perturbed``)."""
        released = self._perturbed(theta)
        d = self.n_features_in_
        if self._penalised_intercept():  # the constant column's coefficient, rescaled
            intercept = float(self.intercept_scaling) * float(released[d])
        else:
            intercept = float(released[d]) if self.fit_intercept else 0.0
        if self._coef_2d:  # as LogisticRegression
            self.coef_ = released[None, :d]
            self.intercept_ = np.array([intercept])
        else:  # as LinearRegression
            self.coef_ = released[:d]
            self.intercept_ = intercept

    def _redraw_release(self, random_state) -> BaseFILEstimator:
        """Audit hook: this fitted model released again with fresh noise.

        Output perturbation is a deterministic exact fit followed by one Gaussian draw, so
        a refit with ``random_state=random_state`` equals the exact minimiser of this fit
        passed once more through :meth:`_release` -- the same noise code as :meth:`fit`.
        This method does exactly that on a copy (the estimator itself is not changed;
        the copy shares the read-only audit state), which lets
        :func:`sklearn_privacy.attacks.canary_audit` (``refit=False``) draw tens of
        thousands of releases of the real mechanism without refitting. The copy's
        ``coef_``/``intercept_`` are bitwise those of ``clone(self).set_params(
        random_state=random_state).fit(X, y)`` on the same data; ``epsilon_`` and the
        other fitted attributes are this fit's.

        Parameters
        ----------
        random_state : int, RandomState, Generator or None
            Seed of the new noise draw (as the ``random_state`` parameter).

        Returns
        -------
        release : estimator
            A new fitted estimator of the same class.
        """
        theta = self._audit_engine().theta
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.random_state = random_state
        new._release(theta.copy())
        return new

    def _released_theta(self) -> np.ndarray:
        """The released parameters as one flat vector (intercept last when fitted)."""
        coef = np.ravel(self.coef_)
        if self._penalised_intercept():
            return np.r_[coef, np.ravel(self.intercept_)[:1] / float(self.intercept_scaling)]
        return np.r_[coef, np.ravel(self.intercept_)[:1]] if self.fit_intercept else coef

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ audit state
    # Where the audit state (training rows, exact minimiser, Hessian) may go:
    # - in memory: everywhere (deepcopy keeps it: a copy is not a release);
    # - between the processes of one joblib process pool (loky, the default backend of
    #   n_jobs in scikit-learn): yes, through the pool's own pickler only
    #   (``_reduce_with_audit_state``), so cross-validation and searches in parallel
    #   return auditable estimators;
    # - any other pickle (``pickle``, ``joblib.dump``, ``cloudpickle``) and the object
    #   ``strip_for_release`` publishes: never (``__getstate__`` below).
    # A model without it is audited again by ``fil.audit(model, X, y)``, which runs the
    # same fit (``_fit_exact`` and its ``FILEngine``) on the training rows.
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_process_pool_reducer(cls, _reduce_with_audit_state)

    def __getstate__(self):
        state = super().__getstate__()
        state = dict(state)
        # n_iter_ is data-dependent (neighbouring data sets can need different numbers
        # of iterations) and no privacy analysis covers it: audit state, like the rest
        for key in ("_audit", "_eta_cache", "n_iter_", BOUNDING_STATE,
                    OUTSIDE_LABELS_STATE):
            state.pop(key, None)
        if hasattr(self, "coef_"):
            state["_audit_stripped"] = True
        return state

    def __deepcopy__(self, memo):
        # An in-memory copy is not a release: keep the audit state.
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            setattr(new, key, copy.deepcopy(value, memo))
        return new

