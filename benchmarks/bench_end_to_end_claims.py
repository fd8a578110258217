"""Adult, raw frame -> pipeline with a finite end-to-end privacy claim: test accuracy.

Every step of the published pipeline is data-independent (declared bounds, categories of
the data set's published documentation) or DP (the FIL DP view with a penalised
intercept; optionally a DP standardiser), so ``privacy_claim`` of the fitted pipeline is
finite. For each total epsilon the model's ``sigma`` is calibrated with
``sigma_for_epsilon`` (the sensitivity depends only on n, alpha and data_norm), the
pipeline is refitted with fresh noise ``--repeats`` times, and the mean and standard
deviation of the test accuracy are printed with the composed claim.

Run::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_end_to_end_claims.py --repeats 5
"""

from __future__ import annotations

import argparse
import gzip
import re
import time
import warnings
from importlib import resources

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.preprocessing import BoundedScaler, DPStandardScaler

CATEGORICAL = ["workclass", "marital_status", "occupation", "relationship", "race", "sex"]
#: bounds declared from domain knowledge (never read from the rows): ages of working
#: adults, the 16 documented education levels, a week's hours
BOUNDS = {"age": (15, 100), "education_num": (1, 16), "hours_per_week": (0, 100)}
#: log1p of the capital columns, capped at 100,000 (the census top code is 99,999) and 5,000
MONEY_BOUNDS = {"capital_gain": (0.0, np.log1p(1e5)), "capital_loss": (0.0, np.log1p(5e3))}
#: the public label set (the data set's documentation)
LABELS = ["<=50K", ">50K"]


def documented_categories():
    """The levels of every categorical column as listed in the shipped ``adult.names``."""
    path = resources.files("sklearn_privacy.datasets") / "data" / "adult.names.gz"
    text = gzip.decompress(path.read_bytes()).decode()
    out = {}
    for col in CATEGORICAL:
        m = re.search(rf"^{col.replace('_', '-')}: (.*)\.$", text, flags=re.M)
        out[col] = sorted(v.strip() for v in m.group(1).split(","))
    return out


def public_pipeline(sigma, *, alpha, dp_scaler_epsilon=None):
    cats = documented_categories()
    num = (BoundedScaler(BOUNDS) if dp_scaler_epsilon is None else
           DPStandardScaler(BOUNDS, epsilon=dp_scaler_epsilon, delta=1e-6))
    ct = ColumnTransformer([
        ("num", num, list(BOUNDS)),
        ("money", make_pipeline(FunctionTransformer(np.log1p, feature_names_out="one-to-one"),
                                BoundedScaler(MONEY_BOUNDS)), list(MONEY_BOUNDS)),
        ("cat", OneHotEncoder(categories=[cats[c] for c in CATEGORICAL],
                              handle_unknown="ignore", sparse_output=False), CATEGORICAL),
    ], sparse_threshold=0)   # a layout fixed in advance (dense), not chosen by the rows
    # rows: 5 numeric values in [-1, 1], at most 6 ones, the constant 1 -> norm <= sqrt(12)
    # (a DP standardiser's output is not bounded: data_norm then scales long rows)
    return make_pipeline(ct, FILLogisticRegression(sigma=sigma, alpha=alpha,
                                                   data_norm=np.sqrt(12.0),
                                                   intercept_scaling=1.0,
                                                   classes=LABELS))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--alpha", type=float, default=1e-3)
    args = parser.parse_args()
    train = load_adult(raw=True, as_frame=True)
    test = load_adult(raw=True, as_frame=True, subset="test")
    cols = list(BOUNDS) + list(MONEY_BOUNDS) + CATEGORICAL
    X, y = train.data[cols], train.target
    Xt, yt = test.data[cols], test.target
    for col in CATEGORICAL:   # the loader's levels are exactly the documented ones
        assert list(X[col].cat.categories) == documented_categories()[col], col
    print(f"Adult: {len(X)} training rows, {len(Xt)} test rows; alpha={args.alpha}")
    print(f"majority class on test: {max(np.mean(yt == v) for v in np.unique(yt)):.4f}")
    ref = make_pipeline(ColumnTransformer([
        ("num", StandardScaler(), list(BOUNDS) + list(MONEY_BOUNDS)),
        ("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL)]),
        LogisticRegression(max_iter=2000)).fit(X, y)
    print(f"non-private LogisticRegression (StandardScaler, learned categories): "
          f"{ref.score(Xt, yt):.4f}, claim {privacy_claim(ref).epsilon}")
    print()
    print("| total epsilon (delta) | preprocessing | claim | rule | test accuracy "
          "(mean +- sd) | seconds/fit |")
    print("|---|---|---|---|---|---|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        probe = public_pipeline(1.0, alpha=args.alpha).fit(X, y)
        for eps in (0.5, 1.0, 2.0, 4.0):
            for variant in ("bounded", "dp"):
                if variant == "bounded":
                    sigma = probe[-1].sigma_for_epsilon(eps)
                    make = lambda s=sigma: public_pipeline(s, alpha=args.alpha)  # noqa: E731
                else:   # 10 % of the budget to the standardiser, the rest to the model
                    sigma = probe[-1].sigma_for_epsilon(0.9 * eps)
                    make = lambda s=sigma, e=eps: public_pipeline(  # noqa: E731
                        s, alpha=args.alpha, dp_scaler_epsilon=0.1 * e)
                accs, claims = [], []
                t0 = time.perf_counter()
                for _ in range(args.repeats):
                    fitted = make().fit(X, y)
                    accs.append(fitted.score(Xt, yt))
                    claims.append(privacy_claim(fitted))
                dt = (time.perf_counter() - t0) / args.repeats
                c = max(claims, key=lambda c: c.epsilon)
                label = ("BoundedScaler" if variant == "bounded"
                         else "DPStandardScaler (0.1 eps)")
                print(f"| {eps} | {label} | ({c.epsilon:.3f}, {c.delta:.1e}) | "
                      f"{c.composition} | {np.mean(accs):.4f} +- {np.std(accs):.4f} | "
                      f"{dt:.2f} |")


if __name__ == "__main__":
    main()
