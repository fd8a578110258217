"""Docstring sections shared by the private boosting estimators."""

_PARAMS = """    epsilon : float > 0 or RiskTarget, default=1.0
        The privacy budget of the release, or a
        :class:`~sklearn_privacy.privacy.RiskTarget`: the largest epsilon whose
        (epsilon, ``delta``) claim meets it, set before the rows are read.
    delta : float in [0, 1), default=1e-5
        ``0``: pure epsilon-DP (Laplace noise, basic composition); ``> 0``:
        (epsilon, delta)-DP with Gaussian noise composed exactly in Gaussian DP (the
        claim carries its ``mu``, which :func:`~sklearn_privacy.privacy_claim` composes
        exactly with other Gaussian steps).
    bounds : pair, list of pairs or dict, default=None
        Declared ``(low, high)`` of every column of ``X`` (one pair for all, one per
        column, or ``{name: (low, high)}``): each column is cut into ``max_bins``
        equal-width bins over its bounds; values outside fall in the end bins. Required
        without ``schema``; after a :class:`~sklearn_privacy.preprocessing.BoundedScaler`
        pass its ``feature_range``, after a private quantile transform ``(0, 1)``.
        Choose them from public knowledge, never from the rows.
    schema : PublicSchema or None, default=None
        The declared public facts of raw frames
        (:class:`~sklearn_privacy.preprocessing.PublicSchema`): ``fit`` and ``predict``
        then take raw rows, numeric columns are binned over their declared bounds and
        each categorical column has one bin per declared category plus one for
        anything else; the schema's ``classes`` is the label set when ``classes`` is not
        given. ``bounds`` must then be None.
    max_bins : int >= 2 or "auto", default="auto"
        Bins of a numeric column. ``"auto"``: from the public number of rows ``n``,
        the number of columns ``d``, ``epsilon``, ``delta`` and the number of declared
        classes ``K`` (``auto_bins`` in ``sklearn_privacy/additive/_plan.py``): about
        ``0.8 sqrt(n / (K sigma))`` (0.6 at ``delta > 0``; 1.1 for a pure-DP
        classifier with more than 150 rows per class and column per unit of epsilon)
        with ``sigma`` the noise on one bin's count,
        between 3 and 32 (3 on a few hundred rows with many columns at epsilon 1, 8 to
        12 on ten thousand rows with a few columns). Fewer bins hold more rows each,
        which is what a noisy histogram needs.
    max_iter : int >= 0 or "auto", default="auto"
        Boosting cycles; each cycle updates every feature's shape function once, in
        order. The budget is split evenly over the ``max_iter * n_features`` residual
        histograms: more cycles fit interactions between correlated features better
        and put more noise in each histogram. ``0``: no residual histogram (a
        classifier keeps the first round computed from its per-class counts, a
        regressor predicts its noisy mean). ``"auto"``: ``0`` for a pure-DP
        (``delta=0``) classifier of three or more classes, ``2`` for a regressor with
        ``n epsilon / d >= 1000`` (many rows per column for the budget), ``1``
        otherwise (one cycle was better than two or three on the benchmark tables at
        epsilon 0.5 to 4, except on the largest regression table).
    max_features : int >= 1, "auto" or None, default="auto"
        Features modelled. Fewer than the columns: after the totals, the
        ``max_features`` features whose residual histograms at the intercept have the
        largest L1 norms are chosen privately (10 % of the budget: the exponential
        mechanism at ``delta=0``, one Gaussian query of all the scores at ``delta >
        0``) and only they get count and residual histograms; the others have all-zero
        shapes. ``None``: every feature, no selection. ``"auto"``: ``k = max(3, round(5
        epsilon^(1/3)))`` for a classifier at ``delta=0`` (4 at epsilon 0.5, 5 at 1, 8 at
        4), ``k = max(2, round(2.5 epsilon^(1/3)))`` for a regressor (2 at epsilon 1, 3
        at 2; see ``auto_features`` in ``sklearn_privacy/additive/_plan.py``) where there are at
        least ``2 k`` columns and at most 150 rows per class and column per unit of
        epsilon for a classifier (``n epsilon / (K d) <= 150``; 100 for a regressor, at
        any ``delta``); every
        feature otherwise, and for a classifier at ``delta > 0``.
    main_features : array-like of str or int, or None, default=None
        Columns declared, from public knowledge (a codebook, the literature, a
        previous study: never from these rows), to predict the target: names (of the
        schema's columns or of a DataFrame's) or column indices. They are always
        modelled and never scored: where ``max_features`` keeps ``k`` features and
        ``m`` are declared, the private selection picks only the other ``k - m`` among
        the other columns (at Gumbel scale ``k - m`` instead of ``k`` peels), and with
        ``m >= k`` no selection runs and its tenth of the budget goes to the
        histograms (all ``m`` are modelled, even more than ``max_features``). Where
        every column is modelled anyway it changes nothing. On few rows the selection
        is the noisiest step: on the diabetes table at epsilon 0.5 under pure DP,
        declaring ``bmi`` raised the median test R^2 from 0.063 to 0.183
        (``benchmarks/ARCHIVE.md``). The declaration is a public parameter; the
        claim names the columns.
    learning_rate : float in (0, 1], default={LR}
        Share of each (shrunk) residual update applied (and of a two-class
        classifier's first round; the naive-Bayes first round of three classes or more
        is applied whole).
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a
        private release); anything else is for tests only.
"""

_NOTES = """
    Notes
    -----
    **Mechanism.** Cyclic boosting of an additive model over binned features, with
    noisy histogram statistics, as in DP-EBM (Nori, Caruana et al. 2021), with pure-DP
    and multiclass variants and a shrunk update. Every column is binned by declared
    facts only (no budget). Three kinds of noisy queries follow. The **totals** (class
    counts, or the sum of the targets centred at the middle of their declared range; a
    tenth of the budget) set the intercept. Where ``max_features`` keeps fewer features
    than there are columns, a **selection** (a tenth of the budget; the other shares are
    scaled by 0.9) picks the modelled features by the L1 norms of their residual
    histograms at that intercept (the exponential mechanism, as Gumbel top-k, at
    ``delta=0``; the top of the Gaussian-noised scores at ``delta > 0``; declared
    ``main_features`` are modelled without being scored), and everything below
    concerns the modelled features only. The **counts** of every bin, per class
    for a classifier (45 % of the budget for a classifier, 20 % for a regressor), weigh the
    updates. A classifier's intercept is then re-estimated from the class totals and
    the sums of every count histogram over its bins (each counts every row once), by
    their inverse noise variances. For a classifier the counts also give a first round
    of updates: with two
    classes a Jacobi round (the residual sums at the starting intercept are ``N[b, 1] -
    p C[b]``, updated as below); with three or more the naive-Bayes log-likelihoods
    ``log(N'[b, k] / sum_b N'[b, k])`` centred over the classes, ``N'`` the noisy count
    clipped at 0 plus a pseudo-count of ``NB_PSEUDO_COUNT`` (0.25) times the count
    noise's standard deviation (with the log class shares as intercept, this is naive
    Bayes on the binned features; ``learning_rate`` does not scale it). Then
    ``max_iter`` cycles visit the features in order (the rest of the budget, split
    evenly); for feature ``j`` the **residuals** of the current model (``y - p`` clipped
    to ``[-c, c]``, ``c = residual_clip_``: 0.7 where ``n epsilon / (2 d) <= 150``, 1
    otherwise; ``e_y - softmax``; or ``y - f`` clipped to a quarter of the target range,
    ``RESIDUAL_CLIP`` = 0.5 times its half-width) are summed per
    bin, noise is added, and bin ``b``'s score moves by ``learning_rate * g * S_b C_b /
    (C_b^2 + lambda)`` with ``S_b`` the noisy sum, ``C_b`` the noisy count (at least 0),
    ``lambda = (sd(S_b) / tau)^2`` and ``tau`` = ``PRIOR_SHARE`` (0.25) times the
    largest residual (half the target range for a regressor), divided by ``sqrt(d)``
    for a regressor (the posterior mean of the
    bin's mean residual under a Gaussian prior of scale ``tau``: a noisy small bin
    barely moves, so a high-noise release stays near the constant prediction), and ``g``
    a Newton factor ``1 / max(pi (1 - pi), 0.1)`` from the noisy class shares (1 for
    regression). At the end each shape function is centred (weights: the noisy counts)
    into the intercept. All of this after the noise is post-processing.

    **Sensitivities** (replace-one, derived in ``sklearn_privacy/additive/_histograms.py``
    and brute-forced in the tests): class totals and counts L1 2 and L2 ``sqrt(2)`` (per
    feature for the counts); the sum of the centred targets ``high - low``;
    residual sums L1 = L2 = ``2 c`` (two classes), L1 4 and L2 ``2 sqrt(2)`` (``K >= 3``
    classes), L1 = L2 = ``RESIDUAL_CLIP (high - low)`` = ``(high - low) / 2``
    (regression, residuals clipped to a quarter of the target range); each selection
    score moves by at most the residual sums' L1 sensitivity (triangle inequality), so
    the ``d`` scores together by at most ``sqrt(d)`` times it in L2. The accounting is
    in ``noise_plan`` in ``sklearn_privacy/additive/_plan.py``.

    **Threat model and guarantee.** Neighbouring data sets differ in the values of one
    row (replacement); the number of rows, the schema (bounds, categories, the label set
    when declared with ``classes=`` or the schema's ``classes``) and every parameter are
    public. The adversary sees the fitted object (``term_scores_``, ``intercept_``,
    ``bin_counts_``, ``selected_features_``), knows every other row and is
    computationally unbounded. The release is (``epsilon``, ``delta``)-DP; with
    ``delta=0`` it is pure epsilon-DP. Values outside the declared bounds are clipped
    into the end bins and targets outside the declared range are clipped silently (a
    warning would tell whether a row was outside). The fit never fails on a
    data-dependent condition: with declared classes, a row whose label is outside them
    (any value, ``NaN`` included) stays a row (``n`` is unchanged) and contributes
    nothing -- it is counted in no class total and no count histogram, and its residual
    is zero (in the feature selection's scores too) -- so each released statistic moves
    by at most half its replace-one sensitivity when either of the two rows is outside,
    and the noise above covers it. How many rows were outside is kept in the private
    channel ``_labels_outside_classes`` (never pickled), without a warning.

    **What is not guaranteed.** Floating-point effects in sampling are not covered (as
    for every DP library). A fixed ``random_state`` makes the noise reproducible and the
    release non-private (tests only). Without declared classes the label set found in
    ``y`` makes :func:`~sklearn_privacy.privacy_claim` ``inf``. Steps fitted before this
    one on the same rows are not covered: the claim of the whole published object is
    :func:`sklearn_privacy.privacy_claim`'s.
"""

_ATTRS = """    intercept_ : float or ndarray of shape (n_classes,)
        Released intercept (one logit for two classes, one per class for more).
    term_scores_ : list of ndarray
        Per feature, the released score of every bin (shape ``(n_bins,)``, or ``(n_bins,
        n_classes)`` for more than two classes), centred.
    bin_counts_ : list of ndarray of shape (n_bins,)
        The noisy row count of every bin (DP output; may be negative); NaN for a
        feature that was not selected (no count was released).
    selected_features_ : ndarray of int
        Indices of the modelled features, in column order: the declared
        ``main_features`` and the DP output of the private selection; every column
        where every column is modelled.
    bin_edges_ : list of ndarray or None
        Interior bin edges of every numeric feature (None for a categorical one): from
        the declared bounds and ``max_bins_``.
    residual_clip_ : float
        Share of the largest residual at which residuals are clipped (the residual
        histograms' sensitivity scales with it): 0.5 for a regressor (a quarter of the
        target range); for two classes 0.7 where ``n epsilon / (2 d) <= 150``, else 1;
        1 for three classes or more. A function of public quantities only.
    max_bins_ : int
        Bins of a numeric column: ``max_bins``, or the ``"auto"`` rule's value (from
        ``n``, the number of columns, ``epsilon``, ``delta`` and the declared classes).
    total_noise_scale_ : float
        Laplace scale (``delta=0``) or standard deviation of the noise on the totals.
    count_noise_scale_ : float
        Laplace scale (``delta=0``) or standard deviation of the count noise.
    residual_noise_scale_ : float
        The same for every residual histogram.
    schema_ : PublicSchema
        The fitted schema (only when ``schema`` is given).
    n_iter_ : int
        Boosting cycles run: ``max_iter``, or the ``"auto"`` rule's value (every fit
        runs all of them).
    epsilon_ : float
        Epsilon of the release (``epsilon``).
    delta_ : float
        Its delta.
    epsilon_reason_ : str
        What the guarantee covers.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.
"""
