"""The README's main demo: each section's printed table holds the numbers it computed.

Default suite (seconds): every section's ``render`` and ``check`` on figures written here,
once satisfying every claim of its text and once breaking each claim in turn (``check``
must name it), and ``main``'s exit status (1 when a claim fails). The demo itself runs in
CI as README's first command, where its exit status carries the same claims on the
computed figures.

``slow`` (the whole demo, minutes): every section is computed once (``compute``), rendered
(``render``) and its table parsed back; the parsed cells must equal the computed values at
the printed precision, and the figures must satisfy what the section's prose claims,
checked against independent computations where one exists. Mutation check: rendering the
training-row Fredrikson accuracy in the held-out column of the IWPC table made
``test_section_tables_hold_the_computed_numbers`` fail (0.489 printed, 0.478 computed).
"""

import copy
import re
import types

import pytest

from sklearn_privacy import demo
from sklearn_privacy.demo import (
    _s1_fil,
    _s2_irfil,
    _s4_attacks,
    _s5_werm,
    _s6_multicalibration,
    _s7_raw_data,
)


def parse_table(text):
    """Rows of the first fixed-width table in ``text`` as lists of stripped cells.

    Column bounds come from the ``----  ----`` rule under the header.
    """
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if re.fullmatch(r"-+(  -+)*\s*", line))
    spans = [m.span() for m in re.finditer(r"-+", lines[k])]
    header = [lines[k - 1][a:b + 2 if j < len(spans) - 1 else None].strip()
              for j, (a, b) in enumerate(spans)]
    rows = []
    for line in lines[k + 1:]:
        if not line.strip() or line.startswith(("Paper", "What", "Ours")):
            break
        rows.append([line[a:(spans[j + 1][0] if j + 1 < len(spans) else None)].strip()
                     for j, (a, _) in enumerate(spans)])
    return header, rows


# ------------------------------------------------------------------ figures written here
def _fil():
    row = {"lambda": 1e-3, "eta0_mean": 0.5, "eta0_std": 0.1, "eta1_mean": 0.3,
           "eta1_std": 0.05, "eta_mean": 0.4, "eta_max": 0.9, "eta_whole": 3.0,
           "acc_minimiser": 99.9, "acc_released": 90.0}
    return {"n_train": 800, "models": {"linear": dict(row), "logistic": dict(row)}}


def _irfil():
    plain = {"eta_mean": 0.5, "eta_std": 0.2, "eta_max": 1.0, "cv": 0.4, "acc_minimiser": 99.8}
    flat = {"eta_mean": 0.55, "eta_std": 5e-5, "eta_max": 0.55, "cv": 1e-4,
            "acc_minimiser": 99.7}
    return {"linear": dict(plain), "linear + IRFIL": dict(flat), "logistic": dict(plain),
            "logistic + IRFIL": dict(flat, eta_mean=0.45)}


def _attacks():
    return [{"sigma": s, "eta_mean": 1 / s, "test_mse": 0.3, "whitebox": w, "map": 0.6,
             "fredrikson": 0.70, "fredrikson_heldout": 0.69, "baseline": 0.5}
            for s, w in ((1e-8, 1.0), (1e-2, 0.34))]


def _werm():
    return [{"w": w, "test_accuracy": 0.9, "mia_train": t, "mia_reference": r, "n_eff": n,
             "epsilon_ratio": 1.0} for w, t, r, n in ((0.0, 0.6, 0.5, 1000),
                                                      (0.5, 0.55, 0.55, 2000),
                                                      (1.0, 0.5, 0.6, 1000))]


def _multicalibration():
    cell = {"group": "race=Other", "bucket": 3, "n_calibration": 20, "error": 0.25}
    common = {"test_log_loss": 0.4, "epsilon": None, "n_updates": None, "worst_cell": cell,
              "min_cell_size": 100, "max_updates": 50, "test_mc_error": 0.25}
    return [dict(common, base="weak base (paper)", post_processing="uncalibrated",
                 test_accuracy=0.81),
            dict(common, base="weak base (paper)", post_processing="NumericSparse eps=1",
                 test_accuracy=0.84, epsilon=1.0, n_updates=12),
            dict(common, base="sklearn LogisticRegression", post_processing="uncalibrated",
                 test_accuracy=0.85)]


def _raw_data():
    return [{"sigma": s, "eta_max": 2 / s, "eta_median": 1 / s, "race_max": 1 / s,
             "race_median": 0.5 / s, "accuracy": a, "whitebox": w, "map": m,
             "baseline": 0.86, "membership": 0.01}
            for s, a, w, m in ((0.01, 0.85, 0.9, 0.9), (0.1, 0.84, 0.87, 0.87),
                               (1.0, 0.7, 0.5, 0.86))]


#: section -> (figures satisfying every claim, [(mutation, words of the claim it breaks)])
CASES = {
    _s1_fil: (_fil, [
        (lambda r: r["models"]["logistic"].update(eta0_mean=0.2), "logistic: mean eta of"),
        (lambda r: r["models"]["linear"].update(acc_released=100.0), "linear: the released"),
    ]),
    _s2_irfil: (_irfil, [
        (lambda r: r["linear + IRFIL"].update(cv=2e-3), "linear: IRFIL equalises"),
        (lambda r: r["logistic"].update(cv=5e-4), "logistic: IRFIL equalises"),
        (lambda r: r["logistic + IRFIL"].update(eta_mean=0.3), "logistic: the mean eta"),
        (lambda r: r["linear + IRFIL"].update(acc_minimiser=98.0), "linear: the accuracy"),
    ]),
    _s4_attacks: (_attacks, [
        (lambda r: r[0].update(fredrikson_heldout=0.6), "sigma 1e-08: Fredrikson's"),
        (lambda r: r[1].update(fredrikson_heldout=0.54, fredrikson=0.54),
         "sigma 1e-02: Fredrikson above"),
        (lambda r: r[1].update(whitebox=0.4), "white-box at chance"),
        (lambda r: r[0].update(whitebox=0.98), "white-box above 0.99"),
    ]),
    _s5_werm: (_werm, [
        (lambda r: r[2].update(mia_train=0.7), "lowers the training"),
        (lambda r: r[0].update(mia_reference=0.65), "raises the reference"),
        (lambda r: r[1].update(n_eff=900), "largest N_eff"),
    ]),
    _s6_multicalibration: (_multicalibration, [
        (lambda r: r[1]["worst_cell"].update(error=0.2), "reported maximum"),
        (lambda r: r[1]["worst_cell"].update(n_calibration=100), "smaller than the private"),
        (lambda r: r[1].update(test_accuracy=0.82), "lifts the weak base"),
    ]),
    _s7_raw_data: (_raw_data, [
        (lambda r: r[1].update(race_max=0.5 / 0.1), "eta scales as 1/sigma from"),
        (lambda r: r[2].update(map=0.8), "sigma = 1: MAP at least"),
        (lambda r: r[0].update(membership=0.06), "sigma = 0.01: membership"),
        (lambda r: r[0].update(accuracy=0.8), "accuracy above 0.83"),
        (lambda r: r[0].update(map=0.865), "MAP beats the prior"),
        (lambda r: r[2].update(accuracy=0.81), "accuracy drops"),
        (lambda r: r[2].update(whitebox=0.9), "white-box below the prior"),
    ]),
}


def test_every_section_is_covered_by_written_figures():
    assert set(CASES) == set(demo.section_modules())


@pytest.mark.parametrize("module", list(CASES), ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_section_check_passes_and_names_each_broken_claim(module):
    """``check`` is empty on figures that satisfy the text; breaking one claim makes it
    name that claim (and only claims of that kind)."""
    make, mutations = CASES[module]
    good = make()
    assert module.check(good) == []
    for mutate, words in mutations:
        bad = copy.deepcopy(good)
        mutate(bad)
        failed = module.check(bad)
        assert failed and all(words in claim for claim in failed), (words, failed)


@pytest.mark.parametrize("module", list(CASES), ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_section_render_prints_title_paper_meaning_and_the_figures(module):
    result = CASES[module][0]()
    text = module.render(result)
    assert re.search(r"^Paper: ", text, flags=re.M)
    assert re.search(r"^What it means: ", text, flags=re.M)
    header, rows = parse_table(text)
    n = len(result["models"]) if module is _s1_fil else len(result)
    assert len(rows) == n and all(len(r) == len(header) for r in rows)


def _fake_section(name, failures):
    return types.SimpleNamespace(
        __name__=f"sklearn_privacy.demo._{name}", TITLE=f"section {name}",
        compute=lambda: {"x": 1}, render=lambda r: f"table of {r['x']}",
        check=lambda r: list(failures))


def test_main_exit_status_follows_the_claims(monkeypatch, capsys):
    sections = [_fake_section("s1_ok", []), _fake_section("s2_bad", ["a claim broke"])]
    monkeypatch.setattr(demo, "section_modules", lambda: sections)
    assert demo.main([]) == 1
    captured = capsys.readouterr()
    assert "CLAIM FAILED: a claim broke" in captured.out
    assert "section s2_bad: a claim broke" in captured.err
    assert demo.main(["--only", "s1_ok"]) == 0


def test_demo_command_exit_status(tmp_path):
    """``python -m sklearn_privacy.demo`` exits with main's status (what CI sees)."""
    import subprocess
    import sys
    from pathlib import Path

    main = (Path(demo.__file__).parent / "__main__.py").read_text()
    assert "SystemExit(main())" in main
    code = ("import sklearn_privacy.demo as d, types\n"
            "d.section_modules = lambda: [types.SimpleNamespace(__name__='x._s9', "
            "TITLE='t', compute=dict, render=str, check=lambda r: ['broken'])]\n"
            "import runpy; runpy.run_module('sklearn_privacy.demo', run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "broken" in proc.stderr


# ------------------------------------------------------------------ the whole demo (slow)
@pytest.fixture(scope="module")
def sections():
    """``name -> (module, computed result, rendered text)`` for every section."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.utils.validation import has_fit_parameter

    out = {}
    for module in demo.section_modules():
        name = module.__name__.rsplit("._", 1)[1]
        if name == "s5_werm" and not has_fit_parameter(MLPClassifier(), "sample_weight"):
            continue  # scikit-learn < 1.7
        result = module.compute()
        out[name] = (module, result, module.render(result))
    return out


@pytest.mark.slow
def test_every_section_has_title_paper_line_and_meaning(sections):
    modules = demo.section_modules()
    assert len(modules) >= 6
    for module, _, text in sections.values():
        assert isinstance(module.TITLE, str) and module.TITLE
        assert re.search(r"^Paper: ", text, flags=re.M), module.__name__
        assert re.search(r"^What it means: ", text, flags=re.M), module.__name__


def test_main_prints_titles_timings_and_only_filters(capsys):
    assert demo.main(["--only", "irfil"]) == 0
    out = capsys.readouterr().out
    assert out.count("=== ") == 1 and "Iteratively reweighted FIL" in out
    assert len(re.findall(r"^\(\d+\.\d s\)$", out, flags=re.M)) == 1
    assert "Demo finished in" in out


def _num(cell):
    return float(cell.split()[0])


@pytest.mark.slow
def test_section_tables_hold_the_computed_numbers(sections):
    approx = pytest.approx
    # FIL: per-digit eta, max eta, whole-set eta, accuracies
    _, res, text = sections["s1_fil"]
    _, rows = parse_table(text)
    assert [r[0] for r in rows] == list(res["models"])
    for row, r in zip(rows, res["models"].values(), strict=True):
        assert _num(row[2]) == approx(r["eta0_mean"], abs=5e-4)
        assert float(row[2].split()[-1]) == approx(r["eta0_std"], abs=5e-4)
        assert _num(row[3]) == approx(r["eta1_mean"], abs=5e-4)
        assert _num(row[4]) == approx(r["eta_max"], abs=5e-4)
        assert _num(row[5]) == approx(r["eta_whole"], abs=5e-3)
        assert _num(row[6]) == approx(r["acc_minimiser"], abs=0.05)
        assert _num(row[7]) == approx(r["acc_released"], abs=0.05)
    # IRFIL: ours next to the paper's Table 1
    module, res, text = sections["s2_irfil"]
    _, rows = parse_table(text)
    for row, (key, r) in zip(rows, res.items(), strict=True):
        assert _num(row[1]) == approx(r["eta_mean"], abs=5e-4)
        assert _num(row[3]) == approx(r["cv"], rel=0.05)
        assert _num(row[5]) == module.PAPER_TABLE_1[key][0]
    # IWPC inversion
    _, res, text = sections["s4_attacks"]
    _, rows = parse_table(text)
    for row, r in zip(rows, res, strict=True):
        keys = ["sigma", "eta_mean", "test_mse", "whitebox", "map", "fredrikson",
                "fredrikson_heldout", "baseline"]
        for cell, key in zip(row, keys, strict=True):
            assert _num(cell) == approx(r[key], rel=0.01, abs=5e-4), key
    # multicalibration
    _, res, text = sections["s6_multicalibration"]
    _, rows = parse_table(text)
    for row, r in zip(rows, res, strict=True):
        assert row[:2] == [r["base"], r["post_processing"]]
        assert _num(row[2]) == approx(r["test_accuracy"], abs=5e-5)
        assert _num(row[3]) == approx(100 * r["test_log_loss"], abs=0.05)
        assert _num(row[4]) == approx(r["test_mc_error"], abs=5e-4)
        assert row[6] == ("-" if r["n_updates"] is None else str(r["n_updates"]))
    # raw Adult
    _, res, text = sections["s7_raw_data"]
    _, rows = parse_table(text)
    for row, r in zip(rows, res, strict=True):
        keys = ["sigma", "eta_max", "eta_median", "race_max", "race_median", "accuracy",
                "whitebox", "map", "baseline", "membership"]
        for cell, key in zip(row, keys, strict=True):
            assert _num(cell) == approx(r[key], rel=5e-3, abs=5e-4), key


@pytest.mark.slow
def test_werm_section_numbers_and_claims(sections):
    if "s5_werm" not in sections:
        pytest.skip("MLPClassifier takes sample_weight from scikit-learn 1.7 on")
    _, res, text = sections["s5_werm"]
    _, rows = parse_table(text)
    for row, r in zip(rows, res, strict=True):
        assert _num(row[1]) == pytest.approx(100 * r["test_accuracy"], abs=0.05)
        assert _num(row[2]) == pytest.approx(100 * r["mia_train"], abs=0.05)
        assert _num(row[3]) == pytest.approx(100 * r["mia_reference"], abs=0.05)
    by_w = {r["w"]: r for r in res}
    # the trade-off the prose states: leakage moves from training to reference rows
    assert by_w[0.0]["mia_train"] > by_w[1.0]["mia_train"]
    assert by_w[0.0]["mia_reference"] < by_w[1.0]["mia_reference"]
    assert by_w[0.5]["n_eff"] == 2000 and by_w[0.0]["n_eff"] == by_w[1.0]["n_eff"] == 1000


@pytest.mark.slow
def test_fil_and_irfil_claims(sections):
    """The claims of the FIL and IRFIL prose hold on the computed figures."""
    for name in ("s1_fil", "s2_irfil", "s4_attacks", "s6_multicalibration", "s7_raw_data"):
        module, res, _ = sections[name]
        assert module.check(res) == [], name
    res = sections["s1_fil"][1]["models"]
    for r in res.values():
        assert r["eta0_mean"] > r["eta1_mean"]            # digit 0 leaks more (Figure 2)
    irfil = sections["s2_irfil"][1]
    for name in ("linear", "logistic"):
        assert irfil[f"{name} + IRFIL"]["cv"] < 1e-3 < irfil[name]["cv"]
        ratio = irfil[f"{name} + IRFIL"]["eta_mean"] / irfil[name]["eta_mean"]
        assert 0.8 < ratio < 1.2                            # the mean moves little
    assert "linear up, logistic down" in sections["s2_irfil"][2]   # as in Table 1


@pytest.mark.slow
def test_iwpc_claims_against_held_out_rows(sections):
    """Fredrikson's accuracy is population inference: within 0.02 on rows never trained on,
    and above the prior; the white-box attack is at chance at sigma = 1e-2."""
    res = {r["sigma"]: r for r in sections["s4_attacks"][1]}
    for r in res.values():
        assert abs(r["fredrikson"] - r["fredrikson_heldout"]) < 0.02
        assert r["fredrikson_heldout"] > r["baseline"] + 0.05
    assert res[1e-2]["whitebox"] == pytest.approx(1 / 3, abs=0.02)
    assert res[1e-8]["whitebox"] > 0.99
    assert "sigma = 1e-02" in sections["s4_attacks"][2]


@pytest.mark.slow
def test_multicalibration_worst_cell_is_below_the_private_minimum(sections):
    """The prose's reason, recomputed: the cell behind the weak base's error under
    NumericSparse is smaller than min_cell_size_, and its error is the reported maximum."""
    res = {(r["base"], r["post_processing"]): r for r in sections["s6_multicalibration"][1]}
    ns = res[("weak base (paper)", "NumericSparse eps=1")]
    cell = ns["worst_cell"]
    assert cell["error"] == pytest.approx(ns["test_mc_error"], abs=1e-12)
    assert cell["n_calibration"] < ns["min_cell_size"] == ns["model"].min_cell_size_
    assert "so it is never updated" in sections["s6_multicalibration"][2]
    plain = res[("weak base (paper)", "uncalibrated")]
    assert ns["test_accuracy"] > plain["test_accuracy"] + 0.02


@pytest.mark.slow
def test_raw_data_section_figures(sections):
    import warnings

    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_privacy._experiments import raw_adult_split

    rows = {r["sigma"]: r for r in sections["s7_raw_data"][1]}
    assert sorted(rows) == [0.01, 0.1, 1.0]
    # independent oracles: the prior baseline is the most frequent race of the training
    # rows; the noiseless model is sklearn's LogisticRegression with C = 1 / (n alpha)
    X_train, y_train, X_test, y_test = raw_adult_split()
    assert isinstance(X_train, pd.DataFrame) and len(X_train) == 3000
    baseline = X_train["race"].value_counts(normalize=True).max()
    cat = list(X_train.select_dtypes("category").columns)
    num = list(X_train.select_dtypes("number").columns)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        plain = make_pipeline(
            ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat),
                               ("num", StandardScaler(), num)]),
            LogisticRegression(C=1 / (3000 * 1e-3), tol=1e-10, max_iter=1000)
        ).fit(X_train, y_train)
    plain_acc = plain.score(X_test, y_test)
    for r in rows.values():
        assert r["baseline"] == pytest.approx(baseline, abs=1e-12)
        assert r["map"] >= r["baseline"]        # prior x likelihood never loses to the prior
        assert r["race_max"] <= r["eta_max"] and r["race_median"] <= r["eta_median"]
        assert abs(r["membership"]) < 0.05      # a linear model on 3,000 rows
        assert 0.6 < r["accuracy"] <= plain_acc + 0.01  # noise does not beat the noiseless fit
    small, mid, big = rows[0.01], rows[0.1], rows[1.0]
    for key in ("eta_max", "eta_median", "race_max", "race_median"):  # eta ~ 1 / sigma
        assert small[key] / mid[key] == pytest.approx(10, rel=1e-6)
        assert mid[key] / big[key] == pytest.approx(10, rel=1e-6)
    # little noise: the release is the non-private model and leaks race beyond the prior
    assert small["accuracy"] == pytest.approx(plain_acc, abs=0.01) and small["accuracy"] > 0.83
    assert small["map"] > baseline + 0.01
    # much noise: accuracy drops and the likelihood alone is worse than guessing the prior
    assert big["accuracy"] < small["accuracy"] - 0.05
    assert big["whitebox"] < baseline
