"""
IRFIL on MNIST 0 vs 1: the spread of leakage vanishes (FIL paper, Figure 5 and Table 1)
=======================================================================================

Runs 10 iterations of iteratively reweighted Fisher information loss for linear and
logistic regression (800 training images, PCA-20, sigma = 1), plots the standard
deviation of the per-example eta per iteration and, with
:class:`~sklearn_privacy.fil.EtaDisplay`, its max, mean and min
(``examples/output/irfil_mnist_std.png``)
and prints the before/after table (Table 1: mean +- std of eta, max eta, test accuracy;
also written to ``examples/output/irfil_mnist_table1.txt``).

Run: ``python examples/irfil_mnist.py`` (a few seconds).
"""

# %%
# Imports and settings
# --------------------

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sklearn_privacy.demo import _s2_irfil  # noqa: E402
from sklearn_privacy.demo._s2_irfil import fit_irfil_models  # noqa: E402
from sklearn_privacy.fil import EtaDisplay  # noqa: E402

# the gallery runs the examples from their own directory, without __file__
OUT = (Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()) / "output"


def main():
    OUT.mkdir(exist_ok=True)
    _, models = fit_irfil_models(n_iter=10)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    ax = axes[0]
    for name, (_, irfil, lam) in models.items():
        std = irfil.eta_history_["std"]
        ax.semilogy(range(len(std)), std, marker="o", label=f"{name} (lambda = {lam:g})")
    ax.set_xlabel("IRFIL iteration")
    ax.set_ylabel("std of per-example eta")
    ax.set_title("MNIST 0 vs 1, PCA-20, sigma = 1")
    ax.legend()
    # max, mean and min of eta per iteration: they meet at the fixed point
    for ax, (name, (_, irfil, _)) in zip(axes[1:], models.items(), strict=True):
        EtaDisplay.from_history(irfil, ax=ax, name=f"{name}: eta per iteration")
    fig.tight_layout()
    fig.savefig(OUT / "irfil_mnist_std.png", dpi=120)
    table = _s2_irfil.run()
    (OUT / "irfil_mnist_table1.txt").write_text(table + "\n")
    print(table)
    print(f"figure written to {OUT / 'irfil_mnist_std.png'}, table to "
          f"{OUT / 'irfil_mnist_table1.txt'}")


# %%
# Run
# ---
#
# ``python examples/irfil_mnist.py`` runs it as a script; the rendered gallery
# runs it with the (smaller) arguments set in ``doc/conf.py``.

if __name__ == "__main__":
    main()
