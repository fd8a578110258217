"""
Equal leakage of a sensitive attribute: IRFIL on IWPC and Adult
===============================================================

IRFIL can equalise the leakage of one attribute of every person rather than of the whole
row: here the VKORC1 genotype of the warfarin (IWPC) patients and the marital status of
the Adult census respondents, with least squares at ``sigma = 1e-3``.
"""

# %%
# Fit with the attribute's columns
# --------------------------------
# ``sensitive_features`` names the one-hot columns of the attribute; ``store_eta=True`` keeps
# every iteration's per-example eta in ``eta_history_["eta"]``.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from sklearn_privacy import IRFILLinearRegression
from sklearn_privacy.datasets import load_adult, load_iwpc

iwpc = load_iwpc()
X_iwpc, _, y_iwpc, _ = train_test_split(iwpc.data, iwpc.target, test_size=0.2,
                                        random_state=0)
adult = load_adult(variant="fil")
runs = {
    "IWPC, VKORC1": IRFILLinearRegression(
        sigma=1e-3, alpha=1e-2, fit_intercept=False, eta_max_iter=10,
        sensitive_features=iwpc.attribute_columns, store_eta=True, random_state=0,
    ).fit(X_iwpc, y_iwpc),
    "Adult, marital status": IRFILLinearRegression(
        sigma=1e-3, alpha=1e-3, fit_intercept=False, eta_max_iter=10,
        sensitive_features=adult.sensitive_features["marital_status"], store_eta=True,
        random_state=0,
    ).fit(adult.data, 2.0 * adult.target - 1.0),
}
for name, est in runs.items():
    cv = est.eta_history_["cv"]
    print(f"{name:22s} coefficient of variation of eta: {cv[0]:.3g} -> {cv[-1]:.3g}")

# %%
# Every decile converges to the same leakage
# ------------------------------------------
# The people are split into ten deciles of their initial attribute eta; each line is a
# decile's mean eta over the iterations (the paper's Figure 7 a, b).

fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
for ax, (name, est) in zip(axes, runs.items(), strict=True):
    etas = est.eta_history_["eta"]
    for k, idx in enumerate(np.array_split(np.argsort(etas[0]), 10)):
        ax.semilogy(etas[:, idx].mean(axis=1), color=plt.cm.viridis(k / 9),
                    label={0: "lowest decile", 9: "highest decile"}.get(k))
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("IRFIL iteration")
    ax.legend(fontsize=8, title="initial eta", title_fontsize=8)
axes[0].set_ylabel("mean attribute eta of a decile")
fig.tight_layout()
plt.show()
