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
from ..exceptions import AuditStateUnavailableError, PrivacyWarning
from ..mechanisms._laplace_norm import laplace_norm_fisher_sigma, laplace_norm_noise
from ..mechanisms._output_calibration import SWAMP_THRESHOLD, allowed_norm, auto_alpha, swamp_ratio
from ..mechanisms._output_perturbation import (
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    minimiser_sensitivity,
)
from ..privacy._tradeoff import RiskTarget
from ..utils import noise_generator, resolve_columns
from ..utils._columns import check_derived_block, derived_columns
from ..utils._provenance import record_fit_provenance
from ..utils._random import warn_shared_noise
from ..utils._validation import (
    check_flag,
    errors_name,
    label_set_sentence,
    validate_named,
)
from ..utils._warnings import warn_user
from ..utils._weights import weights_are_public
from ..utils.fixes import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    register_process_pool_reducer,
)
from ._dask import BACKEND as _dask
from ._eta._engine import FILEngine, check_sigma_scaled


def _buffers(a):
    """Memory buffers of an array-like input (None when they cannot be enumerated)."""
    if sp.issparse(a):
        return [np.asarray(getattr(a, name)) for name in ("data", "indices", "indptr", "row",
                                                           "col", "offsets")
                if isinstance(getattr(a, name, None), np.ndarray)]
    if isinstance(a, np.ndarray):
        return [a]
    if hasattr(a, "iloc") and hasattr(a, "columns"):  # pandas DataFrame
        out = []
        for j in range(a.shape[1]):
            col = a.iloc[:, j].to_numpy()
            if isinstance(col, np.ndarray):
                out.append(col)
        return out
    if isinstance(a, (list, tuple)):
        return []
    return None


def private_copy(validated, original):
    """``validated`` unless it may share memory with the caller's ``original``, else a copy.

    ``validate_data`` returns the caller's own array when it is already float64 (and a
    view of a DataFrame's block under copy-on-write); the audit state must not see later
    in-place changes of the caller's data (and the row scaling of ``data_norm`` must never
    rescale the caller's array), so such arrays are copied -- once; so is the output for
    any container whose buffers are unknown (e.g. an ``xarray.DataArray``). Arrays that
    validation converted (ints, lists, mixed frames) are already private.
    """
    if sp.issparse(validated):
        validated = sp.csr_matrix(validated)  # the engine's layout (no copy when CSR)
    mine = _buffers(validated)
    theirs = _buffers(original)
    if theirs is None:
        # an unknown container (xarray.DataArray, a memory view, ...): its buffers cannot
        # be enumerated, so validate_data's output may be the caller's own memory even
        # when it owns its data (np.asarray of a DataArray is its .values): copy
        shared = True
    else:
        shared = any(np.may_share_memory(m, t) for m in mine for t in theirs)
    if not shared:
        return validated
    if sp.issparse(validated):
        return validated.copy()
    return np.array(validated, dtype=np.float64, order="C", copy=True)

THREAT_MODEL_DOC = """
    Notes
    -----
    **Privacy mechanism.** The exact minimiser :math:`\\theta^*` of the penalised objective is
    computed and only :math:`\\theta' = \\theta^* + \\mathcal N(0, \\sigma^2 I)` is kept in
    ``coef_``/``intercept_``; ``predict`` uses :math:`\\theta'`.

    **What is measured, under which threat model.** The Fisher information loss (FIL,
    Hannun, Guo & van der Maaten, 2021) of a set :math:`S` of training values is
    :math:`\\eta_S = \\lVert J_S \\rVert_2 / \\sigma`, with :math:`J_S` the Jacobian of
    :math:`\\theta^*` with respect to those values. The adversary observes
    :math:`\\theta'`, knows :math:`\\sigma`, the model class and *every other training
    value*, and estimates the values in :math:`S` with an **unbiased** estimator. By the
    Cramér-Rao bound, the variance of such an estimate of any unit-norm combination of
    the values in :math:`S` is at least :math:`1/\\eta_S^2`. Smaller :math:`\\eta` means
    less leakage; :math:`\\eta` scales as :math:`1/\\sigma`.

    **What is not guaranteed.** FIL is not differential privacy: it is a local
    (linearised) measure at the actual training set, it bounds only unbiased adversaries
    (an adversary with a prior can do better -- see
    :mod:`sklearn_privacy.attacks`), and the bound for a set is not the sum of the bounds
    of its parts. The noise protects only what is released: the audit state
    (training rows, :math:`\\theta^*`, the Hessian) lives in memory for ``eta_`` and
    :meth:`fisher_information` and is never written to a pickle or joblib dump. With
    ``random_state=None`` the noise comes from fresh operating-system entropy; a fixed
    ``random_state`` makes the noise reproducible and the release **non-private** (use it
    for tests only).

    **Numerical accuracy.** The Hessian is factorised after an exact (power-of-two)
    Jacobi equilibration, so features on very different scales are solved accurately;
    every reported figure is in the caller's parametrisation. When the estimated
    condition number of the equilibrated Hessian exceeds ``1e8`` a
    :class:`~sklearn_privacy.exceptions.NumericalPrecisionWarning` is emitted at fit:
    measured against exact rational arithmetic, the per-example eta then has a relative
    error up to about ``35 cond eps`` (the warning quotes ``100 cond eps``); above
    ``1e13`` the fit is refused. The audit state is a private copy of the training data
    (sparse input is kept as CSR and densified one row chunk at a time).

    **Differential privacy view** (``epsilon_``). Neighbouring data sets differ in
    the values :math:`(x_j, y_j)` of one row (replacement; the number of rows, the
    sample weights and every hyperparameter are public and fixed). The adversary sees
    only the released :math:`\\theta'`, knows everything else, including every other
    row, and is computationally unbounded. When every coordinate is penalised
    (``fit_intercept=False``, or a penalised intercept through ``intercept_scaling``),
    ``alpha > 0`` and ``data_norm`` is set (and, for least squares, ``target_bound``), the
    objective divided by the total weight :math:`W` is ``alpha``-strongly convex, and
    replacing one row moves the exact minimiser by at most
    :math:`\\Delta = 2 L R \\max_j \\omega_j / (W \\alpha)` in L2 (Chaudhuri, Monteleoni &
    Sarwate, 2011), with :math:`R` = ``data_norm`` and :math:`L` a bound on the loss's
    derivative at any minimiser: :math:`\\sigma(R\\sqrt{2\\log 2/\\alpha})` for the logistic
    loss (the penalty bounds :math:`\\lVert\\theta^*\\rVert^2 \\le 2\\log 2/\\alpha`),
    :math:`\\sqrt 2` for the multinomial loss, and :math:`B (1 + R c)` for least squares
    with :math:`|y| \\le B` = ``target_bound``, :math:`c = \\max_{s \\le R} s/(s^2+\\alpha)`
    (the ridge solution's norm is at most :math:`cB`). The release
    is then the Gaussian mechanism with sensitivity :math:`\\Delta` and noise ``sigma``
    on every coordinate, and ``epsilon_`` is its exact epsilon at ``delta`` (analytic
    Gaussian mechanism, Balle & Wang, 2018; :meth:`sigma_for_epsilon` inverts it). With
    unit weights :math:`\\Delta = 2 L R / (n \\alpha)`. Otherwise ``epsilon_`` is
    ``inf`` and ``epsilon_reason_`` says why: an unpenalised intercept (one row can move
    it without bound -- set ``intercept_scaling``, or use ``fit_intercept=False`` with a
    constant column counted in ``data_norm``), no ``data_norm``, ``alpha=0``, least squares without
    ``target_bound``, or data-dependent weights (IRFIL).

    **Certified minimiser.** The released centre is the solver's output, not the exact
    minimiser. At the centre the gradient norm of the normalised objective
    :math:`G(\\theta) = \\frac1W \\sum_i \\omega_i l_i(\\theta) + \\frac\\alpha2
    \\lVert\\theta\\rVert^2` is compared with a threshold :math:`\\tau` fixed by the
    public parameters only (:math:`\\tau = L R \\max(10^{-12} \\max_j\\omega_j / W,
    2^{-46})`, never the achieved value); :math:`G` being ``alpha``-strongly convex,
    passing it certifies :math:`\\lVert\\theta - \\theta^*\\rVert \\le \\tau/\\alpha`
    (``certified_distance_``), and ``epsilon_`` is computed for the sensitivity
    :math:`\\Delta + 2\\tau/\\alpha` (``sensitivity_ + 2 certified_distance_``: a
    relative increase of at most :math:`\\max(10^{-12}, 1.5 \\cdot 10^{-14} n)` for unit
    weights). When Newton's method stops before (``max_iter`` reached, a loose ``tol``),
    binary logistic regression and least squares continue with accelerated gradient
    steps up to a count fixed by public quantities, after which the centre is within
    :math:`\tau/\alpha` of the exact minimiser whatever the rows (exact arithmetic; the
    proof is in ``_finish_to_certificate``): whether a fit is certified is then not an
    event about the data. Other fits (multinomial, dask) whose solver stops before get
    ``epsilon_ = inf``, with the reason.

    **Labels.** The set of labels (``classes_`` of the classifiers) is declared public:
    it is part of the model class, like the number of features. A label value held by a
    single row appears in ``classes_``; use labels whose set is public (e.g. ``{0, 1}``).

    **Noise.** ``epsilon_`` is the guarantee for the rows *this estimator receives*,
    assuming fresh noise (``random_state=None``). A fixed seed or a
    ``RandomState``/``Generator`` instance (which :func:`~sklearn.base.clone` copies, so
    that every clone draws the same noise) makes the release non-private as published:
    ``epsilon_reason_`` says so, and an instance triggers a
    :class:`~sklearn_privacy.exceptions.PrivacyWarning` at fit.

    Not covered: the audit state and any other data-dependent attribute (``eta_``,
    ``n_iter_``, ``sample_weight_``, ``eta_history_``: the pickle leaves out ``n_iter_``
    and the audit state; :func:`sklearn_privacy.utils.strip_for_release` removes the
    rest), rounding in the evaluation of the certificate's gradient and in the sampling
    of the noise, and any step before this estimator fitted on the same rows (its output
    is what "the rows this estimator receives" means).
"""

_DATA_NORM_DOC = """    data_norm : float or None, default=None
        Bound :math:`R` on the L2 norm of every row of ``X`` for the (epsilon, delta)-DP
        view: rows with a larger norm are scaled to norm ``data_norm`` before fitting,
        with a :class:`~sklearn_privacy.exceptions.PrivacyWarning` (the guarantee then
        holds for the scaled rows, hence for the original data; the model and ``eta_``
        describe the scaled rows). ``None``: no scaling, ``epsilon_`` is inf.
"""

_DELTA_DOC = """    delta : float in (0, 1), default=1e-5
        The delta at which ``epsilon_`` is reported.
"""

#: ``epsilon`` and ``delta`` of the estimators whose noise can be set from epsilon
EPSILON_DOC = """    epsilon : float > 0, RiskTarget or None, default=None
        Target privacy loss. ``None``: the noise is Gaussian of scale ``sigma`` and
        ``epsilon_`` reports what it guarantees (at ``delta``). A number: the noise is set
        *before the rows are read*, from the data-independent sensitivity (the number of
        rows, ``alpha``, ``data_norm``, ``target_bound``; never a row's value) -- Gaussian
        with the analytic-Gaussian ``sigma`` for ``delta > 0``, Laplace-norm of scale
        ``Delta / epsilon`` (pure DP) for ``delta = 0`` -- and ``epsilon_`` equals
        ``epsilon`` (up to the root finder's rounding). Needs a DP view (``data_norm``, a
        penalised or no intercept, ``target_bound`` for least squares) and ``sigma=None``:
        giving both is an error. The same noise as the two-step route
        ``sigma_for_epsilon`` then ``set_params(sigma=...)``, without a first fit. A
        :class:`~sklearn_privacy.privacy.RiskTarget` (``RiskTarget(tpr=0.05, fpr=0.01)``)
        sets the noise from the risk a user accepts, as exactly as the mechanism allows:
        Gaussian noise (``delta > 0``) of ``sigma = Delta / mu`` with ``mu =
        target.gaussian_mu()``, the release being exactly ``mu``-Gaussian DP; Laplace-norm
        noise (``delta = 0``) at the largest pure epsilon that meets the target.
        ``epsilon_`` then states the release's epsilon at ``delta``.
    delta : float in [0, 1), default=1e-5
        With ``epsilon``: the target delta (``0``: pure epsilon-DP through Laplace-norm
        noise). Without: the delta at which ``epsilon_`` of Gaussian noise is reported
        (``0`` is refused: Gaussian noise is never pure DP).
"""

SIGMA_DOC = """    sigma : float > 0 or None, default=None
        Standard deviation of the Gaussian noise added to every released parameter
        (``None``: 1.0, unless ``epsilon`` is given, which then sets the noise). The FIL
        view (``eta_``, :meth:`eta`) is at the noise actually released: ``sigma``, or for
        Laplace-norm noise of scale ``s`` over ``p`` parameters the Gaussian scale with the
        same Fisher information, ``s sqrt(p)`` (the Fisher information of the location
        family with density proportional to ``exp(-||b|| / s)`` is ``I / (p s^2)``).
"""

ALPHA_AUTO_DOC = """        ``"auto"`` (with ``epsilon``): the documented data-independent rule of
        ``sklearn_privacy/fil/_noise.py`` -- the penalty that balances its bias against the
        output noise, ``alpha = (8 l''_max c^2 L^2 R^6 / (B^2 n^2))^(1/3)`` with ``c`` the
        noise per unit of sensitivity at (epsilon, delta), ``R = data_norm``, ``L`` the
        loss's derivative bound and ``n`` the number of rows -- stored in ``alpha_``. With
        a validation budget, select alpha privately instead
        (:class:`~sklearn_privacy.RandomStoppingSearch`).
"""

#: what the epsilon-capable estimators add to the fitted attributes
NOISE_ATTRS_DOC = """    noise_ : {"gaussian", "laplace-norm"}
        The distribution of the released noise.
    noise_scale_ : float
        Its scale: the Gaussian standard deviation, or the Laplace-norm scale ``s``.
    alpha_ : float
        The penalty of the fit (``alpha``, or the value of the ``"auto"`` rule).
"""

#: parameter constraints of the estimators with ``epsilon`` (FIL linear and logistic)
EPSILON_CONSTRAINTS = {
    "sigma": [Interval(Real, 0, None, closed="neither"), None],
    "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"}), None],
    "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget, None],
    "delta": [Interval(Real, 0, 1, closed="left")],
}

TARGET_BOUND_DOC = """    target_bound : float or None, default=None
        Bound :math:`B` on ``|y|`` for the DP view of least squares: targets outside
        ``[-target_bound, target_bound]`` are clipped before fitting, with a
        :class:`~sklearn_privacy.exceptions.PrivacyWarning`. ``None``: no clipping,
        ``epsilon_`` is inf.
"""

INTERCEPT_SCALING_DOC = """    intercept_scaling : float > 0 or None, default=None
        Only with ``fit_intercept=True``. ``None``: the intercept is not penalised (no DP
        guarantee: ``epsilon_`` is inf). A number ``s``: scikit-learn's convention -- a
        constant column of value ``s`` is appended to ``X``, its coefficient is
        penalised like the others (``alpha``) and perturbed with them, the row bound
        ``data_norm`` applies to the augmented row ``[x, s]``, and ``intercept_ = s *``
        that coefficient; the DP view then holds with an intercept. ``eta_`` and the
        audit methods leave the constant column out (it is not a training value).
"""

# the DP parameters in signature order: (data_norm, delta) for the logistic models,
# (data_norm, target_bound, delta) for least squares
DP_PARAMS_DOC = _DATA_NORM_DOC + _DELTA_DOC
DP_PARAMS_LSQ_DOC = _DATA_NORM_DOC + TARGET_BOUND_DOC + _DELTA_DOC
DP_PARAMS_EPS_DOC = _DATA_NORM_DOC + EPSILON_DOC
DP_PARAMS_LSQ_EPS_DOC = _DATA_NORM_DOC + TARGET_BOUND_DOC + EPSILON_DOC

DP_ATTRS_DOC = """    epsilon_ : float
        Epsilon of the released parameters at ``delta`` in the (epsilon, delta)-DP view
        (see Notes): the guarantee for the rows *this estimator receives* (after any
        preceding pipeline step), assuming fresh noise (``random_state=None``); ``inf``
        when no guarantee holds, including when the solver's output is not certified.
        Inside a pipeline, steps fitted on the same rows (a ``StandardScaler``, learned
        categories, a search) are not covered -- :func:`sklearn_privacy.privacy_claim`
        states the claim of the whole published object. A plain fitted attribute: kept by
        pickling and present on ``GridSearchCV``'s ``best_estimator_``.
    sensitivity_ : float
        L2 sensitivity of the exact minimiser to replacing one row (``inf`` when none is
        derived); depends on the data only through the total and largest weight.
    certified_distance_ : float
        Certified bound ``tau / alpha`` on the distance between the released centre and
        the exact minimiser (see Notes): ``epsilon_`` is computed for the sensitivity
        ``sensitivity_ + 2 certified_distance_``. Fixed by the public parameters, not by
        the achieved gradient; ``inf`` when no DP view applies or the certificate failed.
    delta_ : float
        The ``delta`` at which ``epsilon_`` holds (a copy of the ``delta`` parameter at
        fit time, so that auditing tools such as
        :func:`sklearn_privacy.attacks.canary_audit` read the claim from the fitted model).
    epsilon_reason_ : str
        What the guarantee covers, or why ``epsilon_`` is inf.
"""


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


def _unit_weights(account_weights, n_rows):
    """Unit weights in the form ``_account`` reads: a vector, or a dask summary."""
    if isinstance(account_weights, np.ndarray):
        return np.ones(account_weights.shape[0])
    from ._dask import WeightSummary

    return WeightSummary(float(n_rows), 1.0)


def _scale_rows(X, data_norm, owner=None):
    """Rows of ``X`` with L2 norm above ``data_norm`` scaled to it, silently.

    ``X`` is the estimator's private copy (dense) or a private CSR matrix. The number of
    scaled rows goes to ``owner``'s private channel (:func:`._bounds.record_bounding`),
    never to a warning: whether a row exceeds the bound depends on that row.
    """
    if sp.issparse(X):
        Xa = abs(X)
        m = np.asarray(Xa.max(axis=1).todense()).ravel()
        safe = np.where(m > 0, m, 1.0)
        Y = sp.diags(1.0 / safe) @ X
        norms = m * np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel())
    else:
        norms = dense_row_norms(X)
    over = norms > data_norm
    if owner is not None:   # rows above the bound by more than rounding
        record_bounding(owner, rows_scaled=np.count_nonzero(norms > data_norm * (1 + 1e-12)))
    if not np.any(over):
        return X
    factor = row_scale_factors(norms, data_norm)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(factor) @ X)
    X *= factor[:, None]
    return X


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


class BaseFILEstimator(BaseEstimator):
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
            X, y = validate_named(self, X, y, dtype=np.float64, y_numeric=self._y_numeric,
                                  accept_sparse=["csr", "csc"])
            X = private_copy(X, X_in)
            sw = self._validated_sample_weight(sample_weight, X)
            y = self._encode_target(y, sw)
            X = self._with_intercept_column(X)
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
        ``sklearn_privacy/linear_model/_objective.py``; multinomial: ``c = 1/2``,
        Boehning's bound). Fits in memory; dask fits keep the plain certificate.
        """
        K = len(getattr(self, "classes_", ()))
        multinomial = K > 2 and self._loss.name == "logistic"
        if (sp.issparse(theta) or np.ndim(theta) != 1 or _dask.is_dask_collection(X)
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
        total = float(np.sum(sw))
        if multinomial:
            from scipy.special import log_softmax

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
        if multinomial:
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
        for key in ("_audit", "_eta_cache", "n_iter_", BOUNDING_STATE):
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

    def _audit_engine(self) -> FILEngine:
        check_is_fitted(self)
        engine = self.__dict__.get("_audit")
        if engine is None:
            raise AuditStateUnavailableError(
                f"{type(self).__name__} was loaded from a pickle/joblib dump (or copied "
                "through one). Dumps hold only the released, noise-perturbed parameters: "
                "the training data, the exact minimiser and the Hessian needed for eta_ "
                "and fisher_information are deliberately never serialised. Audit it again "
                "from its training rows: sklearn_privacy.fil.audit(model, X, y) returns it "
                "with eta_ (or refit it)."
            )
        return engine

    def _audit_sigma(self) -> float:
        """The sigma of the released model (a later ``set_params`` without refit does not
        change what was released, so it must not change the reported eta)."""
        return self.__dict__.get("_sigma_fit", self.sigma)

    def _resolve_columns(self, columns, param="columns", X=None):
        """Names of ``feature_names_in_`` / indices / mask -> int indices (order kept).

        With a penalised intercept (``intercept_scaling``) the engine's column ``d`` is the
        constant column, so the label moves to index ``d + 1`` and ``None`` (every feature
        and the label) skips the constant.
        """
        d = self.n_features_in_
        if columns is None:
            return np.r_[np.arange(d), d + 1] if self._penalised_intercept() else None
        cols = self._resolve_named_columns(columns, param=param, X=X)
        return np.where(cols == d, d + 1, cols) if self._penalised_intercept() else cols

    def _resolve_named_columns(self, columns, param="columns", X=None):
        """Names of ``feature_names_in_`` / indices / mask -> int indices (order kept).

        A name that is not a column but an original feature behind a ColumnTransformer
        with pandas output (``"sex"`` for ``"cat__sex_Female"``, ``"cat__sex_Male"``)
        resolves to its derived columns when their training values (``X``, else the audit
        data) are that feature's encoding; see ``utils._columns.derived_columns``.
        """
        if columns is None:
            return None
        d = self.n_features_in_
        names = getattr(self, "feature_names_in_", None)
        try:
            return resolve_columns(columns, d, names, label=True, param=param)
        except ValueError as exc:
            if isinstance(columns, str):
                items = [columns]
            elif isinstance(columns, (list, tuple, np.ndarray)) and all(
                    isinstance(c, (str, Integral)) and not isinstance(c, (bool, np.bool_))
                    for c in columns):
                items = list(columns)
            else:
                raise
            unknown = [c for c in items if isinstance(c, str) and c != "label"
                       and (names is None or c not in list(names))]
            if not unknown:
                raise
            if names is None and param == "sensitive_features":
                raise ValueError(
                    f"sensitive_features: got the name {unknown[0]!r}, but {type(self).__name__} "
                    "received X without column names (no feature_names_in_). Inside a "
                    "Pipeline the preceding step returns an array even when the pipeline is "
                    "fitted on a DataFrame: call "
                    "pipe.set_output(transform='pandas') before fitting, so that the "
                    f"encoded columns (e.g. 'onehotencoder__{unknown[0]}_...') reach this "
                    f"step and {unknown[0]!r} resolves to them; or pass their indices in the "
                    "preprocessing's output (sklearn_privacy.utils.feature_columns of the "
                    "fitted preprocessing gives them)."
                ) from None
            if names is None:
                raise ValueError(
                    f"{param}: got the name {unknown[0]!r}, but {type(self).__name__} was "
                    "fitted on data without column names (no feature_names_in_). Inside a "
                    "Pipeline the preceding step returns an array even when the pipeline "
                    "was fitted on a DataFrame: use the pipeline-level functions "
                    "sklearn_privacy.fil.eta / fisher_information / sigma_for_eta(pipe, "
                    f"..., columns={unknown[0]!r}), or call "
                    "pipe.set_output(transform='pandas') before fitting so that column "
                    "names reach this step, or pass integer indices."
                ) from None
            out = []
            for item in items:
                if not (isinstance(item, str) and item in unknown):
                    out.extend(resolve_columns(item, d, names, label=True, param=param))
                    continue
                idx = derived_columns(item, names)
                if not idx.size:
                    raise exc from None
                block = (X[:, idx] if X is not None else
                         self._audit_engine().dense_columns(idx))
                if sp.issparse(block):
                    block = block.toarray()
                check_derived_block(item, [str(names[k]) for k in idx], block, param)
                out.extend(idx.tolist())
            idx = np.asarray(out, dtype=np.int64)
            if np.unique(idx).size != idx.size:
                raise ValueError(f"{param} contains duplicate columns: {items}.") from None
            return idx

    def _scaled(self, norms, what):
        """``norms / sigma`` with a clear error if it over- or underflows."""
        sigma = self._audit_sigma()
        with np.errstate(over="ignore", under="ignore"):
            out = norms / sigma
        return check_sigma_scaled(out, np.max(norms, initial=0.0), sigma, what)

    @property
    def eta_(self) -> np.ndarray:
        """Per-example Fisher information loss at ``sigma`` (all attributes and label).

        ``eta_[i] = ||J_i||_2 / sigma``. Audit state: computed on first access in the
        fitting session, never serialised.
        """
        engine = self._audit_engine()
        cache = self.__dict__.setdefault("_eta_cache", {})
        if "eta" not in cache:
            cache["eta"] = np.sqrt(engine.per_example_sq_norms(self._resolve_columns(None)))
        return self._scaled(cache["eta"], "eta_")

    def eta(self, rows=None, columns=None, *, per_example: bool = False,
            constrained: bool = False):
        """Fisher information loss of a subset of the training values.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the subset (``None``: every row). Negative indices count
            from the end, as in numpy. With ``per_example=True`` the result follows
            ``rows`` exactly (order kept, one value per entry, duplicates allowed);
            for the eta of a set (``per_example=False``) duplicates are refused.
            Positions, not labels: a boolean pandas Series whose index is not
            ``0..n-1`` is refused (:func:`sklearn_privacy.fil.eta` with the training
            frame ``X`` aligns it on ``X.index``).
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes of the subset: feature indices ``0..n_features_in_ - 1`` or names
            of ``feature_names_in_`` (e.g. ``"cat__race_White"`` after a
            ``ColumnTransformer``), and ``n_features_in_`` or ``"label"`` for the label
            (``None``: every feature and the label). A boolean mask has length
            ``n_features_in_ + 1`` (last entry: the label). No negative indices, no
            duplicates.
        per_example : bool, default=False
            If True, return one eta per row (the attribute-level eta of each example,
            e.g. the eta of one sensitive attribute); if False, the eta of the whole
            set of values ``rows x columns`` (a group or the whole data set).
        constrained : bool, default=False
            For a one-hot attribute given as ``columns``: restrict to changes that keep
            those columns' sum fixed (moving an individual between the encoded levels).
            Never larger than the default, which also counts impossible moves; valid
            only for a complete one-hot block (see :meth:`sigma_for_eta`).

        Returns
        -------
        eta : float or ndarray of shape (n_rows,)
            The eta of the set ``rows x columns`` (a float), or with
            ``per_example=True`` one eta per entry of ``rows``. Smaller is more private.

        Raises
        ------
        ValueError
            Unknown column name, index out of range, duplicate rows for a set, or a
            ``sigma`` so extreme that eta is not representable in float64.
        """
        per_example = check_flag(per_example, "per_example")
        constrained = check_flag(constrained, "constrained")
        engine = self._audit_engine()
        columns = self._resolve_columns(columns)
        if per_example:
            sq = engine.per_example_sq_norms(columns, constrained=constrained, rows=rows)
            return self._scaled(np.sqrt(sq), "eta")
        value = np.sqrt(engine.group_sq_norm(rows, columns, constrained=constrained))
        return float(self._scaled(value, "eta"))

    def fisher_information(self, rows=None, columns=None, *, dense=None):
        """Fisher information matrix ``J_S^T J_S / sigma^2`` of a subset of values.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the subset, as in :meth:`eta` (duplicate rows refused).
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes of the subset, as in :meth:`eta`. The data values are ordered
            row-major, in the order given: all selected columns (in the order of
            ``columns``) of the first row of ``rows``, then the next row.
        dense : bool or None, default=None
            ``None`` returns a dense array when the subset has at most 2048 values and
            a symmetric :class:`scipy.sparse.linalg.LinearOperator` (matrix-free,
            O(n p) per product) otherwise.

        Returns
        -------
        fim : ndarray or LinearOperator of shape (n_values, n_values)
            The Fisher information matrix of the selected values, symmetric positive
            semi-definite; ``n_values = len(rows) * len(columns)``.
        """
        dense = check_flag(dense, "dense", allow_none=True)
        engine = self._audit_engine()
        return engine.fim(rows, self._resolve_columns(columns), sigma=self._audit_sigma(),
                          dense=dense)

    def sigma_for_eta(self, target_eta: float, *, aggregate: str = "max",
                      columns=None, constrained: bool = False, n_samples=None) -> float:
        """Noise scale at which the per-example eta reaches ``target_eta``.

        eta scales exactly as ``1 / sigma`` and the minimiser does not depend on
        ``sigma``, so refitting with ``set_params(sigma=...)`` releases a model whose
        per-example eta aggregate equals ``target_eta``. Through a pipeline, with
        original feature names, use :func:`sklearn_privacy.fil.sigma_for_eta`.

        **Units.** eta bounds how precisely an unbiased adversary recovers a training
        *value* (standard deviation at least ``1 / eta`` in that value's units), so it
        depends on the units of ``X`` and ``y``: on scikit-learn's diabetes data
        (standardised features, ``alpha=1e-2``) the largest example-level eta is 77 times
        larger with the raw target (standard deviation 77) than with the standardised
        one, and the sigma returned here scales the same way. Standardise the columns
        whose leakage you target, or choose ``target_eta`` in their units.

        **One-hot attributes.** With ``columns`` a one-hot block, the default
        ``constrained=False`` also counts moves no individual can make (half of one
        level, half of another), so it is an upper bound on the ``constrained=True``
        eta, which counts only moves between levels; on 3,000 Adult rows the largest
        eta of ``sex`` is 0.408 unconstrained and 0.034 constrained. The default stays
        unconstrained: it never understates leakage, and the constrained eta is only
        right for a complete one-hot block (every level has a column and each row has
        exactly one 1; with ``OneHotEncoder(drop=...)`` or unknown levels it would
        understate it). Pass ``constrained=True`` when the block is complete.

        Parameters
        ----------
        target_eta : float > 0
            The per-example eta the refitted model must reach.
        aggregate : {"max", "mean"}, default="max"
            Which aggregate of the per-example eta must equal ``target_eta``.
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes whose per-example eta is targeted, as in :meth:`eta` (indices or
            names; ``None``: every feature and the label).
        constrained : bool, default=False
            As in :meth:`eta`, for a one-hot attribute given as ``columns`` (see the
            note on one-hot attributes above).
        n_samples : int or None, default=None
            **Data-independent route** (fitted or not): the ``sigma`` at which *no*
            training set of ``n_samples`` rows (unit weights, rows within ``data_norm``,
            ``|y| <= target_bound``) can have a per-example eta above ``target_eta``,
            from the bound below; ``aggregate``, ``columns`` and ``constrained`` are then
            ignored (the bound covers every aggregate and every subset of one row's
            values). It needs the DP view (``data_norm``; no or a penalised intercept;
            ``target_bound`` for least squares) and two classes. It is conservative:
            the eta reached on real data is usually well below ``target_eta``.

            The bound: every coordinate penalised, :math:`\\lVert H^{-1} \\rVert \\le
            1 / (n\\alpha)`; the columns of :math:`J_i = -H^{-1}[l''_i \\tilde x_i w^\\top
            + l'_i E,\\; -\\tilde x_i]` have norms bounded by :math:`l''_{\\max} R \\Theta
            + L` (features) and :math:`R` (label), with :math:`\\Theta` the largest
            minimiser norm the penalty allows and :math:`L` the derivative bound of the
            DP view (derived in ``sklearn_privacy/fil/_dp.py``), so :math:`\\eta_i \\le
            \\sqrt{(l''_{\\max} R \\Theta + L)^2 + R^2} / (n \\alpha \\sigma)`. Without
            the DP view (an unpenalised intercept, no ``data_norm``) no data-independent
            bound on eta exists: the fitted route is the only one.

        Returns
        -------
        sigma : float
            The output-perturbation noise scale to pass as ``sigma``.

        Raises
        ------
        ValueError
            ``target_eta`` not positive and finite, unknown ``aggregate``, or a noise
            scale that is not a positive finite float64 (e.g. every eta is zero); with
            ``n_samples``: no DP view, or more than two classes.
        """
        if not (isinstance(target_eta, Real) and np.isfinite(target_eta) and target_eta > 0):
            raise ValueError(f"target_eta must be a positive finite number; got {target_eta!r}.")
        if n_samples is not None:
            return self._public_eta_bound(n_samples) / float(target_eta)
        if aggregate not in ("max", "mean"):
            raise ValueError(f"aggregate must be 'max' or 'mean'; got {aggregate!r}.")
        constrained = check_flag(constrained, "constrained")
        engine = self._audit_engine()
        norms = np.sqrt(engine.per_example_sq_norms(self._resolve_columns(columns),
                                                    constrained=constrained))
        value = norms.max() if aggregate == "max" else norms.mean()
        with np.errstate(over="ignore", under="ignore"):
            sigma = value / target_eta
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(
                f"target_eta={target_eta!r}: the noise scale reaching it ({value!r} / "
                f"{target_eta!r}) is not a positive finite float64"
                + (" (every eta is zero for these columns)." if value == 0 else ".")
            )
        return float(sigma)


