"""Logistic and least-squares regression released by objective perturbation."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._glm._bounds import BOUNDING_STATE, record_bounding
from .._glm._rows import _scale_rows, private_copy
from ..exceptions import NoiseDominatesWarning
from ..mechanisms import _objective_perturbation as obj
from ..mechanisms import _sufficient_statistics as ssp
from ..privacy._tradeoff import RiskTarget
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    OUTSIDE_LABELS_STATE,
    encode_declared_labels,
    errors_name,
    label_set_sentence,
    validate_named,
    void_outside_labels,
    zero_rows,
)
from ..utils.fixes import Interval, StrOptions, _fit_context
from ._noise_plan import (
    LOSE_TO_CONSTANT_GRAM_RATIO,
    LOSE_TO_CONSTANT_RATIO,
    auto_alpha,
    noise_to_signal_ratio,
)
from ._params import _COMMON_ATTRS, _COMMON_PARAMS, _THREAT_MODEL


def _draw(the_plan, n_params, n, rng):
    """The noise of one release: ``(b, threshold, certified distance, residual noise)``,
    ``b`` and the residual noise drawn in this order; the threshold and the distance
    (hence the residual noise's scale) are fixed by public quantities only."""
    b = obj.draw_objective_noise(rng, the_plan, (n_params,))
    distance = obj.public_radius(the_plan, n_params, n)
    threshold = distance * the_plan["penalty"]
    residual = obj.gamma_norm_vector(rng, n_params, distance / the_plan["epsilon_residual"])
    return b, threshold, distance, residual


def _private_design(X, X_in, fit_intercept, intercept_scaling):
    """The estimator's own copy of the rows with the constant column appended.

    Dense rows are copied once, straight into the ``(n, d + 1)`` array (the caller's
    array is never written to); sparse rows go through ``private_copy``.
    """
    if sp.issparse(X) or not fit_intercept:
        X = private_copy(X, X_in)
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            if fit_intercept:
                col = sp.csr_matrix(np.full((X.shape[0], 1), float(intercept_scaling)))
                X = sp.hstack([X, col], format="csr")
        return X
    n, d = X.shape
    out = np.empty((n, d + 1))
    out[:, :d] = X
    out[:, d] = float(intercept_scaling)
    return out


def _fast_bounded_rows(X, data_norm):
    """``X`` itself when every row is inside the ``data_norm`` ball by a margin (one
    fused pass over a dense ``X``), else ``None`` (the caller scales the rows)."""
    if sp.issparse(X):
        return None
    sq = np.einsum("ij,ij->i", X, X)
    top = float(np.max(sq, initial=0.0))
    if np.isfinite(top) and top <= (data_norm * (1.0 - 1e-9)) ** 2:
        return X
    return None


class _BaseObjectivePerturbation(BaseEstimator):
    """Shared fit of the objective-perturbation estimators (not for direct use)."""

    #: fit records fit_provenance_: a missing record makes the claim inf
    _records_fit_provenance = True

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
    }

    _loss = None
    _y_numeric = False

    def _n_classes(self):
        return 2

    def _loss_name(self):
        return self._loss

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the perturbed objective and release its certified minimiser.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Training rows (a private float64 copy is taken; rows above ``data_norm``,
            the intercept column included, are scaled to it).
        y : array-like of shape (n_samples,)
            Class labels (classifier) or real targets (regressor).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X_in = X
        y, outside = self._void_outside_labels(y)
        X, y = validate_named(self, X, y, dtype=np.float64, y_numeric=self._y_numeric,
                              accept_sparse=["csr", "csc"])
        if self.data_norm is None:
            raise ValueError(
                f"{type(self).__name__}: data_norm is required (a declared bound on the "
                "L2 norm of every row, the intercept column included); the noise is "
                "calibrated to it. Choose it from public knowledge of the features' "
                "ranges (e.g. after sklearn_privacy.preprocessing.BoundedScaler), not "
                "from the rows.")
        n, d = X.shape
        X = _private_design(X, X_in, self.fit_intercept, self.intercept_scaling)
        X = zero_rows(X, None if outside is None else ~outside)
        y = self._encode_target(y)
        self._check_bounds_params()
        K = self._n_classes()
        p_row = d + int(self.fit_intercept)
        n_params = p_row * (K if self._loss_name() == "multinomial" else 1)
        loss = self._loss_name()
        if self._uses_ssp():  # sufficient statistics (DPLinearRegression)
            the_plan, noise = self._ssp_noise(n, d)
            X = self._bounded_rows(X)
            y = self._bounded_target(y)
            self._fit_ssp(X, y, d, the_plan, noise)
            record_fit_provenance(self, certificate=True)
            return self
        # ---- everything up to the noise draws uses public quantities only
        tb = self._target_half_width()
        kw = dict(loss=loss, epsilon=self._epsilon_value(), delta=float(self.delta), n=n,
                  data_norm=float(self.data_norm), n_classes=K, target_bound=tb)
        alpha = (auto_alpha(n_params=n_params, **kw) if isinstance(self.alpha, str)
                 else float(self.alpha))
        the_plan = self._noise_plan(alpha=alpha, **kw)
        warn_shared_noise(type(self).__name__, self.random_state, stacklevel=3)
        noise = _draw(the_plan, n_params, n, noise_generator(self.random_state))
        self._warn_if_noise_dominates(the_plan, n_params, n, alpha)
        # ---- now the rows
        X = self._bounded_rows(X)
        y = self._bounded_target(y)
        self._audit_data = (X, y, d, K, alpha, the_plan)
        self._solve_and_release(noise)
        record_fit_provenance(self, certificate=bool(np.isfinite(self.epsilon_)))
        return self

    def _solve_and_release(self, noise):
        """Minimise the perturbed objective on the bounded rows and set the release."""
        X, y, d, K, alpha, the_plan = self._audit_data
        b, threshold, distance, residual = noise
        steps = obj.fallback_steps(the_plan, float(np.linalg.norm(b)), X.shape[0], distance)
        theta, _, n_iter = obj.minimise(
            self._loss_name(), X, y, the_plan["penalty"], b, X.shape[0],
            threshold=threshold, max_iter=int(self.max_iter),
            huber_threshold=the_plan["huber_threshold"], n_classes=K,
            fallback=(obj.smoothness(the_plan), steps))
        self.n_iter_ = max(int(n_iter), 1)
        self._set_release(theta + residual, d, K)
        self.alpha_ = alpha
        self.penalty_ = float(the_plan["penalty"])
        self.noise_scale_ = float(the_plan["noise_scale"])
        self.certified_distance_ = float(distance)
        self.delta_ = float(self.delta)
        # certified whatever the rows: Newton's test, else the accelerated phase's
        # data-independent step count (see _objective.py)
        self._account(the_plan, True, threshold)

    def _redraw_release(self, random_state):
        """Audit hook: this fit released again with the noise of ``random_state``.

        A copy of the estimator whose ``coef_``/``intercept_`` are those of
        ``clone(self).set_params(random_state=random_state).fit(X, y)`` on the same
        rows (the same draws, the same solver), without validating and bounding the
        rows again; :func:`sklearn_privacy.attacks.canary_audit` (``refit=False``) uses
        it. The bounded rows are audit state kept in memory for it, never pickled.

        Parameters
        ----------
        random_state : int, RandomState, Generator or None
            Seed of the new noise draws.

        Returns
        -------
        release : estimator
            A new fitted estimator of the same class.
        """
        check_is_fitted(self)
        if "_audit_data" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__} was loaded from a pickle: the training rows are "
                "never serialised. Refit it to redraw releases.")
        X, y, d, K, alpha, the_plan = self._audit_data
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.random_state = random_state
        n_params = X.shape[1] * (K if self._loss_name() == "multinomial" else 1)
        new._solve_and_release(_draw(the_plan, n_params, X.shape[0],
                                     noise_generator(random_state)))
        record_fit_provenance(new, certificate=bool(np.isfinite(new.epsilon_)))
        return new

    def _void_outside_labels(self, y):
        """``(y, None)``: a regressor's targets are bounded, not labels (the classifier
        overrides this with the declared-classes rule)."""
        return y, None

    def _noise_plan(self, **kwargs):
        """The data-independent plan of :func:`._objective.plan` (a hook for audits)."""
        return obj.plan(**kwargs)

    def _check_bounds_params(self):
        """Extra validation (least squares: target_bound)."""

    def _target_half_width(self):
        """``B`` of the loss (least squares); ``None`` for the classifier."""
        return None

    def _uses_ssp(self):
        return False

    def _bounded_target(self, y):
        return y

    def _bounded_rows(self, X):
        """Rows above ``data_norm`` scaled to it, silently (their number goes to the
        private channel ``_bounding_counts``, never pickled)."""
        inside = _fast_bounded_rows(X, float(self.data_norm))
        if inside is not None:
            record_bounding(self, rows_scaled=0)
            return inside
        return _scale_rows(X, float(self.data_norm), owner=self)

    def _warn_if_noise_dominates(self, the_plan, n_params, n, alpha):
        """NoiseDominatesWarning when the public noise-to-signal ratio exceeds
        ``LOSE_TO_CONSTANT_RATIO`` (see :func:`noise_to_signal_ratio`)."""
        ratio = noise_to_signal_ratio(
            obj.expected_noise_norm(the_plan, n_params), n=n, zeta=the_plan["zeta"],
            n_params=n_params)
        self._warn_noise_ratio(ratio, n)

    def _warn_noise_ratio(self, ratio, n, threshold=None, what=None):
        threshold = LOSE_TO_CONSTANT_RATIO if threshold is None else threshold
        if ratio <= threshold:
            return
        what = what or "the largest signal a row can carry per parameter"
        advice = "a larger epsilon, more rows or fewer features"
        if float(self.delta) == 0.0:
            advice += ", or delta > 0 (Gaussian noise grows more slowly with the number " \
                      "of features)"
        warnings.warn(
            f"{type(self).__name__}: at epsilon={self._epsilon_value()!r}, delta="
            f"{float(self.delta)!r} with {int(n)} rows and {self._n_released_params()} "
            f"released parameters, the privacy noise is {ratio:.3g} times {what} "
            f"(expected to lose to a constant prediction above {threshold}; computed "
            f"from these public quantities only, not from the rows). Use {advice}.",
            NoiseDominatesWarning, stacklevel=5)

    def _n_released_params(self):
        k = len(getattr(self, "classes_", ())) if self._loss_name() == "multinomial" else 1
        return (int(self.n_features_in_) + int(self.fit_intercept)) * max(k, 1)

    def _epsilon_value(self) -> float:
        """``epsilon``, or for a :class:`~sklearn_privacy.privacy.RiskTarget` the largest
        epsilon whose (epsilon, ``delta``) claim meets it (the mechanism's guarantee is an
        (epsilon, delta) pair, so its trade-off curve is read from that pair)."""
        if isinstance(self.epsilon, RiskTarget):
            return self.epsilon.epsilon(float(self.delta))
        return float(self.epsilon)

    def _account(self, the_plan, certified, threshold):
        eps = self._epsilon_value()
        what = ("pure epsilon-DP" if self.delta == 0 else
                f"(epsilon, delta) = ({eps!r}, {float(self.delta)!r})-DP")
        if the_plan["noise"] == "gamma":
            noise = (f"noise b of density proportional to exp(-eps' ||b|| / (2 zeta)), "
                     f"eps' = {the_plan['epsilon_noise']:.6g}")
        else:
            noise = (f"Gaussian noise b of standard deviation {the_plan['noise_scale']:.6g}"
                     f" (its privacy loss at most {the_plan['epsilon_noise']:.6g} with "
                     f"probability 1 - {the_plan['delta_objective']:.6g})")
        extra = (f"; Algorithm 2's extra penalty {the_plan['extra_penalty']:.6g} was added"
                 if the_plan["extra_penalty"] > 0 else "")
        reason = (
            f"{what} for replacing the values of any one row (n, the features, the label "
            f"set and every parameter public), rows with L2 norm at most data_norm = "
            f"{float(self.data_norm)!r} (intercept column included): objective "
            f"perturbation with gradient bound zeta = {the_plan['zeta']:.6g}, curvature "
            f"bound c = {the_plan['curvature']:.6g}, penalty Lambda = "
            f"{the_plan['penalty']:.6g}{extra}, Jacobian term "
            f"{the_plan['epsilon_jacobian']:.6g}, {noise}; the solver's centre is "
            "certified close to the exact perturbed minimiser and released with residual "
            f"noise costing 2 x {the_plan['epsilon_residual']:.3g}.")
        if not certified:
            self.epsilon_ = np.inf
            self.epsilon_reason_ = (
                "no DP guarantee: the solver stopped before its centre could be certified "
                "close to the exact perturbed minimiser (gradient norm above the "
                f"certificate's threshold after max_iter={self.max_iter!r} Newton "
                "steps); increase max_iter." + self._noise_note())
            return
        self.epsilon_ = eps
        self.epsilon_reason_ = reason + self._noise_note()

    def _noise_note(self):
        rs = self.random_state
        if rs is None:
            return " epsilon_ assumes fresh noise: random_state=None draws it from OS entropy."
        # the seed itself is not printed: the text outlives a cleared random_state
        return (" epsilon_ assumes fresh noise, but random_state was set (not None), "
                "which makes the noise reproducible or shared by clones: this release is "
                "not private as published; use random_state=None.")

    def __sklearn_privacy_claim__(self):
        """The step claim: ``dp`` with ``(epsilon_, delta_)``, or ``non_private``."""
        from ..privacy import StepClaim
        check_is_fitted(self)
        name = type(self).__name__
        if not np.isfinite(self.epsilon_):
            return StepClaim("", name, "non_private", np.inf, 0.0, self.epsilon_reason_)
        reason = self.epsilon_reason_ + label_set_sentence(self)
        return StepClaim("", name, "dp", float(self.epsilon_), float(self.delta_), reason)

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``).

        ``coef_`` and ``intercept_`` are the mechanism's output; ``alpha_``,
        ``penalty_``, ``noise_scale_`` (and ``huber_threshold_``) are functions of the
        parameters and the number of rows (public); the claim attributes are set from
        the parameters. ``certified_distance_`` is a function of the parameters and
        ``n``. ``n_iter_`` and the bounded rows are left out of the pickle.
        ``classes_`` is public only when declared with ``classes=``.
        """
        kinds = {"coef_": "dp", "intercept_": "dp", "alpha_": "constant",
                 "penalty_": "constant", "noise_scale_": "constant",
                 "certified_distance_": "constant", "epsilon_": "constant", "delta_": "constant",
                 "epsilon_reason_": "constant"}
        if "classes_" in self.__dict__:
            declared = getattr(self, "classes", None)
            if declared is None:
                kinds["classes_"] = ("rows", "the label set found in y: one row with a "
                                     "new label changes classes_ and the shape of coef_; "
                                     "pass classes=[...] (the public label set)")
            elif not (np.array_equal(np.unique(np.asarray(declared)), self.classes_)
                      and np.asarray(declared).dtype == self.classes_.dtype):
                kinds["classes_"] = ("rows", "classes_ differs from the declared classes")
            else:
                kinds["classes_"] = "public"
        return kinds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = True
        return tags

    @property
    def eta_(self):
        """Not available: objective perturbation has no closed-form Fisher information loss.

        Raises
        ------
        AttributeError
            Always, with the reason (see the class Notes).
        """
        raise AttributeError(
            f"{type(self).__name__} reports no Fisher information loss (eta_): the release "
            "is not the exact minimiser plus data-independent noise (the noise passes "
            "through the data's Hessian), so the closed form of the output-perturbed "
            "estimators does not apply. Use FILLogisticRegression / FILLinearRegression "
            "for per-example eta; this estimator's guarantee is epsilon_ (and delta_).")

    def __getstate__(self):
        # n_iter_ depends on the rows and no privacy analysis covers it; the bounded
        # rows are audit state: never pickled
        state = dict(super().__getstate__())
        for key in ("n_iter_", "_audit_data", BOUNDING_STATE, OUTSIDE_LABELS_STATE):
            state.pop(key, None)
        return state


class DPLogisticRegression(ClassifierMixin, _BaseObjectivePerturbation):
    __doc__ = """Logistic regression released by objective perturbation (pure or (eps, delta)-DP).

    Two classes: the logistic loss on ``y`` encoded 0/1 (``classes_[1]`` is 1). More
    classes: the multinomial (softmax) loss on all ``K`` rows of the coefficient matrix,
    each penalised (the minimiser is the symmetric one, as scikit-learn's). The noise is
    set from ``epsilon``, ``delta``, ``data_norm``, ``n`` and the number of parameters
    before any row is read: no private fit chooses it.

    Parameters
    ----------
{PARAMS}    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, declared. ``None``: ``classes_`` is the set of labels
        found in ``y``, which one row can change (a new label adds a row to ``coef_``),
        so :func:`~sklearn_privacy.privacy_claim` is ``inf``. Declared: ``classes_`` is
        these labels in sorted order whatever ``y`` holds (a label that no row has keeps
        its coefficients, pulled to zero by the penalty; the intercept is penalised, so
        the minimiser exists), and more than two labels select the multinomial loss. A
        row whose label is outside them (any value, ``NaN`` included) stays in the data
        set (``n`` unchanged) with all-zero features, the intercept column included:
        there the logistic and multinomial losses are the constant ``log K``, so the row
        adds nothing to the objective's gradient or Hessian, and the release is the one
        without that row's loss (the sum still divided by ``n``). The map acts on each
        row on its own and lands in the declared domain (norm 0 <= ``data_norm``), so two
        neighbours stay neighbours and the guarantee holds as derived (the gradient
        difference is at most ``zeta <= 2 zeta``, the Hessian difference one row's).
        How many rows were outside is kept in the private channel
        ``_labels_outside_classes`` (never pickled), without a warning; no label value
        makes the fit fail.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels: ``classes`` (sorted) when declared, else those found in ``y``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Released coefficients.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released intercepts (zeros without intercept).
{ATTRS}
    See Also
    --------
    DPLinearRegression : The same for least squares.
    sklearn_privacy.FILLogisticRegression : Output perturbation, with Fisher information
        loss.
{NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.linear_model import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, delta=0.0, data_norm=1.5,
    ...                            classes=[0, 1]).fit(X, y)
    >>> clf.epsilon_, clf.delta_
    (1.0, 0.0)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """.replace("{PARAMS}", _COMMON_PARAMS).replace("{ATTRS}", _COMMON_ATTRS).replace(
        "{NOTES}", _THREAT_MODEL)

    _parameter_constraints = {
        **_BaseObjectivePerturbation._parameter_constraints,
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon=1.0, *, delta=1e-5, data_norm=None, alpha="auto",
                 fit_intercept=True, intercept_scaling=1.0, max_iter=100,
                 random_state=None, classes=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.random_state = random_state
        self.classes = classes

    def _n_classes(self):
        return len(self.classes_)

    def _loss_name(self):
        return "multinomial" if len(self.classes_) > 2 else "logistic"

    def _encode_target(self, y):
        with errors_name("y"):
            check_classification_targets(y)
            if self.classes is not None:
                return self._encode_declared(y)
            classes, idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs y with at least 2 classes, got "
                             f"{classes.size} class(es).")
        self.classes_ = classes
        return idx.astype(np.float64) if classes.size == 2 else idx.astype(np.intp)

    def _void_outside_labels(self, y):
        """The declared-classes rule (see ``void_outside_labels``): a row with a label
        outside ``classes`` keeps its place and gets all-zero features (the intercept
        column included), where the logistic and multinomial losses are ``log K`` for
        every parameter: it adds a constant to the objective and nothing to its gradient
        or Hessian."""
        if self.classes is None:
            return y, None
        return void_outside_labels(self, self.classes, y)

    def _encode_declared(self, y):
        """``y`` against the declared label set ``classes`` (sorted): a row may hold any
        declared label (or no row a label), never another one."""
        classes, idx = encode_declared_labels(self.classes, y)
        self.classes_ = classes
        return idx.astype(np.float64) if classes.size == 2 else idx.astype(np.intp)

    def _largest_coef_norm(self, lam):
        """``||theta*||^2 <= 2 log K / Lambda`` (the objective at 0 is log K)."""
        return float(np.sqrt(2.0 * np.log(len(self.classes_)) / lam))

    def _set_release(self, theta, d, K):
        s = float(self.intercept_scaling)
        if len(self.classes_) > 2:
            Theta = theta.reshape(K, -1)
            self.coef_ = np.ascontiguousarray(Theta[:, :d])
            self.intercept_ = s * Theta[:, d] if self.fit_intercept else np.zeros(K)
        else:
            self.coef_ = theta[None, :d].copy()
            self.intercept_ = np.array([s * theta[d] if self.fit_intercept else 0.0])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def decision_function(self, X):
        """Compute the log-odds (two classes) or class scores of the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``X @ coef_.T + intercept_`` (one column for two classes, raveled).
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False,
                           accept_sparse=["csr", "csc"])
        if len(self.classes_) > 2:
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict_proba(self, X):
        """Class probabilities under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return softmax(z, axis=1)
        return np.column_stack([expit(-z), expit(z)])

    def predict_log_proba(self, X):
        """Log class probabilities under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities in the order of ``classes_``, without underflow.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return log_softmax(z, axis=1)
        return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])

    def predict(self, X):
        """Class labels under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The class of the largest score.
        """
        z = self.decision_function(X)
        if z.ndim == 2:
            return self.classes_[np.argmax(z, axis=1)]
        return self.classes_[(z > 0).astype(int)]


class DPLinearRegression(RegressorMixin, _BaseObjectivePerturbation):
    __doc__ = """Least squares released with pure or (eps, delta)-DP.

    Two mechanisms, chosen with ``method``:

    * ``"ssp"`` (default): sufficient-statistics perturbation with an adaptive ridge
      (AdaSSP, Wang 2018). The smallest eigenvalue of ``X^T X``, ``X^T X`` and ``X^T y``
      of the bounded rows are released with noise (Gaussian for ``delta > 0``, composed
      exactly through one analytic Gaussian mechanism; Laplace and K-norm noise for
      ``delta = 0``), and the ridge solution of the noisy statistics is released.
      Sensitivities ``R^2``, ``sqrt 2 R^2`` and ``2 R B`` (``R`` = ``data_norm``, ``B``
      the half width of the target bounds); the derivation is in the module docstring of
      ``sklearn_privacy/mechanisms/_sufficient_statistics.py`` and the tests check it against brute
      force over replace-one pairs. No solver certificate is needed: the release is a
      closed form of the noisy statistics.
    * ``"objective"``: objective perturbation of the mean squared loss (halved) plus
      ``alpha / 2 ||w||^2``, with the loss quadratic in residuals up to ``M =
      target_bound (1 + data_norm k)`` (``k = max_(s <= data_norm) s / (s^2 +
      Lambda)``), which bounds every residual of a noiseless ridge fit, and linear
      beyond (Huber): objective perturbation needs a bounded gradient, and without noise
      the minimiser is exactly the ridge solution ``Ridge(alpha=n * alpha)``.

    On the three regression tables of ``benchmarks/bench_dp_linear_recipes.py``
    ``"ssp"`` at ``delta=1e-5`` has a higher median R^2 than ``"objective"`` (pure) at
    every epsilon from 0.5 to 8 (see the user guide's publishing page).

    Parameters
    ----------
{PARAMS}    target_bound : float > 0 or (low, high)
        Declared bounds on ``y`` (required; targets outside are clipped with a
        :class:`~sklearn_privacy.exceptions.PrivacyWarning`). A float ``B`` means ``[-B,
        B]``; a pair ``(low, high)`` is centred on its midpoint (with ``fit_intercept``,
        which absorbs the shift), so that ``B = (high - low) / 2``.
    method : {"ssp", "objective"}, default="ssp"
        The mechanism (see above). With ``"ssp"``, ``alpha="auto"`` is AdaSSP's ridge
        (``alpha_`` = that ridge over ``n``, a function of the released noisy smallest
        eigenvalue) and a number ``alpha`` fixes the ridge ``n * alpha``; ``max_iter``
        is not used.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    huber_threshold_ : float
        ``M`` (a function of ``target_bound``, ``data_norm`` and ``penalty_``);
        ``method="objective"`` only.
{ATTRS}
    See Also
    --------
    DPLogisticRegression : Objective perturbation for classification.
    sklearn_privacy.FILLinearRegression : Output perturbation, with Fisher information loss.
{NOTES}
    With ``method="ssp"`` the mechanism paragraph above is replaced by the one of this
    class's description, the guarantee and threat model are the same, ``penalty_`` is
    ``alpha_``, ``noise_scale_`` is the noise scale of ``X^T X`` (standard deviation, or
    the Gamma scale of the norm for ``delta=0``), ``n_iter_`` is 1 (a closed form) and
    there is no certificate (``certified_distance_`` is not set).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.linear_model import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = np.clip(X @ [0.8, -0.5] + 0.1 * rng.normal(size=5000), -1, 1)
    >>> reg = DPLinearRegression(epsilon=2.0, data_norm=2.0, target_bound=1.0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.5), reg.epsilon_
    (True, 2.0)
    """.replace("{PARAMS}", _COMMON_PARAMS).replace("{ATTRS}", _COMMON_ATTRS).replace(
        "{NOTES}", _THREAT_MODEL)

    _loss = "huber"
    _y_numeric = True
    _parameter_constraints = {
        **_BaseObjectivePerturbation._parameter_constraints,
        "target_bound": [Interval(Real, 0, None, closed="neither"), tuple, list, None],
        "method": [StrOptions({"ssp", "objective"})],
    }

    def __init__(self, epsilon=1.0, *, delta=1e-5, data_norm=None, alpha="auto",
                 fit_intercept=True, intercept_scaling=1.0, max_iter=100,
                 random_state=None, target_bound=None, method="ssp"):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.random_state = random_state
        self.target_bound = target_bound
        self.method = method

    # ------------------------------------------------------------ declared target bounds
    def _target_interval(self):
        """``(low, high)`` of the declared target bounds (checked)."""
        tb = self.target_bound
        if isinstance(tb, (tuple, list)):
            if len(tb) != 2 or not all(isinstance(v, Real) and np.isfinite(v) for v in tb) \
                    or not float(tb[0]) < float(tb[1]):
                raise ValueError(
                    f"target_bound must be a float > 0 or a pair (low, high) of finite "
                    f"numbers with low < high; got {tb!r}.")
            return float(tb[0]), float(tb[1])
        return -float(tb), float(tb)

    def _target_centre(self):
        low, high = self._target_interval()
        return 0.5 * (low + high) if self.fit_intercept else 0.0

    def _target_half_width(self):
        low, high = self._target_interval()
        c = self._target_centre()
        return max(high - c, c - low)

    def _encode_target(self, y):
        return np.asarray(y, dtype=np.float64)

    def _check_bounds_params(self):
        if self.target_bound is None:
            raise ValueError(
                "DPLinearRegression: target_bound is required (declared bounds on y, a "
                "float B for [-B, B] or a pair (low, high); the noise is calibrated to "
                "it). Choose it from public knowledge of the target's range, not from the "
                "rows.")
        self._target_interval()

    def _bounded_target(self, y):
        low, high = self._target_interval()
        outside = (y < low) | (y > high)
        # silently: the count goes to the private channel (a warning would depend on a row)
        record_bounding(self, targets_clipped=np.count_nonzero(outside))
        if np.any(outside):
            y = np.clip(y, low, high)
        return y - self._target_centre()

    def _largest_coef_norm(self, lam):
        return self._target_half_width() * obj.ridge_norm_factor(lam, float(self.data_norm))

    def _set_release(self, theta, d, K):
        self.coef_ = theta[:d].copy()
        self.intercept_ = (float(self.intercept_scaling) * float(theta[d])
                           + self._target_centre() if self.fit_intercept else 0.0)

    def _account(self, the_plan, certified, threshold):
        self.huber_threshold_ = float(the_plan["huber_threshold"])
        super()._account(the_plan, certified, threshold)

    # ---------------------------------------------------------------- the SSP release
    def _uses_ssp(self):
        return self.method == "ssp"

    def _ssp_noise(self, n, d):
        """The plan and the noise draws of the SSP release (public quantities only), and
        the warning when the release is expected to lose to a constant."""
        p = d + int(self.fit_intercept)
        the_plan = ssp.ssp_plan(epsilon=self._epsilon_value(), delta=float(self.delta),
                                data_norm=float(self.data_norm),
                                target_bound=self._target_half_width(), n_params=p)
        warn_shared_noise(type(self).__name__, self.random_state, stacklevel=4)
        noise = ssp.draw_ssp_noise(noise_generator(self.random_state), the_plan)
        # the Gram noise's spectral norm against the Gram matrix's mean eigenvalue bound
        # n R^2 / p (its trace is at most n R^2): public quantities only
        R = float(self.data_norm)
        ratio = ssp.spectral_noise_bound(the_plan) / (n * R * R / p)
        self._warn_noise_ratio(
            ratio, n, LOSE_TO_CONSTANT_GRAM_RATIO,
            "the mean eigenvalue a Gram matrix of rows bounded by data_norm can have")
        return the_plan, noise

    def _fit_ssp(self, X, y, d, the_plan, noise):
        """The release from the bounded rows and targets."""
        for key in ("huber_threshold_", "certified_distance_"):
            self.__dict__.pop(key, None)
        self._audit_data = ("ssp", ssp.sufficient_statistics(X, y), d, X.shape[0],
                            the_plan)
        self._release_ssp(noise)

    def _release_ssp(self, noise):
        _, stats, d, n, the_plan = self._audit_data
        coef, lam, _ = ssp.ssp_release(stats, noise, the_plan, n=n, alpha=self.alpha)
        self._set_release(coef, d, 1)
        self.alpha_ = self.penalty_ = lam / n
        self.n_iter_ = 1  # a closed form
        self.noise_scale_ = float(the_plan["scales"][1])
        self.delta_ = float(self.delta)
        self.epsilon_ = self._epsilon_value()
        if the_plan["noise"] == "gaussian":
            how = (f"Gaussian noise of standard deviations {the_plan['scales'][0]:.6g}, "
                   f"{the_plan['scales'][1]:.6g} and {the_plan['scales'][2]:.6g}, composed "
                   f"exactly as one analytic Gaussian mechanism of ratio "
                   f"{the_plan['mu']:.6g}")
            what = (f"(epsilon, delta) = ({self._epsilon_value()!r}, {float(self.delta)!r})"
                    "-DP")
        else:
            how = (f"Laplace noise of scale {the_plan['scales'][0]:.6g} and K-norm noise of "
                   f"scales {the_plan['scales'][1]:.6g} and {the_plan['scales'][2]:.6g} "
                   f"(budget shares {ssp.SHARES}, basic composition)")
            what = "pure epsilon-DP"
        low, high = self._target_interval()
        self.epsilon_reason_ = (
            f"{what} for replacing the values of any one row (n, the features and every "
            f"parameter public), rows with L2 norm at most data_norm = "
            f"{float(self.data_norm)!r} (intercept column included) and targets clipped "
            f"to [{low!r}, {high!r}]: sufficient-statistics perturbation (AdaSSP) of "
            "lambda_min(X^T X), X^T X and X^T y with sensitivities "
            + ", ".join(f"{v:.6g}" for v in the_plan["sensitivities"])
            + f", {how}; the ridge solution is post-processing." + self._noise_note())

    def _redraw_release(self, random_state):
        """Audit hook: this fit released again with the noise of ``random_state`` (see
        the parent class); the bounded rows' statistics are kept in memory for it."""
        check_is_fitted(self)
        data = self.__dict__.get("_audit_data")
        if data is None or data[0] != "ssp":
            return super()._redraw_release(random_state)
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.random_state = random_state
        new._release_ssp(ssp.draw_ssp_noise(noise_generator(random_state), data[4]))
        record_fit_provenance(new, certificate=True)
        return new

    def __sklearn_privacy_claim__(self):
        """The step claim; the Gaussian SSP release is one analytic Gaussian mechanism,
        so its ratio ``mu`` is passed on for composition through privacy-loss
        distributions (a function of ``epsilon`` and ``delta`` only)."""
        claim = super().__sklearn_privacy_claim__()
        if (claim.kind == "dp" and "huber_threshold_" not in self.__dict__
                and float(self.delta) > 0):
            from ..mechanisms._gaussian import analytic_gaussian_sigma
            from ..privacy import StepClaim

            mu = 1.0 / analytic_gaussian_sigma(self._epsilon_value(), float(self.delta), 1.0)
            return StepClaim(claim.name, claim.estimator, claim.kind, claim.epsilon,
                             claim.delta, claim.reason, gaussian_mu=float(mu))
        return claim

    def __sklearn_privacy_attributes__(self):
        """Kinds of the published fitted attributes (see ``sklearn_privacy.privacy``):
        those of the classifier, and ``huber_threshold_`` (from the parameters and the
        public number of rows); with ``method="ssp"`` the ridge (``alpha_``,
        ``penalty_``) is post-processing of the released noisy statistics."""
        kinds = dict(super().__sklearn_privacy_attributes__())
        if "huber_threshold_" in self.__dict__:
            kinds["huber_threshold_"] = "constant"
        else:
            kinds["alpha_"] = kinds["penalty_"] = "dp"
        if "certified_distance_" not in self.__dict__:   # no solver, no certificate (ssp)
            kinds.pop("certified_distance_", None)
        return kinds

    def predict(self, X):
        """Predict with the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``X @ coef_ + intercept_``.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False,
                           accept_sparse=["csr", "csc"])
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
