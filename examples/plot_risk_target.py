"""
Noise from the risk you accept: a published pipeline on Adult
=============================================================

A data owner accepts this risk for the people in the Adult census table: **no membership
attack may find more than 5 % of them while wrongly accusing 1 % of the others**. This
example sets the noise of a published pipeline -- a DP standardisation and an
output-perturbed logistic regression -- from that sentence, before any row is read,
checks what the published object guarantees, runs an attack against the proven bound, and
keeps the budget in a ledger.

Run: ``python examples/plot_risk_target.py`` (a few seconds).
"""

# %%
# The risk target, split between the two steps
# --------------------------------------------
# Both steps add Gaussian noise, which composes exactly (``mu ** 2`` add), so a fifth of
# the target for the scaler and the rest for the model compose to exactly the target.

import warnings

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_privacy import FILLogisticRegression, privacy_claim  # noqa: E402
from sklearn_privacy.attacks import MembershipROCDisplay, membership_scores  # noqa: E402
from sklearn_privacy.datasets import load_adult  # noqa: E402
from sklearn_privacy.preprocessing import DPStandardScaler  # noqa: E402
from sklearn_privacy.privacy import PrivacyLedger, RiskTarget  # noqa: E402

target = RiskTarget(tpr=0.05, fpr=0.01)
print("accepted risk:", target)
print("a claim known only as (epsilon, 1e-5) meets it up to epsilon",
      round(target.epsilon(1e-5), 3),
      "-- a Gaussian release needs only mu <=", round(target.gaussian_mu(), 3))

X_train, y_train = load_adult(variant="fil", return_X_y=True)            # 30,162 rows
X_test, y_test = load_adult(subset="test", variant="fil", return_X_y=True)
print("majority class rate on the test rows:", round(float(np.mean(y_test == 0)), 4))

pipe = make_pipeline(
    DPStandardScaler(bounds=(-4.0, 4.0), epsilon=target.share(0.2)),
    FILLogisticRegression(epsilon=target.share(0.8), alpha="auto", data_norm=3.0,
                          fit_intercept=False, classes=[0, 1]),
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # rows above data_norm are scaled (PrivacyWarning)
    pipe.fit(X_train, y_train)
print("test accuracy:", round(pipe.score(X_test, y_test), 4))

# %%
# What the published object guarantees
# ------------------------------------
# The claim composes both steps; its trade-off curve is exact (Gaussian DP).

claim = privacy_claim(pipe)
print(claim.tradeoff)
print("largest TPR at FPR 1 %:", round(float(claim.max_tpr(0.01)), 4))
print("as (epsilon, delta):", round(claim.tradeoff.epsilon(1e-5), 3), "at delta 1e-5")

# %%
# An attack against the proven bound
# ----------------------------------
# The loss attack on 10,000 members and 10,000 non-members, drawn with the claim's
# worst-case ROC on log-log axes. A point above the black curve would refute the claim.

k = 10_000
members = np.r_[np.ones(k, bool), np.zeros(k, bool)]
scores = membership_scores(pipe, np.vstack([X_train[:k], X_test[:k]]),
                           np.r_[y_train[:k], y_test[:k]], attack="loss")
disp = MembershipROCDisplay.from_predictions(members, scores, name="loss attack",
                                             n_resamples=200, random_state=0)
disp.plot_bound(claim)
print("refuted:", disp.refuted_)

# %%
# One budget for the data set
# ---------------------------
# A second release of the same pipeline would double the ``mu ** 2``: the ledger refuses.

ledger = PrivacyLedger(target)
ledger.record(pipe, name="pipeline")
print(ledger)
print("a second release fits:", ledger.fits(pipe))
