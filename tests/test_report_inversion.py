"""PrivacyReport's inversion section under an audit at sigma (scikit-learn GLM or MLP).

With ``sigma`` the report audits a scikit-learn model through ``fil.audit``; the
inversion section then also runs the white-box attack on simulated releases of the
audited minimiser with Gaussian noise of ``sigma`` (a hypothetical release: the
published model has none), next to the black-box attack on the published model.
"""

import re
import warnings

import numpy as np
import pytest
from scipy.stats import binomtest, norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from sklearn_privacy.report import PrivacyReport

TINY, HUGE = 1e-4, 1e3


def _data(n=300, seed=0):
    """A binary attribute (column 1) that moves the label, two numeric columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 1] = (rng.random(n) < 0.3).astype(float)
    y = (X[:, 0] + 0.8 * X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _frame(X):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"a": X[:, 0], "sex": np.where(X[:, 1] > 0, "F", "M"),
                         "b": X[:, 2]})


def _model(kind, frame):
    if kind == "mlp":
        model = MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
                              max_iter=2000, random_state=0)
    else:
        model = LogisticRegression(C=1.0)
    if not frame:
        return model
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return make_pipeline(make_column_transformer(
        (OneHotEncoder(sparse_output=False), ["sex"]), remainder=StandardScaler()), model)


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def _private_report(*args, **kwargs):
    """The inversion figures are private: computed with include_private_details=True."""
    return PrivacyReport.from_estimator(*args, include_private_details=True, **kwargs)


def _inversion(rep):
    """The inversion section's figures: all in the report's private channel."""
    from types import SimpleNamespace

    sec = next(s for s in rep.sections if s.key == "inversion")
    assert sec.table == [] and sec.outcomes == ["note"]     # nothing on the default page
    return SimpleNamespace(table=sec.private_table, verdicts=sec.private_verdicts,
                           outcomes=sec.private_outcomes, figure_png=sec.private_figure_png)


def _whitebox(sec):
    """(table value, verdict, outcome) of the section's hypothetical white-box row."""
    rows = [v for k, v in sec.table
            if "white-box if the" in k and not v.startswith("not attacked")]
    verdicts = [(v, o) for v, o in zip(sec.verdicts, sec.outcomes, strict=True)
                if v.startswith("If the")]
    assert len(rows) == 1 and len(verdicts) == 1
    return rows[0], verdicts[0][0], verdicts[0][1]


def _uncertified_rows(model, X, y, column):
    """Training rows with an uncertified candidate minimum, one row at a time."""
    from sklearn_privacy import fil
    from sklearn_privacy.attacks import candidate_minimisers
    from sklearn_privacy.exceptions import UncertifiedMinimumError

    audited = fil.audit(model, X, y, sigma=1.0)
    out = []
    for i in range(len(y)):
        try:
            candidate_minimisers(audited, sensitive_features=column, rows=[i])
        except UncertifiedMinimumError:
            out.append(i)
    return out


def _wilson(k, n, confidence):
    """Wilson score interval, from its textbook formula."""
    z = norm.ppf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def _check_sentence(sentence, value, outcome, confidence=0.95):
    """The sentence's numbers are those of the table and agree with each other."""
    m = re.search(r"accuracy (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\] on ([\d,]+) rows vs "
                  r"(\d\.\d{3}) for the most frequent value; exact binomial one-sided "
                  r"p (?:= ([\d.]+)|< 0\.001); (\d+) simulated releases"
                  r"(?:; ([\d,]+) sampled rows left out)?", sentence)
    assert m, sentence
    acc, lo, hi, base = (float(m.group(i)) for i in (1, 2, 3, 5))
    n, draws = int(m.group(4).replace(",", "")), int(m.group(7))
    assert value.startswith(f"{acc:.3f} [{lo:.3f}, {hi:.3f}] vs prior baseline {base:.3f}")
    assert f"({draws} simulated releases; {n:,} rows" in value
    # the interval is the Wilson interval of the accuracy over the attacked rows
    w_lo, w_hi = _wilson(acc * n, n, confidence)
    assert lo == pytest.approx(w_lo, abs=1.5e-3) and hi == pytest.approx(w_hi, abs=1.5e-3)
    # the p-value is the exact one-sided binomial test against the baseline's rate: it
    # lies between the tests at the ends of the printed figures' rounding
    def test(k, b):
        return binomtest(int(min(max(k, 0), n)), n, min(max(b, 0.0), 1.0),
                         alternative="greater").pvalue

    p_low = test(np.ceil((acc + 5e-4) * n), base - 5e-4)
    p_high = test(np.floor((acc - 5e-4) * n), base + 5e-4)
    p = test(round(acc * n), base)
    p_table = float(re.search(r"exact binomial p = ([\d.e+-]+)", value).group(1))
    assert p_low * (1 - 5e-3) <= p_table <= p_high * (1 + 5e-3)
    if m.group(6) is not None:
        assert float(m.group(6)) == pytest.approx(p_table, abs=6e-4)
    else:
        assert p_table < 0.001
    # the outcome is the test's, at the report's confidence (no case near the threshold)
    assert p_high < 0.01 or p_low > 0.1
    assert outcome == ("beats_prior" if p < 1 - confidence else "cannot_tell")
    left = int(m.group(8).replace(",", "")) if m.group(8) else 0
    assert (f"{left:,} of the {n + left:,} sampled rows left out" in value) == (left > 0)
    return acc, lo, hi, base, n, left


@pytest.mark.parametrize("frame", [False, True], ids=["array", "raw-frame-pipeline"])
@pytest.mark.parametrize("kind", ["glm", "mlp"])
def test_audit_at_sigma_adds_the_hypothetical_whitebox_row_with_both_outcomes(kind, frame):
    X, y = _data()
    Xf = _frame(X) if frame else X
    column = "sex" if frame else 1
    model = _fit(_model(kind, frame), Xf, y)
    what = "weights" if kind == "mlp" else "coefficients"
    uncertified = _uncertified_rows(model, Xf, y, column) if kind == "mlp" else []
    found = {}
    for sigma in (TINY, HUGE):
        rep = _private_report(model, Xf, y, sensitive_features=[column],
                                           sigma=sigma, n_canaries=0, random_state=0)
        sec = _inversion(rep)
        # the published (noise-free) model keeps its black-box row
        assert any("black-box (Fredrikson)" in k for k, _ in sec.table)
        value, sentence, outcome = _whitebox(sec)
        label = next(k for k, _ in sec.table if "white-box if the" in k)
        assert (f"'{column}' white-box if the {what} were released with noise sigma = "
                f"{sigma:.4g} (hypothetical: the published model has none)") in label
        acc, lo, hi, base, n, left = _check_sentence(sentence, value, outcome)
        assert sentence.startswith(f"If the {what} were released with Gaussian noise of "
                                   f"sigma = {sigma:.4g}")
        # an MLP's candidates are certified refits: 200 sampled rows, said in the table;
        # a row with an uncertified candidate minimum is left out and counted
        assert n + left == (200 if kind == "mlp" else 300)
        assert left <= len(uncertified)
        if kind == "mlp" and not frame:     # rows 52, 72, 153 and 254; 3 of them sampled
            assert left > 0 and f"{left} sampled rows left out, whose candidate " in sentence
        assert ("each row and candidate is a refit" in value) == (kind == "mlp")
        found[sigma] = (acc, lo, base, outcome, sentence, rep.private_details["flags"])
    acc, lo, base, outcome, sentence, flags = found[TINY]
    assert outcome == "beats_prior" and f"'{column}' leaks" in sentence
    assert acc >= 0.95 and lo > base                  # near-exact recovery without noise
    assert sentence in flags                          # a finding to act on
    acc, lo, base, outcome, sentence, flags = found[HUGE]
    assert outcome == "cannot_tell" and "not shown to beat" in sentence
    assert "the published " + what + " carry no noise" in sentence
    assert lo <= base and abs(acc - base) < 0.05      # noise drowns the parameters
    assert sentence not in flags


def test_report_without_sigma_is_unchanged_and_shares_the_published_rows():
    X, y = _data()
    model = _fit(_model("glm", False), X, y)
    plain = _private_report(model, X, y, sensitive_features=[1],
                                         n_canaries=0, random_state=0)
    sec = _inversion(plain)
    assert [k for k, _ in sec.table] == ["'1' black-box (Fredrikson) accuracy, 95% Wilson "
                                         "interval"]
    assert len(sec.verdicts) == 1 and not any("white-box" in v for v in sec.verdicts)
    assert plain.metadata["parameters"]["sigma"] is None
    audited = _private_report(model, X, y, sensitive_features=[1],
                                           sigma=TINY, n_canaries=0, random_state=0)
    sec2 = _inversion(audited)
    # the published model's rows are identical; the hypothetical row comes after them
    assert sec2.table[: len(sec.table)] == sec.table
    assert sec2.verdicts[: len(sec.verdicts)] == sec.verdicts
    assert len(sec2.table) == len(sec.table) + 1


def test_numeric_column_and_multinomial_model_under_an_audit():
    X, y = _data()
    y3 = np.digitize(X[:, 0] + 0.8 * X[:, 1], [-0.5, 0.5])
    model = _fit(LogisticRegression(C=1.0), X, y3)
    rep = _private_report(model, X, y3, sensitive_features=[0, 1], sigma=TINY,
                                       n_canaries=0, random_state=0)
    table = dict(_inversion(rep).table)
    assert table["'0' white-box if the coefficients were released with noise sigma = "
                 "0.0001"].startswith("not attacked: a numeric column")
    value, sentence, outcome = _whitebox(_inversion(rep))
    # a multinomial model's candidates are exact refits: 200 of the 300 rows
    assert "200 rows: each row and candidate is a refit" in value
    _check_sentence(sentence, value, outcome)
    assert outcome == "beats_prior"


def test_release_verdict_follows_the_inversion_rule_at_its_boundary():
    from sklearn_privacy.report import _verdicts as V

    for p in (0.0499, 0.05, 0.2, 1e-6):
        plain = V.inversion_verdict("c", "white-box", 0.8, 0.7, 0.9, 0.7, p, 100, 0.95)
        hyp = V.release_inversion_verdict("c", 0.5, "weights", 0.8, 0.7, 0.9, 0.7, p, 100,
                                          0.95, n_draws=20)
        assert hyp.outcome == plain.outcome == ("beats_prior" if p < 0.05 else "cannot_tell")
        assert hyp.text.startswith("If the weights were released with Gaussian noise of "
                                   "sigma = 0.5")
        assert ("'c' leaks" in hyp.text) == hyp.flagged
        assert ("published weights carry no noise" in hyp.text) == (not hyp.flagged)
    left = V.release_inversion_verdict("c", 0.5, "weights", 0.8, 0.7, 0.9, 0.7, 0.2, 100,
                                       0.95, n_draws=20, n_left_out=3)
    assert "3 sampled rows left out" in left.text and "on 100 rows" in left.text


def test_perfect_inversion_draws_its_figure():
    # accuracy 1 on 300 rows: the Wilson upper limit is 1 - 2e-16 in floating point,
    # which made the bar's error negative and the report fail while drawing its figure
    pytest.importorskip("matplotlib")
    from sklearn.linear_model import Ridge

    X, _ = _data()
    y = X @ [1.0, 2.0, -1.0] + 0.3 * np.random.default_rng(1).normal(size=len(X))
    model = Ridge(alpha=1.0).fit(X, y)
    rep = _private_report(model, X, y, sensitive_features=[1], n_canaries=0,
                                       random_state=0)
    sec = _inversion(rep)
    assert sec.table[0][1].startswith("1.000 [0.987, 1.000] vs prior baseline")
    assert sec.outcomes == ["beats_prior"] and sec.figure_png is not None


def test_audit_the_attack_cannot_replay_says_not_checked():
    from sklearn.multiclass import OneVsRestClassifier

    X, _ = _data()
    y3 = np.digitize(X[:, 0] + 0.8 * X[:, 1], [-0.5, 0.5])
    model = OneVsRestClassifier(LogisticRegression()).fit(X, y3)
    rep = _private_report(model, X, y3, sensitive_features=[1], sigma=0.01,
                                       n_canaries=0, random_state=0)
    sec = _inversion(rep)
    table = dict(sec.table)
    assert table["'1' white-box if the coefficients were released with noise sigma = "
                 "0.01"].startswith("not attacked: The white-box attack needs")
    assert sec.outcomes[-1] == "not_checked"
    assert "was not checked" in sec.verdicts[-1] and "leaks" not in sec.verdicts[-1]
