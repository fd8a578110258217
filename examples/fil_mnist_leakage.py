"""
Which MNIST images leak the most? (FIL paper, Figures 2 and 3.)
===============================================================

Fits output-perturbed linear and logistic regression on the bundled MNIST 0-vs-1 task
(800 training images, unit ball then PCA-20, sigma = 1), then

* plots the histogram of the per-example Fisher information loss eta by digit with
  :class:`~sklearn_privacy.fil.EtaDisplay`
  (``examples/output/fil_eta_histograms.png``, Figure 2): digit-0 images leak more;
* shows the 8 training images with the smallest and the largest eta for each model
  (``examples/output/fil_least_most_leaking.png``, Figure 3): the least leaking images are
  typical, the most leaking ones atypical (thick, slanted or broken strokes).

Run: ``python examples/fil_mnist_leakage.py`` (a few seconds).
"""

# %%
# Imports and settings
# --------------------

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_privacy.demo import format_table  # noqa: E402
from sklearn_privacy.demo._s1_fil import fit_mnist01_models  # noqa: E402
from sklearn_privacy.fil import EtaDisplay  # noqa: E402

# the gallery runs the examples from their own directory, without __file__
OUT = (Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()) / "output"


def main():
    OUT.mkdir(exist_ok=True)
    data, models = fit_mnist01_models(sigma=1.0, random_state=0)
    y = data.target_train
    images = data.images[data.train_index]

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, (name, (est, lam)) in zip(axes, models.items(), strict=True):
        # histogram of eta per digit, the 5 most leaking images marked
        EtaDisplay.from_estimator(est, by="class", y=y, bins=40, top_k=5, ax=ax,
                                  name=f"{name} regression (lambda = {lam:g})")
        ax.set_xlabel("per-example eta at sigma = 1")
    axes[0].set_ylabel("training images")
    fig.tight_layout()
    fig.savefig(OUT / "fil_eta_histograms.png", dpi=120)

    fig, axes = plt.subplots(4, 8, figsize=(10, 5.6))
    rows = []
    for r, (name, (est, _)) in enumerate(models.items()):
        eta = est.eta_
        order = np.argsort(eta)
        for k, (label, picks) in enumerate((("least", order[:8]), ("most", order[-8:][::-1]))):
            for c, i in enumerate(picks):
                ax = axes[2 * r + k, c]
                ax.imshow(images[i], cmap="gray_r")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"{eta[i]:.2f}", fontsize=8)
            axes[2 * r + k, 0].set_ylabel(f"{name}\n{label}", fontsize=8)
        rows.append([name, f"{eta.mean():.3f}", f"{eta[order[:8]].mean():.3f}",
                     f"{eta[order[-8:]].mean():.3f}",
                     f"{np.mean(y[order[-80:]] == 0):.2f}"])
    fig.suptitle("Least and most leaking training images (eta above each image)")
    fig.tight_layout()
    fig.savefig(OUT / "fil_least_most_leaking.png", dpi=120)
    print(format_table(["model", "mean eta", "8 least (mean)", "8 most (mean)",
                        "share of digit 0 in top 10%"], rows))
    print(f"figures written to {OUT}")


# %%
# Run
# ---
#
# ``python examples/fil_mnist_leakage.py`` runs it as a script; the rendered gallery
# runs it with the (smaller) arguments set in ``doc/conf.py``.

if __name__ == "__main__":
    main()
