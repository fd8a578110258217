"""The budget of a private boosting fit: its split over the kinds of queries, the settings
chosen from public quantities only (bins, features, cycles) and the noise of each query."""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from ..mechanisms._gaussian import analytic_gaussian_sigma

#: shares of the budget (epsilon for delta = 0, mu^2 for delta > 0) of the three kinds of
#: queries; a classifier's per-class counts also give its first round of updates
SHARES = {"classification": {"total": 0.1, "count": 0.45, "residual": 0.45},
          "regression": {"total": 0.1, "count": 0.2, "residual": 0.7}}
#: prior standard deviation of a bin's mean residual, as a share of the largest residual
PRIOR_SHARE = 0.25
#: a classifier of three classes or more starts from the naive-Bayes log-likelihoods of
#: its noisy per-class counts, each count clipped at 0 plus NB_PSEUDO_COUNT times the
#: count noise's standard deviation (chosen on the benchmark's multiclass tables: 0.1,
#: 0.25 and 0.5 were within 2.5 points of each other at epsilon 0.5 to 8); the
#: two-class first round stays the ridge step of the residual sums (the naive-Bayes
#: round lowered German credit's and HMDA's shares of draws at least the majority class
#: at epsilon 0.5 and 1)
NB_PSEUDO_COUNT = 0.25
#: floor of the curvature p (1 - p) in the Newton factor of the logistic updates
MIN_CURVATURE = 0.1
#: the prior scale of a bin's mean residual is PRIOR_SHARE * (largest residual) / d^power:
#: a regressor's shape functions add up over d features, so each is shrunk more (chosen
#: on the benchmark tables: 0 is better for the classifiers, 0.5 for the regressors); a
#: regressor's "largest residual" here is half the declared target range
TAU_POWER = {"classification": 0.0, "regression": 0.5}
#: a regressor's residuals are clipped to RESIDUAL_CLIP * (high - low) / 2: the residual
#: histograms' sensitivity is RESIDUAL_CLIP * (high - low) (half of the unclipped one)
RESIDUAL_CLIP = 0.5
#: a two-class classifier's residuals ``y - p`` are clipped to ``[-c, c]`` with ``c =
#: CLASSIFIER_RESIDUAL_CLIP`` where the rows per class and column per unit of epsilon, ``n
#: epsilon / (2 d)``, are at most CLASSIFIER_CLIP_MAX_RATIO (``c = 1``, no clip,
#: otherwise): the residual histograms' sensitivity is then ``2 c`` (chosen on the
#: benchmark tables: see :func:`classifier_residual_clip`)
CLASSIFIER_RESIDUAL_CLIP = 0.7
CLASSIFIER_CLIP_MAX_RATIO = 150.0
#: ``max_bins="auto"``: ``round(AUTO_BINS_SCALE * sqrt(n / (K sigma)))`` numeric bins,
#: clipped to [AUTO_BINS_MIN, AUTO_BINS_MAX]; ``sigma`` is the standard deviation of one
#: bin's noisy count when the counts get AUTO_BINS_REFERENCE_SHARE of the budget; at
#: ``delta > 0`` the scale is AUTO_BINS_SCALE_GAUSSIAN (the count noise is then small
#: next to the residual noise, which more bins spread thinner)
AUTO_BINS_SCALE = 0.8
AUTO_BINS_SCALE_GAUSSIAN = 0.6
#: a pure-DP classifier whose rows per class and column per unit of epsilon, ``n epsilon
#: / (K d)``, exceed CLASSIFIER_CLIP_MAX_RATIO (the large-table regime: every column
#: modelled, no residual clip) uses AUTO_BINS_SCALE_LARGE: its count noise is small next
#: to the rows in a bin and the binning bias dominates
AUTO_BINS_SCALE_LARGE = 1.1
AUTO_BINS_MIN = 3
AUTO_BINS_MAX = 32
AUTO_BINS_REFERENCE_SHARE = 0.45
#: share of the budget (epsilon, or mu^2) of the private feature selection, when
#: ``max_features`` keeps fewer features than there are columns (the other shares are
#: scaled by ``1 - SELECT_SHARE``)
SELECT_SHARE = 0.1
#: precision of the prior on the second differences of a numeric feature's bin effects,
#: as a multiple of the ridge precision of one bin's effect, per task (chosen on the
#: benchmark tables: it raised CPS 1988 and ISLR wages at epsilon 0.5, 1 and 4 under
#: pure DP, moved diabetes by under 0.005 from epsilon 1, and hurt the classifiers,
#: whose sparse outer bins carry noisy counts)
SMOOTH = {"classification": 0.0, "regression": 10.0}
#: ``max_features="auto"`` at ``delta=0``: ``k = max(AUTO_FEATURES_MIN[task], round(
#: AUTO_FEATURES_SCALE[task] * epsilon ** (1 / 3)))`` features where the columns are at
#: least ``2 k`` and the rows per class and column per unit of epsilon, ``n epsilon / (K
#: d)``, are at most AUTO_FEATURES_MAX_RATIO[task] (all of them otherwise, and for a
#: classifier at ``delta > 0``); a classifier's threshold is its residual clip's
AUTO_FEATURES_SCALE = {"classification": 5.0, "regression": 2.5}
AUTO_FEATURES_MIN = {"classification": 3, "regression": 2}
AUTO_FEATURES_MAX_RATIO = {"classification": 150.0, "regression": 100.0}
#: ``max_iter="auto"``: a regressor runs two cycles where ``n epsilon / d`` is at least
#: AUTO_ITER_RATIO (one otherwise)
AUTO_ITER_RATIO = 1000.0


def rows_per_cell(n_samples, n_features, epsilon, n_classes) -> float:
    """Rows per class and column per unit of epsilon, ``n epsilon / (K d)``: the public
    quantity that sets a classifier's regime (selection, residual clip, bins)."""
    return (int(n_samples) * float(epsilon)
            / (max(int(n_classes), 1) * max(int(n_features), 1)))


def auto_features(*, n_samples, n_features, epsilon, delta, n_classes,
                  task="classification"):
    """Features kept by ``max_features="auto"``, a function of public quantities only.

    Under basic composition (``delta=0``) the noise on every count and residual
    histogram grows in proportion to the number of features modelled, while the signal
    of correlated features does not add up: a few well-chosen features beat all of them
    on few rows. The rule keeps ``k = max(3, round(5 epsilon^(1/3)))`` for a classifier
    (4 at epsilon 0.5, 5 at 1, 8 at 4) and ``k = max(2, round(2.5 epsilon^(1/3)))`` for
    a regressor (2 at epsilon 0.5 and 1, 3 at 2, 4 at 4: its shape functions add up to
    one prediction, and on few rows two or three accurate ones beat more noisy ones)
    where there are at least ``2 k`` columns and ``n epsilon / (K d)`` is at most 150
    for a classifier (the threshold of its residual clip: on the benchmark, HMDA at
    epsilon 2, at 128, reached the majority class in 100 % of draws with the selection
    instead of 75 % without; credit at 1 moved from 0.768 to 0.765) or 100 for a
    regressor (few rows per class and column for the budget), and every column
    otherwise (dropping a few columns saves too little noise to pay for the selection,
    and on many rows every column's histogram is accurate enough to help); chosen on
    the benchmark tables and the adult census data (``benchmarks/bench_dp_tabular.py``,
    ``benchmarks/ARCHIVE.md``). Under Gaussian composition (``delta > 0``) the noise
    grows with the square root only, and a classifier keeps every feature; a regressor
    applies the same rule (on the diabetes table its R^2 at epsilon 1 rose from 0.132 to
    0.186 with it).

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_features : int
    epsilon : float > 0
    delta : float in [0, 1)
    n_classes : int
        Count columns ``K``, as for ``auto_bins``.
    task : {"classification", "regression"}, default="classification"

    Returns
    -------
    n_selected : int
    """
    d = max(int(n_features), 1)
    ratio = rows_per_cell(n_samples, d, epsilon, n_classes)
    if (delta > 0 and task == "classification") or ratio > AUTO_FEATURES_MAX_RATIO[task]:
        return d
    k = max(AUTO_FEATURES_MIN[task],
            round(AUTO_FEATURES_SCALE[task] * float(epsilon) ** (1.0 / 3.0)))
    return int(k) if 2 * k <= d else d


def main_feature_indices(main_features, n_features, names, owner="estimator"):
    """Column indices of the declared ``main_features`` (names or indices), sorted and
    unique; a clear error for an unknown name, an index outside the columns, a name
    without column names (``names`` None) or another type. Public parameters only."""
    d = int(n_features)
    if main_features is None:
        return np.empty(0, dtype=np.intp)
    idx = []
    for item in np.asarray(main_features, dtype=object).ravel():
        if isinstance(item, (Integral, np.integer)) and not isinstance(item, bool):
            j = int(item)
            if not 0 <= j < d:
                raise ValueError(
                    f"{owner}: main_features has the index {j}, outside the {d} columns; "
                    f"pass column indices in [0, {d}) or column names.")
        elif isinstance(item, str):
            if names is None:
                raise ValueError(
                    f"{owner}: main_features names the column {item!r}, but X has no "
                    "column names; pass column indices, or fit a DataFrame (or a "
                    "schema).")
            if item not in names:
                raise ValueError(
                    f"{owner}: main_features names the column {item!r}, which is not a "
                    f"column of X; the columns are {names[:10]}"
                    f"{' ...' if len(names) > 10 else ''}.")
            j = names.index(item)
        else:
            raise TypeError(
                f"{owner}: main_features must hold column names (str) or indices (int), "
                f"got {type(item).__name__} {item!r}.")
        idx.append(j)
    return np.unique(np.asarray(idx, dtype=np.intp))


def classifier_residual_clip(*, n_samples, n_features, epsilon, n_classes):
    """Clip ``c`` of a classifier's residuals ``y - p`` (two classes; 1, no clip, for
    more), a function of public quantities only.

    Clipping the residuals to ``[-c, c]`` cuts the sensitivity of every residual
    histogram from 2 to ``2 c``, hence its noise by the factor ``c``, and biases the
    sums of rows the model gets badly wrong (``|y - p| > c``). Where the noise is large
    next to the rows' signal (few rows per class and column for the budget, ``n epsilon
    / (2 d) <= 150``), ``c = 0.7`` pays; elsewhere ``c = 1``. Chosen on the four binary
    tables of ``benchmarks/bench_dp_tabular.py`` (``benchmarks/ARCHIVE.md``): at epsilon
    0.5 under pure DP, German credit 0.752 -> 0.759 and Swiss labour 0.588 -> 0.607;
    with ``c = 0.7`` everywhere credit fell at epsilon 4 and 8 (0.785 -> 0.784, 0.795 ->
    0.792).

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_features : int
        Columns ``d`` (all of them, before any selection).
    epsilon : float > 0
    n_classes : int
        Number of classes (declared, or found).

    Returns
    -------
    clip : float in (0, 1]
    """
    if int(n_classes) != 2:
        return 1.0
    ratio = rows_per_cell(n_samples, n_features, epsilon, 2)
    return CLASSIFIER_RESIDUAL_CLIP if ratio <= CLASSIFIER_CLIP_MAX_RATIO else 1.0


def auto_bins(*, n_samples, n_features, epsilon, delta, n_classes, large_table=False):
    """Numeric bins of ``max_bins="auto"``, a function of public quantities only.

    The noise on one bin's count does not depend on the number of bins ``B``; the rows
    of a class in a bin, about ``n / (K B)``, fall as ``B`` grows, while the binning bias
    falls. With ``sigma`` the count noise's standard deviation (Laplace at epsilon share
    ``s = AUTO_BINS_REFERENCE_SHARE`` over the ``d`` count histograms: ``sqrt(2) 2 d /
    (s epsilon)``; Gaussian at ``mu^2`` share ``s``: ``sqrt(2 d) / (sqrt(s) mu)``, ``mu``
    the GDP parameter of (epsilon, delta)), the rule is ``B = c * sqrt(n / (K sigma))``
    with ``c`` = 0.8 at ``delta = 0`` and 0.6 at ``delta > 0``: the per-bin
    signal-to-noise ratio ``n / (K B sigma)`` then grows in proportion to ``B``. A
    pure-DP classifier in the large-table regime (``large_table``: more than 150 rows
    per class and column per unit of epsilon over all its columns) uses ``c`` = 1.1:
    there the count noise is small next to the rows of a bin and the binning bias
    dominates (on the benchmark, German credit at epsilon 4 rose from 0.785 to 0.790 and
    HMDA from 0.889 to 0.894; Swiss labour at 8 fell from 0.653 to 0.639). The
    constants and the bounds were chosen on the benchmark tables
    (``benchmarks/bench_dp_tabular.py``, ``benchmarks/ARCHIVE.md``).

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_features : int
    epsilon : float > 0
    delta : float in [0, 1)
    n_classes : int
        Count columns ``K``: the declared classes (2 without declared classes) of a
        classifier, 1 for a regressor.
    large_table : bool, default=False
        A classifier with ``n epsilon / (K d) > 150`` over all its ``d`` columns (pure DP
        only: ignored at ``delta > 0``).

    Returns
    -------
    n_bins : int
    """
    d, share = max(int(n_features), 1), AUTO_BINS_REFERENCE_SHARE
    if delta > 0:
        mu = 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0)
        sigma = math.sqrt(2.0 * d) / (math.sqrt(share) * mu)
    else:
        sigma = math.sqrt(2.0) * 2.0 * d / (share * epsilon)
    ratio = int(n_samples) / (max(int(n_classes), 1) * sigma)
    scale = (AUTO_BINS_SCALE_GAUSSIAN if delta > 0 else
             AUTO_BINS_SCALE_LARGE if large_table else AUTO_BINS_SCALE)
    bins = round(scale * math.sqrt(ratio))
    return int(min(max(bins, AUTO_BINS_MIN), AUTO_BINS_MAX))


def noise_plan(*, epsilon, delta, n_features, n_rounds, sensitivities, shares,
               n_candidates=None, n_picks=None):
    """The data-independent noise of one fit: three kinds of queries.

    ``"total"`` (one query: the class totals, or the sum of the centred targets),
    ``"count"`` (one query: the ``d`` per-bin count histograms together) and
    ``"residual"`` (``n_rounds * d`` queries: one residual-sum histogram each), with the
    per-feature ``sensitivities[kind] = (l1, l2)`` and the budget ``shares[kind]``
    (summing to 1).

    With ``n_rounds = 0`` there is no residual query and its share goes to the counts.

    With ``n_candidates`` (the number of columns scored, more than ``n_picks``) a fourth
    kind, ``"select"``, picks ``n_picks`` (default ``n_features``; fewer when declared
    main features are modelled without a selection) of the modelled features among them
    by their scores (``sensitivities["select"] = (l1, l2)``: the largest change of one
    score). ``delta = 0``: the exponential mechanism, peeled ``n_picks`` times at
    ``share epsilon / n_picks`` each (one-shot Gumbel top-k, Durfee & Rogers 2019):
    Gumbel noise of scale ``2 l1 n_picks / (share epsilon)``. ``delta > 0``: the
    vector of the ``n_candidates`` scores is one Gaussian query of L2 sensitivity
    ``sqrt(n_candidates) l1`` (every score moves by at most ``l1``); the top
    ``n_picks`` noisy scores are post-processing.

    ``delta = 0`` (pure epsilon-DP, basic composition): the total query is Laplace with
    scale ``l1 / (share epsilon)``, the count query ``d l1 / (share epsilon)``, each
    residual query ``l1 n_rounds d / (share epsilon)``; the epsilons add up to
    ``epsilon``.

    ``delta > 0`` (Gaussian, exact composition in Gaussian DP): ``mu`` is the GDP
    parameter that is exactly (epsilon, delta)-DP (Balle & Wang's analytic Gaussian with
    unit sensitivity: ``mu = 1 / sigma(epsilon, delta, 1)``); a kind with ``m`` queries
    gets ``mu_k^2 = share mu^2 / m`` per query (noise ``l2 / mu_k``, ``sqrt(d) l2 /
    mu_k`` for the counts); the adaptive composition is ``sqrt(sum mu_k^2) = mu``-GDP
    (Dong, Roth & Su 2022, Corollary 3.3), i.e. (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in [0, 1)
    n_features : int
    n_rounds : int
        Boosting cycles.
    sensitivities : dict
        ``{"total": (l1, l2), "count": (l1, l2), "residual": (l1, l2)}`` (one feature's
        histogram for the count and residual kinds).
    shares : dict
        Share of the budget of each kind (epsilon for ``delta=0``, ``mu^2`` otherwise).

    Returns
    -------
    plan : dict
        ``noise`` ("laplace" or "gaussian"); per kind ``<kind>_scale`` (Laplace scale
        or Gaussian standard deviation of each coordinate), ``<kind>_sd`` (standard
        deviation) and ``<kind>_budget`` (epsilon, or mu, of one query);
        ``gaussian_mu``.
    """
    d, T = int(n_features), int(n_rounds)
    if T == 0:
        shares = dict(shares, count=shares["count"] + shares["residual"], residual=0.0)
    mult = {"total": 1.0, "count": float(d), "residual": 1.0}
    n_queries = {"total": 1, "count": 1, "residual": T * d}
    gaussian = delta > 0
    plan = {"noise": "gaussian" if gaussian else "laplace", "gaussian_mu": None}
    mu = 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0) if gaussian else None
    picks = d if n_picks is None else int(n_picks)
    if n_candidates is not None and int(n_candidates) > picks > 0:
        l1 = sensitivities["select"][0]
        if gaussian:
            budget = math.sqrt(shares["select"]) * mu
            scale = math.sqrt(int(n_candidates)) * l1 / budget
            sd = scale
        else:
            budget = shares["select"] * epsilon
            scale = 2.0 * l1 * picks / budget
            sd = math.pi * scale / math.sqrt(6.0)
        plan["select_scale"], plan["select_sd"], plan["select_budget"] = scale, sd, budget
    for kind in ("total", "count", "residual"):
        l1, l2 = sensitivities[kind]
        if n_queries[kind] == 0:
            plan[f"{kind}_scale"] = plan[f"{kind}_sd"] = math.inf
            plan[f"{kind}_budget"] = 0.0
            continue
        if gaussian:
            budget = math.sqrt(shares[kind] / n_queries[kind]) * mu
            scale = math.sqrt(mult[kind]) * l2 / budget
            sd = scale
        else:
            budget = shares[kind] * epsilon / n_queries[kind]
            scale = mult[kind] * l1 / budget
            sd = math.sqrt(2.0) * scale
        plan[f"{kind}_scale"], plan[f"{kind}_sd"], plan[f"{kind}_budget"] = scale, sd, budget
    plan["gaussian_mu"] = mu
    return plan


def _draw(rng, plan, shape, which):
    scale = plan[f"{which}_scale"]
    if plan["noise"] == "laplace":
        return rng.laplace(0.0, scale, size=shape)
    return rng.normal(0.0, scale, size=shape)


#: ``noise_to_signal`` above which a boosting release is expected to lose to a constant
#: prediction, per task (a regressor's residual bound, a quarter of the declared target
#: range, is far above a typical residual, so its ratio understates the noise);
#: calibrated on the tables of ``benchmarks/bench_dp_tabular.py``, false-positive and
#: false-negative rates there from ``benchmarks/bench_boosting_warning.py``
LOSE_TO_CONSTANT_RATIO = {"classification": 1.0, "regression": 0.15}


def noise_to_signal(plan, *, n_samples, n_classes, n_bins, n_features, n_rounds,
                    sensitivities):
    """Public noise-to-signal ratio of a boosting fit,
    ``sd / ((n / (K B)) (l1 / 2) sqrt(d))``.

    ``sd`` is the standard deviation of the noise on one entry of one feature's
    histogram, ``n / (K B)`` the number of rows of one class (count column) expected in
    one of ``B`` bins (the mean number of bins over the columns) and ``l1 / 2`` the
    largest contribution of one row to that entry (half the sensitivity under
    replacement): ``sd / ((n / (K B)) (l1 / 2))`` is one entry's noise in units of the
    largest sum its rows can carry. A row's score adds one entry of each of the ``d``
    modelled features: their noise adds up as ``sqrt(d)``, their signal up to ``d``
    times, hence the ``sqrt(d)``. The query is the residual histogram where the fit runs
    residual cycles (``n_rounds > 0``) and the count histogram otherwise. Only ``n``,
    ``K``, the bins, ``d``, ``epsilon``, ``delta`` and the declared bounds enter: the
    warning it triggers reveals nothing about the rows.

    Parameters
    ----------
    plan : dict
        The output of :func:`noise_plan`.
    n_samples : int
    n_classes : int
        Count columns ``K`` (declared classes, 2 without; 1 for a regressor).
    n_bins : float
        Mean number of bins per column.
    n_features : int
        Modelled features ``d``.
    n_rounds : int
    sensitivities : dict
        As for :func:`noise_plan`.

    Returns
    -------
    ratio : float
    """
    kind = "residual" if int(n_rounds) > 0 else "count"
    rows = float(n_samples) / (max(int(n_classes), 1) * max(float(n_bins), 1.0))
    unit = 0.5 * float(sensitivities[kind][0]) * math.sqrt(max(int(n_features), 1))
    return float(plan[f"{kind}_sd"]) / (rows * unit)
