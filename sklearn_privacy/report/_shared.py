"""What the report's sections share: one set of reference models, scored once, and the
cost of the page.

Reference models (the shadow models of LiRA and RMIA) are the report's most expensive
computation. They are trained once per report, on the membership section's evaluation
rows (the balanced design of :func:`~sklearn_privacy.attacks.lira`: every row in the
training set of exactly half of them), and every model records, on every row, both
statistics the attacks read: LiRA's logit of the true-class confidence and RMIA's
log-probability of the true class. The target model is scored on those rows once too.
Every attack of the page reads these arrays (``ctx["reference"]``); none refits.

The page's cost (:func:`count`) is counted as the sections run: reference models
trained, refits of the recipe by the audits and canary releases drawn. Each count is a
function of the parameters and of what ran (which depends on the published object and
the population rows only), never of the training rows' values, so the default page may
state it; wall-clock times depend on the rows and stay in the private channel.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import norm
from sklearn.base import is_classifier

from ..utils import child_seeds

#: the page's cost counts, in the order the page states them
COST_KEYS = ("reference_models", "audit_refits", "canary_releases")

#: the words of each count on the page
COST_LABELS = {
    "reference_models": "reference models trained (LiRA and RMIA share them)",
    "audit_refits": "fits of the recipe by the audits (on the population rows)",
    "canary_releases": "canary releases drawn (noise redrawn, no refit)",
}


def count(ctx, key, n):
    """Add ``n`` to the page's cost ``key`` (a public count)."""
    cost = ctx.setdefault("cost", dict.fromkeys(COST_KEYS, 0))
    cost[key] = cost.get(key, 0) + int(n)


def progress(ctx, text):
    """One line of progress when the report is ``verbose``."""
    if ctx.get("verbose"):
        print(f"[PrivacyReport] {text}", flush=True)


def _has_proba(est):
    return is_classifier(est) and hasattr(est, "predict_proba")


def reference_outputs(est, X, y):
    """Both attacks' per-row statistics of one model, ``r_[lira, rmia]``, from one query
    of its class probabilities: LiRA's logit of the true-class confidence (minus the
    squared error for a regressor) and RMIA's log-probability of the true class (NaN for a
    model without class probabilities), each as :func:`~sklearn_privacy.attacks.lira` and
    :func:`~sklearn_privacy.attacks.rmia` compute it. Module level: process backends
    pickle it."""
    from ..attacks._lira import _statistic, true_class_logs
    from ..attacks._reference import LOGIT_CAP
    from ..attacks._rmia import _LOG_HIGH, _LOG_LOW

    if not _has_proba(est):
        lira = np.asarray(_statistic(est, X, y), dtype=float)   # a regressor (or refusal)
        return np.r_[lira, np.full(lira.shape, np.nan)]
    log_py, lira, exact = true_class_logs(est, X, y)
    if not exact:      # probabilities of exactly 0 or 1: the same cap on both sides
        lira = np.clip(np.where(np.isnan(lira), 0.0, lira), -LOGIT_CAP, LOGIT_CAP)
        log_py = np.clip(log_py, _LOG_LOW, _LOG_HIGH)
    return np.r_[lira, log_py]


def reference_set(ctx, X, y, rng):
    """The report's reference models on the rows ``(X, y)``, trained once.

    The first call trains ``ctx["n_ref"]`` models on random halves of the rows (the
    balanced design and seeds of :func:`~sklearn_privacy.attacks._reference.
    fit_reference_models`, drawn from ``rng`` in the same order, so LiRA's scores equal
    :func:`~sklearn_privacy.attacks.lira`'s with the same generator) and scores the target
    model once; later calls return the same arrays. ``verbose`` reports each model.

    Returns
    -------
    ref : dict
        ``in_mask`` (models x rows), ``lira`` and ``rmia`` (the models' statistics),
        ``target_lira`` and ``target_rmia`` (the target's), ``n_models``.
    """
    if "reference" in ctx:
        return ctx["reference"]
    from ..attacks._reference import _fit_reference

    est, n_models = ctx["estimator"], int(ctx["n_ref"])
    n = len(y)
    order = rng.uniform(size=(n_models, n)).argsort(axis=0)
    in_mask = order < n_models // 2
    seeds = child_seeds(rng, n_models)
    jobs = (delayed(_fit_reference)(est, X, y, in_mask[k], int(seeds[k]), {},
                                    reference_outputs) for k in range(n_models))
    values = []
    for k, out in enumerate(Parallel(n_jobs=ctx["n_jobs"], return_as="generator")(jobs),
                            start=1):
        values.append(out)
        progress(ctx, f"reference models {k}/{n_models}")
    values = np.vstack(values)
    count(ctx, "reference_models", n_models)
    target = reference_outputs(est, X, y)
    ctx["reference"] = {"in_mask": in_mask, "lira": values[:, :n], "rmia": values[:, n:],
                        "target_lira": target[:n], "target_rmia": target[n:],
                        "n_models": n_models}
    return ctx["reference"]


def lira_scores(ref):
    """Online LiRA scores of every row (Carlini et al., 2022; per-row variances), from the
    shared reference set: ``log N(s; IN) - log N(s; OUT)``, as
    :func:`~sklearn_privacy.attacks.lira` computes them."""
    from ..attacks._lira import _gaussian_params

    stats, shadow_in, target = ref["lira"], ref["in_mask"], ref["target_lira"]
    mu_out, sd_out, _ = _gaussian_params(stats, ~shadow_in, False)
    mu_in, sd_in, _ = _gaussian_params(stats, shadow_in, False)
    score = norm.logpdf(target, mu_in, sd_in) - norm.logpdf(target, mu_out, sd_out)
    if not np.all(np.isfinite(score)):
        raise ValueError("LiRA scores are NaN or infinite for some rows (the target or "
                         "reference models returned NaN outputs).")
    return score


def rmia_scores(ref):
    """Online RMIA scores of every row (Zarifzadeh, Liu & Shokri, 2024; gamma 1, every row
    a population sample ``z``), from the same reference models, as
    :func:`~sklearn_privacy.attacks.rmia` computes them; None for a model without class
    probabilities."""
    from ..attacks._rmia import _log_ratios, _pairwise_scores

    if not np.all(np.isfinite(ref["target_rmia"])):
        return None
    log_ratio = _log_ratios(ref["target_rmia"], ref["rmia"], ref["in_mask"], True, 0.33)
    return _pairwise_scores(log_ratio, None, 1.0, None)[1]
