"""
Count data: the Fisher information loss of a Poisson regression
===============================================================

Yearly clinic visits are the typical sensitive regression target: a count per person.
This example fits scikit-learn's :class:`~sklearn.linear_model.PoissonRegressor` the
usual way (a ``ColumnTransformer`` in front of it, on a DataFrame with categorical
columns), audits it with :func:`sklearn_privacy.fil.audit`, asks which attributes leak
most, and picks the output-perturbation noise for a target eta.

**The data are simulated** (:func:`sklearn_privacy.datasets.make_count_data`): no real
person is involved, and the figures illustrate the method only.

Run: ``python examples/plot_count_data.py`` (a few seconds).
"""

# %%
# A simulated count table and the model a user would train
# ---------------------------------------------------------

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.linear_model import PoissonRegressor  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

from sklearn_privacy import EtaDisplay, fil  # noqa: E402
from sklearn_privacy.datasets import make_count_data  # noqa: E402

counts = make_count_data(4000, as_frame=True, random_state=0)  # SIMULATED people
X_train, X_test, y_train, y_test = train_test_split(counts.data, counts.target,
                                                    test_size=0.5, random_state=0)
print(counts.frame.head())

pre = make_column_transformer((StandardScaler(), ["age"]),
                              (OneHotEncoder(drop="first"), ["sex", "region"]),
                              ("passthrough", ["chronic", "smoker"]))
model = make_pipeline(pre, PoissonRegressor(alpha=1e-3)).fit(X_train, y_train)
print(f"D^2 on held-out rows: {model.score(X_test, y_test):.3f}")

# %%
# Audit the fitted model
# ----------------------
# ``PoissonRegressor(alpha=a)`` minimises the mean half deviance plus
# ``a/2 ||coef||^2``: the same minimiser as ``FILPoissonRegressor(alpha=a)``. The audit
# refits that estimator from the model's coefficients (Newton polishes them to the exact
# minimiser) and returns the pipeline with it as the last step.

SIGMA = 0.05
audited = fil.audit(model, X_train, y_train, sigma=SIGMA, random_state=0)
final = audited[-1]
print(f"mapped alpha: {final.alpha}, polish distance: {final.polish_distance_:.2e}")
print(f"per-example eta at sigma={SIGMA}: max {final.eta_.max():.3f}, "
      f"median {np.median(final.eta_):.3f}")
print(f"epsilon_ = {final.epsilon_}: {final.epsilon_reason_[:80]}...")

# %%
# Which attributes leak most?
# ---------------------------
# The eta of one original column (all of its one-hot columns together) for every person,
# through the pipeline; ``"label"`` is the count itself.

for column in ["age", "sex", "region", "chronic", "smoker", "label"]:
    e = fil.eta(audited, columns=column, per_example=True)
    print(f"{column:>8}: max {e.max():.3f}   median {np.median(e):.4f}")
worst = int(np.argmax(final.eta_))
print("the most exposed person:\n", X_train.iloc[worst].to_dict(),
      "visits:", int(y_train.iloc[worst]))

# %%
# The distribution of eta, by chronic condition
# ---------------------------------------------

chronic = np.where(X_train["chronic"].to_numpy() == 1, "chronic", "not chronic")
disp = EtaDisplay.from_estimator(audited, sensitive_features=chronic, kind="ecdf")
disp.ax_.set_title(f"Per-person eta at sigma = {SIGMA} (simulated clinic visits)")
plt.show()

# %%
# Noise for a target eta, and what it costs
# -----------------------------------------
# eta scales as ``1 / sigma``: ``sigma_for_eta`` gives the noise at which the largest
# per-person eta equals a target. ``release`` returns a PoissonRegressor pipeline with
# noisy coefficients, ready to publish.

rows = []
for target in [0.1, 0.5, 2.0]:
    sigma = final.sigma_for_eta(target)
    scores = [final.release(random_state=k, sigma=sigma).score(X_test, y_test)
              for k in range(20)]
    rows.append((target, sigma, np.mean(scores), np.std(scores)))
    print(f"max eta {target}: sigma = {sigma:.4f}, held-out D^2 of the release "
          f"{np.mean(scores):.3f} +- {np.std(scores):.3f} (20 noise draws)")

fig, ax = plt.subplots()
t, _, m, s = map(np.array, zip(*rows, strict=True))
ax.errorbar(t, m, yerr=s, marker="o")
ax.axhline(model.score(X_test, y_test), ls="--", color="grey", label="no noise")
ax.set(xscale="log", xlabel="max per-person eta", ylabel="held-out D^2 of the release",
       title="Privacy-utility trade-off (simulated clinic visits)")
ax.legend()
plt.show()
