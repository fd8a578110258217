"""
What the pickle proves: structural checks and a decision to file
================================================================

:class:`~sklearn_privacy.PrivacyReport` attacks a model to measure what an adversary can
infer; its **structural** section reads what the published object itself states about
its training rows. This example trains four models people publish -- a random forest,
histogram gradient boosting, an SVC pipeline and a logistic regression -- on
scikit-learn's bundled breast cancer table (half the rows for training, half as the
population), and compares what each report finds, the empirical epsilon the findings
prove, the true-positive rate at 1 % false positives of the strongest attack, and the
recommendation made against a declared :class:`~sklearn_privacy.report.ReleasePolicy`.

Run: ``python examples/plot_structural_checks.py`` (about ten CPU seconds).
"""

# %%
# Four models on the same rows
# ----------------------------

import json
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from sklearn_privacy import PrivacyReport  # noqa: E402
from sklearn_privacy.report import ReleasePolicy  # noqa: E402

X, y = load_breast_cancer(return_X_y=True)
perm = np.random.default_rng(0).permutation(len(y))
train, pop = perm[: len(y) // 2], perm[len(y) // 2:]
models = {
    "random forest": RandomForestClassifier(n_estimators=50, random_state=0),
    "hist. gradient boosting": HistGradientBoostingClassifier(max_iter=50,
                                                              min_samples_leaf=5,
                                                              random_state=0),
    "SVC pipeline": make_pipeline(StandardScaler(), SVC()),
    "logistic regression": make_pipeline(StandardScaler(), LogisticRegression()),
}
policy = ReleasePolicy(min_rows=10)
reports = {}
for name, model in models.items():
    model.fit(X[train], y[train])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports[name] = PrivacyReport.from_estimator(
            model, X[train], y[train], X[pop], y[pop], n_canaries=0, name=name,
            policy=policy, random_state=0, include_private_details=True)

# %%
# What each structural check found
# --------------------------------
# Every check that applies to the model's family runs; a check that cannot run says why.
# A tree's leaves and thresholds, an SVC's support vectors and a linear model's parameter
# count are read from the fitted object. These reports were built by the data owner with
# ``include_private_details=True``: the exact figures below include the private ones (the
# threshold checks compare thresholds with the training values); the shareable page lists
# those checks without figures, and shows the stored-rows count with Laplace noise.

for name, rep in reports.items():
    print(f"\n{name}")
    for c in rep.private_details["structural"]:
        state = ("found " + str(c["found"]) if c["found"] else "none") if c["ran"] \
            else "not run: " + c["reason"]
        print(f"  {c['name']:<24} {state:<12} {c['detail'] if c['ran'] else ''}")

# %%
# Findings that are membership tests count in the headline
# ---------------------------------------------------------
# Small leaves, recovered values and stored rows tell members from non-members; fed to
# :func:`~sklearn_privacy.attacks.epsilon_lower_bound` they bound epsilon from below,
# next to the threshold attack. The tail of the strongest attack (TPR at 1 % FPR, exact
# interval) says how many members it finds while wrongly accusing at most 1 % of the
# population. Both score training rows, so they are private figures: they count in the
# private page's headline (``private_details["summary"]``).

fig, ax = plt.subplots(figsize=(6.4, 3.2))
names = list(reports)
private = {n: reports[n].private_details["summary"] for n in names}
eps = [private[n].get("empirical_epsilon") or 0.0 for n in names]
ax.barh(names, eps, color="#73a33f")
for i, n in enumerate(names):
    tail = private[n].get("tpr_at_low_fpr") or {}
    lvl = (tail.get("levels") or {}).get("0.01")
    ax.text(eps[i] + 0.02, i, "TPR@1%: " + ("n/a" if lvl is None else f"{lvl['tpr']:.2f}"),
            va="center", fontsize=8)
ax.set_xlabel("empirical epsilon lower bound (95 %)")
ax.set_title("what the private page's headline counts")
fig.tight_layout()

for n in names:
    print(f"{n:<24} empirical epsilon {private[n].get('empirical_epsilon', 0):.3g} "
          f"from {private[n].get('empirical_epsilon_source', '-')}")

# %%
# A decision an output checker can file
# -------------------------------------
# The recommendation follows the declared policy and is made from the record of the
# shareable page; ``to_json`` writes that record with every check's outcome and evidence
# (schema ``sklearn_privacy.privacy_report``, version 2.0), and the HTML page shows the
# same decision. A report built with ``include_private_details=True`` adds the member
# ``"private"`` (marked ``do_not_publish``) with the decision made from the private
# figures too.

for n in names:
    rec = reports[n].private_details["recommendation"]
    print(f"{n:<24} {rec['decision']:<18} {rec['reasons'][0][:90]}")
record = json.loads(reports["SVC pipeline"].to_json())
print(record["schema"], record["schema_version"], record["recommendation"]["decision"],
      record["private"]["do_not_publish"])
assert PrivacyReport.from_json(reports["SVC pipeline"].to_json()).to_json() == \
    reports["SVC pipeline"].to_json()
plt.show()
