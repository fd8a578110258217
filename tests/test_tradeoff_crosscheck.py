"""Trade-off curves against riskcal and Google's dp-accounting (optional test dependencies).

For each setting -- a Gaussian part ``mu`` and groups of steps known as (epsilon, delta) --
the reference is dp-accounting's privacy-loss distribution of the same dominating pairs
(Gaussian: ``from_gaussian_mechanism``; randomised response with epsilon on the
reference's grid, so that its discretisation is exact), composed by dp-accounting and read
as a trade-off curve by riskcal's ``get_beta_from_pld`` (Kulynych et al. 2024, Algorithm
1). dp-accounting gives a pessimistic and an optimistic PLD; the exact curve lies between.
The library's curve must be within 1e-3 absolute TPR of the pessimistic reference and never
below the optimistic one (it may not be optimistic). The closed forms are also compared with
riskcal's analytic Gaussian-DP and (epsilon, delta) curves.

Run with ``/work/venvs/...-xcheck`` style environments that have ``riskcal`` and
``dp-accounting`` installed; skipped otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sklearn_privacy.privacy import TradeoffCurve

riskcal_analysis = pytest.importorskip("riskcal.analysis")
pldm = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

H = 1e-4
FPRS = np.array([1e-4, 1e-3, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8])


def _reference(mu, steps, pessimistic):
    plds = []
    if mu > 0:
        plds.append(pldm.from_gaussian_mechanism(
            1.0 / mu, sensitivity=1.0, value_discretization_interval=H,
            pessimistic_estimate=pessimistic, use_connect_dots=pessimistic))
    for eps, delta, count in steps:
        k = int(round(eps / H))
        rr = pldm.PrivacyLossDistribution.create_from_rounded_probability(
            {k: (1 - delta) / (1 + np.exp(-eps)), -k: (1 - delta) / (1 + np.exp(eps))},
            delta, H, pessimistic_estimate=pessimistic)
        plds.append(rr.self_compose(count) if count > 1 else rr)
    out = plds[0]
    for p in plds[1:]:
        out = out.compose(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 1.0 - riskcal_analysis.get_beta_from_pld(out, alpha=FPRS)


def _settings(n, seed):
    """``n`` settings: single mechanisms and compositions of up to 100 steps of 2-4 kinds."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:     # one Gaussian mechanism, or Gaussian steps composed
            out.append((float(rng.uniform(0.05, 2.5)), []))
            continue
        if kind == 1:     # one (epsilon, delta) or pure-epsilon step
            eps = round(float(rng.uniform(0.05, 4.0)), 4)
            out.append((0.0, [(eps, float(rng.choice([0.0, 1e-6, 1e-5])), 1)]))
            continue
        n_kinds = int(rng.integers(2, 5))
        total = max(int(rng.integers(2, 101)), n_kinds)
        counts = np.maximum(rng.multinomial(total - n_kinds, np.ones(n_kinds) / n_kinds), 0) + 1
        steps = []
        mu = float(rng.uniform(0.05, 0.8)) if kind == 2 else 0.0
        for c in counts[1 if mu else 0:]:
            eps = round(float(rng.uniform(0.005, 0.6)) / np.sqrt(c), 4) or 0.005
            steps.append((eps, float(rng.choice([0.0, 0.0, 1e-7])), int(c)))
        out.append((mu, steps))
    return out


def _check(mu, steps):
    ours = TradeoffCurve(mu, steps).max_tpr(FPRS)
    pess = _reference(mu, steps, True)
    opt = _reference(mu, steps, False) if mu > 0 else pess   # RR on the grid: exact
    assert np.all(ours >= opt - 1e-9), (mu, steps, ours - opt)
    assert np.max(np.abs(ours - pess)) <= 1e-3, (mu, steps, ours - pess)
    return float(np.max(np.abs(ours - pess))), float(np.min(ours - opt))


@pytest.mark.parametrize("setting", _settings(12, 0))
def test_curve_matches_dp_accounting_and_riskcal(setting):
    _check(*setting)


@pytest.mark.slow
def test_curve_matches_references_on_240_settings():
    """240 settings (single mechanisms, compositions of up to 100 steps of 2-4 kinds)."""
    worst, lowest = 0.0, np.inf
    for setting in _settings(240, 1):
        gap, below = _check(*setting)
        worst, lowest = max(worst, gap), min(lowest, below)
    print(f"largest |ours - dp-accounting pessimistic| = {worst:.2e}; "
          f"smallest ours - optimistic = {lowest:.2e}")


def test_closed_forms_match_riskcal():
    for mu in (0.1, 0.268, 0.5, 1.0, 2.0, 4.0):
        ours = TradeoffCurve.gaussian(mu).max_tpr(FPRS)
        ref = 1 - riskcal_analysis.get_beta_from_gdp(mu, FPRS)
        np.testing.assert_allclose(ours, ref, atol=1e-12)
        assert TradeoffCurve.gaussian(mu).max_advantage() == pytest.approx(
            float(riskcal_analysis.get_advantage_from_gdp(mu)), abs=1e-12)
    for eps, delta in ((0.5, 0.0), (1.0, 1e-5), (4.0, 1e-5), (3.13, 1e-4)):
        ours = TradeoffCurve.epsilon_delta(eps, delta).max_tpr(FPRS)
        ref = 1 - riskcal_analysis.get_beta_from_adp(eps, delta, FPRS)
        np.testing.assert_allclose(ours, ref, atol=1e-12)
    # ten Gaussian releases compose exactly: sqrt(10) mu
    ten = TradeoffCurve.compose([TradeoffCurve.gaussian(0.268)] * 10)
    np.testing.assert_allclose(ten.max_tpr(FPRS),
                               1 - riskcal_analysis.get_beta_from_gdp(0.268 * 10 ** 0.5, FPRS),
                               atol=1e-12)


def test_attribute_bound_matches_riskcal_bayes_risk():
    """Binary attribute with prior (p, 1 - p): the largest success is 1 - riskcal's Bayes
    risk of mu-GDP (Kulynych et al. 2025); ours is an upper bound within 1e-5."""
    for mu in (0.3, 1.0, 2.0):
        for p in (0.5, 0.7, 0.9):
            ours = TradeoffCurve.gaussian(mu).attribute_bound([p, 1 - p])
            ref = 1 - float(riskcal_analysis.get_bayes_risk_from_gdp(mu, p))
            assert ref - 1e-12 <= ours <= ref + 1e-5, (mu, p, ours, ref)
