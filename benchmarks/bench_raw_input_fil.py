"""Raw-input FIL through feature maps vs the transformed-feature FIL, side by side.

For pipelines ``ColumnTransformer(<map> on the numeric columns, OneHotEncoder on the
categorical ones) -> FIL estimator`` fitted on rows of the bundled Adult table, times

- ``fil.eta(pipe, per_example=True, wrt="features")``: today's per-example eta of every
  column entering the final step (the structured engine), and
- ``fil.eta(pipe, per_example=True, X=X)``: the per-example eta of every raw input (each
  numeric column in its own units, each categorical one as its one-hot coordinates, and
  the label) through the map's derivative, the map's Jacobian included, by the route the
  library picks (the fixed-pole solver when the selection holds enough encoded levels),
- the same forced onto the per-row Gram route (a ``k x k`` Gram and its eigenvalues per
  row: the route before the fixed-pole solver),

alternating them, and reports the median time of each and the ratios to the first
(goal: at most 1.5). Also the per-attribute eta of one raw column (``columns="age"``)
against today's eta of the columns derived from it, where they exist (a spline's columns
of age; a mixing map such as a polynomial or a kernel map has none).

Run: ``python benchmarks/bench_raw_input_fil.py [--rows 20000] [--repeat 5] [--threads 1]``
(``--threads both``: the table single-threaded, then with the default threads). Wall
times; the CPU times (``time.process_time``) of the raw etas are printed alongside.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)
from threadpoolctl import threadpool_limits

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, fil
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.fil._raw import _raw_input
from sklearn_privacy.fil._raw._feature_maps import feature_map

NUM = ["age", "education_num", "hours_per_week", "capital_gain"]
CAT = ["sex", "race", "relationship"]

MAPS = {
    "StandardScaler": lambda: StandardScaler(),
    "spline (8 knots)": lambda: SplineTransformer(n_knots=8),
    "polynomial (degree 3)": lambda: make_pipeline(StandardScaler(), PolynomialFeatures(3)),
    "random Fourier (100)": lambda: make_pipeline(StandardScaler(),
                                                  RBFSampler(n_components=100,
                                                             random_state=0)),
    "Nystroem rbf (100)": lambda: make_pipeline(StandardScaler(),
                                                Nystroem(n_components=100,
                                                         random_state=0)),
}


def _timed(f, *args, **kwargs):
    t = time.perf_counter()
    f(*args, **kwargs)
    return time.perf_counter() - t


def _timed_cpu(f, *args, **kwargs):
    t, c = time.perf_counter(), time.process_time()
    f(*args, **kwargs)
    return time.perf_counter() - t, time.process_time() - c


def _gram_route(f, *args, **kwargs):
    """``f`` with the per-example raw etas forced onto the per-row Gram route."""
    saved = _raw_input._ROUTE
    _raw_input._ROUTE = "gram"
    try:
        return _timed_cpu(f, *args, **kwargs)
    finally:
        _raw_input._ROUTE = saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--maps", default="",
                        help="only the maps whose name contains this text")
    parser.add_argument("--threads", default=None,
                        help="BLAS threads (default: the library's default; 'both': one "
                             "thread, then the default)")
    args = parser.parse_args()
    if args.threads == "both":
        for threads in ("1", None):
            args.threads = threads
            run(args)
        return
    run(args)


def run(args):
    bunch = load_adult(raw=True, as_frame=True)
    X = bunch.data[NUM + CAT].dropna().iloc[: args.rows].reset_index(drop=True)
    X[NUM] = X[NUM].astype(float)
    y_cls = (bunch.target.loc[X.index] == ">50K").astype(int).to_numpy()
    y_reg = np.log1p(X["hours_per_week"].to_numpy()) + 0.01 * X["age"].to_numpy()
    print(f"machine: {platform.machine()} {os.cpu_count()} CPU, python "
          f"{platform.python_version()}, numpy {np.__version__}; load "
          f"{os.getloadavg()[0]:.1f}; rows {len(X)}; repeat {args.repeat}; threads "
          f"{args.threads or 'default'}")
    print("| map | GLM | p (features) | raw coordinates | features eta, all (s) | raw eta, "
          "all (s) | ratio | CPU ratio | raw eta, all, per-row Gram route (s) | ratio | "
          "CPU ratio | raw eta of 'age' (s) | features eta of age's spline columns "
          "(s) | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    limits = threadpool_limits(int(args.threads)) if args.threads else None
    for (name, make), cats in [(item, CAT) for item in MAPS.items()] + [
            (("spline (8 knots)", MAPS["spline (8 knots)"]), [])]:
        if args.maps not in name:
            continue
        cols = NUM + cats
        for glm, y, est in (("least squares", y_reg, FILLinearRegression(sigma=1.0,
                                                                          alpha=1e-3)),
                            ("logistic", y_cls, FILLogisticRegression(sigma=1.0,
                                                                      alpha=1e-3))):
            ct = make_column_transformer((make(), NUM), (OneHotEncoder(), cats))
            pipe = make_pipeline(ct, est)
            with np.errstate(all="ignore"):
                pipe.fit(X[cols], y)
            names = list(pipe[0].get_feature_names_out())
            block = [n for n in names if n.startswith("splinetransformer__age_")]
            tf, tr, tg, ta, tb = [], [], [], [], []
            for _ in range(args.repeat):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tf.append(_timed_cpu(fil.eta, pipe, per_example=True, wrt="features"))
                    tr.append(_timed_cpu(fil.eta, pipe, per_example=True, X=X[cols]))
                    tg.append(_gram_route(fil.eta, pipe, per_example=True, X=X[cols]))
                    ta.append(_timed(fil.eta, pipe, per_example=True, X=X[cols],
                                     columns="age"))
                    if block:  # today's eta of the spline columns of age
                        tb.append(_timed(fil.eta, pipe, per_example=True, columns=block,
                                         wrt="features"))
            k = feature_map(pipe).n_coordinates
            (mf, cf), (mr, cr), (mg, cg) = (np.median(t, axis=0) for t in (tf, tr, tg))
            ma = np.median(ta)
            mb = f"{np.median(tb):.3f} | {ma / np.median(tb):.2f}" if tb else "- | -"
            label = name + ("" if cats else ", numeric only")
            print(f"| {label} | {glm} | {pipe[-1].n_features_in_} | {k} | {mf:.3f} | "
                  f"{mr:.3f} | {mr / mf:.2f} | {cr / cf:.2f} | {mg:.3f} | {mg / mf:.2f} | "
                  f"{cg / cf:.2f} | {ma:.3f} | {mb} |", flush=True)
    if limits is not None:
        limits.restore_original_limits()


if __name__ == "__main__":
    main()
