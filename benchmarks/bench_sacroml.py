"""PrivacyReport side by side with SACRO-ML on two public tables and four models.

Each tool runs in its own environment on the same numeric arrays (numeric columns
standardised on the training rows, categories one-hot encoded) and the same fitted
models: a fully grown decision tree, a random forest (100 trees, scikit-learn defaults),
an RBF SVC and a logistic regression. The tables are scikit-learn's bundled breast cancer
data (569 rows, 30 columns) and the Palmer penguins (``palmerpenguins`` package, 333
complete rows; the target is whether a penguin is an Adelie), each split in half at
random (seed 0). For each (table, model) the script records each tool's checks, their
outcomes, its recommendation and its run time.

SACRO-ML (``sacroml``) is installed in its own virtual environment:

    python3 -m venv /work/venvs/r39-checks-sacroml
    /work/venvs/r39-checks-sacroml/bin/pip install sacroml palmerpenguins

Run (from the repository root, with the library's own environment)::

    PYTHONPATH=$PWD python benchmarks/bench_sacroml.py \
        --sacroml-python /work/venvs/r39-checks-sacroml/bin/python

It prints a markdown table. ``--tool sacroml`` / ``--tool sklearn_privacy`` runs one tool
on one case (``--table``, ``--model``) and prints a JSON line; the default runs every case
of both tools through subprocesses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

TABLES = ("breast_cancer", "penguins")
MODELS = ("DecisionTree", "RandomForest", "SVC", "LogisticRegression")
DATA_DIR = os.path.join(tempfile.gettempdir(), "bench_sacroml_data")


# ---------------------------------------------------------------------- data
def _prepare(table):
    """Standardised numeric arrays of one table, split in half (seed 0); cached as .npz."""
    os.makedirs(DATA_DIR, exist_ok=True)
    path = os.path.join(DATA_DIR, f"{table}.npz")
    if os.path.exists(path):
        d = np.load(path)
        return d["X_train"], d["y_train"], d["X_test"], d["y_test"]
    if table == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
    else:
        import pandas as pd
        from palmerpenguins import load_penguins

        df = load_penguins().dropna()
        y = (df["species"] == "Adelie").to_numpy().astype(int)
        num = df[["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g",
                  "year"]].to_numpy(dtype=float)
        cat = pd.get_dummies(df[["island", "sex"]]).to_numpy(dtype=float)
        X = np.c_[num, cat]
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    half = len(y) // 2
    tr, te = perm[:half], perm[half:]
    X = np.asarray(X, dtype=float)
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    sd[sd == 0] = 1.0
    X = (X - mu) / sd
    np.savez(path, X_train=X[tr], y_train=y[tr], X_test=X[te], y_test=y[te])
    return X[tr], y[tr], X[te], y[te]


def _model(name):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {"DecisionTree": DecisionTreeClassifier(random_state=0),
            "RandomForest": RandomForestClassifier(random_state=0),
            "SVC": SVC(probability=True, random_state=0),
            "LogisticRegression": LogisticRegression(max_iter=1000)}[name]


# ---------------------------------------------------------------------- tools
def run_sklearn_privacy(table, model_name):
    from sklearn_privacy.report import PrivacyReport

    X, y, Xt, yt = _prepare(table)
    model = _model(model_name).fit(X, y)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the private page: LiRA, the structural threshold checks and the membership
        # tests of structural findings are private figures (computed only there)
        rep = PrivacyReport.from_estimator(model, X, y, Xt, yt, n_canaries=200,
                                           n_reference_models=8, random_state=0,
                                           include_private_details=True)
    seconds = time.perf_counter() - t
    checks = {}
    private = rep.private_details
    for c in private["structural"]:
        checks[c["name"]] = (("found " + str(c["found"])) if c["ran"] and c["found"]
                             else "none" if c["ran"] else "not run")
    for s in rep.sections:
        if s.key in ("release", "membership", "audits"):
            checks[s.key] = ",".join(o for o in s.outcomes if o != "note")
    tail = private["summary"].get("tpr_at_low_fpr") or {}
    lvl = (tail.get("levels") or {}).get("0.01")
    return {"tool": "sklearn_privacy", "table": table, "model": model_name,
            "seconds": seconds, "checks": checks,
            "decision": private["recommendation"]["decision"],
            "default_page_decision": rep.recommendation["decision"],
            "empirical_epsilon": private["summary"].get(
                "empirical_epsilon", rep.summary.get("empirical_epsilon")),
            "tpr_at_1pct": None if lvl is None else lvl["tpr"]}


def run_sacroml(table, model_name):
    import logging

    logging.disable(logging.CRITICAL)
    from sacroml.attacks.attack_report_formatter import FinalRecommendationModule
    from sacroml.attacks.factory import create_attack
    from sacroml.attacks.target import Target

    X, y, Xt, yt = _prepare(table)
    model = _model(model_name).fit(X, y)
    t = time.perf_counter()
    target = Target(model=model, dataset_name=table, X_train=X, y_train=y, X_test=Xt,
                    y_test=yt)
    out = tempfile.mkdtemp(prefix="sacroml_")
    checks, report = {}, {"model_name": type(model).__name__,
                          "model_params": model.get_params()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in (("structural", {}), ("worstcase", {"n_reps": 10}),
                         ("lira", {"n_shadow_models": 8}), ("instance_based", {})):
            try:
                att = create_attack(name, output_dir=out, write_report=False, **kw)
                if hasattr(att, "attackable") and not att.attackable(target):
                    checks[name] = "not attackable"
                    continue
                res = att.attack(target)
            except Exception as exc:  # noqa: BLE001 - recorded as the tool's outcome
                checks[name] = f"error: {type(exc).__name__}"
                continue
            report[name] = res
            checks.update(_sacro_outcomes(name, res))
    rec = FinalRecommendationModule(report)
    rec.process_dict()
    seconds = time.perf_counter() - t
    imm, sup_rej, sup_rel = rec.get_recommendation()
    decision = ("immediate rejection" if imm else "support rejection" if sup_rej
                else "support release")
    return {"tool": "sacroml", "table": table, "model": model_name, "seconds": seconds,
            "checks": checks, "decision": decision, "reasons": imm + sup_rej}


def _sacro_outcomes(name, res):
    """The flags of one SACRO-ML attack result, as short strings."""
    out = {}
    if name == "structural":
        m = _find(res, "attack_experiment_logger") or res
        inst = _first_instance(m)
        for k in ("dof_risk", "k_anonymity_risk", "class_disclosure_risk",
                  "smallgroup_risk", "unnecessary_risk", "gen_error_risk"):
            if inst is not None and k in inst:
                out[k] = "risk" if inst[k] else "none"
    else:
        inst = _first_instance(_find(res, "attack_experiment_logger") or res)
        if inst is not None:
            for k in ("AUC", "TPR@0.01", "P_HIGHER_AUC", "n_stored_instances", "n_matched",
                      "data_leakage_confirmed"):
                if k in inst:
                    v = inst[k]
                    out[f"{name} {k}"] = f"{v:.3g}" if isinstance(v, float) else str(v)
        if not out:
            out[name] = "ran"
    return out


def _find(d, key):
    if isinstance(d, dict):
        if key in d:
            return d[key]
        for v in d.values():
            r = _find(v, key)
            if r is not None:
                return r
    return None


def _first_instance(m):
    if not isinstance(m, dict):
        return None
    inst = m.get("attack_instance_logger")
    if isinstance(inst, dict) and inst:
        return next(iter(inst.values()))
    return m


# ---------------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=("sacroml", "sklearn_privacy"))
    ap.add_argument("--table", choices=TABLES)
    ap.add_argument("--model", choices=MODELS)
    ap.add_argument("--sacroml-python", default="/work/venvs/r39-checks-sacroml/bin/python")
    args = ap.parse_args()
    if args.tool:
        fn = run_sacroml if args.tool == "sacroml" else run_sklearn_privacy
        print(json.dumps(fn(args.table, args.model)))
        return
    # the penguins table needs palmerpenguins: prepared once in SACRO-ML's environment
    here = os.path.abspath(__file__)
    subprocess.run([args.sacroml_python, "-c",
                    f"import sys; sys.path.insert(0, {os.path.dirname(here)!r}); "
                    "import bench_sacroml as b; [b._prepare(t) for t in b.TABLES]"],
                   check=True)
    rows = []
    for table in TABLES:
        for model in MODELS:
            for tool, py in (("sklearn_privacy", sys.executable),
                             ("sacroml", args.sacroml_python)):
                env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
                r = subprocess.run([py, here, "--tool", tool, "--table", table,
                                    "--model", model], capture_output=True, text=True,
                                   env=env)
                line = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
                rows.append(json.loads(line[-1]) if line else
                            {"tool": tool, "table": table, "model": model,
                             "error": r.stderr[-400:]})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("| table | model | tool | seconds | decision | checks |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['table']} | {r['model']} | {r['tool']} | - | error | "
                  f"{r['error'][-120:]!r} |")
            continue
        checks = "; ".join(f"{k}: {v}" for k, v in r["checks"].items())
        extra = ""
        if r["tool"] == "sklearn_privacy":
            eps = r.get("empirical_epsilon")
            extra = (f"; empirical epsilon {eps:.3g}" if eps is not None else "") + (
                f"; TPR@1% {r['tpr_at_1pct']:.3g}" if r.get("tpr_at_1pct") is not None
                else "")
        print(f"| {r['table']} | {r['model']} | {r['tool']} | {r['seconds']:.1f} | "
              f"{r['decision']} | {checks}{extra} |")


if __name__ == "__main__":
    main()
