"""The documented DP linear recipes against the output-perturbed route and a constant.

Tables (70/30 split, fixed seed): breast cancer (binary), wine and penguins (3 classes),
digits (10 classes), diabetes, IWPC (bundled) and penguins body mass (regression).
Declared bounds: each column's range on the whole table (it stands in for a codebook;
the same for every method), mapped onto [-1, 1] by ``BoundedScaler``; ``data_norm`` and
``intercept_scaling`` from :func:`~sklearn_privacy.linear_model.with_declared_bounds`
(``sqrt(1.25 k)``, ``0.5 sqrt(k)``); regression targets bounded by their range.

Per table and epsilon, over ``--draws`` fresh-noise fits: median test accuracy / R^2 and
the fraction of draws at least as good as the constant (majority class / training
mean), for

* classification: ``DPLogisticRegression`` (pure, ``alpha="auto"``) -- the recipe; and
  ``FILLogisticRegression(epsilon=..., delta=0)`` (output perturbation, ``alpha`` default);
* regression: ``DPLinearRegression`` with ``method="ssp"`` at ``delta=1e-5`` (the
  defaults) -- the recipe -- and pure (``delta=0``), ``method="objective"`` (pure), and
  ``FILLinearRegression(epsilon=..., delta=0)``.

It also records whether the recipe's ``NoiseDominatesWarning`` fires (a function of n,
the dimension, epsilon, delta and the bounds only) and scores it against "the median
draw loses to the constant": false positives and false negatives over all cells.

Run::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dp_linear_recipes.py
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
from sklearn.pipeline import make_pipeline

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.datasets import load_iwpc
from sklearn_privacy.exceptions import NoiseDominatesWarning
from sklearn_privacy.linear_model import (
    DPLinearRegression,
    DPLogisticRegression,
    with_declared_bounds,
)
from sklearn_privacy.preprocessing import BoundedScaler

EPSILONS = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0]
PENGUIN_FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]


PENGUINS_CSV = None


def _penguins():
    """The Palmer penguins table (``--penguins``: the ``penguins.csv`` of the pip package
    ``palmerpenguins``, or the package itself when importable), complete rows."""
    import pandas as pd

    if PENGUINS_CSV is not None:
        return pd.read_csv(PENGUINS_CSV).dropna().reset_index(drop=True)
    try:
        from palmerpenguins import load_penguins
    except ImportError:  # pragma: no cover - optional
        return None
    return load_penguins().dropna().reset_index(drop=True)


def tables():
    out = {}
    c = load_breast_cancer()
    out["breast_cancer"] = (c.data, c.target, "clf")
    w = load_wine()
    out["wine"] = (w.data, w.target, "clf")
    dg = load_digits()
    out["digits"] = (dg.data, dg.target, "clf")
    df = _penguins()
    if df is not None:
        out["penguins"] = (df[PENGUIN_FEATURES].to_numpy(float),
                           df["species"].to_numpy(), "clf")
        out["penguins_mass"] = (df[PENGUIN_FEATURES].to_numpy(float),
                                df["body_mass_g"].to_numpy(float), "reg")
    d = load_diabetes()
    out["diabetes"] = (d.data, d.target, "reg")
    iw = load_iwpc()
    out["iwpc"] = (np.asarray(iw.data, float), np.asarray(iw.target, float), "reg")
    return out


def split(X, y, seed=0):
    idx = np.random.default_rng(seed).permutation(len(y))
    k = int(0.7 * len(y))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def _scaler(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return BoundedScaler([(float(a), float(b)) for a, b in zip(lo, hi, strict=True)])


def recipe(X, y, kind, epsilon, method="ssp", delta=None):
    """The documented recipe (a pipeline whose data_norm comes from the declared bounds):
    pure objective perturbation for classification, Gaussian SSP (``delta=1e-5``, the
    default) for regression."""
    if delta is None:
        delta = 0.0 if kind == "clf" else 1e-5
    if kind == "clf":
        model = DPLogisticRegression(epsilon, delta=delta, classes=np.unique(y))
    else:
        model = DPLinearRegression(epsilon, delta=delta, method=method,
                                   target_bound=(float(y.min()), float(y.max())))
    return with_declared_bounds(make_pipeline(_scaler(X), model))


def fil_route(X, y, kind, epsilon):
    if kind == "clf":
        model = FILLogisticRegression(epsilon=epsilon, delta=0.0)
    else:
        B = float(np.max(np.abs(y)))
        model = FILLinearRegression(epsilon=epsilon, delta=0.0, target_bound=B)
    return with_declared_bounds(make_pipeline(_scaler(X), model))


def score(model, Xte, yte, kind):
    return model.score(Xte, yte)


def run(draws, only=None):
    rows, warn_cells = [], []
    for name, (X, y, kind) in tables().items():
        if only and name not in only:
            continue
        Xtr, ytr, Xte, yte = split(X, y)
        if kind == "clf":
            vals, counts = np.unique(ytr, return_counts=True)
            const = float(np.mean(yte == vals[np.argmax(counts)]))
        else:
            const = float(1 - np.mean((yte - ytr.mean()) ** 2) / np.var(yte))
        for eps in EPSILONS:
            methods = {"recipe": (recipe, {})}
            if kind == "reg":
                methods["ssp pure"] = (recipe, {"delta": 0.0})
                methods["objective pure"] = (recipe, {"method": "objective", "delta": 0.0})
            if kind == "reg" or len(np.unique(y)) == 2:  # FIL: penalised intercept, binary
                methods["FIL output pure"] = (fil_route, {})
            cell = {}
            fired = None
            for mname, (make, kw) in methods.items():
                scores = []
                for i in range(draws):
                    with warnings.catch_warnings(record=True) as rec:
                        warnings.simplefilter("always")
                        m = make(X, y, kind, eps, **kw).fit(Xtr, ytr)
                    if mname == "recipe" and i == 0:
                        fired = any(issubclass(w.category, NoiseDominatesWarning)
                                    for w in rec)
                    scores.append(score(m, Xte, yte, kind))
                scores = np.array(scores)
                cell[mname] = (float(np.median(scores)), float(np.mean(scores >= const)))
            loses = cell["recipe"][0] < const
            ratio = noise_ratio(X, y, kind, eps, Xtr, ytr)
            warn_cells.append((name, eps, fired, loses, ratio))
            rows.append((name, len(ytr), eps, const, cell, fired))
            print(name, len(ytr), eps, round(const, 3),
                  {k: (round(v[0], 3), round(v[1], 2)) for k, v in cell.items()},
                  "warns" if fired else "", f"ratio {ratio:.4g}", flush=True)
    return rows, warn_cells


def noise_ratio(X, y, kind, eps, Xtr, ytr):
    """The recipe's public noise-to-signal ratio (read from its warning with the
    threshold set to -1, so that it always fires)."""
    import re

    from sklearn_privacy.linear_model import _estimators

    saved = _estimators.LOSE_TO_CONSTANT_RATIO
    _estimators.LOSE_TO_CONSTANT_RATIO = -1.0
    try:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            recipe(X, y, kind, eps).fit(Xtr, ytr)
    finally:
        _estimators.LOSE_TO_CONSTANT_RATIO = saved
    for w in rec:
        if issubclass(w.category, NoiseDominatesWarning):
            return float(re.search(r"noise is ([0-9.e+-]+) times", str(w.message)).group(1))
    return float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--penguins", help="path of palmerpenguins' penguins.csv")
    args = parser.parse_args(argv)
    global PENGUINS_CSV
    PENGUINS_CSV = args.penguins
    rows, cells = run(args.draws, args.only)
    print()
    print("| table | n train | epsilon | constant | method: median (share >= constant) |"
          " warns |")
    print("|---|---|---|---|---|---|")
    for name, n, eps, const, cell, fired in rows:
        text = "; ".join(f"{k} {v[0]:.3f} ({v[1]:.2f})" for k, v in cell.items())
        print(f"| {name} | {n} | {eps} | {const:.3f} | {text} | {'yes' if fired else ''} |")
    fp = sum(1 for *_, f, lose, _r in cells if f and not lose)
    fn = sum(1 for *_, f, lose, _r in cells if not f and lose)
    pos = sum(1 for *_, f, lose, _r in cells if lose)
    neg = len(cells) - pos
    print(f"\nwarning: {fp} false positives of {neg} cells where the recipe's median "
          f"beats the constant, {fn} false negatives of {pos} cells where it loses")


if __name__ == "__main__":
    main()
