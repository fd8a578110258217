"""Display objects: the plotted data equal the underlying numbers, computed independently."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_curve  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_validate  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from sklearn_privacy import (  # noqa: E402
    EtaDisplay,
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    MembershipROCDisplay,
    MulticalibrationDisplay,
    PrivacyUtilityDisplay,
    PrivateMulticalibrator,
)
from sklearn_privacy.attacks import (  # noqa: E402
    evaluate_scores,
    lira,
    make_membership_scorer,
    membership_inference,
)
from sklearn_privacy.exceptions import PrivacyWarning  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _clf_data(n=120, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


# ----------------------------------------------------------------------------- EtaDisplay
def test_eta_histogram_counts_sum_to_n_and_match_numpy():
    X, y = _clf_data()
    clf = FILLogisticRegression(alpha=1e-2, random_state=0).fit(X, y)
    disp = EtaDisplay.from_estimator(clf, by_class=True, bins=12, top_k=4)
    eta = clf.eta_
    np.testing.assert_allclose(disp.eta, eta)
    assert sum(c.sum() for c in disp.counts_.values()) == len(y)
    edges = np.histogram_bin_edges(eta, bins=12)
    np.testing.assert_allclose(disp.bin_edges_, edges)
    for label, cls in (("0", 0), ("1", 1)):
        expected, _ = np.histogram(eta[y == cls], bins=edges)
        np.testing.assert_array_equal(disp.counts_[label], expected)
        # the bar heights drawn are those counts
        heights = [p.get_height() for p in disp.bars_[label]]
        np.testing.assert_array_equal(heights, expected)
    # the marked rows are the 4 largest eta, in decreasing order
    np.testing.assert_array_equal(disp.top_k_index, np.argsort(eta)[::-1][:4])
    np.testing.assert_allclose(disp.top_k_markers_.get_offsets()[:, 0], np.sort(eta)[::-1][:4])


def test_eta_display_counts_but_does_not_draw_rows_published_verbatim():
    """A Nystroem step publishes training rows (their eta is inf): from_estimator used to
    fail with matplotlib's "autodetected range of [..., inf] is not finite". The finite
    etas are drawn (the counts equal numpy's histogram of them), the legend counts the
    infinite ones, no top-k marker sits at inf, and the ECDF is a fraction of every
    example (it ends below 1 by the share of infinite etas)."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.preprocessing import StandardScaler

    X, y = _clf_data(n=60)
    pipe = make_pipeline(StandardScaler(), Nystroem(n_components=6, random_state=0),
                         FILLinearRegression(sigma=1.0, random_state=0)).fit(X, X[:, 0])
    with pytest.warns(PrivacyWarning, match="verbatim"):
        disp = EtaDisplay.from_estimator(pipe, X=X, bins=10, top_k=8)
    inf = ~np.isfinite(disp.eta)
    assert inf.sum() == 6 and not np.isnan(disp.eta).any()
    finite = disp.eta[~inf]
    expected, edges = np.histogram(finite, bins=10)
    np.testing.assert_allclose(disp.bin_edges_, edges)
    np.testing.assert_array_equal(disp.counts_["all"], expected)
    assert disp.ax_.get_legend_handles_labels()[1][0] == "all (n=60; 6 with eta = inf not drawn)"
    marked = disp.top_k_markers_.get_offsets()[:, 0]
    np.testing.assert_allclose(marked, np.sort(finite)[::-1][:2])  # 8 largest: 6 are inf
    with pytest.warns(PrivacyWarning, match="verbatim"):
        ecdf = EtaDisplay.from_estimator(pipe, X=X, kind="ecdf")
    assert ecdf.lines_["all"].get_ydata()[-1] == pytest.approx(54 / 60)


def test_eta_display_refuses_eta_it_cannot_draw():
    """NaN, 2-D or non-numeric eta, groups of another length and a non-bool log_scale
    used to reach numpy / matplotlib (IndexError, "autodetected range of [nan, nan]",
    "could not convert string to float") or be drawn silently."""
    with pytest.raises(ValueError, match="eta must be 1-D .* without NaN"):
        EtaDisplay(eta=[np.nan, 1.0]).plot()
    with pytest.raises(ValueError, match=r"eta must be 1-D .*shape \(3, 2\)"):
        EtaDisplay(eta=np.ones((3, 2))).plot()
    with pytest.raises(ValueError, match="^eta: could not convert"):
        EtaDisplay(eta=["x", 1.0])
    with pytest.raises(ValueError, match=r"group_codes must have one entry per eta value \(3\)"):
        EtaDisplay(eta=np.ones(3), group_codes=np.array([0, 1])).plot()
    with pytest.raises(ValueError, match="every eta is infinite"):
        EtaDisplay(eta=[np.inf, np.inf]).plot()
    with pytest.raises(TypeError, match="log_scale must be True or False"):
        EtaDisplay(eta=[1.0, 2.0]).plot(log_scale="x")


def test_eta_display_of_an_unfitted_estimator_says_not_fitted():
    """from_history of an unfitted IRFIL said it "has no eta_history_"."""
    from sklearn.exceptions import NotFittedError

    for call in (lambda: EtaDisplay.from_history(IRFILLinearRegression()),
                 lambda: EtaDisplay.from_estimator(FILLinearRegression())):
        with pytest.raises(NotFittedError, match="is not fitted yet"):
            call()


def test_eta_ecdf_by_mask_and_by_frame_column():
    X, y = _clf_data()
    clf = FILLogisticRegression(alpha=1e-2, random_state=0).fit(X, y)
    mask = X[:, 1] > 0
    disp = EtaDisplay.from_estimator(clf, kind="ecdf", sensitive_features=mask)
    line = disp.lines_["in group"]
    xs, ys = line.get_data()
    np.testing.assert_allclose(xs, np.sort(clf.eta_[mask]))
    np.testing.assert_allclose(ys, np.arange(1, mask.sum() + 1) / mask.sum())
    # a categorical column of the training frame
    cat = np.where(X[:, 2] > 0.5, "high", np.where(X[:, 2] < -0.5, "low", "mid"))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": pd.Categorical(cat)})
    disp = EtaDisplay.from_estimator(clf, sensitive_features="c", X=frame)
    assert set(disp.counts_) == {"high", "low", "mid"}
    for level in ("high", "low", "mid"):
        assert disp.counts_[level].sum() == (cat == level).sum()


def test_eta_by_feature_name_of_estimator_and_attribute_columns():
    X, y = _clf_data()
    frame = pd.DataFrame(X, columns=["a", "b", "flag"])
    frame["flag"] = (frame["flag"] > 0).astype(float)
    reg = FILLinearRegression(alpha=1e-2, random_state=0).fit(frame, X[:, 0])
    disp = EtaDisplay.from_estimator(reg, sensitive_features="flag", columns=["flag"])
    attr = reg.eta(columns=["flag"], per_example=True)
    np.testing.assert_allclose(disp.eta, attr)
    assert disp.counts_["0"].sum() == (frame["flag"] == 0).sum()
    with pytest.raises(ValueError, match="by_class=True"):
        EtaDisplay.from_estimator(reg, by_class=True)
    with pytest.raises(ValueError, match="sensitive_features must be"):
        EtaDisplay.from_estimator(reg, sensitive_features=np.ones(5, bool))
    with pytest.raises(ValueError, match="kind must be"):
        EtaDisplay.from_estimator(reg, kind="violin")


def test_eta_history_plots_irfil_statistics():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.1 * rng.normal(size=150)
    est = IRFILLinearRegression(eta_max_iter=4, random_state=0).fit(X, y)
    disp = EtaDisplay.from_history(est)
    for key in ("max", "mean", "min"):
        np.testing.assert_allclose(disp.lines_[key].get_ydata(), est.eta_history_[key])
    assert len(disp.lines_["mean"].get_xdata()) == est.n_iter_ + 1
    with pytest.raises(ValueError, match="IRFIL"):
        EtaDisplay.from_estimator(FILLinearRegression(random_state=0).fit(X, y),
                                  kind="history")


# ----------------------------------------------------------------------- MembershipROC
def test_membership_roc_points_equal_sklearn_roc_curve_on_evaluation_rows():
    rng = np.random.RandomState(0)
    res = evaluate_scores(np.arange(700) < 400, np.r_[rng.normal(0.7, 1, 400),
                                                      rng.normal(0, 1, 300)], random_state=0)
    disp = MembershipROCDisplay.from_result(res, fpr_levels=(0.01, 0.1))
    s_in = res.scores_members[res.eval_members]
    s_out = res.scores_nonmembers[res.eval_nonmembers]
    fpr, tpr, _ = roc_curve(np.r_[np.ones(s_in.size), np.zeros(s_out.size)],
                            np.r_[s_in, s_out], drop_intermediate=False)
    np.testing.assert_allclose(disp.fpr, fpr)
    np.testing.assert_allclose(disp.tpr, tpr)
    # the same AUC as the result (computed by the library on the same rows)
    assert disp.roc_auc == pytest.approx(res.auc, abs=1e-12)
    # TPR at FPR <= 1%: brute force over thresholds
    best = max(np.mean(s_in >= t) for t in np.r_[s_in, s_out, np.inf]
               if np.mean(s_out >= t) <= 0.01)
    assert disp.tpr_at_fpr[0.01] == pytest.approx(best)
    assert "AUC" in disp.line_.get_label() and "1% FPR" in disp.line_.get_label()
    assert disp.ax_.get_xscale() == "log" and disp.ax_.get_yscale() == "log"
    assert disp.chance_level_ is not None


def test_membership_roc_several_results_on_given_axes():
    X, y = _clf_data(n=200)
    tree = DecisionTreeClassifier(random_state=0).fit(X[:100], y[:100])
    members = np.zeros(200, bool)
    members[:100] = True
    conf = membership_inference(tree, X, y, members, random_state=0)
    lr = lira(tree, X, y, members, n_reference_models=4, random_state=0)
    fig, ax = plt.subplots()
    displays = MembershipROCDisplay.from_results([conf, lr], names=["confidence", "LiRA"],
                                                 ax=ax)
    assert all(d.ax_ is ax and d.figure_ is fig for d in displays)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0].startswith("confidence") and labels[1].startswith("LiRA")
    assert sum(lab.startswith("chance") for lab in labels) == 1
    assert displays[1].roc_auc == pytest.approx(lr.auc, abs=1e-12)
    # plot() again into the same axes adds a curve
    displays[0].plot(ax=ax, plot_chance_level=False, name="again")
    assert len(ax.get_lines()) == 4
    with pytest.raises(TypeError, match="result"):
        MembershipROCDisplay.from_result({"auc": 0.5})
    with pytest.raises(ValueError, match="fpr_levels"):
        MembershipROCDisplay.from_result(conf, fpr_levels=(0.0,))


# -------------------------------------------------------------------- Multicalibration
def _mc_data(n=1500, seed=0):
    rng = np.random.RandomState(seed)
    g = rng.randint(0, 2, n)
    X = np.column_stack([rng.normal(size=n), g])
    y = (rng.uniform(size=n) < 0.25 + 0.45 * g).astype(int)
    return X, y


def _independent_cells(y, p, mask, n_bins):
    """Bucket means by brute force over the buckets (no library code)."""
    out = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        inb = mask & (p >= lo) & ((p < hi) if b < n_bins - 1 else (p <= hi))
        if inb.any():
            out.append((p[inb].mean(), y[inb].mean(), inb.sum()))
    return np.array(out)


def test_reliability_points_equal_bucket_means_before_and_after():
    X, y = _mc_data()
    # a base model blind to the group column, trained on other rows
    base = make_pipeline(ColumnTransformer([("x", "passthrough", [0])]),
                         LogisticRegression()).fit(*_mc_data(seed=1))
    mc = PrivateMulticalibrator(FrozenEstimator(base), groups=[1], calibration_tol=0.02, n_bins=5,
                                min_cell_size=20).fit(X, y)
    disp = MulticalibrationDisplay.from_estimator(mc, X, y)
    assert disp.group_names[0] == mc.groups_[0].name and len(disp.group_names) == 2
    masks = [np.ones(len(y), bool), X[:, 1] == 1]
    p_after = mc.predict_proba(X)[:, 1]
    p_before = base.predict_proba(X)[:, 1]
    for g, mask in enumerate(masks):
        for stage, p in (("before", p_before), ("after", p_after)):
            cell = disp.cells[stage][g]
            expected = _independent_cells(y, p, mask, 5)
            got = np.column_stack([cell["predicted"], cell["observed"], cell["size"]])
            np.testing.assert_allclose(got, expected, rtol=1e-12)
            line = disp.lines_[(disp.group_names[g], stage)]
            np.testing.assert_allclose(line.get_xdata(), expected[:, 0])
            np.testing.assert_allclose(line.get_ydata(), expected[:, 1])
            # marker areas are proportional to the cell sizes
            sizes = disp.scatters_[(disp.group_names[g], stage)].get_sizes()
            np.testing.assert_allclose(sizes / sizes.max(), expected[:, 2] / expected[:, 2].max())
    # the post-processing moves the group's points onto the diagonal
    gap_before = np.abs(disp.cells["before"][1]["predicted"] - disp.cells["before"][1]["observed"])
    gap_after = np.abs(disp.cells["after"][1]["predicted"] - disp.cells["after"][1]["observed"])
    assert gap_after.max() < gap_before.max()


def test_reliability_from_predictions_checks_inputs_and_draws_into_axes():
    y = np.array([0, 1, 0, 1, 1, 1])
    p = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    fig, ax = plt.subplots()
    disp = MulticalibrationDisplay.from_predictions(y, p, n_bins=2, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    with pytest.raises(ValueError, match="y_prob"):
        MulticalibrationDisplay.from_predictions(y, p + 1)
    with pytest.raises(ValueError, match="group_names"):
        MulticalibrationDisplay.from_predictions(y, p, np.ones((6, 2), bool),
                                                 group_names=["a"])
    with pytest.raises(ValueError, match="show_groups"):
        MulticalibrationDisplay.from_predictions(y, p, show_groups=["nope"])


# --------------------------------------------------------------------- PrivacyUtility
def test_tradeoff_points_equal_cv_results_means():
    X, y = _clf_data(n=240)
    scoring = {"accuracy": "accuracy",
               "advantage": make_membership_scorer(X, y, metric="advantage",
                                                   random_state=0)}
    search = GridSearchCV(FILLogisticRegression(random_state=0),
                          {"sigma": [0.01, 1.0, 0.1]}, scoring=scoring, refit=False,
                          cv=2).fit(X, y)
    fig, ax = plt.subplots()
    disp = PrivacyUtilityDisplay.from_estimator(search, utility="accuracy",
                                                leakage="advantage", ax=ax)
    assert disp.ax_ is ax
    res = search.cv_results_
    order = np.argsort(np.asarray(res["param_sigma"], dtype=float))
    np.testing.assert_allclose(disp.utility, res["mean_test_accuracy"][order])
    np.testing.assert_allclose(disp.leakage, -res["mean_test_advantage"][order])
    assert disp.param_values == [0.01, 0.1, 1.0]
    xs, ys = disp.line_.get_data()
    np.testing.assert_allclose(xs, disp.leakage)
    np.testing.assert_allclose(ys, disp.utility)
    assert [a.get_text() for a in disp.annotations_] == ["0.01", "0.1", "1"]
    assert disp.n_splits == 2 and ax.get_xlabel().endswith("(mean over 2 folds)")
    with pytest.raises(ValueError, match="utility='f1'"):
        PrivacyUtilityDisplay.from_estimator(search, utility="f1", leakage="advantage")


def test_tradeoff_from_cross_validate_results():
    X, y = _clf_data(n=200)
    scoring = {"accuracy": "accuracy",
               "auc": make_membership_scorer(X, y, metric="auc", random_state=0)}
    results = {s: cross_validate(FILLogisticRegression(sigma=s, random_state=0), X, y, cv=2,
                                 scoring=scoring) for s in (1.0, 0.05)}
    disp = PrivacyUtilityDisplay.from_cross_validate(results, utility="accuracy",
                                                     leakage="auc", param="sigma")
    assert disp.param_values == [0.05, 1.0]
    np.testing.assert_allclose(disp.utility, [results[0.05]["test_accuracy"].mean(),
                                              results[1.0]["test_accuracy"].mean()])
    np.testing.assert_allclose(disp.leakage, [-results[0.05]["test_auc"].mean(),
                                              -results[1.0]["test_auc"].mean()])
    assert disp.ax_.get_ylabel() == "utility: accuracy (mean over 2 folds)"


def test_tradeoff_axis_labels_do_not_claim_folds_for_a_single_split():
    """Regression: a search over one train/test split was labelled "mean over folds"."""
    X, y = _clf_data(n=200)
    scoring = {"accuracy": "accuracy",
               "advantage": make_membership_scorer(X, y, metric="advantage",
                                                   random_state=0)}
    split = [(np.arange(100), np.arange(100, 200))]
    search = GridSearchCV(FILLogisticRegression(random_state=0), {"sigma": [0.1, 1.0]},
                          scoring=scoring, refit=False, cv=split).fit(X, y)
    disp = PrivacyUtilityDisplay.from_estimator(search, utility="accuracy",
                                                leakage="advantage")
    assert disp.n_splits == 1
    assert disp.ax_.get_xlabel() == "leakage: advantage"
    assert disp.ax_.get_ylabel() == "utility: accuracy"
    # built by hand: the number of splits is unknown, nothing is claimed
    assert "mean" not in PrivacyUtilityDisplay([0.1], [0.9], [1.0]).plot().ax_.get_xlabel()


def test_tradeoff_needs_param_when_several_vary():
    cv = {"params": [{"a": 1, "b": 1}, {"a": 2, "b": 2}], "mean_test_u": [1, 2],
          "mean_test_l": [0, 1]}
    with pytest.raises(ValueError, match="param must name"):
        PrivacyUtilityDisplay.from_cv_results(cv, utility="u", leakage="l")
    disp = PrivacyUtilityDisplay.from_cv_results(cv, utility="u", leakage="l", param="b",
                                                 negate_leakage=False)
    np.testing.assert_allclose(disp.leakage, [0, 1])


def test_tradeoff_and_roc_refuse_inconsistent_arguments_by_name():
    """Mismatched arrays, a non-numeric bound and an unknown candidate are named.

    Before: matplotlib's "x and y must have same first dimension" (naming neither
    argument), "Unknown format code 'g' for object of type 'str'" for
    ``leakage_bound="0.1"``, and "17 is not in list" for ``selected=17``.
    """
    with pytest.raises(ValueError, match="leakage, utility and param_values"):
        PrivacyUtilityDisplay([0.1, 0.2], [0.5], [1, 2]).plot()
    with pytest.raises(TypeError, match="leakage_bound must be a real number"):
        PrivacyUtilityDisplay([0.1, 0.2], [0.5, 0.6], [1, 2], leakage_bound="0.1").plot()
    with pytest.raises(TypeError, match="chance_level must be a real number"):
        PrivacyUtilityDisplay([0.1, 0.2], [0.5, 0.6], [1, 2], chance_level="0").plot()
    with pytest.raises(ValueError, match=r"selected=5 is not a position in 0\.\.1"):
        PrivacyUtilityDisplay([0.1, 0.2], [0.5, 0.6], [1, 2], selected=5).plot()
    cv = {"params": [{"C": 1}, {"C": 2}], "mean_test_u": [1, 2], "mean_test_l": [0, 1]}
    with pytest.raises(ValueError, match=r"selected=17 is not a candidate of cv_results "
                                         r"\(0\.\.1\)"):
        PrivacyUtilityDisplay.from_cv_results(cv, utility="u", leakage="l", selected=17)
    with pytest.raises(ValueError, match="fpr and tpr must be 1-D of the same length"):
        MembershipROCDisplay(np.array([0.0, 0.5, 1.0]), np.array([0.0, 1.0])).plot()
    plt.close("all")


def test_roc_from_results_refuses_a_dict_with_the_fix():
    """Before: "result must be a MembershipInferenceResult ...; got str" (the dict's keys
    were iterated)."""
    rng = np.random.RandomState(0)
    members = np.arange(40) < 20
    res = evaluate_scores(members, rng.normal(size=40) + members, random_state=0)
    with pytest.raises(TypeError, match=r"results must be a sequence .* got a dict; pass "
                                        r"list\(d\.values\(\)\), names=list\(d\)"):
        MembershipROCDisplay.from_results({"a": res, "b": res}, random_state=0)
    disps = MembershipROCDisplay.from_results([res, res], names=["a", "b"], random_state=0)
    assert [d.name for d in disps] == ["a", "b"]
    plt.close("all")


def test_tradeoff_refuses_malformed_cv_results_by_name():
    """Before: "IndexError: index 1 is out of bounds for axis 0 with size 1" for a score
    column shorter than ``params``, "'int' object is not iterable" for ``params=5``."""
    with pytest.raises(ValueError, match=r"cv_results\['mean_test_a'\] has 1 entries but "
                                         r"'params' has 2 candidates"):
        PrivacyUtilityDisplay.from_cv_results(
            {"params": [{"C": 1}, {"C": 2}], "mean_test_a": [1], "mean_test_b": [1, 2]},
            utility="a", leakage="b")
    with pytest.raises(ValueError, match=r"cv_results\['params'\] must be a list of "):
        PrivacyUtilityDisplay.from_cv_results({"params": 5, "mean_test_a": [1],
                                               "mean_test_b": [1]}, utility="a", leakage="b")


def test_reliability_from_estimator_names_a_model_that_is_not_a_multicalibrator():
    """Before: a fitted LogisticRegression was called "not fitted yet" (the check looked
    for the multicalibrator's ``updates_``)."""
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=100), rng.randint(0, 2, size=100)])
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(TypeError, match="needs a fitted PrivateMulticalibrator; got "
                                        "LogisticRegression"):
        MulticalibrationDisplay.from_estimator(LogisticRegression().fit(X, y), X, y)
    with pytest.raises(Exception, match="not fitted"):
        MulticalibrationDisplay.from_estimator(PrivateMulticalibrator(groups=[1]), X, y)
    plt.close("all")


# ------------------------------------------------------------------- optional matplotlib
def _run(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_import_does_not_import_matplotlib():
    out = _run("""
        import sys
        import sklearn_privacy, sklearn_privacy.attacks, sklearn_privacy.metrics
        import sklearn_privacy.multicalibration, sklearn_privacy.fil
        print('matplotlib' in sys.modules)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_clear_import_error_without_matplotlib():
    out = _run("""
        import sys
        sys.modules["matplotlib"] = None  # simulates an environment without matplotlib
        import numpy as np
        from sklearn_privacy import FILLinearRegression, EtaDisplay
        rng = np.random.RandomState(0)
        X = rng.normal(size=(30, 2))
        est = FILLinearRegression(random_state=0).fit(X, X[:, 0])
        try:
            EtaDisplay.from_estimator(est)
        except ImportError as exc:
            print("ImportError:", exc)
    """)
    assert out.returncode == 0, out.stderr
    assert "ImportError: EtaDisplay.plot requires matplotlib" in out.stdout
    assert "pip install" in out.stdout


def test_eta_display_takes_name():
    """EtaDisplay's label parameter is ``name``, as in scikit-learn's displays since 1.7."""
    import warnings

    from sklearn_privacy import EtaDisplay

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EtaDisplay(np.ones(3), name="model").name == "model"


@pytest.mark.parametrize("log_scale", [False, True])
def test_eta_display_bins_near_constant_eta_over_a_visible_range(log_scale):
    """Etas equal to 1e-6 relative (IRFIL's equalised values) get 30 bins over 1 % of
    their midpoint, not over their own spread (bins of width ~1e-8); a real spread keeps
    numpy's edges over [min, max]."""
    rng = np.random.default_rng(0)
    flat = 0.5 * (1 + 1e-6 * rng.random(200))
    disp = EtaDisplay(eta=flat).plot(bins=30, log_scale=log_scale)
    edges = disp.bin_edges_
    mid = 0.5 * (flat.min() + flat.max())
    assert edges.size == 31
    np.testing.assert_allclose([edges[0], edges[-1]], [mid * 0.995, mid * 1.005],
                               rtol=1e-12)
    assert disp.counts_[next(iter(disp.counts_))].sum() == 200
    spread = 0.2 + rng.random(200)
    disp = EtaDisplay(eta=spread).plot(bins=30, log_scale=log_scale)
    expected = (np.geomspace(spread.min(), spread.max(), 31) if log_scale
                else np.histogram_bin_edges(spread, bins=30))
    np.testing.assert_array_equal(disp.bin_edges_, expected)
