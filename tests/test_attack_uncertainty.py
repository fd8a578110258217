"""Membership figures with uncertainty and chance levels; selection under a bound.

Oracles: the Mann-Whitney null moments of the AUC (mean 1/2, variance
(m + n + 1) / (12 m n)), brute-force resampling with scikit-learn's ``roc_auc_score``,
a model that never saw the rows (a frozen model trained on other Adult rows).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.attacks import (
    EpsilonLowerBoundResult,
    epsilon_lower_bound,
    evaluate_scores,
    make_membership_scorer,
    membership_inference,
    refit_under_leakage_bound,
)
from sklearn_privacy.attacks._roc import allowed_false_positives
from sklearn_privacy.datasets import load_adult


@pytest.fixture(scope="module")
def adult():
    train, test = load_adult(), load_adult(subset="test")
    return train.data, train.target, test.data, test.target


# --------------------------------------------------------------- intervals, null level
def test_bootstrap_auc_equals_brute_force_resampling():
    """The vectorised bootstrap equals resampling by hand with roc_auc_score."""
    rng = np.random.RandomState(0)
    res = evaluate_scores(np.arange(220) < 120, np.r_[np.round(rng.normal(0.3, 1, 120), 1),
                                                      np.round(rng.normal(0, 1, 100), 1)],
                          random_state=0)
    from sklearn_privacy.attacks._roc import batched_metric, bootstrap_weights

    gen = np.random.default_rng(5)
    w_in, w_out = bootstrap_weights(gen, 60, 50, 40)
    got = batched_metric(np.r_[res._eval_pool()], w_in, w_out, "auc")
    s_in, s_out = res._eval_pool()
    for b in range(40):
        a = np.repeat(s_in, w_in[b, :60].astype(int))
        c = np.repeat(s_out, w_out[b, 60:].astype(int))
        expected = roc_auc_score(np.r_[np.ones(a.size), np.zeros(c.size)], np.r_[a, c])
        assert got[b] == pytest.approx(expected, abs=1e-12)
    assert res.metric_value("auc") == pytest.approx(res.auc, abs=1e-15)
    assert res.metric_value("advantage") == pytest.approx(res.advantage, abs=1e-15)
    assert res.metric_value("balanced_accuracy") == pytest.approx(res.balanced_accuracy)


def test_auc_null_matches_mann_whitney_and_interval_covers():
    rng = np.random.RandomState(1)
    res = evaluate_scores(np.arange(1000) < 400, np.r_[rng.normal(size=400),
                                                       rng.normal(size=600)], random_state=0)
    m, n = len(res.eval_members), len(res.eval_nonmembers)
    null = res.null_distribution("auc", n_permutations=4000, random_state=0)
    sd = np.sqrt((m + n + 1) / (12.0 * m * n))
    assert abs(null.mean() - 0.5) < 4 * sd / np.sqrt(4000)
    assert null.std() == pytest.approx(sd, rel=0.05)
    assert res.chance_level("auc", random_state=0) == 0.5
    low, high = res.confidence_interval("auc", confidence=0.95, n_resamples=2000, random_state=0)
    assert low < 0.5 < high
    # percentile bootstrap width close to the normal interval of the Mann-Whitney AUC
    assert high - low == pytest.approx(2 * 1.96 * sd, rel=0.1)


def test_advantage_chance_level_is_positive_and_matches_its_null():
    """The advantage of a signal-free attack: about 0.89 / sqrt(n), not 0."""
    rng = np.random.RandomState(2)
    members = np.arange(400) < 200
    seeds = [evaluate_scores(members, np.r_[rng.normal(size=200), rng.normal(size=200)],
                             random_state=k).advantage for k in range(200)]
    res = evaluate_scores(members, np.r_[rng.normal(size=200), rng.normal(size=200)],
                          random_state=0)
    chance = res.chance_level("advantage", random_state=0)
    assert chance == pytest.approx(np.mean(seeds), abs=3 * np.std(seeds) / np.sqrt(200))
    assert 0.06 < chance < 0.11


def test_tpr_at_fpr_resolution_and_exact_count_rule():
    rng = np.random.RandomState(3)
    res = evaluate_scores(np.arange(1000) < 500, np.r_[rng.normal(1, 1, 500),
                                                       rng.normal(0, 1, 500)], random_state=0)
    n_out = len(res.eval_nonmembers)
    assert n_out == 250 and res.fpr_resolution == 1 / 250
    assert np.isnan(res.tpr_at_fpr[0.001])  # one false positive is already 0.4 %
    with pytest.raises(ValueError, match="not resolved"):
        res.confidence_interval("tpr_at_fpr", fpr=0.001, random_state=0)
    # 1 % of 250 allows 2 false positives: the largest TPR with fp <= 2, by hand
    s_in, s_out = res._eval_pool()
    best = max(np.mean(s_in >= t) for t in np.r_[s_in, s_out] if np.sum(s_out >= t) <= 2)
    assert res.tpr_at_fpr[0.01] == best
    assert allowed_false_positives(0.29, 100) == 29  # 0.29 * 100 = 28.999999999999996
    assert allowed_false_positives(0.01, 99) == 0
    low, high = res.confidence_interval("tpr_at_fpr", fpr=0.01, random_state=0)
    assert low <= res.tpr_at_fpr[0.01] <= high
    summary = res.summary(n_resamples=200, random_state=0)
    assert set(summary) == {"auc", "advantage", "balanced_accuracy", "tpr_at_fpr=0.01"}
    assert summary["auc"]["chance_level"] == 0.5


def test_bad_metric_arguments():
    rng = np.random.RandomState(0)
    res = evaluate_scores(np.arange(100) < 50, np.r_[rng.normal(size=50),
                                                     rng.normal(size=50)], random_state=0)
    with pytest.raises(ValueError, match="metric must be one of"):
        res.confidence_interval("accuracy", random_state=0)
    with pytest.raises(ValueError, match="needs fpr"):
        res.chance_level("tpr_at_fpr", random_state=0)
    with pytest.raises(ValueError, match="n_resamples"):
        res.confidence_interval("auc", n_resamples=2, random_state=0)


# ------------------------------------------------- the default scorer metric on Adult
def _frozen_scores(model, X, y, seeds, metric):
    out = []
    for seed in seeds:
        rows = np.random.RandomState(seed).permutation(len(y))[:400]
        Xs, ys = X[rows], y[rows]
        scorer = make_membership_scorer(Xs, ys, attack="loss", metric=metric,
                                        random_state=seed)
        scores = cross_validate(model, Xs, ys, cv=KFold(2, shuffle=True, random_state=seed),
                                scoring=scorer, error_score="raise")["test_score"]
        out.append(scores.mean())
    return np.array(out)


def test_default_metric_is_centred_on_a_model_that_never_saw_the_rows(adult):
    """Frozen model trained on other rows: the scorer's members and non-members are
    all unseen, so the leakage must read 0 on average. The default (0.5 - AUC) does,
    within its standard error over 60 seeds; the advantage reads about -0.1."""
    X_tr, y_tr, X_te, y_te = adult
    frozen = FrozenEstimator(LogisticRegression(max_iter=1000).fit(X_tr[:5000], y_tr[:5000]))
    seeds = range(60)
    auc = _frozen_scores(frozen, X_te, y_te, seeds, "auc")
    se = auc.std(ddof=1) / np.sqrt(auc.size)
    assert abs(auc.mean()) < se
    adv = _frozen_scores(frozen, X_te, y_te, range(20), "advantage")
    assert adv.mean() < -0.06 and adv.max() < 0  # the noise floor of the old default


def test_recipe_picks_a_model_under_the_bound_or_says_none_is(adult):
    """The selection recipe: the most accurate sigma whose measured leakage is under the
    bound. Regression: with the advantage (noise floor about 0.1) no candidate met a
    0.05 bound and np.argmax over -inf returned index 0, the least private model."""
    X_tr, y_tr, _, _ = adult
    rows = np.random.RandomState(0).permutation(len(y_tr))[:600]
    X, y = X_tr[rows], y_tr[rows]
    grid = {"sigma": [1e-3, 1e-1, 10.0]}
    cv = KFold(2, shuffle=True, random_state=0)
    scoring = {"acc": "accuracy", "mia": make_membership_scorer(X, y, attack="loss",
                                                                random_state=0)}
    search = GridSearchCV(FILLogisticRegression(alpha=1e-4, random_state=0), grid,
                          scoring=scoring, cv=cv,
                          refit=refit_under_leakage_bound("acc", "mia", bound=0.05)).fit(X, y)
    leak = -search.cv_results_["mean_test_mia"]
    assert leak[search.best_index_] <= 0.05
    ok = np.flatnonzero(leak <= 0.05)
    acc = search.cv_results_["mean_test_acc"]
    assert search.best_index_ == ok[np.argmax(acc[ok])]
    # the old metric under the same bound: no candidate, and the search says so
    scoring_adv = {"acc": "accuracy",
                   "mia": make_membership_scorer(X, y, attack="loss", metric="advantage",
                                                 random_state=0)}
    with pytest.raises(ValueError, match="No candidate .* under the bound 0.05"):
        GridSearchCV(FILLogisticRegression(alpha=1e-4, random_state=0), grid,
                     scoring=scoring_adv, cv=cv,
                     refit=refit_under_leakage_bound("acc", "mia", bound=0.05)).fit(X, y)


def test_refit_helper_warns_and_picks_the_least_leaky():
    cv_results = {"params": [{"s": 1}, {"s": 2}], "mean_test_acc": [0.9, 0.8],
                  "mean_test_mia": [-0.3, -0.2]}
    refit = refit_under_leakage_bound("acc", "mia", 0.1, on_infeasible="warn")
    with pytest.warns(UserWarning, match="least leaky candidate \\(1\\)"):
        assert refit(cv_results) == 1
    with pytest.raises(ValueError, match="not a score of the search"):
        refit_under_leakage_bound("accuracy", "mia", 0.1)(cv_results)
    with pytest.raises(TypeError, match="'bound' parameter of refit_under_leakage_bound"):
        refit_under_leakage_bound("acc", "mia", float("nan"))
    nan = dict(cv_results, mean_test_mia=[np.nan, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        refit_under_leakage_bound("acc", "mia", 0.1, on_infeasible="warn")(nan)


def test_scorer_confidence_option_scores_the_upper_limit():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    clf = LogisticRegression().fit(X[:150], y[:150])
    point = make_membership_scorer(X, y, random_state=0)
    upper = make_membership_scorer(X, y, confidence=0.9, random_state=0)
    res = point.result(clf, X[150:], y[150:])
    high = res.confidence_interval("auc", confidence=0.9, random_state=0)[1]
    assert upper(clf, X[150:], y[150:]) == pytest.approx(0.5 - high)
    assert upper(clf, X[150:], y[150:]) < point(clf, X[150:], y[150:])
    with pytest.raises(ValueError, match="confidence"):
        make_membership_scorer(X, y, confidence=1.5, random_state=0)


# --------------------------------------------------------------------- names and reprs
def test_epsilon_lower_bound_name_and_heuristic_repr():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    res = membership_inference(model, np.r_[X[:100], rng.normal(size=(100, 2))],
                               np.r_[y[:100], y[:100]], np.arange(200) < 100,
                               random_state=0)
    bound = epsilon_lower_bound(res)
    assert isinstance(bound, EpsilonLowerBoundResult) and not bound.formal
    assert "not a formal bound" in repr(bound)
    assert not hasattr(bound, "epsilon")
    audit = epsilon_lower_bound(members=np.arange(100) < 50,
                                scores=np.r_[np.ones(50), np.zeros(50)], random_state=0)
    assert audit.formal and "not a formal bound" not in repr(audit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        repr(audit)


# ------------------------------------------------------------------------- ROC display
def test_roc_display_band_unresolved_region_and_legend():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_privacy.attacks import MembershipROCDisplay

    rng = np.random.RandomState(0)
    res = evaluate_scores(np.arange(1000) < 500, np.r_[rng.normal(1, 1, 500),
                                                       rng.normal(0, 1, 500)], random_state=0)
    disp = MembershipROCDisplay.from_result(res, n_resamples=200)
    assert disp.n_nonmembers == 250
    # the unresolved region ends at one false positive, 1 / 250
    patch = disp.unresolved_
    right = (patch.get_x() + patch.get_width() if hasattr(patch, "get_width")
             else np.asarray(patch.get_xy())[:, 0].max())  # Rectangle or Polygon
    assert right == pytest.approx(1 / 250)
    label = disp.line_.get_label()
    assert "TPR @ 0.1% FPR: unresolved by 250 non-members" in label
    assert f"TPR {res.tpr_at_fpr[0.01]:.3g} @ 1% FPR" in label
    low, high = disp.roc_auc_interval
    assert low < res.auc < high and f"[{low:.3f}, {high:.3f}]" in label
    grid, band_low, band_high = disp.tpr_band
    assert grid.min() == pytest.approx(1 / 250) and np.all(band_low <= band_high)
    # the curve as drawn lies inside its band at most grid points
    inside = (np.interp(grid, disp.fpr, disp.tpr) >= band_low - 1e-12) & \
        (np.interp(grid, disp.fpr, disp.tpr) <= band_high + 1e-12)
    assert inside.mean() > 0.9
    plain = MembershipROCDisplay.from_result(res, confidence=None)
    assert plain.band_ is None and plain.roc_auc_interval is None
    with pytest.raises(ValueError, match="confidence"):
        MembershipROCDisplay.from_result(res, confidence=2.0)
    plt.close("all")


def test_privacy_utility_display_shows_chance_level_bound_and_labelled_error_bars():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_privacy.metrics import PrivacyUtilityDisplay

    cv_results = {"params": [{"sigma": s} for s in (0.001, 0.01, 0.1, 10.0)],
                  "mean_test_acc": [0.92, 0.92, 0.919, 0.6],
                  "std_test_acc": [0.01] * 4,
                  "mean_test_mia": [-0.06, -0.059, -0.058, 0.01],
                  "std_test_mia": [0.02] * 4,
                  "split0_test_acc": [0.9] * 4, "split1_test_acc": [0.9] * 4}
    disp = PrivacyUtilityDisplay.from_cv_results(cv_results, utility="acc", leakage="mia",
                                                 leakage_bound=0.05)
    assert disp.chance_level_.get_xdata()[0] == 0.0
    assert disp.bound_.get_xdata()[0] == 0.05
    labels = disp.ax_.get_legend_handles_labels()[1]
    assert "\u00b11 s.d. over 2 folds" in labels
    assert "chance level (no membership signal)" in labels
    # crowded points get labels apart from one another (12 px at least)
    disp.figure_.canvas.draw()
    boxes = [a.get_window_extent() for a in disp.annotations_]
    centres = np.array([[(b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2] for b in boxes])
    gaps = [np.hypot(*(centres[i] - centres[j])) for i in range(4) for j in range(i)]
    assert min(gaps) >= 10
    none = PrivacyUtilityDisplay.from_cv_results(cv_results, utility="acc", leakage="mia",
                                                 chance_level=None)
    assert none.chance_level_ is None and none.bound_ is None and none.selected_ is None
    # the refitted candidate is circled, at its own coordinates (candidates are plotted
    # in parameter order, so index 1 of the reversed results is the sigma=0.1 point)
    shuffled = {k: (v[::-1] if isinstance(v, list) else v) for k, v in cv_results.items()}
    sel = PrivacyUtilityDisplay.from_cv_results(shuffled, utility="acc", leakage="mia",
                                                selected=1)
    assert sel.selected_.get_xdata()[0] == 0.058 and sel.selected_.get_ydata()[0] == 0.919
    plt.close("all")


def test_roc_display_label_parameter_follows_roc_curve_display():
    """The curve label is ``name`` in the constructor and in the class methods, as in
    scikit-learn's RocCurveDisplay (whose ``estimator_name`` was deprecated in 1.7)."""
    import inspect

    from sklearn.metrics import RocCurveDisplay

    from sklearn_privacy.attacks import MembershipROCDisplay

    ours = inspect.signature(MembershipROCDisplay.__init__).parameters
    theirs = inspect.signature(RocCurveDisplay.__init__).parameters
    assert "name" in ours and "estimator_name" not in ours
    if "estimator_name" not in theirs:  # scikit-learn >= 1.9
        assert "name" in theirs
    for method in ("from_predictions", "from_result"):
        assert "name" in inspect.signature(getattr(MembershipROCDisplay, method)).parameters
