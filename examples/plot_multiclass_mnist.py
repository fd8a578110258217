"""
Which digits leak most? Ten classes, one multinomial release
============================================================

Fits :class:`~sklearn_privacy.FILLogisticRegression` on all ten digits of the bundled
MNIST subset (5,000 images, PCA to 30 components) -- the multinomial (softmax) model of
scikit-learn's ``LogisticRegression`` -- and audits the release:

* the per-example Fisher information loss ``eta_`` by digit, split into the pixels'
  (features') part and the label's part
  (``examples/output/multiclass_eta_by_digit.png``);
* the eight most and least leaking training images;
* the noise ``sigma`` that brings the largest per-example eta to 1.

Run: ``python examples/plot_multiclass_mnist.py`` (a few seconds).
"""

# %%
# Imports and data
# ----------------

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_privacy import FILLogisticRegression  # noqa: E402
from sklearn_privacy.datasets import load_mnist  # noqa: E402

# the gallery runs the examples from their own directory, without __file__
OUT = (Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()) / "output"

mnist = load_mnist()
X, y = mnist.data, mnist.target

# %%
# One multinomial model for ten classes
# -------------------------------------
# The PCA is fitted on the same rows: this audit measures the logistic release only
# (the projection itself is not private).

model = make_pipeline(PCA(n_components=30, random_state=0),
                      FILLogisticRegression(sigma=0.05, alpha=1e-3, random_state=0))
model.fit(X, y)
clf = model[-1]
print(f"coef_ {clf.coef_.shape}, intercept_ {clf.intercept_.shape}, "
      f"training accuracy {model.score(X, y):.3f}")

# %%
# eta by digit: pixels and label
# ------------------------------
# ``columns`` selects the data values of the final step: the 30 PCA features, or the
# label (its 9 coordinates, the changes of the one-hot label that keep it summing to
# one). Through the pipeline, :func:`sklearn_privacy.fil.eta` would take original
# features instead; a PCA mixes every pixel into every component, so the final step's
# columns are the ones to ask for here.

d = clf.n_features_in_
eta_all = clf.eta_
eta_pixels = clf.eta(columns=list(range(d)), per_example=True)
eta_label = clf.eta(columns="label", per_example=True)
digits = np.arange(10)
print("digit  median eta  median pixels-eta  median label-eta")
for k in digits:
    rows = y == k
    print(f"{k:5d}  {np.median(eta_all[rows]):10.2f}  {np.median(eta_pixels[rows]):17.3f}"
          f"  {np.median(eta_label[rows]):16.2f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
axes[0].boxplot([eta_all[y == k] for k in digits], showfliers=False)
axes[0].set_xticks(digits + 1, [str(k) for k in digits])
axes[0].set(xlabel="digit", ylabel="per-example eta (sigma = 0.05)",
            title="eta of every training image, by digit")
points = axes[1].scatter(eta_pixels, eta_label, s=3, c=y, cmap="tab10")
axes[1].set(xscale="log", yscale="log", xlabel="eta of the 30 features",
            ylabel="eta of the label", title="features vs label")
axes[1].legend(points.legend_elements()[0], [str(k) for k in digits], title="digit",
               fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
fig.tight_layout()
OUT.mkdir(exist_ok=True)
fig.savefig(OUT / "multiclass_eta_by_digit.png", dpi=100)

# %%
# The most and the least leaking images
# -------------------------------------

order = np.argsort(eta_all)
fig, axes = plt.subplots(2, 8, figsize=(10, 3))
for row, (title, idx) in enumerate((("least", order[:8]), ("most", order[-8:][::-1]))):
    for ax, i in zip(axes[row], idx, strict=True):
        ax.imshow(mnist.images[i], cmap="gray_r")
        ax.set_title(f"{y[i]}: {eta_all[i]:.1f}", fontsize=8)
        ax.axis("off")
    axes[row, 0].text(-8, 14, title, rotation=90, va="center")
fig.tight_layout()
fig.savefig(OUT / "multiclass_least_most_leaking.png", dpi=100)

# %%
# Noise for a target eta
# ----------------------
# eta scales as 1 / sigma; refitting at ``sigma_for_eta(1.0)`` releases a model whose
# largest per-example eta is 1. The label dominates the eta, and bounding it for every
# image takes noise far larger than the coefficients: the accuracy of that release
# drops sharply (printed below) -- the trade-off IRFIL and the DP view address.

sigma = clf.sigma_for_eta(1.0)
model[-1].set_params(sigma=sigma)
model.fit(X, y)
print(f"sigma for max eta 1: {sigma:.3f}; max eta after refit "
      f"{model[-1].eta_.max():.6f}; accuracy {model.score(X, y):.3f}")
