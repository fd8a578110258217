"""Demo section: attribute inversion on IWPC against the FIL noise level (FIL paper, Fig. 6)."""

from __future__ import annotations

import numpy as np

TITLE = ("Attribute inversion of the VKORC1 genotype, IWPC (least squares, lambda = 1e-2, "
         "3,855 training rows; accuracy over noise draws)")

SIGMAS = (1e-8, 1e-4, 1e-3, 1e-2, 1e-1)


def iwpc_split(random_state=0):
    """IWPC (Yeom et al. table): 80% training split, as in the FIL paper."""
    from sklearn.model_selection import train_test_split

    from ..datasets import load_iwpc

    d = load_iwpc()
    Xtr, Xte, ytr, yte = train_test_split(d.data, d.target, test_size=0.2,
                                          random_state=random_state)
    return d, Xtr, Xte, ytr, yte


def inversion_curve(sigmas=SIGMAS, *, alpha=1e-2, n_draws=100, n_draws_blackbox=10,
                    random_state=0):
    """Accuracies of the four attribute attacks and the test MSE at each ``sigma``.

    Least squares with L2 penalty ``alpha`` (the FIL paper's lambda), no intercept.

    White-box and MAP average ``n_draws`` simulated releases; Fredrikson (black-box)
    averages ``n_draws_blackbox`` released models (refits with different noise seeds).
    Returns a list of dicts.
    """
    from ..attacks import fredrikson_inversion, prior_baseline, whitebox_inversion
    from ..fil import FILLinearRegression

    d, Xtr, Xte, ytr, yte = iwpc_split(random_state)
    cols, cand = d.attribute_columns, d.attribute_encoding
    base = prior_baseline(Xtr, cols, cand).accuracy
    out = []
    for sigma in sigmas:
        # the paper's model: no intercept on the standardised table
        est = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                  random_state=random_state).fit(Xtr, ytr)
        wb = whitebox_inversion(est, cols, cand, n_draws=n_draws, random_state=random_state)
        mp = whitebox_inversion(est, cols, cand, n_draws=n_draws, prior="empirical",
                                random_state=random_state)
        fr, mse = [], []
        for k in range(n_draws_blackbox):
            rel = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                      random_state=k).fit(Xtr, ytr)
            fr.append(fredrikson_inversion(rel, Xtr, ytr, cols, cand).accuracy)
            mse.append(float(np.mean((rel.predict(Xte) - yte) ** 2)))
        out.append({"sigma": sigma, "eta_mean": float(est.eta_.mean()),
                    "test_mse": float(np.mean(mse)), "whitebox": wb.accuracy,
                    "map": mp.accuracy, "fredrikson": float(np.mean(fr)), "baseline": base})
    return out


def run() -> str:
    from . import format_table

    rows = [[f"{r['sigma']:.0e}", f"{r['eta_mean']:.2e}", f"{r['test_mse']:.3f}",
             f"{r['whitebox']:.3f}", f"{r['map']:.3f}", f"{r['fredrikson']:.3f}",
             f"{r['baseline']:.3f}"] for r in inversion_curve()]
    header = ["sigma", "mean eta", "test MSE", "white-box", "MAP white-box", "Fredrikson",
              "prior baseline"]
    return format_table(header, rows)
