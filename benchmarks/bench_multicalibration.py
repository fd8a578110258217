"""Multicalibration on Adult: sklearn_privacy vs the `multicalibration` and `mcgrad` packages.

Calibration on the 30,162 training rows, evaluation on the 15,060 test rows. Groups: the
whole population, race (5), sex (2) and race x sex (10) -- 18 groups. Two bases: the
multicalibration paper's weak base (all columns standardised, no intercept, gradient
descent, learning rate 0.1, 1500 iterations) and scikit-learn's LogisticRegression.

* sklearn_privacy: ``PrivateMulticalibrator(calibration_tol=alpha, n_bins=10)`` (no privacy), at
  alpha = 0.1, 0.05 and 0.02, with the default ``clip_proba=0`` and with ``clip_proba=0.01``
  (every prediction kept in [0.01, 0.99]);
* multicalibration 0.0.2: ``MulticalibrationPredictor("HKRR")`` with alpha = 0.1,
  lambda = 0.1, no oracle, deterministic order;
* mcgrad 0.1.5: ``MCGrad()`` (gradient-boosted multicalibration) with the group indicators
  as categorical features (skipped with ``--no-mcgrad`` or when not installed).

Timing is like for like: the HKRR package is given the base model's calibration and test
scores and the group index lists, so sklearn_privacy is timed on the same inputs (a frozen
base whose probability is a column of X holding the precomputed score, the other columns
the group indicators): fit + predict, median of ``--repeat`` runs. "end-to-end s" is
sklearn_privacy fit + predict from the raw features instead (the base pipeline's
``predict_proba`` on both sets and the group evaluation included). Reported besides: test
accuracy, test BCE, the test multicalibration error (largest |mean(y - p)| over (group,
bucket) cells with at least 20 members) and the HKRR package's time over ours.

HKRR stops when no cell's mean residual reaches lambda / 10 = 0.01, a tighter criterion
than alpha = 0.1, hence the alpha = 0.02 rows. The package's HKRR ends by replacing each
prediction with the mean calibration prediction of its bucket; a diagnostic row applies
that mapping to our alpha = 0.02 output.

Run: ``python benchmarks/bench_multicalibration.py`` (needs
``pip install -r benchmarks/requirements.txt``; a few minutes, dominated by mcgrad and the
HKRR package).
"""

from __future__ import annotations

import time
import warnings
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline

from sklearn_privacy import PrivateMulticalibrator
from sklearn_privacy._experiments import adult_multicalibration_data
from sklearn_privacy.metrics import multicalibration_error
from sklearn_privacy.multicalibration import membership_matrix
from sklearn_privacy.multicalibration._weak_base import GradientDescentLogisticRegression


def _bucket_mean_mapping(p_cal, p, n_bins=10):
    b_cal = np.minimum((p_cal * n_bins).astype(int), n_bins - 1)
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(b_cal, minlength=n_bins)
    means = np.bincount(b_cal, weights=p_cal, minlength=n_bins) / np.maximum(counts, 1)
    return np.where(counts[b] > 0, means[b], p)


class _ScoreColumn(ClassifierMixin, BaseEstimator):
    """Frozen base whose probability of class 1 is column 0 of X (a precomputed score)."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        p = np.asarray(X)[:, 0]
        return np.column_stack([1.0 - p, p])


def _fit_predict(base, groups, X, y, X_test, params):
    mc = PrivateMulticalibrator(base, groups, **params).fit(X, y)
    return mc.predict_proba(X_test)[:, 1]


def _timed(fn, repeat):
    """Median wall time over ``repeat`` runs of ``fn`` (each a fresh fit + predict)."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def main(repeat=3, mcgrad=True):
    Xtr, ytr, Xte, yte, groups, d = adult_multicalibration_data()
    print("| base | method | fit+predict s | end-to-end s | test acc | test BCE | "
          "test MC error | HKRR time / ours |")
    print("|---|---|---|---|---|---|---|---|")
    for base_name, model in (("weak (GD, no intercept)", GradientDescentLogisticRegression()),
                             ("sklearn LogisticRegression", LogisticRegression(max_iter=1000))):
        keep = ColumnTransformer([("features", "passthrough", list(range(d)))])
        base = make_pipeline(keep, model).fit(Xtr, ytr)
        p_tr = base.predict_proba(Xtr)[:, 1]
        p_te = base.predict_proba(Xte)[:, 1]
        M_tr = membership_matrix([*groups], Xtr)
        M_te = membership_matrix([*groups], Xte)
        G_te = np.column_stack([np.ones(len(yte), bool), M_te])
        # like-for-like inputs: precomputed score in column 0, group indicators after it
        S_tr = np.column_stack([p_tr, M_tr.astype(float)])
        S_te = np.column_stack([p_te, M_te.astype(float)])
        score_base = FrozenEstimator(_ScoreColumn().fit(S_tr, ytr))
        score_groups = list(range(1, S_tr.shape[1]))
        rows = []

        def report(name, p, seconds=None, end_to_end=None, rows=rows, G_te=G_te,
                   base_name=base_name):
            p = np.clip(p, 0, 1)
            rows.append({"base": base_name, "name": name, "s": seconds, "e2e": end_to_end,
                         "acc": np.mean((p > 0.5) == yte),
                         "bce": log_loss(yte, np.clip(p, 1e-15, 1 - 1e-15)),
                         "mc": multicalibration_error(yte, p, G_te, min_size=20)})

        report("base model", p_te)
        for alpha in (0.1, 0.05, 0.02):
            for clip in (0.0, 0.01):
                params = {"calibration_tol": alpha, "clip_proba": clip}
                seconds, p = _timed(partial(_fit_predict, score_base, score_groups, S_tr,
                                            ytr, S_te, params), repeat)
                e2e, p_raw = _timed(partial(_fit_predict, FrozenEstimator(base), groups, Xtr,
                                            ytr, Xte, params), repeat)
                assert np.array_equal(p, p_raw)  # same predictions from either input
                label = f"sklearn_privacy (alpha={alpha}" + (
                    f", clip_proba={clip})" if clip else ")")
                report(label, p, seconds, e2e)
            # diagnostic, not a method: the `multicalibration` package ends by mapping
            # every prediction to the mean calibration prediction of its bucket; the
            # same mapping applied to our output (without clip_proba)
            if alpha == 0.02:
                mc = PrivateMulticalibrator(score_base, score_groups,
                                            calibration_tol=alpha).fit(S_tr, ytr)
                report("  diagnostic: ours (alpha=0.02) + bucket-mean mapping",
                       _bucket_mean_mapping(mc.predict_proba(S_tr)[:, 1],
                                            mc.predict_proba(S_te)[:, 1]))

        try:
            from multicalibration import MulticalibrationPredictor
        except ImportError:
            rows.append({"base": base_name, "name": "multicalibration: not installed"})
        else:
            sub_tr = [np.arange(len(ytr))] + [np.flatnonzero(M_tr[:, g])
                                              for g in range(M_tr.shape[1])]
            sub_te = [np.arange(len(yte))] + [np.flatnonzero(M_te[:, g])
                                              for g in range(M_te.shape[1])]

            def run_hkrr(sub_tr=sub_tr, sub_te=sub_te, p_tr=p_tr, p_te=p_te):
                hkrr = MulticalibrationPredictor("HKRR")
                hkrr.fit(p_tr.copy(), ytr, [list(s) for s in sub_tr],
                         {"alpha": 0.1, "lambda": 0.1, "max_iter": 100, "randomized": False,
                          "use_oracle": False})
                # the package tests `i in group` per test row: sets keep that O(1) (lists
                # would make its prediction quadratic)
                return np.asarray(hkrr.predict(p_te.copy(),
                                               [set(s.tolist()) for s in sub_te]), float)

            seconds, p = _timed(run_hkrr, repeat)
            report("multicalibration (HKRR)", p, seconds)

        if mcgrad:
            try:
                import pandas as pd
                from mcgrad.methods import MCGrad
            except ImportError:
                rows.append({"base": base_name, "name": "mcgrad: not installed"})
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
                report("mcgrad", p, time.perf_counter() - t)

        hkrr_s = next((r["s"] for r in rows if r["name"].startswith("multicalibration (")),
                      None)
        for r in rows:
            if "acc" not in r:
                print(f"| {r['base']} | {r['name']} | | | | | | |")
                continue
            s_txt = f"{r['s']:.4f}" if r["s"] is not None else "-"
            e_txt = f"{r['e2e']:.4f}" if r["e2e"] is not None else "-"
            ratio = (f"{hkrr_s / r['s']:.0f}x" if hkrr_s and r["s"]
                     and r["name"].startswith("sklearn_privacy") else "-")
            print(f"| {r['base']} | {r['name']} | {s_txt} | {e_txt} | {r['acc']:.4f} | "
                  f"{r['bce']:.4f} | {r['mc']:.3f} | {ratio} |", flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed runs of sklearn_privacy and HKRR (median reported; "
                             "mcgrad runs once)")
    parser.add_argument("--no-mcgrad", action="store_true", help="skip mcgrad")
    args = parser.parse_args()
    main(args.repeat, mcgrad=not args.no_mcgrad)
