"""Demo section: WERM trades training-data for reference-data membership privacy."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from ..attacks import membership_inference
from ..datasets import load_mnist
from ..werm import WERMClassifier

TITLE = ("WERM, MNIST (1,000 training / 1,000 reference / 1,000 test digits, MLP, "
         "per-class confidence attack)")


def run() -> str:
    from . import format_table

    d = load_mnist()
    rng = np.random.RandomState(0)
    perm = rng.permutation(len(d.target))
    tr, rf, te = perm[:1000], perm[1000:2000], perm[2000:3000]
    X, y = d.data.astype(np.float32), d.target  # float32 halves the MLP's BLAS time
    Xfit, yfit = X[np.r_[tr, rf]], y[np.r_[tr, rf]]
    group = np.r_[np.zeros(1000, int), np.ones(1000, int)]
    rows = []
    for w in (0.0, 0.5, 1.0):
        # w = 0 / 1 fit one group only (rows of weight 0 are dropped): a batch of 100 keeps
        # the number of Adam steps per epoch of the mixed fit (2,000 rows, batches of 200)
        batch = 200 if 0 < w < 1 else 100
        clf = WERMClassifier(MLPClassifier((64,), max_iter=60, batch_size=batch,
                                           random_state=0), w=w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(Xfit, yfit, sample_group=group)
        mt = membership_inference(clf, X[tr], y[tr], X[te], y[te], random_state=0)
        mr = membership_inference(clf, X[rf], y[rf], X[te], y[te], random_state=0)
        rows.append([f"{w:g}", f"{100 * clf.score(X[te], y[te]):.1f}",
                     f"{100 * mt.balanced_accuracy:.1f}", f"{100 * mr.balanced_accuracy:.1f}",
                     f"{clf.n_eff_:.0f}", f"{clf.epsilon_ratio_:.3g}"])
    header = ["w", "test acc %", "MIA acc % (training)", "MIA acc % (reference)", "N_eff",
              "eps_T/eps_R"]
    note = ("w = 0 trains on training rows only, w = 1 on reference rows only; at w = 0.5 both "
            "leak about equally (50% = the attack does no better than guessing).")
    return format_table(header, rows) + "\n" + note
