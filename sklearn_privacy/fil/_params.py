"""Parameter documentation and constraints shared by the FIL estimators' docstrings."""

from __future__ import annotations

from numbers import Real

from ..privacy._tradeoff import RiskTarget
from ..utils.fixes import Interval, StrOptions

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
        ``sklearn_privacy/mechanisms/_output_calibration.py`` -- the penalty that balances
        its bias against the output noise, ``alpha = (8 l''_max c^2 L^2 R^6 / (B^2
        n^2))^(1/3)`` with ``c`` the noise per unit of sensitivity at (epsilon, delta),
        ``R = data_norm``, ``L`` the loss's derivative bound and ``n`` the number of
        rows; stored in ``alpha_``. With a validation budget, select alpha privately instead
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
