"""
Who is exposed by a spline pipeline, in years
=============================================

A ``SplineTransformer`` in front of a linear model is the usual way to let a GLM bend
with age. The released model is linear in the spline *basis values*, so the Fisher
information loss of the transformed features answers "how well can an adversary recover
person i's third basis value?". This example asks the question about the people instead:
how precisely does the release reveal each person's **age, in years**
(:func:`sklearn_privacy.fil.eta` through the derivative of the fitted spline, the default
for a pipeline), and whom does each view put first.

Data: 5,000 rows of the bundled Adult census extract (real, public records); the model
is a :class:`~sklearn_privacy.FILLogisticRegression` predicting income above 50K.

Run: ``python examples/plot_raw_input_fil.py`` (a few seconds).
"""

# %%
# The pipeline a user would fit
# -----------------------------

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, SplineTransformer  # noqa: E402

from sklearn_privacy import FILLogisticRegression, fil  # noqa: E402
from sklearn_privacy.datasets import load_adult  # noqa: E402

adult = load_adult(raw=True, as_frame=True)
cols = ["age", "hours_per_week", "education_num", "sex", "race", "marital_status"]
X = adult.data[cols].iloc[:5000].reset_index(drop=True)
y = (adult.target.iloc[:5000] == ">50K").to_numpy().astype(int)

pre = make_column_transformer(
    (SplineTransformer(n_knots=6, extrapolation="linear"),
     ["age", "hours_per_week", "education_num"]),
    (OneHotEncoder(), ["sex", "race", "marital_status"]))
pipe = make_pipeline(pre, FILLogisticRegression(sigma=0.05, alpha=1e-3, random_state=0))
pipe.fit(X, y)
print(f"training accuracy {pipe.score(X, y):.3f}")

# %%
# Eta of age: raw input vs spline basis
# -------------------------------------
# ``fil.eta(pipe, X=X, columns="age")`` differentiates the fitted spline at each row
# (``X`` are the raw training rows; they are checked against what the model saw). The
# transformed-feature view is the eta of the spline columns of age, available with
# ``wrt="features"``.

raw_age = fil.eta(pipe, X=X, columns="age", per_example=True)
names = list(pipe[0].get_feature_names_out())
age_block = [n for n in names if n.startswith("splinetransformer__age_")]
spline_age = fil.eta(pipe, columns=age_block, per_example=True, wrt="features")

rho = spearmanr(raw_age, spline_age).statistic
print(f"Spearman correlation of the two rankings: {rho:.2f}")
for title, values in (("raw input (per year)", raw_age),
                      ("spline basis (per basis unit)", spline_age)):
    top = np.argsort(-values)[:5]
    print(f"most exposed by the {title}: ages {X.loc[top, 'age'].tolist()}, "
          f"eta {np.round(values[top], 3).tolist()}")
worst = int(np.argmax(raw_age))
print(f"person {worst} (age {X.loc[worst, 'age']}): an unbiased adversary who knows every "
      f"other value estimates their age with standard deviation at least "
      f"{1 / raw_age[worst]:.1f} years")

# %%
# Where in the age range the exposure sits
# ----------------------------------------
# The two views put different people first: the basis view follows where the basis
# functions are steep, the raw view where the fitted effect of a year of age, and the
# few similar people, make a row's age matter to the released coefficients.

fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
axes[0].scatter(X["age"], raw_age, s=4, alpha=0.4)
axes[0].set_title("eta of age, raw input (per year)")
axes[1].scatter(X["age"], spline_age, s=4, alpha=0.4, color="tab:orange")
axes[1].set_title("eta of age's spline columns")
for ax in axes:
    ax.set_xlabel("age (years)")
axes[0].set_ylabel("per-example eta (per year of age)")
axes[1].set_ylabel("per-example eta (per basis unit)")
fig.tight_layout()
plt.show()

# %%
# Every raw input at once
# -----------------------
# The per-example eta of the whole row (each numeric column in its own units, each
# categorical column as its one-hot values, and the label) against the same in the
# basis view.

raw_all = fil.eta(pipe, X=X, per_example=True)
features_all = fil.eta(pipe, per_example=True, wrt="features")
print(f"whole-row eta: raw max {raw_all.max():.3f}, features max {features_all.max():.3f}, "
      f"Spearman {spearmanr(raw_all, features_all).statistic:.2f}")
