"""The README's main demo: every section runs on the bundled data and prints its table."""

import re

import pytest

from sklearn_privacy import demo


def test_every_demo_section_runs_and_prints_its_table(capsys):
    demo.main([])
    out = capsys.readouterr().out
    modules = demo.section_modules()
    assert len(modules) >= 5
    for module in modules:
        assert f"=== {module.TITLE} ===" in out
    # one timing line per section, then the total
    assert len(re.findall(r"^\(\d+\.\d s\)$", out, flags=re.M)) == len(modules)
    assert "Demo finished in" in out
    # headline figures of the papers, as the demo prints them
    assert re.search(r"^linear\s+0\s+0\.5\d\d \+- ", out, flags=re.M)  # FIL: digit-0 eta
    assert re.search(r"^  \+ IRFIL\s+0\.509 \+- 0\.000\s+0\.509", out, flags=re.M)


def test_only_filters_sections(capsys):
    demo.main(["--only", "irfil"])
    out = capsys.readouterr().out
    assert out.count("=== ") == 1 and "Iteratively reweighted FIL" in out


def _raw_data_rows(out):
    """The raw-Adult section's table rows, as floats, keyed by sigma."""
    block = out.split("=== Your own data:")[1].split("\n(")[0]
    rows = re.findall(r"^(\d[\d.]*)((?:\s+-?\d[\d.e+-]*){9})\s*$", block, flags=re.M)
    return {float(s): [float(v) for v in rest.split()] for s, rest in rows}


def test_raw_data_section_figures(capsys):
    import warnings

    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_privacy.demo import _s7_raw_data

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        demo.main(["--only", "raw_data"])
    rows = _raw_data_rows(capsys.readouterr().out)
    assert sorted(rows) == [0.01, 0.1, 1.0]
    # independent oracles: the prior baseline is the most frequent race of the training
    # rows; the noiseless model is sklearn's LogisticRegression with C = 1 / (n alpha)
    X_train, y_train, X_test, y_test = _s7_raw_data.raw_adult_split()
    assert isinstance(X_train, pd.DataFrame) and len(X_train) == 3000
    baseline = X_train["race"].value_counts(normalize=True).max()
    cat = list(X_train.select_dtypes("category").columns)
    num = list(X_train.select_dtypes("number").columns)
    plain = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat),
                           ("num", StandardScaler(), num)]),
        LogisticRegression(C=1 / (3000 * 1e-3), tol=1e-10, max_iter=1000)
    ).fit(X_train, y_train)
    plain_acc = plain.score(X_test, y_test)
    for eta_max, eta_med, race_max, race_med, acc, wb, mp, prior, mia in rows.values():
        assert prior == pytest.approx(baseline, abs=6e-4)
        assert mp >= prior                      # prior x likelihood never loses to the prior
        assert race_max <= eta_max and race_med <= eta_med  # a subset of the values
        assert 0.0 <= mia < 0.1                 # a linear model on 3,000 rows
        assert 0.0 <= wb <= 1.0
        assert 0.6 < acc <= plain_acc + 0.01  # noise does not beat the noiseless fit
    small, mid, big = rows[0.01], rows[0.1], rows[1.0]
    # eta is proportional to 1 / sigma (printed with three significant digits)
    for j in range(4):
        assert small[j] / mid[j] == pytest.approx(10, rel=0.02)
        assert mid[j] / big[j] == pytest.approx(10, rel=0.02)
    # little noise: the release is the non-private model and leaks race beyond the prior
    assert small[4] == pytest.approx(plain_acc, abs=0.01) and small[4] > 0.83
    assert small[6] > baseline + 0.01
    # much noise: accuracy drops and the likelihood alone is worse than guessing the prior
    assert big[4] < small[4] - 0.05
    assert big[5] < baseline
