"""Output-perturbed binary logistic regression with Fisher information loss."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._glm._core import LOGISTIC
from .._glm._multinomial import fit_multinomial, one_hot
from ..utils._validation import (
    encode_declared_labels,
    errors_name,
    validate_named,
    void_outside_labels,
)
from . import _dask
from ._base import BaseFILEstimator
from ._eta._multinomial import MultinomialFILEngine
from ._params import (
    ALPHA_AUTO_DOC,
    DP_ATTRS_DOC,
    DP_PARAMS_EPS_DOC,
    EPSILON_CONSTRAINTS,
    INTERCEPT_SCALING_DOC,
    NOISE_ATTRS_DOC,
    SIGMA_DOC,
    THREAT_MODEL_DOC,
)


class FILLogisticRegression(ClassifierMixin, BaseFILEstimator):
    __doc__ = """Logistic regression (binary or multinomial) released with output perturbation.

    **Two classes.** Minimises :math:`\\sum_i \\omega_i\\,[\\log(1 + e^{z_i}) - y_i z_i] +
    n\\alpha/2 \\lVert w \\rVert^2` (:math:`z_i = \\theta^\\top \\tilde x_i`, ``y`` encoded
    0/1 with ``classes_[1]`` as 1) to machine precision with Newton's method and releases
    the minimiser plus :math:`\\mathcal N(0, \\sigma^2 I)` noise.

    **More than two classes** (``K`` classes, multinomial, as scikit-learn's
    :class:`~sklearn.linear_model.LogisticRegression`): minimises the softmax loss
    :math:`\\sum_i \\omega_i [\\log \\sum_k e^{z_{ik}} - z_{i y_i}] + n\\alpha/2
    \\lVert W \\rVert_F^2` with :math:`z_i = W x_i + b`, every row of ``W`` penalised and
    the ``K`` intercepts not. The loss is unchanged when one vector is added to every
    class; the released minimiser is the *symmetric* one (:math:`\\sum_k W_k = 0`, forced by
    the penalty, and :math:`\\sum_k b_k = 0`, the convention scikit-learn's solvers
    follow), which is unique. ``LogisticRegression(C=1 / (n alpha))`` has the same
    minimiser (``n`` the total sample weight). Gaussian noise is added to all ``K (d + 1)``
    released numbers (``K d`` without intercept). The label of row ``i`` enters its FIL as
    the one-hot vector restricted to changes that keep it summing to one: ``K - 1``
    coordinates in an orthonormal basis of the sum-zero vectors (column ``"label"`` of
    :meth:`eta`; ``K - 1`` values per row in :meth:`fisher_information`). The DP view
    uses :math:`L = \\sqrt 2` (:math:`\\lVert \\nabla_W l \\rVert_F = \\lVert
    \\mathrm{softmax}(z) - e_y \\rVert_2 \\lVert x \\rVert \\le \\sqrt 2 \\lVert x \\rVert`).
    The per-example etas are computed from the structure of the Jacobian (never one
    dense ``K (d + 1) x (d + K - 1)`` matrix per row); see the user guide, "Multiclass".

    The Fisher information loss of any subset of the training values is available while
    the estimator is in memory (:attr:`eta_`, :meth:`eta`, :meth:`fisher_information`).

    Parameters
    ----------
{SIGMA}    alpha : float, "auto" or None, default=None
        L2 penalty, the FIL paper's :math:`\\lambda` (penalty ``n alpha / 2 ||w||^2``).
        ``None``: ``"auto"`` when ``epsilon`` is set (a DP release; a fixed small
        penalty makes the noise swamp the model), else ``1e-3``, the FIL paper's
        setting.
{ALPHA_AUTO}        Linearly separable data need ``alpha > 0``.
        The penalty is per-sample: the objective is the (weighted) mean loss plus
        ``alpha / 2 ||w||^2``, so ``FILLinearRegression(alpha=a)`` has the minimiser of
        ``Ridge(alpha=n_samples * a)``, ``FILLogisticRegression(alpha=a)`` that of
        ``LogisticRegression(C=1 / (n_samples * a))`` and ``FILPoissonRegressor(alpha=a)``
        that of ``PoissonRegressor(alpha=a)`` (``n_samples``: the total sample weight).
    fit_intercept : bool, default=True
        Fit an intercept (it is perturbed too), unpenalised unless ``intercept_scaling``
        is given.
{INTERCEPT_SCALING}    tol : float, default=1e-12
        Newton's method stops when the step is below ``tol`` relative to the
        parameters. The DP view does not depend on it: the released centre must pass
        a fixed gradient certificate (see Notes), and a ``tol`` (or ``max_iter``) that
        stops the solver before makes ``epsilon_`` inf.
    max_iter : int, default=100
        Maximum number of Newton iterations (every step counts, including the cheap
        steps with a reused approximate Hessian that precede the last exact one).
{DP_PARAMS}    random_state : int, RandomState instance, Generator or None, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); a fixed seed makes the noise reproducible (tests only). An
        instance is copied by :func:`~sklearn.base.clone`, so clones draw the same noise:
        fitting with one emits a :class:`~sklearn_privacy.exceptions.PrivacyWarning`.
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, declared (as diffprivlib's ``classes``). ``None``:
        ``classes_`` is the set of labels found in ``y``, which one row can change (a
        new label adds a row to ``coef_``), so
        :func:`~sklearn_privacy.privacy_claim` is ``inf``. Declared: ``classes_`` is
        these labels in sorted order whatever ``y`` holds (a label that no row has
        keeps its coefficients, pulled to zero by the penalty). A row whose label is
        outside them, when the fit has a DP view (``data_norm`` set, no unpenalised
        intercept), stays in the data set (``n`` unchanged) and contributes nothing:
        its features become zeros (the penalised intercept column too), where the loss
        is ``log K`` for every parameter, so no label value makes the fit fail and the
        release is the one with that row's loss removed. This maps each row on its own
        to a row of the declared domain, so the replace-one guarantee holds as derived.
        How many rows did is kept in the private channel ``_labels_outside_classes``
        (never pickled), without a warning; their per-example eta is that of a row at
        the origin. Without a DP view such a label is refused with a ``ValueError`` that
        shows no value.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels: ``classes`` (sorted) when declared, else those found in ``y``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Released (noise-perturbed) coefficients (shaped as in
        :class:`~sklearn.linear_model.LogisticRegression`: one row for two classes, one
        row per class otherwise).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released (noise-perturbed) intercepts; zeros when ``fit_intercept=False``.
    eta_ : ndarray of shape (n_samples,)
        Per-example Fisher information loss (audit state, not serialised).
    n_iter_ : int
        Newton steps taken: steps with an approximate Hessian (formed in single
        precision for 64 or more dense parameters, reused while it converges fast)
        followed by Newton steps with the exact Hessian, usually one. Multinomial: the
        Newton steps after an L-BFGS start (exact-Hessian and chord steps, the last one
        exact). Data-dependent and not covered by ``epsilon_``: audit state, left out of
        pickles and :func:`~sklearn_privacy.utils.strip_for_release`.
{DP_ATTRS}{NOISE_ATTRS}    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    FILLinearRegression : The same for least squares.
    IRFILLogisticRegression : Reweights examples to equalise their eta.
{THREAT_MODEL_DOC}
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLogisticRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> clf = FILLogisticRegression(sigma=0.05, alpha=1e-2, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.8
    True
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> sigma = clf.sigma_for_eta(0.5)          # noise giving max per-example eta 0.5
    >>> float(clf.set_params(sigma=sigma).fit(X, y).eta_.max().round(6))
    0.5
    >>> y3 = np.digitize(X[:, 0] - X[:, 1], [-0.5, 0.5])   # three classes: multinomial
    >>> clf3 = FILLogisticRegression(sigma=0.05, alpha=1e-2, random_state=0).fit(X, y3)
    >>> clf3.coef_.shape, clf3.intercept_.shape, clf3.predict_proba(X[:2]).shape
    ((3, 2), (3,), (2, 3))
    >>> clf3.eta(rows=[0], columns="label", per_example=True).shape
    (1,)
    """.replace("{THREAT_MODEL_DOC}", THREAT_MODEL_DOC).replace(
        "{DP_PARAMS}", DP_PARAMS_EPS_DOC).replace("{DP_ATTRS}", DP_ATTRS_DOC).replace(
        "{NOISE_ATTRS}", NOISE_ATTRS_DOC).replace("{SIGMA}", SIGMA_DOC).replace(
        "{ALPHA_AUTO}", ALPHA_AUTO_DOC).replace(
        "{INTERCEPT_SCALING}", INTERCEPT_SCALING_DOC)

    _loss = LOGISTIC
    _coef_2d = True
    _parameter_constraints: dict = {**BaseFILEstimator._parameter_constraints,
                                    "classes": ["array-like", None],
                                    **EPSILON_CONSTRAINTS}

    def __init__(self, sigma=None, *, alpha=None, fit_intercept=True, intercept_scaling=None,
                 tol=1e-12, max_iter=100, data_norm=None, epsilon=None, delta=1e-5,
                 random_state=None, classes=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.data_norm = data_norm
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.classes = classes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the penalised intercept (intercept_scaling) is implemented for two classes only
        tags.classifier_tags.multi_class = getattr(self, "intercept_scaling", None) is None
        return tags

    def _is_multinomial(self) -> bool:
        """True when fitted (or being fitted) on more than two classes."""
        return len(getattr(self, "classes_", ())) > 2

    def _fit_exact(self, X, y, sample_weight, theta_init=None):
        """Binary: the base fit. Multinomial: Newton on the softmax objective."""
        if not self._is_multinomial():
            return super()._fit_exact(X, y, sample_weight, theta_init=theta_init)
        if _dask.is_dask_collection(X):  # pragma: no cover - refused in _dask.prepare
            raise ValueError("Multiclass (multinomial) fits need the data in memory.")
        K = len(self.classes_)
        theta, n_iter, hessian, factor = fit_multinomial(
            X, one_hot(y.astype(np.intp), K), alpha=self._alpha_value(),
            fit_intercept=self.fit_intercept, sample_weight=sample_weight,
            theta_init=theta_init, tol=self._newton_tol(),
            max_iter=getattr(self, "max_iter", 100), return_factor=True)
        engine = MultinomialFILEngine(
            X, y, theta, n_classes=K, alpha=self._alpha_value(),
            fit_intercept=self.fit_intercept, sample_weight=sample_weight,
            hessian=hessian, factor=factor)
        return theta, n_iter, engine

    def _release(self, theta):
        """Binary: the base release. Multinomial: noise on all ``K (d + 1)`` numbers.

        ``theta`` is the row-major ``K x (d + 1)`` matrix ``[coef | intercept]`` (``K x
        d`` without intercept); ``coef_`` is ``(K, d)`` and ``intercept_`` ``(K,)``
        (zeros, not released, when ``fit_intercept=False``), as in scikit-learn.
        """
        if not self._is_multinomial():
            return super()._release(theta)
        released = self._perturbed(theta)
        K, d = len(self.classes_), self.n_features_in_
        Theta = released.reshape(K, d + int(self.fit_intercept))
        self.coef_ = np.ascontiguousarray(Theta[:, :d])
        self.intercept_ = Theta[:, d].copy() if self.fit_intercept else np.zeros(K)

    def _released_theta(self) -> np.ndarray:
        """The released parameters in the layout of the audit engine's ``theta``."""
        if not self._is_multinomial():
            return super()._released_theta()
        if self.fit_intercept:
            return np.column_stack([self.coef_, self.intercept_]).ravel()
        return np.ravel(self.coef_)

    def _dp_loss_name(self) -> str:
        """The loss of the DP view: the multinomial gradient norm is at most sqrt(2)||x||."""
        return "multinomial" if self._is_multinomial() else super()._dp_loss_name()

    def _objective_gradient_norm(self, X, y, sample_weight, theta) -> float:
        """Multinomial: ``||(1/W) X^T (w (P - Y)) + alpha Theta||_F`` (no intercept, the
        only case with a DP view), the certificate of the released centre."""
        if not self._is_multinomial():
            return super()._objective_gradient_norm(X, y, sample_weight, theta)
        K = len(self.classes_)
        Theta = np.asarray(theta, dtype=np.float64).reshape(K, -1)
        Z = np.asarray(X @ Theta.T)
        Z -= Z.max(axis=1, keepdims=True)
        P = np.exp(Z)
        P /= P.sum(axis=1, keepdims=True)
        R = P - one_hot(np.asarray(y).astype(np.intp), K)
        total = float(np.sum(sample_weight))
        G = np.asarray(X.T @ (np.asarray(sample_weight)[:, None] * R)).T / total
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(np.linalg.norm(G + self._alpha_value() * Theta))
        return value if np.isfinite(value) else np.inf

    def _encode_target(self, y, sample_weight):
        """Classes to ``classes_`` and ``y`` to 0/1 (``classes_[1]`` is 1).

        Refuses anything but two classes, and two classes of which only one has positive
        weight (the logistic minimiser does not exist then).
        """
        with errors_name("y"):
            check_classification_targets(y)
            declared = getattr(self, "classes", None)
            if declared is not None:
                return self._encode_declared(y, sample_weight, declared)
            classes, y01 = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs y with at least 2 classes, got "
                f"{classes.size} class(es)."
            )
        if classes.size > 2:  # multinomial: y as class indices 0..K-1
            if self._penalised_intercept():
                raise ValueError(
                    "Only binary classification is supported with intercept_scaling (the "
                    "penalised intercept is implemented for two classes); for more classes "
                    "use fit_intercept=False and append a constant column to X (its value "
                    "counts towards data_norm).")
            present = np.unique(y01[sample_weight > 0])
            if present.size < classes.size:
                missing = np.setdiff1d(np.arange(classes.size), present)
                raise ValueError(
                    f"Classes {list(classes[missing])} have no positive sample_weight; "
                    "the multinomial minimiser does not exist (their unpenalised "
                    "intercepts diverge). Give every class positive weight or drop it."
                )
            self.classes_ = classes
            return y01.astype(np.float64)
        y01 = y01.astype(np.float64)
        if np.unique(y01[sample_weight > 0]).size < 2:
            raise ValueError(
                "Only one class has positive sample_weight; the logistic minimiser does "
                "not exist. Give both classes positive weight."
            )
        self.classes_ = classes
        return y01

    def _void_outside_labels(self, y):
        """The declared-classes rule (see ``void_outside_labels``) when the fit has a DP
        view: ``data_norm`` set and no unpenalised intercept (a zero row would still
        pull on an unpenalised intercept, and that fit claims nothing anyway)."""
        if not self._voids_outside_labels():
            return y, None
        return void_outside_labels(self, self.classes, y)

    def _voids_outside_labels(self) -> bool:
        return (getattr(self, "classes", None) is not None and self.data_norm is not None
                and not self._solver_intercept() and not self._data_dependent_weights)

    def _encode_declared(self, y, sample_weight, declared):
        """``y`` against the declared label set ``classes`` (sorted), as for undeclared
        labels but with ``classes_`` fixed by the parameter: a row may hold any declared
        label (or none of a label), never another one."""
        classes, y01 = encode_declared_labels(declared, y)
        if self._solver_intercept():
            present = np.unique(y01[sample_weight > 0])
            if present.size < classes.size:
                raise ValueError(
                    "A declared class has no row with positive sample_weight, and the "
                    "unpenalised intercept (fit_intercept=True without intercept_scaling) "
                    "then diverges. Use intercept_scaling or fit_intercept=False, under "
                    "which the penalised minimiser exists for any labels.")
        if classes.size > 2 and self._penalised_intercept():
            raise ValueError(
                "Only binary classification is supported with intercept_scaling; for more "
                "classes use fit_intercept=False and append a constant column to X.")
        self.classes_ = classes
        return y01.astype(np.float64)

    def decision_function(self, X):
        """Compute the log-odds (binary) or the class scores under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``X @ coef_[0] + intercept_[0]`` for two classes, ``X @ coef_.T +
            intercept_`` for more, with the noise-perturbed parameters.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False, accept_sparse=["csr", "csc"])
        if self._is_multinomial():
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict_proba(self, X):
        """Predict class probabilities under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities of the classes in the order of ``classes_`` (softmax of the
            scores for more than two classes); for two classes each column is computed
            directly (not as one minus the other), so small probabilities stay accurate.
        """
        z = self.decision_function(X)
        if z.ndim == 2:  # multinomial
            return softmax(z, axis=1)
        # expit(-z), not 1 - expit(z): keeps P(classes_[0]) ~ e^-z accurate for large z
        return np.column_stack([expit(-z), expit(z)])

    def predict_log_proba(self, X):
        """Predict the logarithm of the class probabilities of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities of the classes in the order of ``classes_``, computed
            without underflow for large scores.
        """
        z = self.decision_function(X)
        if z.ndim == 2:  # multinomial
            return log_softmax(z, axis=1)
        return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])

    def predict(self, X):
        """Predict class labels under the released parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix (CSR/CSC)} of shape (n_samples, n_features)
            Samples to score, with the features the model was fitted on.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the log-odds are positive, ``classes_[0]`` elsewhere
            (two classes); the class of the largest score (more classes).
        """
        check_is_fitted(self)
        z = self.decision_function(X)
        if z.ndim == 2:  # multinomial
            return self.classes_[np.argmax(z, axis=1)]
        return self.classes_[(z > 0).astype(int)]
