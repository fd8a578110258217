"""Docstring sections shared by the objective-perturbation estimators."""

_THREAT_MODEL = """
    Notes
    -----
    **Mechanism.** Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011,
    Algorithm 2; Kifer, Smith & Thakurta 2012 for the Gaussian variant): a random vector
    ``b``, drawn before any row is read, is added to the objective, and the minimiser of
    :math:`\\frac1n\\sum_i l_i(\\theta) + \\frac{\\Lambda}{2}\\lVert\\theta\\rVert^2 +
    \\frac{b^\\top\\theta}{n}` is released (:math:`\\Lambda` = ``alpha`` plus the papers'
    extra penalty when the Jacobian term would use more than half of the
    budget; ``penalty_``).
    ``delta=0``: ``b`` has density proportional to :math:`\\exp(-\\varepsilon'
    \\lVert b\\rVert / (2\\zeta))`; ``delta > 0``: ``b`` is Gaussian. The constants
    (gradient bound :math:`\\zeta`, curvature bound ``c``), the Jacobian term
    :math:`2\\,\\mathrm{rank}\\,\\log(1 + c/(n\\Lambda))` and the derivation are in
    ``sklearn_privacy/mechanisms/_objective_perturbation.py`` and the user guide. The released
    centre is within ``certified_distance_`` (fixed by public quantities) of the exact
    perturbed minimiser: Newton's method stops at a gradient norm that certifies it, and
    if ``max_iter`` Newton steps did not, accelerated gradient steps continue up to a
    count that guarantees it whatever the rows (the count reads only public constants
    and ``||b||``); the centre is released with a last noise of norm scale
    ``certified_distance_ / (epsilon / 1000)`` (approximate minima perturbation, Iyengar
    et al. 2019), which costs ``2 epsilon / 1000`` of the budget. Every fit yields a
    release with the same claim: certification is not an event about the data.

    **Threat model and guarantee.** Neighbouring data sets differ in the values of one
    row (replacement); the number of rows ``n``, the number of features and every
    parameter are public; the label set (``classes_``) is public when declared with
    ``classes=`` (classifier), and otherwise found in ``y``, which one row can change, so
    that :func:`~sklearn_privacy.privacy_claim` is ``inf``. Every row (with the constant column of
    ``intercept_scaling`` appended) is assumed to have L2 norm at most ``data_norm``:
    larger rows are scaled to that norm before fitting, with a
    :class:`~sklearn_privacy.exceptions.PrivacyWarning` (the guarantee then holds for the
    original rows too, the scaling acting row by row). The adversary sees ``coef_`` and
    ``intercept_``, knows every other row and is computationally unbounded. The release
    is (``epsilon``, ``delta``)-differentially private; with ``delta=0`` it is pure
    ``epsilon``-DP.

    **What is not guaranteed.** Floating-point effects in sampling and solving are not
    covered (as for every DP library). A fixed ``random_state`` makes the noise
    reproducible and the release non-private (tests only); a ``RandomState`` or
    ``Generator`` instance is shared by clones and warns. Steps fitted before this one on
    the same rows are not covered: :func:`sklearn_privacy.privacy_claim` states the claim of
    the whole published object. No Fisher information loss is reported: the release is
    not the exact minimiser plus data-independent noise (the noise passes through the
    data's Hessian), so the closed form of the output-perturbed estimators does not apply
    and this estimator refuses to state one.
"""

_COMMON_PARAMS = """    epsilon : float > 0 or RiskTarget, default=1.0
        The privacy budget of the release. A
        :class:`~sklearn_privacy.privacy.RiskTarget` (e.g. ``RiskTarget(tpr=0.05,
        fpr=0.01)``) sets it from the risk a user accepts: the largest epsilon whose
        (epsilon, ``delta``) claim keeps every membership attack within the target
        (``RiskTarget.epsilon(delta)``), before any row is read.
    delta : float in [0, 1), default=1e-5
        ``0``: pure epsilon-DP (Gamma-norm noise); ``> 0``: (epsilon, delta)-DP with
        Gaussian noise (usually less noise when there are many features).
    data_norm : float > 0
        Declared bound :math:`R` on the L2 norm of every row (the constant column of
        ``intercept_scaling`` included). Required: the noise is set from it. Rows above
        it are scaled to it with a :class:`~sklearn_privacy.exceptions.PrivacyWarning`.
        Choose it from public knowledge (e.g. after a
        :class:`~sklearn_privacy.preprocessing.BoundedScaler`), never from the rows.
    alpha : float >= 0 or "auto", default="auto"
        L2 penalty, per-sample as in the FIL estimators: the objective is the mean loss
        plus ``alpha / 2 ||w||^2``, so without noise ``alpha=a`` has the minimiser of
        ``Ridge(alpha=n_samples * a)`` (least squares) or
        ``LogisticRegression(C=1 / (n_samples * a))`` (logistic); the package's
        ``FILPoissonRegressor(alpha=a)`` is ``PoissonRegressor(alpha=a)``.
        ``"auto"``: a data-independent rule from ``n``, the number of parameters,
        ``epsilon``, ``delta`` and ``data_norm`` (see
        :func:`~sklearn_privacy.linear_model.auto_alpha`); the value used is ``alpha_``.
    fit_intercept : bool, default=True
        Fit an intercept as the penalised coefficient of a constant column of value
        ``intercept_scaling`` (counted in ``data_norm``); ``intercept_ =
        intercept_scaling *`` that coefficient.
    intercept_scaling : float > 0, default=1.0
        Value of the constant column.
    max_iter : int >= 1, default=100
        Maximum number of Newton steps; if they do not certify the centre, accelerated
        gradient steps finish the job (same release guarantee, slower).
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); anything else is for tests only.
"""

_COMMON_ATTRS = """    epsilon_ : float
        Epsilon of the release (``epsilon``; ``inf`` only with undeclared classes or a
        fixed seed, see ``epsilon_reason_``).
    delta_ : float
        Its delta.
    epsilon_reason_ : str
        What the guarantee covers, or why ``epsilon_`` is inf.
    alpha_ : float
        The ``alpha`` used (``alpha="auto"`` resolved).
    penalty_ : float
        :math:`\\Lambda`: ``alpha_`` plus the extra penalty of Algorithm 2.
    noise_scale_ : float
        Gamma scale of ``||b||`` (``delta=0``) or standard deviation of each coordinate
        of ``b`` (``delta > 0``).
    certified_distance_ : float
        Certified bound on the distance between the solver's centre and the exact
        perturbed minimiser: ``2^-44 (zeta + E||b|| / n) / penalty_``, a function of
        the parameters and ``n`` only (the residual noise's scale is this over
        ``epsilon / 1000``).
    n_iter_ : int
        Newton and accelerated gradient steps taken. Data-dependent and not covered
        by ``epsilon_``: left out of pickles and removed by
        :func:`~sklearn_privacy.utils.strip_for_release`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.
"""
