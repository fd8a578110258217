"""
Who is most exposed by a neural network trained on Adult, in raw units
======================================================================

A scikit-learn ``MLPClassifier`` (one hidden layer of 8 tanh units) is trained on 5,000
people of the raw Adult table (age, years of education, hours per week, sex, race,
marital status) behind its own preprocessing. :func:`sklearn_privacy.fil.audit` polishes
the network to a certified local minimum of scikit-learn's objective and computes, for
each person, how precisely their values could be reconstructed from the weights released
with Gaussian noise (``sigma = 0.1``): ``1 / eta`` is a lower bound on the standard
deviation of any unbiased reconstruction, in years for age, in hours for the working
week. An attacker who sees the noisy weights recovers the ``sex`` of the most exposed
people more often than that of typical ones (``attacks.whitebox_inversion``).

This is a local, attribute-inference statement about the released local minimiser
(see the user guide page "Auditing a neural network"), not a membership score and not a
differential-privacy guarantee.

Figure: ``examples/output/mlp_exposure_adult.png``. Run: ``python
examples/mlp_exposure_adult.py`` (a few seconds).
"""

# %%
# Data and model
# --------------

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

from sklearn_privacy import fil  # noqa: E402
from sklearn_privacy.datasets import load_adult  # noqa: E402

NUMERIC = ["age", "education_num", "hours_per_week"]
CATEGORICAL = ["sex", "race", "marital_status"]
SIGMA = 0.1

adult = load_adult(raw=True, as_frame=True)
rows = np.random.RandomState(0).permutation(len(adult.data))[:5000]
X = adult.data[NUMERIC + CATEGORICAL].iloc[rows].reset_index(drop=True)
y = np.asarray(adult.target)[rows]

pipe = make_pipeline(
    make_column_transformer((StandardScaler(), NUMERIC),
                            (OneHotEncoder(handle_unknown="ignore"), CATEGORICAL)),
    MLPClassifier((8,), activation="tanh", alpha=3.0, solver="lbfgs", max_iter=5000,
                  random_state=0),
).fit(X, y)
print(f"training accuracy {pipe.score(X, y):.3f}")

# %%
# The audit: polish, certificate, per-person eta
# ----------------------------------------------

audited = fil.audit(pipe, X, y, sigma=SIGMA)
print(f"{audited.n_parameters_} parameters, polished in {audited.n_newton_steps_} Newton "
      f"steps (moved {audited.polish_relative_:.1%} of the parameters' norm), gradient "
      f"norm {audited.gradient_norm_:.1e}")
print(f"certificate: smallest Hessian eigenvalue {audited.hessian_min_eigenvalue_:.3g} "
      f"(largest {audited.hessian_max_eigenvalue_:.3g})")

per_attribute = {name: fil.eta(audited, columns=name, per_example=True)
                 for name in NUMERIC + CATEGORICAL}

# %%
# The ten most exposed people
# ---------------------------

top = np.argsort(audited.eta_)[::-1][:10]
table = X.iloc[top].copy()
table["eta"] = np.round(audited.eta_[top], 1)
table["age: sd >= (years)"] = np.round(1 / per_attribute["age"][top], 1)
table["hours: sd >= (h)"] = np.round(1 / per_attribute["hours_per_week"][top], 1)
table["eta(sex)"] = np.round(per_attribute["sex"][top], 2)
print(table.to_string())
print(f"median person: age sd >= {np.median(1 / per_attribute['age']):.1f} years, "
      f"hours sd >= {np.median(1 / per_attribute['hours_per_week']):.1f} h")

# %%
# An adversary who sees the noisy weights
# ---------------------------------------
#
# :func:`sklearn_privacy.attacks.whitebox_inversion` plays the adversary of the audit's
# threat model (every other row, the target's label and other values, the local minimum
# reached, ``sigma``): for each candidate ``sex`` it refits the certified minimiser by
# Newton steps from the audited one and picks the candidate nearest to the noisy weights.
# The ten people whose ``sex`` is most exposed, against ten of median exposure (a coin
# scores 0.5), over 100 simulated releases:

from sklearn_privacy.attacks import whitebox_inversion  # noqa: E402

order = np.argsort(per_attribute["sex"])[::-1]
for label, chosen in (("the ten most exposed people", order[:10]),
                      ("ten people of median exposure",
                       order[len(order) // 2 - 5: len(order) // 2 + 5])):
    attack = whitebox_inversion(audited, sensitive_features="sex", rows=chosen, n_draws=100,
                                random_state=0)
    print(f"sex of {label} (eta(sex) from "
          f"{per_attribute['sex'][chosen].min():.2f}): recovered in "
          f"{attack.accuracy:.0%} of the releases")

# %%
# Exposure of age across the table
# --------------------------------

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
axes[0].scatter(X["age"], 1 / per_attribute["age"], s=4, alpha=0.4)
axes[0].set_xlabel("age (years)")
axes[0].set_ylabel("reconstruction sd of age >= 1 / eta (years)")
axes[0].set_yscale("log")
axes[1].hist(np.log10(audited.eta_), bins=60)
axes[1].set_xlabel("log10 per-person eta (all values of the row)")
axes[1].set_ylabel("people")
fig.suptitle(f"MLPClassifier on Adult (5,000 people), sigma = {SIGMA}")
fig.tight_layout()
# the gallery runs the examples from their own directory, without __file__
out = (Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()) / "output"
out.mkdir(exist_ok=True)
fig.savefig(out / "mlp_exposure_adult.png", dpi=120)
print(f"figure: {os.path.relpath(out / 'mlp_exposure_adult.png')}")
