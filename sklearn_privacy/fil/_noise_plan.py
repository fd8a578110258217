"""The noise plan of the FIL estimators: sigma (or the Laplace-norm scale) from epsilon and
public quantities, fitted or before any fit.

Everything here reads the hyperparameters, the number of rows and the declared bounds,
never the values of a row (the mechanisms' calibration is in
:mod:`sklearn_privacy.mechanisms._output_calibration`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyWarning
from ..mechanisms._output_calibration import (
    SWAMP_THRESHOLD,
    allowed_norm,
    auto_alpha,
    swamp_ratio,
)
from ..mechanisms._output_perturbation import (
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    minimiser_sensitivity,
)
from ..privacy._tradeoff import RiskTarget
from ..utils._warnings import warn_user

#: Certificate of the released centre: the gradient norm of the normalised objective must
#: be at most ``tau = L R max(_CERT_RELATIVE max(w) / W, _CERT_FLOOR)``, i.e. the centre is
#: within ``tau / alpha`` of the exact minimiser and the sensitivity grows by the factor
#: ``1 + max(_CERT_RELATIVE, _CERT_FLOOR W / max(w))``. The floor (about 64 float64 ulps of
#: the per-row gradient bound ``L R``) sits two to three orders of magnitude above the
#: gradient norms Newton's method reaches (measured 2e-19 to 2e-17 ``L R`` over n = 200 to
#: 30000, p = 5 to 300, alpha = 1e-4 to 1).
_CERT_RELATIVE = 1e-12
_CERT_FLOOR = 2.0**-46


def _target_epsilon(epsilon, delta) -> float:
    """``epsilon`` as a number; a :class:`RiskTarget` as the epsilon (at ``delta``) of the
    noise it sets: the pure epsilon meeting it for ``delta = 0``, else the epsilon of the
    Gaussian mechanism with ``mu = target.gaussian_mu()``."""
    if not isinstance(epsilon, RiskTarget):
        return float(epsilon)
    if float(delta) == 0.0:
        return epsilon.epsilon(0.0)
    return float(analytic_gaussian_epsilon(delta=float(delta), sigma=1.0,
                                           sensitivity=epsilon.gaussian_mu()))


def certificate_threshold(sensitivity: float, alpha: float, sample_weight) -> float:
    """The data-independent gradient threshold ``tau`` of the certificate.

    ``sensitivity = 2 L R max(w) / (W alpha)`` (finite), so ``L R`` is
    ``sensitivity alpha W / (2 max(w))``; ``tau`` depends only on the public ``L``,
    ``data_norm``, ``alpha`` and the weights' total and largest value, never on the rows.
    """
    share = float(np.max(sample_weight)) / float(np.sum(sample_weight))
    return 0.5 * sensitivity * alpha * max(_CERT_RELATIVE, _CERT_FLOOR / share)


class FILNoisePlanMixin:
    """The noise plan and ``sigma_for_epsilon`` of the FIL estimators.

    Mixed into :class:`~sklearn_privacy.fil._base.BaseFILEstimator`.
    """

    def sigma_for_epsilon(self, epsilon: float, delta: float | None = None, *,
                          n_samples=None, n_features=None, n_classes=2) -> float:
        """Smallest ``sigma`` making the release (epsilon, delta)-DP.

        Two routes, the same number. **Fitted** (``n_samples=None``): from the
        sensitivity ``sensitivity_`` of the fit (it depends on the data only through the
        number of rows / total and largest weight). **Data-independent** (``n_samples``
        given, fitted or not): from the parameters and ``n_samples`` alone (unit
        weights), before any row is read -- what ``epsilon=...`` does inside ``fit``.
        Both use the exact calibration of the analytic Gaussian mechanism (Balle & Wang
        2018) for the sensitivity plus twice the certified distance. The minimiser does
        not depend on ``sigma``, so ``set_params(sigma=...)`` and a fit release a model
        whose ``epsilon_`` equals ``epsilon`` at that ``delta``.

        For pure DP (``delta=0``) no Gaussian ``sigma`` exists: fit with
        ``epsilon=..., delta=0`` (Laplace-norm noise of scale sensitivity / epsilon).

        Parameters
        ----------
        epsilon : float > 0
            Target privacy loss.
        delta : float in (0, 1) or None, default=None
            Target delta (``None``: the estimator's ``delta``).
        n_samples : int or None, default=None
            Number of training rows, for the data-independent route.
        n_features : int or None, default=None
            Number of features (needed only with ``alpha="auto"``, whose value depends on
            the number of released parameters).
        n_classes : int, default=2
            Number of classes of a classifier (more than two: the multinomial bound).

        Returns
        -------
        sigma : float
            The noise scale, in the units of the released parameters.

        Raises
        ------
        ValueError
            When no DP guarantee holds for this estimator (the reason says why),
            ``delta=0``, or ``epsilon``/``delta``/``n_samples`` out of range.
        """
        delta = self.delta if delta is None else delta
        # the targets first: a bad epsilon or delta is named whatever else blocks
        if not (isinstance(epsilon, Real) and np.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}.")
        if not (isinstance(delta, Real) and 0 <= delta < 1):
            raise ValueError(f"delta must be a number in [0, 1); got {delta!r}.")
        if delta == 0:
            raise ValueError(
                "sigma_for_epsilon: delta=0 (pure DP) has no Gaussian sigma; fit with "
                "epsilon=..., delta=0 for Laplace-norm noise, or pass a delta in (0, 1).")
        if n_samples is None:
            check_is_fitted(self)
            distance = self.__dict__.get("certified_distance_", 0.0)
            if not (np.isfinite(self.sensitivity_) and np.isfinite(distance)):
                raise ValueError(f"sigma_for_epsilon: {self.epsilon_reason_}")
            return analytic_gaussian_sigma(epsilon, delta, self.sensitivity_ + 2.0 * distance)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an integer >= 1; got {n_samples!r}.")
        if isinstance(self._alpha_param(), str) and n_features is None:
            raise ValueError("n_features: alpha='auto' depends on the number of released "
                             "parameters; pass n_features (the columns the model sees).")
        multinomial = self._loss.name == "logistic" and int(n_classes) > 2
        per_class = (0 if n_features is None else int(n_features)) + int(bool(self.fit_intercept))
        plan = self._public_noise(
            epsilon, delta, n_eff=float(n_samples),
            n_params=per_class * (int(n_classes) if multinomial else 1),
            loss="multinomial" if multinomial else self._loss.name,
            n_classes=int(n_classes), sample_weight=np.ones(int(n_samples)))
        return plan["scale"]

    def _plan_noise(self, n_columns, sample_weight):
        """Resolve ``alpha`` and the noise from public quantities, before the fit.

        Reads the hyperparameters, the total and largest weight (the number of rows for
        unit weights), the number of released parameters and the declared bounds; never
        the values of a row. Sets ``alpha_`` and, with ``epsilon``, the noise
        (Gaussian for ``delta > 0``, Laplace-norm for ``delta = 0``); warns when the
        expected noise swamps every coefficient vector the penalty allows.
        """
        epsilon = getattr(self, "epsilon", None)
        delta = getattr(self, "delta", None)
        self._noise_plan = None
        if epsilon is None:
            if isinstance(self._alpha_param(), str):
                raise ValueError(
                    "alpha='auto' sets the penalty from epsilon, n and the declared bounds; "
                    "pass epsilon=... (and delta) for a DP release, or a number for alpha.")
            if delta is not None and float(delta) == 0.0:
                raise ValueError(
                    "delta=0 asks for pure epsilon-DP, which Gaussian noise of a given sigma "
                    "never gives (its epsilon at delta=0 is infinite). Pass epsilon=... "
                    "(with delta=0 the noise is Laplace-norm and pure), or a delta in (0, 1) "
                    "at which to report the epsilon of sigma.")
            self._alpha_fit = float(self._alpha_param())
            self.alpha_ = self._alpha_fit
            return
        if self.sigma is not None:
            raise ValueError(
                f"sigma={self.sigma!r} and epsilon={epsilon!r} both set the noise; pass one "
                "of them: epsilon (with delta) for a DP release whose noise is set from the "
                "data-independent sensitivity (leave sigma=None), or sigma to choose the "
                "noise scale yourself (leave epsilon=None).")
        sw = sample_weight  # an array, or the total/largest summary of a dask fit
        plan = self._public_noise(
            epsilon, delta, n_eff=float(np.sum(sw)) / float(np.max(sw)),
            n_params=self._n_released(n_columns), loss=self._dp_loss_name(),
            n_classes=len(getattr(self, "classes_", ())) or 2, sample_weight=sw)
        self._alpha_fit = self.alpha_ = plan["alpha"]
        self._noise_plan = (plan["kind"], plan["scale"])
        if plan["swamp_ratio"] > SWAMP_THRESHOLD:
            alpha_advice = ("" if isinstance(self._alpha_param(), str)
                            else ", a larger alpha (or alpha='auto')")
            warn_user(
                f"{type(self).__name__}: at epsilon={_target_epsilon(epsilon, delta)!r}, delta="
                f"{float(delta)!r} with {plan['n_eff']:.6g} rows and alpha="
                f"{plan['alpha']:.4g}, the expected norm of the noise is "
                f"{plan['swamp_ratio']:.3g} times the largest coefficient norm the "
                "penalty allows (above 0.35), so the released model may be no better "
                f"than a constant. Use a larger epsilon{alpha_advice}, or more rows.",
                PrivacyWarning)

    def _public_eta_bound(self, n_samples) -> float:
        """``sigma * max eta`` over every data set of ``n_samples`` rows (see
        :meth:`sigma_for_eta`)."""
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an integer >= 1; got {n_samples!r}.")
        if self._loss.name not in ("logistic", "squared") or (
                len(getattr(self, "classes_", ())) > 2):
            raise ValueError("sigma_for_eta(n_samples=...): the data-independent bound is "
                             "derived for binary logistic regression and least squares.")
        if isinstance(self._alpha_param(), str):
            raise ValueError("sigma_for_eta(n_samples=...) needs a number for alpha.")
        alpha = float(self._alpha_param())
        bound = getattr(self, "target_bound", None)
        sens, reason = minimiser_sensitivity(
            loss=self._loss.name, alpha=alpha, data_norm=self.data_norm,
            fit_intercept=self._solver_intercept(), sample_weight=np.ones(1),
            target_bound=bound, data_dependent_weights=self._data_dependent_weights)
        if not np.isfinite(sens):
            raise ValueError("sigma_for_eta(n_samples=...): no data-independent bound on "
                             f"eta without the DP view; there is {reason}")
        R = float(self.data_norm)
        L = sens * alpha / (2.0 * R)  # sensitivity = 2 L R / alpha for one unit weight
        curvature = 0.25 if self._loss.name == "logistic" else 1.0
        theta = allowed_norm(self._loss.name, alpha, R, bound)
        return float(np.hypot(curvature * R * theta + L, R) / (int(n_samples) * alpha))

    def _public_noise(self, epsilon, delta, *, n_eff, n_params, loss, n_classes=2,
                      sample_weight=None):
        """Penalty and noise of an epsilon-release from public quantities only.

        Returns a dict with ``alpha``, ``kind``, ``scale`` (sigma or the Laplace-norm
        scale), ``sensitivity`` (total: the minimiser's plus twice the certified
        distance), ``swamp_ratio`` and ``n_eff``. Raises when no DP view holds.
        """
        sw = np.ones(max(int(round(n_eff)), 1)) if sample_weight is None else sample_weight
        bound = getattr(self, "target_bound", None)
        alpha = self._alpha_param()
        if isinstance(alpha, str):
            missing = ("data_norm" if self.data_norm is None else
                       "target_bound" if loss == "squared" and bound is None else None)
            if missing:
                raise ValueError(
                    f"alpha='auto' needs the declared bound {missing} (the rule reads it); "
                    f"set {missing}, or pass a number for alpha.")
            alpha = auto_alpha(loss=loss, n_eff=n_eff, epsilon=_target_epsilon(epsilon, delta),
                               delta=float(delta), n_params=n_params,
                               data_norm=float(self.data_norm), target_bound=bound)
        alpha = float(alpha)
        sensitivity, reason = minimiser_sensitivity(
            loss=loss, alpha=alpha, data_norm=self.data_norm,
            fit_intercept=self._solver_intercept(), sample_weight=sw, target_bound=bound,
            data_dependent_weights=self._data_dependent_weights)
        if not np.isfinite(sensitivity):
            raise ValueError(
                f"epsilon={epsilon!r} asks for a DP release, but there is {reason}")
        tau = certificate_threshold(sensitivity, alpha, sw)
        total = sensitivity + 2.0 * tau / alpha
        if float(delta) == 0.0:
            kind, scale = "laplace-norm", total / _target_epsilon(epsilon, 0.0)
        elif isinstance(epsilon, RiskTarget):   # Gaussian DP: exact, sigma = total / mu
            kind, scale = "gaussian", total / epsilon.gaussian_mu()
        else:
            kind = "gaussian"
            scale = analytic_gaussian_sigma(float(epsilon), float(delta), total)
        ratio = swamp_ratio(kind=kind, scale=scale, n_params=n_params, loss=loss,
                            alpha=alpha, data_norm=float(self.data_norm),
                            target_bound=bound, n_classes=n_classes)
        return {"alpha": alpha, "kind": kind, "scale": float(scale), "sensitivity": total,
                "swamp_ratio": float(ratio), "n_eff": float(n_eff)}
