"""
Attribute inversion against FIL noise, IRFIL, and privacy-constrained model selection
=====================================================================================

1. FIL paper, Figure 6 (IWPC, least squares, no intercept, 3,855 training rows): mean
   eta, test MSE, and the accuracy of the white-box attack (eq. 30), its MAP variant, the
   black-box attack of Fredrikson et al. (eq. 31) and the prior-mode baseline, against
   sigma, for lambda = 1e-2. White-box attacks average 20 simulated releases,
   Fredrikson 3 released models.
2. FIL paper, Figure 7b/7d: white-box accuracy per decile of the initial attribute eta
   over IRFIL iterations (sigma = 1e-3): IWPC (VKORC1, least squares, lambda = 1e-2).
   20 simulated releases per point.
3. ``GridSearchCV`` over sigma (IWPC, lambda = 1e-2, 5 folds) with two metrics -- test
   MSE and the white-box inversion scorer -- and a callable ``refit`` that picks the most
   accurate model whose attack accuracy stays within ``BOUND`` of the prior baseline.

Figures: ``examples/output/attacks_iwpc_fig6.png``, ``examples/output/attacks_irfil_fig7.png``.
Run: ``python examples/attacks_iwpc.py`` (well under a minute). The paper's full grid
(three penalties, 11 noise scales, 100 releases, Adult in Figure 7) is the study
``benchmarks/study_attacks_iwpc.py`` (a few minutes).
"""

# %%
# Imports and settings
# --------------------

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, train_test_split  # noqa: E402

from sklearn_privacy import (  # noqa: E402
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)
from sklearn_privacy.attacks import (  # noqa: E402
    fredrikson_inversion,  # noqa: E402
    make_attribute_inversion_scorer,
    prior_baseline,
    whitebox_inversion,
)
from sklearn_privacy.datasets import load_adult, load_iwpc  # noqa: E402

# the gallery runs the examples from their own directory, without __file__
OUT = (Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()) / "output"
BOUND = 0.05  # allowed white-box accuracy above the prior baseline
SIGMAS = np.logspace(-5, 0, 6)  # noise scales of Figure 6
N_DRAWS = 20  # simulated releases per white-box accuracy


def format_table(header, rows):
    """``rows`` (sequences of str) under ``header`` as a fixed-width text table."""
    widths = [max(len(str(r[j])) for r in [header, *rows]) for j in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True))
             for r in [header, ["-" * w for w in widths], *rows]]
    return "\n".join(lines)


def iwpc_split(random_state=0):
    """IWPC (the preprocessed table of Yeom et al.): 80% training split, as in the paper."""
    d = load_iwpc()
    Xtr, Xte, ytr, yte = train_test_split(d.data, d.target, test_size=0.2,
                                          random_state=random_state)
    return d, Xtr, Xte, ytr, yte


def inversion_curve(sigmas, *, alpha=1e-2, n_draws=100, n_draws_blackbox=10, random_state=0):
    """Mean eta, test MSE and the accuracy of the attribute attacks at each ``sigma``.

    Least squares with L2 penalty ``alpha`` and no intercept (the paper's model). White-box
    and MAP average ``n_draws`` simulated releases; Fredrikson's black-box attack averages
    ``n_draws_blackbox`` released models.
    """
    d, Xtr, Xte, ytr, yte = iwpc_split(random_state)
    cols, cand = d.attribute_columns, d.attribute_encoding
    base = prior_baseline(Xtr, sensitive_features=cols, candidates=cand).accuracy
    out = []
    for sigma in sigmas:
        est = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                  random_state=random_state).fit(Xtr, ytr)
        wb = whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                n_draws=n_draws, random_state=random_state)
        mp = whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                n_draws=n_draws, prior="empirical", random_state=random_state)
        fr, mse = [], []
        for k in range(n_draws_blackbox):
            rel = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                      random_state=k).fit(Xtr, ytr)
            fr.append(fredrikson_inversion(rel, Xtr, ytr, sensitive_features=cols,
                                           candidates=cand).accuracy)
            mse.append(float(np.mean((rel.predict(Xte) - yte) ** 2)))
        out.append({"sigma": sigma, "eta_mean": float(est.eta_.mean()),
                    "test_mse": float(np.mean(mse)), "whitebox": wb.accuracy,
                    "map": mp.accuracy, "fredrikson": float(np.mean(fr)), "baseline": base})
    return out


def figure6(sigmas, lambdas=(1e-2,), n_draws=N_DRAWS, n_draws_blackbox=3):
    curves = {lam: inversion_curve(sigmas, alpha=lam, n_draws=n_draws,
                                   n_draws_blackbox=n_draws_blackbox) for lam in lambdas}
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    axes = axes.ravel()
    for lam, rows in curves.items():
        eta = [r["eta_mean"] for r in rows]
        axes[0].loglog(sigmas, eta, "o-", label=f"lambda={lam:g}")
        axes[1].semilogx(eta, [r["test_mse"] for r in rows], "o-", label=f"lambda={lam:g}")
        axes[2].semilogx(eta, [r["whitebox"] for r in rows], "o-", label=f"white-box {lam:g}")
        axes[2].semilogx(eta, [r["map"] for r in rows], "x--", label=f"MAP {lam:g}")
        axes[3].semilogx(eta, [r["fredrikson"] for r in rows], "o-", label=f"lambda={lam:g}")
    base = curves[lambdas[0]][0]["baseline"]
    for ax in axes[2:]:
        ax.axhline(base, color="k", lw=0.8, ls=":", label="prior baseline")
    for ax, (xl, yl) in zip(axes, [("sigma", "mean eta"), ("mean eta", "test MSE"),
                                   ("mean eta", "white-box accuracy"),
                                   ("mean eta", "Fredrikson accuracy")], strict=True):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "attacks_iwpc_fig6.png", dpi=120)
    rows = [[f"{r['sigma']:.0e}", f"{r['eta_mean']:.2e}", f"{r['test_mse']:.3f}",
             f"{r['whitebox']:.3f}", f"{r['map']:.3f}", f"{r['fredrikson']:.3f}",
             f"{r['baseline']:.3f}"] for r in curves[1e-2]]
    print("Figure 6, lambda = 1e-2")
    print(format_table(["sigma", "mean eta", "test MSE", "white-box", "MAP", "Fredrikson",
                        "baseline"], rows))


def _decile_accuracy(est, cols, cand, deciles, n_draws):
    acc = whitebox_inversion(est, sensitive_features=cols, candidates=cand, n_draws=n_draws,
                             random_state=0).accuracy_per_row
    return [float(acc[idx].mean()) for idx in deciles]


def figure7(adult=False):
    sigma, iters = 1e-3, (0, 1, 2, 3, 5, 10)
    d, X, _, y, _ = iwpc_split()
    runs = [("IWPC, VKORC1 (least squares)", X, y, d.attribute_columns, d.attribute_encoding,
             lambda t: (FILLinearRegression(sigma=sigma, alpha=1e-2, fit_intercept=False,
                                            random_state=0) if t == 0 else
                        IRFILLinearRegression(sigma=sigma, alpha=1e-2, fit_intercept=False,
                                              eta_max_iter=t,
                                              sensitive_features=d.attribute_columns,
                                              random_state=0)))]
    if adult:  # the paper's second panel (a few minutes: logistic IRFIL on 30,162 rows)
        data = load_adult(variant="fil")
        married = data.sensitive_features["marital_status"]
        runs.append(("Adult, married (logistic)", data.data, data.target, married,
                     np.array([[0.0], [1.0]]),
                     lambda t: (FILLogisticRegression(sigma=sigma, alpha=1e-3, random_state=0)
                                if t == 0 else
                                IRFILLogisticRegression(sigma=sigma, alpha=1e-3, eta_max_iter=t,
                                                        sensitive_features=married,
                                                        random_state=0))))
    fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 3.8), squeeze=False)
    for ax, (name, X, y, cols, cand, make) in zip(axes[0], runs, strict=True):
        first = IRFILLinearRegression if "IWPC" in name else IRFILLogisticRegression
        params = make(1).get_params()
        params.update(eta_max_iter=1, store_eta=True)
        eta0 = first(**params).fit(X, y).eta_history_["eta"][0]
        deciles = np.array_split(np.argsort(eta0), 10)
        table = np.array([_decile_accuracy(make(t).fit(X, y), cols, cand, deciles, 20)
                          for t in iters])
        for k in range(10):
            ax.plot(iters, table[:, k], "o-", color=plt.cm.viridis(k / 9), ms=3,
                    label=f"decile {k + 1}" if k in (0, 9) else None)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("IRFIL iteration")
        ax.set_ylabel("white-box accuracy (initial-eta decile)")
        ax.legend(fontsize=7)
        print(f"Figure 7, {name}: white-box accuracy of the lowest / highest initial-eta "
              "decile and spread over deciles")
        print(format_table(["iteration", "lowest decile", "highest decile", "max - min"],
                           [[str(t), f"{r[0]:.3f}", f"{r[-1]:.3f}", f"{r.max() - r.min():.3f}"]
                            for t, r in zip(iters, table, strict=True)]))
    fig.tight_layout()
    fig.savefig(OUT / "attacks_irfil_fig7.png", dpi=120)


def grid_search(sigmas):
    d, X, Xte, y, yte = iwpc_split()
    cols, cand = d.attribute_columns, d.attribute_encoding
    base = prior_baseline(X, sensitive_features=cols, candidates=cand).accuracy
    sigmas = list(sigmas)
    scoring = {"neg_mse": "neg_mean_squared_error",
               "inv": make_attribute_inversion_scorer(cols, cand, n_draws=20, random_state=0)}

    def most_accurate_within_bound(cv_results):
        ok = -np.asarray(cv_results["mean_test_inv"]) <= base + BOUND
        if not ok.any():
            raise ValueError("no sigma keeps the attack within the bound; extend the grid")
        return int(np.argmax(np.where(ok, cv_results["mean_test_neg_mse"], -np.inf)))

    gs = GridSearchCV(FILLinearRegression(alpha=1e-2, fit_intercept=False, random_state=0),
                      {"sigma": sigmas}, scoring=scoring, refit=most_accurate_within_bound,
                      cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)
    res = gs.cv_results_
    rows = [[f"{s:.0e}", f"{-m:.4f}", f"{-a:.3f}", "<-" if i == gs.best_index_ else ""]
            for i, (s, m, a) in enumerate(zip(sigmas, res["mean_test_neg_mse"],
                                              res["mean_test_inv"], strict=True))]
    print(f"GridSearchCV over sigma: most accurate model with white-box accuracy <= prior "
          f"baseline ({base:.3f}) + {BOUND}")
    print(format_table(["sigma", "CV MSE", "white-box acc", "chosen"], rows))
    mse = float(np.mean((gs.predict(Xte) - yte) ** 2))
    print(f"chosen sigma = {gs.best_params_['sigma']:.0e}; held-out test MSE of the "
          f"released model {mse:.4f}")


# %%
# Figure 6: leakage and attacks against the noise scale
# -----------------------------------------------------
# Mean eta falls as 1/sigma; the white-box and MAP attacks fall to the prior baseline
# as eta falls. Fredrikson's black-box attack sees only the model's predictions: its
# accuracy does not move while the noise leaves the model accurate (sigma up to 1e-2),
# and falls once the noise degrades the predictions themselves (sigma = 0.1 and 1, where
# the test MSE rises). It is population inference: it does as well on rows the model
# never saw.

if __name__ == "__main__":  # also in the gallery; not when the study imports the module
    OUT.mkdir(exist_ok=True)
    figure6(SIGMAS)

# %%
# Figure 7: IRFIL equalises the attack's accuracy
# -----------------------------------------------
# White-box accuracy per decile of the initial attribute eta: from the second IRFIL
# iteration on, the decile that leaked most is attacked less often than the one that
# leaked least, and the spread between deciles falls from about 0.42 to about 0.16 (table
# below). Equal eta does not make the attack's accuracy exactly equal: it stays between
# 0.46 and 0.63.

if __name__ == "__main__":
    figure7()

# %%
# Choosing sigma with an attack as the constraint
# -----------------------------------------------
# ``GridSearchCV`` picks the least noise whose white-box attack stays within a bound
# of the prior baseline.

if __name__ == "__main__":
    grid_search(np.logspace(-4, 0, 5))

# sphinx_gallery_thumbnail_number = 2
