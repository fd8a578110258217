"""PrivacyReport: sections present when they apply, numbers from the library's own tools."""

import re
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.report import PrivacyReport


def _data(n=800, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = 0.3 * rng.normal(size=(2 * n, d))
    X[:, 1] = rng.random(2 * n) < 0.3                  # a binary sensitive attribute
    X /= np.max(np.linalg.norm(X, axis=1))
    X[:, 1] = X[:, 1] > 0
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.1 * rng.normal(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _section(rep, key):
    return next(s for s in rep.sections if s.key == key)


def test_fil_release_report_has_every_section_and_consistent_numbers():
    import sklearn_privacy.fil as fil

    X, y, Xp, yp = _data()
    est = FILLogisticRegression(fit_intercept=False, data_norm=1.5, alpha=0.05, sigma=1.0,
                                classes=[0, 1])
    sigma = est.fit(X, y).sigma_for_epsilon(2.0)
    est.set_params(sigma=sigma).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(est, X, y, Xp, yp, sensitive_features=[1],
                                           canary_releases=4000, random_state=0,
                                           include_private_details=True)
    assert [s.key for s in rep.sections] == ["claim", "utility", "release", "structural", "fil",
                                             "membership", "inversion", "audits",
                                             "private"]
    s = rep.summary
    assert s["claimed_epsilon"] == pytest.approx(2.0)
    assert rep.private_details["summary"]["max_eta"] == pytest.approx(
        float(np.max(fil.eta(est, per_example=True))))
    assert "max_eta" not in s                       # one row's figure: private channel
    assert 0.0 <= s["empirical_epsilon"] <= s["claimed_epsilon"]
    page = rep.to_html()
    assert "not refuted" in page and "http" not in page          # self-contained
    assert page.count("data:image/png;base64,") == sum(
        (sec.figure_png is not None) + (sec.private_figure_png is not None)
        for sec in rep.sections) >= 4
    # the default page draws only the figures made from public figures
    assert rep.default_page().count("data:image/png;base64,") == sum(
        sec.figure_png is not None for sec in rep.sections)
    assert set(rep.timings) == {sec.key for sec in rep.sections}
    # the most exposed row is listed first, by its index, in the private section only
    top = int(np.argmax(fil.eta(est, per_example=True)))
    private = dict(_section(rep, "private").table)
    assert private["most exposed rows (index: eta)"].startswith(f"{top}: ")
    assert "most exposed rows" not in str(_section(rep, "fil").table)


def test_overfit_forest_report_shows_leakage_and_no_claim(tmp_path):
    X, y, Xp, yp = _data(n=500)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    rep = PrivacyReport.from_estimator(rf, X, y, Xp, yp, n_canaries=300, random_state=0)
    assert [s.key for s in rep.sections] == ["claim", "utility", "release", "structural",
                                             "membership", "audits"]
    assert np.isinf(rep.summary["claimed_epsilon"])
    assert rep.summary["empirical_epsilon"] > 1.0      # a fully grown forest memorises
    memb = " ".join(_section(rep, "membership").verdicts)
    assert "Membership leaks" in memb
    auc = float(re.search(r"AUC[^:]*?(\d\.\d+) \[",
                          str(_section(rep, "membership").table)).group(1))
    assert auc > 0.55
    path = tmp_path / "report.html"
    rep.save_html(path)
    assert path.read_text(encoding="utf-8") == rep._repr_html_()
    assert "PrivacyReport(RandomForestClassifier" in repr(rep)


def test_report_without_population_skips_attacks_and_plot_renders():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    X, y, _, _ = _data(n=300)
    model = LogisticRegression().fit(X, y)
    rep = PrivacyReport.from_estimator(model, X, y, n_canaries=100, random_state=0)
    assert "membership" not in [s.key for s in rep.sections]
    fig = rep.plot()
    assert len(fig.axes) >= 2


def test_raw_frame_pipeline_report():
    pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_privacy.datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    cols = ["age", "hours_per_week", "race", "sex"]
    X = adult.data[cols].iloc[:1200]
    y = (adult.target.iloc[:1200] == ">50K").to_numpy()
    Xp = adult.data[cols].iloc[1200:2400]
    yp = (adult.target.iloc[1200:2400] == ">50K").to_numpy()
    pipe = make_pipeline(
        make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["race", "sex"]),
                                remainder=StandardScaler()),
        FILLogisticRegression(sigma=0.1, alpha=1e-3)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(pipe, X, y, Xp, yp, sensitive_features=["sex"],
                                           n_canaries=200, random_state=0,
                                           include_private_details=True)
    keys = [s.key for s in rep.sections]
    assert keys == ["claim", "utility", "release", "structural", "fil", "membership",
                    "inversion", "audits", "private"]
    assert np.isinf(rep.summary["claimed_epsilon"])     # the scaler saw the private rows
    fil_rows = dict(_section(rep, "fil").private_table)
    assert "eta of 'sex' (median / max)" in fil_rows
    # the most exposed rows are named by the frame's index labels (private section)
    first = dict(_section(rep, "private").table)["most exposed rows (index: eta)"]
    assert int(first.split(":")[0]) in set(X.index)


def test_bad_input():
    X, y, Xp, yp = _data(n=50)
    with pytest.raises(Exception, match="not fitted|fitted"):
        PrivacyReport.from_estimator(LogisticRegression(), X, y)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="y_train"):
        PrivacyReport.from_estimator(model, X, y[:-1])
    with pytest.raises(ValueError, match="y_population"):
        PrivacyReport.from_estimator(model, X, y, Xp, yp[:-1])


def test_scikit_learn_glm_gets_per_example_fil_through_fil_audit():
    import sklearn_privacy.fil as fil

    X, y, Xp, yp = _data(n=300)
    model = LogisticRegression(C=1.0).fit(X, y)
    rep = PrivacyReport.from_estimator(model, X, y, Xp, yp, sigma=0.5, n_canaries=50,
                                       random_state=0)
    assert [s.key for s in rep.sections] == ["claim", "utility", "release", "structural",
                                             "fil", "membership", "audits"]
    table = dict(_section(rep, "fil").table)
    assert table["audited through"].startswith("fil.audit at sigma = 0.5")
    expected = fil.audit(model, X, y, sigma=0.5).eta_.max()
    assert rep.private_details["summary"]["max_eta"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(sigma=-1.0), ValueError, "sigma must be a positive finite number or None"),
    (dict(sigma="1"), TypeError, "sigma must be a positive finite number or None"),
    (dict(n_canaries=-1), ValueError, "n_canaries must be an integer >= 0"),
    (dict(n_canaries=2.5), TypeError, "n_canaries must be an integer >= 0"),
    (dict(canary_releases=-5), ValueError, "canary_releases must be an integer >= 0"),
    (dict(top_k=-1), ValueError, "top_k must be an integer >= 0"),
    (dict(confidence=1.0), ValueError, "confidence must be a float in"),
    (dict(n_reference_models=2), ValueError, "n_reference_models must be 0 .* or at least 4"),
    (dict(page_epsilon=0.0), ValueError, "page_epsilon must be a positive finite number"),
    (dict(page_epsilon=np.inf), ValueError, "page_epsilon must be a positive finite number"),
    (dict(page_epsilon="1"), TypeError, "page_epsilon must be a positive finite number"),
    (dict(min_group_size=0), ValueError, "min_group_size must be an integer >= 1"),
])
def test_bad_parameters_are_refused_by_name_before_any_work(kwargs, exc, match):
    """Each parameter is checked on entry, in the report's own words.

    Before: ``sigma=-1`` or ``sigma="1"`` produced a report whose FIL section said the
    audit failed; ``n_canaries=-1`` failed after the first sections with a message about
    ``one_run_audit``'s parameter, ``n_reference_models=2`` with LiRA's advice to set
    ``global_variance`` (not a parameter of the report), and a negative
    ``canary_releases`` or ``top_k`` was accepted.
    """
    X, y, Xp, yp = _data(n=50)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(exc, match=match):
        PrivacyReport.from_estimator(model, X, y, Xp, yp, random_state=0, **kwargs)


def test_population_with_other_columns_is_named():
    """Before: scikit-learn's "X has 3 features, but LogisticRegression is expecting 4"
    (or a ColumnTransformer's "columns are missing") from inside a section."""
    pd = pytest.importorskip("pandas")
    X, y, Xp, yp = _data(n=50)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="X_population has 3 columns but X_train has 4"):
        PrivacyReport.from_estimator(model, X, y, Xp[:, :3], yp, n_canaries=0)
    F, Fp = pd.DataFrame(X, columns=list("abcd")), pd.DataFrame(Xp, columns=list("abcd"))
    frame_model = LogisticRegression().fit(F, y)
    with pytest.raises(ValueError, match=r"X_population lacks the columns \['c'\] of X_train"):
        PrivacyReport.from_estimator(frame_model, F, y, Fp.drop(columns="c"), yp,
                                     n_canaries=0)


def test_constructor_refuses_sections_that_are_not_report_sections():
    """Before: ``PrivacyReport(["a"]).to_html()`` raised an AttributeError from inside
    ``html.escape``."""
    from sklearn_privacy.report import ReportSection

    with pytest.raises(TypeError, match="sections must be ReportSection objects; got str"):
        PrivacyReport(["a"])
    page = PrivacyReport([ReportSection("k", "A title")], name="m").to_html()
    assert "A title" in page


def test_sensitive_features_that_name_no_column_are_refused():
    """A typo in ``sensitive_features`` is an error, not a report without that column.

    Before: the report was produced, its sections listing the column as "not attacked" /
    "not computed" (and the membership split skipped it without a word).
    """
    pd = pytest.importorskip("pandas")
    X, y, Xp, yp = _data(n=50)
    model = LogisticRegression().fit(X, y)
    kw = dict(n_canaries=0, random_state=0)
    with pytest.raises(ValueError, match="sensitive_features: 9 is out of range for the 4 "
                                         "columns of X_train"):
        PrivacyReport.from_estimator(model, X, y, Xp, yp, sensitive_features=[9], **kw)
    with pytest.raises(ValueError, match="sensitive_features: 'sex' is a column name, but "
                                         "X_train has no column names"):
        PrivacyReport.from_estimator(model, X, y, Xp, yp, sensitive_features="sex", **kw)
    F = pd.DataFrame(X, columns=list("abcd"))
    frame_model = LogisticRegression().fit(F, y)
    with pytest.raises(ValueError, match="sensitive_features: 'zzz' is not a column of "
                                         "X_train"):
        PrivacyReport.from_estimator(frame_model, F, y, sensitive_features=["b", "zzz"], **kw)
    with pytest.raises(TypeError, match="sensitive_features must hold column names or "
                                        "positions"):
        PrivacyReport.from_estimator(model, X, y, sensitive_features=[1.5], **kw)
    rep = PrivacyReport.from_estimator(frame_model, F, y, sensitive_features=["b", 0], **kw)
    assert rep.metadata["parameters"]["sensitive_features"] == ["b", 0]
