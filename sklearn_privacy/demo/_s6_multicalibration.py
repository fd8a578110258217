"""Demo section: multicalibration post-processing on Adult, with and without privacy."""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline

from ..datasets import load_adult
from ..metrics import multicalibration_error
from ..multicalibration import (
    GradientDescentLogisticRegression,
    PrivateMulticalibrator,
    conjunction_groups,
    membership_matrix,
)
from ..multicalibration._groups import as_groups

TITLE = ("Multicalibration, Adult (30,162 calibration / 15,060 test rows, race x sex groups, "
         "alpha = 0.1)")


def adult_setup():
    """Standardised Adult features plus raw race/sex indicators, groups and both bases."""
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
                                 "sex": [remap[j] for j in sens["sex"]]}, max_order=2,
                                names={**{remap[j]: tr.feature_names[j] for j in cols}})
    keep = ColumnTransformer([("features", "passthrough", list(range(d)))])
    bases = {
        "weak base (paper)": make_pipeline(keep, GradientDescentLogisticRegression()),
        "sklearn LogisticRegression": make_pipeline(keep, LogisticRegression(max_iter=1000)),
    }
    for b in bases.values():
        b.fit(Xtr, tr.target)
    return Xtr, tr.target, Xte, te.target, groups, bases


def run() -> str:
    from . import format_table

    Xtr, ytr, Xte, yte, groups, bases = adult_setup()
    rows = []
    # test-set membership of the groups the post-processors use (the whole population first)
    G = membership_matrix(as_groups(groups), Xte)
    for base_name, base in bases.items():
        configs = [("uncalibrated", None),
                   ("no privacy", PrivateMulticalibrator(FrozenEstimator(base), groups)),
                   ("NumericSparse eps=1", PrivateMulticalibrator(
                       FrozenEstimator(base), groups, mechanism="numeric_sparse", epsilon=1.0,
                       random_state=0))]
        for name, mc in configs:
            model = base if mc is None else mc.fit(Xtr, ytr)
            p = model.predict_proba(Xte)[:, 1]
            eps = "-" if mc is None else f"{mc.epsilon_spent_:g}"
            rows.append([base_name, name, f"{np.mean((p > 0.5) == yte):.4f}",
                         f"{100 * log_loss(yte, np.clip(p, 1e-15, 1 - 1e-15)):.1f}",
                         f"{multicalibration_error(yte, p, G, min_size=20):.3f}", eps,
                         "-" if mc is None else str(mc.n_updates_)])
    header = ["base", "post-processing", "test acc", "test BCE x100", "test MC error",
              "epsilon", "updates"]
    note = ("Most of the accuracy gain comes from the weak base: a scikit-learn "
            "LogisticRegression is already at 0.848 and post-processing barely moves it.")
    return format_table(header, rows) + "\n" + note
