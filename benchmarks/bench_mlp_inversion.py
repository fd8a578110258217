"""Cost and accuracy of the candidate minimisers of the white-box inversion of an MLP.

Raw Adult (age, education, hours per week, sex, race) behind a scaler and a one-hot
encoder, ``MLPClassifier(hidden, activation="tanh", alpha=3, solver="lbfgs")``, audited
with ``fil.audit``. For ``N_ROWS`` attacked people the candidate minimiser of the other
``sex`` is computed, side by side in one process with BLAS on one thread:

* ``newton``: the attack's certified Newton refit warm-started at the audited minimum
  (exact Hessian, gradient norm <= 1e-10, exact Hessian at the candidate certified);
* ``first_order``: one Newton step from the audited minimum with its Hessian (no refit);
* ``sklearn``: scikit-learn's own warm-started lbfgs refit from the audited minimum on the
  changed rows (``warm_start=True``, default ``tol``), the usual "retrain" oracle.

Reports, per candidate, wall and CPU seconds, the ratio to ``sklearn``, and the distance
of each answer to the Newton refit relative to how far the minimiser moved; and the
inversion accuracy of the most exposed rows at the audit's ``sigma`` over simulated
releases. The machine is shared: read ratios, not seconds.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_mlp_inversion.py``.
"""

from __future__ import annotations

import copy
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

from sklearn_privacy import fil  # noqa: E402
from sklearn_privacy.attacks import whitebox_inversion  # noqa: E402
from sklearn_privacy.attacks._mlp_inversion import mlp_candidate_minimisers  # noqa: E402
from sklearn_privacy.datasets import load_adult  # noqa: E402

CASES = [(2000, (4,)), (5000, (8,))]  # (rows, hidden layers)
N_ROWS = 10
SIGMA = 0.1


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main():
    adult = load_adult(raw=True, as_frame=True)
    cols = ["age", "education_num", "hours_per_week", "sex", "race"]
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| rows x parameters | method | wall s / candidate | CPU s / candidate | "
          "CPU ratio to sklearn | distance to newton / move |")
    print("|---|---|---|---|---|---|")
    for n, hidden in CASES:
        X = adult.data[cols].iloc[:n].reset_index(drop=True)
        y = np.asarray(adult.target)[:n]
        pipe = make_pipeline(
            make_column_transformer(
                (StandardScaler(), ["age", "education_num", "hours_per_week"]),
                (OneHotEncoder(), ["sex", "race"])),
            MLPClassifier(hidden, activation="tanh", alpha=3.0, solver="lbfgs",
                          max_iter=5000, random_state=0)).fit(X, y)
        audited = fil.audit(pipe, X, y, sigma=SIGMA)
        rows = np.argsort(audited.eta(columns="sex", per_example=True))[::-1][:N_ROWS]
        newton, wn, cn = _timed(lambda a=audited, r=rows: mlp_candidate_minimisers(
            a, "sex", rows=r))
        first, wf, cf = _timed(lambda a=audited, r=rows: mlp_candidate_minimisers(
            a, "sex", rows=r, method="first_order"))
        other = 1 - newton.truth
        exact = newton.thetas[np.arange(N_ROWS), other]
        move = np.linalg.norm(exact - audited._theta, axis=1)
        model = pipe[-1]
        Ws, bs = audited._obj.unpack(audited._theta)

        def sklearn_refits(X=X, y=y, rows=rows, other=other, model=model, Ws=Ws, bs=bs,
                           pipe=pipe, levels=newton.levels):
            out = []
            for k, i in enumerate(rows):
                raw = X.copy()
                raw.loc[i, "sex"] = levels[other[k]]
                sk = copy.deepcopy(model).set_params(warm_start=True)
                sk.coefs_ = [W.copy() for W in Ws]
                sk.intercepts_ = [b.copy() for b in bs]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    sk.fit(pipe[:-1].transform(raw), y)
                out.append(np.concatenate([W.ravel() for W in sk.coefs_ + sk.intercepts_]))
            return np.array(out)

        sk, ws, cs = _timed(sklearn_refits)
        shape = f"{n:,} x {audited.n_parameters_}"
        for name, thetas, w, c in (
                ("newton", exact, wn, cn),
                ("first_order", first.thetas[np.arange(N_ROWS), other], wf, cf),
                ("sklearn warm start", sk, ws, cs)):
            gap = np.linalg.norm(thetas - exact, axis=1) / move
            print(f"| {shape} | {name} | {w / N_ROWS:.4f} | {c / N_ROWS:.4f} | "
                  f"{c / cs:.2f} | median {np.median(gap):.1e}, max {gap.max():.1e} |")
        res = whitebox_inversion(audited, sensitive_features="sex", rows=rows, n_draws=200,
                                 random_state=0)
        print(f"| {shape} | inversion of sex, {N_ROWS} most exposed, sigma={SIGMA} | "
              f"accuracy {res.accuracy:.3f} | | | largest candidate gradient norm "
              f"{np.nanmax(newton.gradient_norms):.1e}, smallest Hessian eigenvalue "
              f"{np.nanmin(newton.min_eigenvalues):.2e} |")


if __name__ == "__main__":
    main()
