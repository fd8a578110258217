"""
Which MNIST images leak the most?
=================================

The FIL paper's Figures 2 and 3 on the bundled MNIST 0-vs-1 task: output-perturbed linear
and logistic regression on 800 training images (PCA-20, rows in the unit ball, noise
``sigma = 1``), the distribution of the per-example Fisher information loss ``eta``, and
the training images that leak the least and the most.
"""

# %%
# Fit the two released models
# ---------------------------
# Linear regression predicts the digit as -1/+1 without penalty; logistic regression uses
# a small L2 penalty. Both release their coefficients plus Gaussian noise of scale
# ``sigma``; ``eta_`` holds each training example's Fisher information loss.
# (``random_state=0`` makes the page reproducible; a real release uses ``None``.)

import matplotlib.pyplot as plt
import numpy as np

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.datasets import load_mnist01
from sklearn_privacy.fil import EtaDisplay

data = load_mnist01(n_components=20, random_state=0)
X, y = data.data_train, data.target_train
models = {
    "linear": FILLinearRegression(sigma=1.0, alpha=0.0, random_state=0).fit(X, 2.0 * y - 1.0),
    "logistic": FILLogisticRegression(sigma=1.0, alpha=1e-3, random_state=0).fit(X, y),
}
for name, model in models.items():
    print(f"{name:8s}  mean eta {model.eta_.mean():.3f}  max eta {model.eta_.max():.3f}")

# %%
# eta by digit
# ------------
# As in the paper's Figure 2, images of a 0 leak more than images of a 1: the zeros vary
# more, so each one moves the minimiser further. The five largest values are marked.

fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    EtaDisplay.from_estimator(model, by_class=True, y=y, bins=40, top_k=5, ax=ax,
                              name=name)
    ax.set_xlabel("per-example eta at sigma = 1")
    ax.set_ylabel("")
axes[0].set_ylabel("training images")
fig.tight_layout()
plt.show()

# %%
# The least and the most leaking images
# -------------------------------------
# The paper's Figure 3: the least leaking images are typical digits; the most leaking
# ones are atypical (thick, slanted or broken strokes). The value above each image is its
# eta under the logistic model.

eta = models["logistic"].eta_
order = np.argsort(eta)
images = data.images[data.train_index]
fig, axes = plt.subplots(2, 6, figsize=(7, 2.9))
for row, (label, picks) in enumerate((("least", order[:6]), ("most", order[::-1][:6]))):
    for ax, i in zip(axes[row], picks, strict=True):
        ax.imshow(images[i], cmap="gray_r")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{eta[i]:.2f}", fontsize=9)
    axes[row, 0].set_ylabel(label)
fig.suptitle("Least and most leaking training images (logistic model)")
fig.tight_layout()
plt.show()

# %%
# How much noise caps the leakage?
# --------------------------------
# ``eta`` scales as ``1 / sigma`` and the minimiser does not depend on ``sigma``, so the
# noise that caps every example's eta at a target is a closed-form rescaling. On 800
# images the cap is expensive: the noise it needs drowns the coefficients.

model = models["logistic"]
for target in (0.5, 0.1):
    sigma = model.sigma_for_eta(target)
    capped = model.set_params(sigma=sigma).fit(X, y)
    print(f"eta <= {target}: sigma = {sigma:.2f}, largest eta {capped.eta_.max():.3f}, "
          f"test accuracy {capped.score(data.data_test, data.target_test):.3f}")

# sphinx_gallery_thumbnail_number = 2
