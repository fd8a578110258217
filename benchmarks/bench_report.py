"""Privacy reports of three models trained on the raw Adult frame, with their timings.

The models of the user guide page "Can I publish this model?":

1. ``fil``: declared-bounds scaling, one-hot encoding with the published categories and
   the FIL DP view with a penalised intercept, calibrated to epsilon = 1 (a finite claim);
2. ``logreg``: scikit-learn's ``LogisticRegression`` after a ``StandardScaler`` and a
   learned one-hot encoding (no claim), with per-example FIL through ``fil.audit`` at the
   noise that would make its release epsilon = 1 in the DP view;
3. ``forest``: a ``RandomForestClassifier`` (no claim, no FIL).

Training rows: the 30,162 complete rows of Adult's training file; population (non-members):
the 15,060 complete rows of its test file. Sensitive columns: sex and race. Each report is
written as ``<out>/report_<model>.html`` and its section timings are printed. Reference
models (LiRA) are off for the timing figure (``--references 0``).

Run:  python benchmarks/bench_report.py [--out /tmp/reports] [--references 0]
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privacy import FILLogisticRegression, PrivacyReport
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.preprocessing import BoundedScaler

BOUNDS = {"age": (15, 100), "education_num": (1, 16), "hours_per_week": (0, 100)}
CATEGORICAL = ["workclass", "marital_status", "occupation", "relationship", "race", "sex"]


def data():
    train = load_adult(raw=True, as_frame=True)
    test = load_adult(raw=True, as_frame=True, subset="test")
    cols = list(BOUNDS) + CATEGORICAL
    keep = train.data.notna().all(axis=1).to_numpy()
    keep_t = test.data.notna().all(axis=1).to_numpy()
    X = train.data.loc[keep, cols].reset_index(drop=True)
    y = (train.target[keep] == ">50K").to_numpy()
    Xp = test.data.loc[keep_t, cols].reset_index(drop=True)
    yp = (test.target[keep_t] == ">50K").to_numpy()
    categories = [list(train.data[c].cat.categories) for c in CATEGORICAL]
    return X, y, Xp, yp, categories


def models(categories, n, sigma_fil):
    fil = make_pipeline(
        ColumnTransformer([
            ("num", BoundedScaler(BOUNDS), list(BOUNDS)),
            ("cat", OneHotEncoder(categories=categories, handle_unknown="ignore",
                                  sparse_output=False), CATEGORICAL)]),
        FILLogisticRegression(sigma=sigma_fil, alpha=0.01, data_norm=np.sqrt(10),
                              intercept_scaling=1.0))
    learned = ColumnTransformer([
        ("num", StandardScaler(), list(BOUNDS)),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), CATEGORICAL)])
    logreg = make_pipeline(learned, LogisticRegression(C=1.0 / (n * 0.01), max_iter=2000))
    forest = make_pipeline(learned, RandomForestClassifier(n_estimators=100, n_jobs=2,
                                                           random_state=0))
    return {"fil": fil, "logreg": logreg, "forest": forest}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/reports")
    ap.add_argument("--references", type=int, default=0)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    warnings.simplefilter("ignore")
    X, y, Xp, yp, categories = data()
    n = len(y)
    probe = models(categories, n, 1.0)["fil"].fit(X, y)
    sigma = probe[-1].sigma_for_epsilon(1.0)
    print(f"rows: {n} training, {len(yp)} population; FIL sigma for epsilon 1: {sigma:.4g}")
    for name, model in models(categories, n, sigma).items():
        if args.only and name != args.only:
            continue
        t = time.perf_counter()
        model.fit(X, y)
        fit_s = time.perf_counter() - t
        t = time.perf_counter()
        report = PrivacyReport.from_estimator(
            model, X, y, Xp, yp, sensitive_features=["sex", "race"],
            sigma=sigma if name == "logreg" else None,
            n_reference_models=args.references, n_jobs=2, random_state=0, name=name,
            include_private_details=True)   # LiRA, eta and inversion: the private page
        total = time.perf_counter() - t
        report.save_html(os.path.join(args.out, f"report_{name}.html"))
        acc = model.score(Xp, yp)
        timings = ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items())
        print(f"{name:<7} test accuracy {acc:.4f}; fit {fit_s:.3f} s; report {total:.2f} s "
              f"({total / fit_s:.1f}x the fit) ({timings})")
        print(f"        {report!r}")
        for s in report.sections:
            for v in s.verdicts:
                print(f"        [{s.key}] {v}")


if __name__ == "__main__":
    main()
