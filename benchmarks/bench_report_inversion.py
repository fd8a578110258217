"""Cost of the report's white-box inversion under a hypothetical release (``sigma``).

Raw Adult (age, education, hours per week, sex, race) behind a scaler and a one-hot
encoder; ``LogisticRegression`` and ``MLPClassifier(hidden, activation="tanh", alpha=3,
solver="lbfgs")``. ``PrivacyReport.from_estimator(..., sigma=sigma,
sensitive_features=[...], n_canaries=0)`` without population rows, so that the page holds
the claim, release, FIL and inversion sections. Per case: seconds of the FIL section (the
audit) and of the inversion section (black-box attack on the published model, then the
white-box attack on 20 simulated releases: 1,000 rows for a binary GLM, 200 rows for an
MLP, each row and candidate a certified Newton refit), wall and CPU, and the table's
accuracy against the prior baseline. BLAS on one thread; the machine may be shared: the
load average is printed.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_report_inversion.py``.
"""

from __future__ import annotations

import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

from sklearn_privacy.datasets import load_adult  # noqa: E402
from sklearn_privacy.report import PrivacyReport  # noqa: E402

SIGMAS = (1e-3, 0.1)
CASES = [("LogisticRegression", 2000, None, ["sex", "race"]),
         ("MLP (4,)", 2000, (4,), ["sex", "race"]),
         ("MLP (8,)", 5000, (8,), ["sex"])]


def main():
    adult = load_adult(raw=True, as_frame=True)
    cols = ["age", "education_num", "hours_per_week", "sex", "race"]
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| model | rows | sigma | fit s | FIL section s | inversion section s | "
          "whole report CPU s | white-box rows (accuracy [95 %] vs prior; rows attacked) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, hidden, sens in CASES:
        X = adult.data[cols].iloc[:n]
        y = (adult.target.iloc[:n] == ">50K").to_numpy()
        model = (LogisticRegression(C=1.0, max_iter=1000) if hidden is None else
                 MLPClassifier(hidden, activation="tanh", alpha=3.0, solver="lbfgs",
                               max_iter=3000, random_state=0))
        pipe = make_pipeline(make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["sex", "race"]),
            remainder=StandardScaler()), model)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            pipe.fit(X, y)
        fit = time.perf_counter() - t
        for sigma in SIGMAS:
            c0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = PrivacyReport.from_estimator(pipe, X, y, sensitive_features=sens,
                                                   sigma=sigma, n_canaries=0, random_state=0,
                                                   include_private_details=True)
            cpu = time.process_time() - c0
            inv = next(s for s in rep.sections if s.key == "inversion")
            rows = "; ".join(
                f"{k.split(' ')[0]} {v.split(' vs prior baseline ')[0]} vs "
                f"{v.split(' vs prior baseline ')[1].split(',')[0]}; "
                f"{v.split('releases; ')[1].split(':')[0].split(')')[0]}"
                + ("; " + v.split('; ')[-1].split(':')[0] if "left out" in v else "")
                for k, v in inv.private_table if "white-box if the" in k)
            print(f"| {name} | {n:,} | {sigma:g} | {fit:.1f} | {rep.timings['fil']:.1f} | "
                  f"{rep.timings['inversion']:.1f} | {cpu:.1f} | {rows} |", flush=True)

if __name__ == "__main__":
    main()
