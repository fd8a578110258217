"""Demo section: the raw Adult table (strings, categories, NaN) through a FIL pipeline."""

from __future__ import annotations

import numpy as np

TITLE = ("Your own data: raw UCI Adult frame -> ColumnTransformer (sparse one-hot) + "
         "FILLogisticRegression (3,000 training rows, alpha = 1e-3)")

SIGMAS = (0.01, 0.1, 1.0)


def raw_adult_split(n_train=3000, n_test=3000, random_state=0):
    """Raw Adult frame split into ``n_train`` training and ``n_test`` held-out rows."""
    from sklearn.model_selection import train_test_split

    from ..datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        adult.data, adult.target, train_size=n_train, stratify=adult.target,
        random_state=random_state)
    return X_train, y_train, X_rest.iloc[:n_test], y_rest.iloc[:n_test]


def make_model(X, sigma, *, alpha=1e-3, random_state=0):
    """One-hot (NaN kept as a level, sparse output) + scaling + FIL logistic regression."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from ..fil import FILLogisticRegression

    encode = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"),
          list(X.select_dtypes("category").columns)),
         ("num", StandardScaler(), list(X.select_dtypes("number").columns))],
        sparse_threshold=1.0)
    return make_pipeline(encode, FILLogisticRegression(sigma=sigma, alpha=alpha,
                                                       random_state=random_state))


def raw_data_audit(sigmas=SIGMAS, *, random_state=0):
    """Audit figures of the raw-frame pipeline at each ``sigma`` (a list of dicts)."""
    from ..attacks import membership_inference, prior_baseline, whitebox_inversion
    from ..fil import eta

    X_train, y_train, X_test, y_test = raw_adult_split(random_state=random_state)
    baseline = prior_baseline(X_train, "race").accuracy
    out = []
    for sigma in sigmas:
        model = make_model(X_train, sigma, random_state=random_state).fit(X_train, y_train)
        eta_all = model[-1].eta_
        eta_race = eta(model, columns="race", per_example=True)
        out.append({
            "sigma": sigma, "eta_max": float(eta_all.max()),
            "eta_median": float(np.median(eta_all)),
            "race_max": float(eta_race.max()), "race_median": float(np.median(eta_race)),
            "accuracy": model.score(X_test, y_test),
            "whitebox": whitebox_inversion(model, "race", X=X_train,
                                           random_state=random_state).accuracy,
            "map": whitebox_inversion(model, "race", X=X_train, prior="empirical",
                                      random_state=random_state).accuracy,
            "baseline": baseline,
            "membership": membership_inference(model, X_train, y_train, X_test, y_test,
                                               random_state=random_state).advantage,
        })
    return out


def run() -> str:
    from . import format_table

    rows = [[f"{r['sigma']:g}", f"{r['eta_max']:.3g}", f"{r['eta_median']:.3g}",
             f"{r['race_max']:.3g}", f"{r['race_median']:.3g}", f"{r['accuracy']:.3f}",
             f"{r['whitebox']:.3f}", f"{r['map']:.3f}", f"{r['baseline']:.3f}",
             f"{r['membership']:.3f}"] for r in raw_data_audit()]
    header = ["sigma", "max eta", "median eta", "max eta(race)", "median eta(race)",
              "test acc", "race white-box", "race MAP", "race prior", "MIA advantage"]
    return format_table(header, rows)
