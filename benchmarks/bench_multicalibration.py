"""Multicalibration on Adult: sklearn_privacy vs the `multicalibration` and `mcgrad` packages.

Calibration on the 30,162 training rows, evaluation on the 15,060 test rows. Groups: the
whole population, race (5), sex (2) and race x sex (10) -- 18 groups. Two bases: the
multicalibration paper's weak base (all columns standardised, no intercept, gradient
descent, learning rate 0.1, 1500 iterations) and scikit-learn's LogisticRegression.

* sklearn_privacy: ``PrivateMulticalibrator(alpha=0.1, n_bins=10)`` (no privacy);
* multicalibration 0.0.2: ``MulticalibrationPredictor("HKRR")`` with alpha = 0.1,
  lambda = 0.1, no oracle, deterministic order;
* mcgrad 0.1.5: ``MCGrad()`` (gradient-boosted multicalibration) with the group indicators
  as categorical features.

Reported: fit + predict time, test accuracy, test BCE and the test multicalibration error
(largest |mean(y - p)| over (group, bucket) cells with at least 20 members).

Run: ``python benchmarks/bench_multicalibration.py`` (needs ``pip install -e ".[bench]"``;
several minutes, dominated by the HKRR package).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline

from sklearn_privacy import PrivateMulticalibrator
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.metrics import multicalibration_error
from sklearn_privacy.multicalibration import (
    GradientDescentLogisticRegression,
    conjunction_groups,
    membership_matrix,
)


def main():
    tr, te = load_adult(), load_adult(subset="test")
    mu, sd = tr.data.mean(0), tr.data.std(0)
    sd[sd == 0] = 1
    sens = tr.sensitive_columns
    cols = sens["race"] + sens["sex"]
    d = tr.data.shape[1]
    Xtr = np.hstack([(tr.data - mu) / sd, tr.data[:, cols]])
    Xte = np.hstack([(te.data - mu) / sd, te.data[:, cols]])
    remap = {j: d + k for k, j in enumerate(cols)}
    groups = conjunction_groups({"race": [remap[j] for j in sens["race"]],
                                 "sex": [remap[j] for j in sens["sex"]]}, max_order=2)
    ytr, yte = tr.target, te.target
    print("| base | method | fit+predict s | test acc | test BCE | test MC error |")
    print("|---|---|---|---|---|---|")
    for base_name, model in (("weak (GD, no intercept)", GradientDescentLogisticRegression()),
                             ("sklearn LogisticRegression", LogisticRegression(max_iter=1000))):
        keep = ColumnTransformer([("features", "passthrough", list(range(d)))])
        base = make_pipeline(keep, model).fit(Xtr, ytr)
        p_tr = base.predict_proba(Xtr)[:, 1]
        p_te = base.predict_proba(Xte)[:, 1]
        M_tr = membership_matrix([*groups], Xtr)
        M_te = membership_matrix([*groups], Xte)
        G_te = np.column_stack([np.ones(len(yte), bool), M_te])

        def report(name, seconds, p, G_te=G_te, base_name=base_name):
            p = np.clip(p, 0, 1)
            err = multicalibration_error(yte, p, G_te, min_size=20)
            print(f"| {base_name} | {name} | {seconds:.2f} | {np.mean((p > 0.5) == yte):.4f} | "
                  f"{log_loss(yte, np.clip(p, 1e-15, 1 - 1e-15)):.4f} | {err:.3f} |",
                  flush=True)

        report("base model", 0.0, p_te)
        t = time.perf_counter()
        mc = PrivateMulticalibrator(base, groups, alpha=0.1, prefit=True).fit(Xtr, ytr)
        p = mc.predict_proba(Xte)[:, 1]
        report("sklearn_privacy", time.perf_counter() - t, p)

        try:
            from multicalibration import MulticalibrationPredictor
        except ImportError:
            print(f"| {base_name} | multicalibration | not installed | | | |")
        else:
            sub_tr = [np.arange(len(ytr))] + [np.flatnonzero(M_tr[:, g])
                                              for g in range(M_tr.shape[1])]
            sub_te = [np.arange(len(yte))] + [np.flatnonzero(M_te[:, g])
                                              for g in range(M_te.shape[1])]
            t = time.perf_counter()
            hkrr = MulticalibrationPredictor("HKRR")
            hkrr.fit(p_tr.copy(), ytr, [list(s) for s in sub_tr],
                     {"alpha": 0.1, "lambda": 0.1, "max_iter": 100, "randomized": False,
                      "use_oracle": False})
            # the package tests `i in group` per test row: sets keep that O(1) (lists would
            # make its prediction quadratic)
            p = np.asarray(hkrr.predict(p_te.copy(), [set(s.tolist()) for s in sub_te]),
                           dtype=float)
            report("multicalibration (HKRR)", time.perf_counter() - t, p)

        try:
            import pandas as pd
            from mcgrad.methods import MCGrad
        except ImportError:
            print(f"| {base_name} | mcgrad | not installed | | | |")
        else:
            names = [f"g{k}" for k in range(M_tr.shape[1])]
            df_tr = pd.DataFrame(M_tr.astype(int).astype(str), columns=names)
            df_tr["pred"], df_tr["label"] = p_tr, ytr
            df_te = pd.DataFrame(M_te.astype(int).astype(str), columns=names)
            df_te["pred"] = p_te
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mcg = MCGrad(random_state=0).fit(df_tr, "pred", "label",
                                                 categorical_feature_column_names=names)
                p = np.asarray(mcg.predict(df_te, "pred",
                                           categorical_feature_column_names=names), float)
            report("mcgrad", time.perf_counter() - t, p)


if __name__ == "__main__":
    main()
