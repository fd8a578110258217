"""The proven curve against the canary audit on Adult: not refuted, and a noise cut caught.

For ``FILLogisticRegression(epsilon=eps)`` on 2,000 rows of the bundled Adult table, the
worst replace-one pair found by :func:`~sklearn_privacy.attacks.worst_case_neighbours` is
audited with its likelihood-ratio statistic (the projection of the released parameters on
the direction the pair moves the minimiser). The releases of the canary audit with
``refit=False`` are the exact minimisers of ``D`` and ``D'`` plus the release's Gaussian
noise, so the statistic of a release is ``a + sigma Z`` (``D``) or ``b + sigma Z`` (``D'``);
the test checks this law against :func:`~sklearn_privacy.attacks.canary_audit` itself
(Kolmogorov--Smirnov) and then draws 1,000 releases a side per seed for 200 seeds. In every
seed the attack's TPR at FPR 1 % (lower Clopper--Pearson end at an upper bound of the FPR,
jointly at 95 %) must stay under the claim's curve; with the noise cut tenfold the same
audit (4,000 releases a side) must flag the claim as refuted in every seed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import ks_2samp
from sklearn.base import clone

from sklearn_privacy import FILLogisticRegression, privacy_claim
from sklearn_privacy.attacks import canary_audit, worst_case_neighbours
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.privacy._tradeoff import empirical_point, refutes

N_SEEDS, N_RELEASES = 200, 1000


def _setup(eps):
    X, y = load_adult(variant="fil", return_X_y=True)
    X, y = X[:2000], y[:2000]
    est = FILLogisticRegression(epsilon=eps, alpha=0.01, data_norm=4.0, fit_intercept=False,
                                classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = worst_case_neighbours(clone(est), X, y, random_state=0)
        fitted = clone(est).set_params(random_state=0).fit(X, y)
    d = pair.theta_replaced - pair.theta_original
    shift = float(np.linalg.norm(d))        # b - a: the projection's means differ by it
    return X, y, est, pair, fitted, shift


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_canary_audit_stays_under_the_curve_and_a_tenfold_cut_is_refuted(eps):
    X, y, est, pair, fitted, shift = _setup(eps)
    curve = privacy_claim(fitted, allow_seeded=True).tradeoff
    sigma = fitted.noise_scale_
    # the law of the audit's statistic, checked against canary_audit itself
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = canary_audit(clone(est), X, y, pair.index, pair.x_replacement,
                           pair.y_replacement, attack=pair.statistic(), n_releases=400,
                           refit=False, random_state=12345)
    rng = np.random.default_rng(0)
    assert ks_2samp(res.statistics_original, sigma * rng.standard_normal(4000)).pvalue > 1e-3
    assert ks_2samp(res.statistics_replaced,
                    shift + sigma * rng.standard_normal(4000)).pvalue > 1e-3
    worst, tprs, refuted_cut = -np.inf, [], 0
    for seed in range(N_SEEDS):
        g = np.random.default_rng(1000 + seed)
        z_out, z_in = g.standard_normal(N_RELEASES), g.standard_normal(N_RELEASES)
        point = empirical_point(shift + sigma * z_in, sigma * z_out, fpr=0.01)
        assert not refutes(curve, point), (eps, seed, point)
        worst = max(worst, point["tpr_low"] - float(curve.max_tpr(point["fpr_high"])))
        tprs.append(point["tpr"])
        # releases with a tenfold noise cut (4,000 a side), audited against the same claim
        z_out, z_in = g.standard_normal(4 * N_RELEASES), g.standard_normal(4 * N_RELEASES)
        cut = empirical_point(shift + sigma / 10 * z_in, sigma / 10 * z_out, fpr=0.01)
        refuted_cut += refutes(curve, cut)
    assert refuted_cut == N_SEEDS
    print(f"\neps={eps}: bound {float(curve.max_tpr(0.01)):.4f}, pair ratio "
          f"{pair.ratio:.3f}, median empirical TPR {np.median(tprs):.4f}, max TPR "
          f"{np.max(tprs):.4f}, largest (tpr_low - bound at fpr_high) {worst:.4f}, "
          f"0/{N_SEEDS} refuted; tenfold cut refuted {refuted_cut}/{N_SEEDS}")
