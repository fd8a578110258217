"""Trade-off curves, risk targets and the ledger, against brute-force oracles."""

from __future__ import annotations

import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from sklearn_privacy import DPLogisticRegression, FILLogisticRegression, privacy_claim
from sklearn_privacy.fil import analytic_gaussian_delta
from sklearn_privacy.mechanisms._gaussian import analytic_gaussian_sigma
from sklearn_privacy.preprocessing import DPStandardScaler
from sklearn_privacy.privacy import (
    BudgetExceededError,
    PrivacyLedger,
    RiskTarget,
    StepClaim,
    TradeoffCurve,
    tradeoff_curve,
)

FPRS = np.array([1e-4, 1e-3, 0.01, 0.03, 0.1, 0.25, 0.5, 0.9])


def _brute_force_roc(steps):
    """Exact Neyman--Pearson ROC of a composition of randomised responses, by enumerating
    every joint outcome (2^k of them): sort by likelihood ratio, accumulate."""
    p_out, q_out, ratio = [], [], []
    for bits in itertools.product((0, 1), repeat=len(steps)):
        p = q = 1.0
        for b, (eps, delta) in zip(bits, steps, strict=True):
            hi, lo = (1 - delta) * math.exp(eps) / (1 + math.exp(eps)), \
                (1 - delta) / (1 + math.exp(eps))
            q *= hi if b else lo
            p *= lo if b else hi
        p_out.append(p)
        q_out.append(q)
        ratio.append(q / p)
    order = np.argsort(ratio)[::-1]
    fpr = np.concatenate([[0.0], np.cumsum(np.array(p_out)[order])])
    tpr = np.concatenate([[0.0], np.cumsum(np.array(q_out)[order])])
    # the (1 - prod(1 - delta)) outcomes only Q produces come first
    q_only = 1 - math.prod(1 - d for _, d in steps)
    return np.append(fpr, 1.0), np.append(np.minimum(tpr + q_only, 1.0), 1.0)


@pytest.mark.parametrize("steps", [
    [(0.3, 0.0), (0.7, 0.0), (0.05, 0.0), (1.2, 0.0), (0.4, 0.0), (0.9, 0.0), (0.2, 0.0),
     (0.6, 0.0)],
    [(0.5, 1e-4), (0.25, 0.0), (1.0, 1e-6), (0.1, 0.0), (0.3, 1e-3)],
    [(2.0, 0.0), (0.01, 0.0)],
])
def test_numerical_composition_is_pessimistic_and_close_to_brute_force(steps):
    fpr, tpr = _brute_force_roc(steps)
    exact = np.interp(FPRS, fpr, tpr)
    curve = TradeoffCurve(0.0, [(e, d, 1) for e, d in steps])
    ours = curve.max_tpr(FPRS)
    assert curve.method == "pld"
    assert np.all(ours >= exact - 1e-12)                 # never optimistic
    assert np.max(ours - exact) <= max(curve.error, 1e-4) + 1e-9 <= 1e-3


def test_epsilon_delta_curve_is_the_brute_force_curve_of_randomised_response():
    for eps, delta in ((0.5, 0.0), (1.0, 1e-5), (4.0, 1e-5), (3.13, 1e-4)):
        fpr, tpr = _brute_force_roc([(eps, delta)])
        np.testing.assert_allclose(TradeoffCurve.epsilon_delta(eps, delta).max_tpr(FPRS),
                                   np.interp(FPRS, fpr, tpr), atol=1e-12)


def test_gaussian_numerical_path_agrees_with_closed_form():
    """The PLD path (forced by a negligible second step) against Phi(Phi^-1(a) + mu)."""
    for mu in (0.2, 1.0, 2.5):
        closed = TradeoffCurve.gaussian(mu).max_tpr(FPRS)
        numeric = TradeoffCurve(mu, [(1e-9, 0.0, 1)]).max_tpr(FPRS)
        assert np.all(numeric >= closed - 1e-12)
        assert np.max(numeric - closed) <= 1e-3


def test_profile_conversions_are_the_analytic_gaussian_and_invert():
    g = TradeoffCurve.gaussian(0.8)
    for eps in (0.0, 0.5, 1.0, 3.0):
        assert g.delta(eps) == pytest.approx(
            analytic_gaussian_delta(eps, sigma=1.0, sensitivity=0.8), rel=1e-9, abs=1e-15)
    assert g.delta(g.epsilon(1e-5)) == pytest.approx(1e-5, rel=1e-6)
    mixed = TradeoffCurve(0.5, [(0.3, 0.0, 4)])
    eps = mixed.epsilon(1e-5)
    assert mixed.delta(eps) <= 1e-5 * (1 + 1e-6) and mixed.delta(eps * 0.99) > 1e-5
    assert TradeoffCurve.epsilon_delta(1.0, 1e-5).epsilon(1e-5) == pytest.approx(1.0)


def test_advantage_and_attribute_bound():
    for curve in (TradeoffCurve.gaussian(1.0), TradeoffCurve.epsilon_delta(1.0, 1e-3),
                  TradeoffCurve(0.4, [(0.5, 0.0, 3)])):
        grid = np.linspace(0, 1, 20001)
        assert curve.max_advantage() == pytest.approx(
            float(np.max(curve.max_tpr(grid) - grid)), abs=1e-4)
        # two values, uniform prior: guessing succeeds with (1 + advantage) / 2 at most
        assert curve.attribute_bound([0.5, 0.5]) == pytest.approx(
            (1 + curve.max_advantage()) / 2, abs=2e-4)
        skewed = curve.attribute_bound([0.7, 0.2, 0.1])
        assert 0.7 < skewed < 1
    # pure epsilon, k values: a k-ary randomised response attains
    # e^eps / (e^eps + k - 1) under a uniform prior; the bound may not be below it
    k, eps = 4, 1.0
    attained = math.exp(eps) / (math.exp(eps) + k - 1)
    assert TradeoffCurve.epsilon_delta(eps, 0.0).attribute_bound(np.full(k, 1 / k)) >= attained
    with pytest.raises(ValueError, match="prior"):
        TradeoffCurve.gaussian(1.0).attribute_bound([0.5, 0.6])


def test_issue_table_is_reproduced():
    """(epsilon, delta) alone vs the exact Gaussian curve, TPR at FPR 1 %."""
    mu1 = 1 / analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    rows = {
        "one model (1, 1e-5)": ([mu1], (1.0, 1e-5), 0.027, 0.020),
        "scaler + model": ([mu1, mu1], None, 0.041, 0.026),
        "ten releases": ([mu1] * 10, None, 0.229, 0.070),
        "(4, 1e-5)": ([1 / analytic_gaussian_sigma(4.0, 1e-5, 1.0)], (4.0, 1e-5), 0.546,
                      0.081),
    }
    for mus, pair, alone, exact in rows.values():
        curve = TradeoffCurve.compose([TradeoffCurve.gaussian(m) for m in mus])
        delta = 1e-5 * len(mus)
        pair = pair or (curve.epsilon(delta), delta)
        assert float(TradeoffCurve.epsilon_delta(*pair).max_tpr(0.01)) == pytest.approx(
            alone, abs=6e-4)
        assert float(curve.max_tpr(0.01)) == pytest.approx(exact, abs=6e-4)


def test_risk_target_conversions_meet_the_target_with_equality():
    t = RiskTarget(tpr=0.05, fpr=0.01)
    assert float(TradeoffCurve.gaussian(t.gaussian_mu()).max_tpr(0.01)) == pytest.approx(0.05)
    for delta in (0.0, 1e-5):
        eps = t.epsilon(delta)
        assert float(TradeoffCurve.epsilon_delta(eps, delta).max_tpr(0.01)) == \
            pytest.approx(0.05)
        assert not t.is_met_by(TradeoffCurve.epsilon_delta(eps * 1.01, delta))
    a = RiskTarget(advantage=0.2)
    assert TradeoffCurve.gaussian(a.gaussian_mu()).max_advantage() == pytest.approx(0.2)
    assert TradeoffCurve.epsilon_delta(a.epsilon(1e-5), 1e-5).max_advantage() == \
        pytest.approx(0.2)
    assert RiskTarget.from_epsilon(1.0, 1e-5).tpr == pytest.approx(math.e * 0.01 + 1e-5)
    # shares of a target compose back to it (Gaussian steps)
    parts = [TradeoffCurve.gaussian(t.share(f).gaussian_mu()) for f in (0.2, 0.3, 0.5)]
    assert float(TradeoffCurve.compose(parts).max_tpr(0.01)) == pytest.approx(0.05)
    assert a.share(0.5).gaussian_mu() == pytest.approx(a.gaussian_mu() / math.sqrt(2))
    with pytest.raises(ValueError, match="fraction"):
        t.share(0)
    for bad, match in (({"tpr": 0.005, "fpr": 0.01}, "must exceed fpr"),
                       ({"tpr": 0.05, "advantage": 0.1}, "exactly one"),
                       ({}, "exactly one"), ({"tpr": 1.5}, "tpr must be a number")):
        with pytest.raises(ValueError, match=match):
            RiskTarget(**bad)
    with pytest.raises(ValueError, match="delta=0.5 alone"):
        t.epsilon(0.5)


def test_ledger_refuses_and_prints_both_currencies():
    ledger = PrivacyLedger(RiskTarget(tpr=0.05, fpr=0.01))
    step = StepClaim("m", "FILLogisticRegression", "dp", 1.0, 1e-5, "", gaussian_mu=0.4)
    ledger.record(step, name="first")
    assert ledger.remaining_mu() == pytest.approx(math.sqrt(0.6815 ** 2 - 0.4 ** 2), abs=1e-3)
    ledger.record(step, name="second")
    with pytest.raises(BudgetExceededError, match="third: publishing it"):
        ledger.record(step, name="third")
    assert len(ledger.releases_) == 2          # the refused release is not recorded
    text = str(ledger)
    assert "TPR" in text and "-DP" in text and "mu <=" in text
    # a pure-epsilon release composes numerically; remaining_mu by bisection
    mixed = PrivacyLedger(RiskTarget(tpr=0.05, fpr=0.01))
    mixed.record(TradeoffCurve.epsilon_delta(0.3, 0.0), name="count")
    left = mixed.remaining_mu()
    assert mixed.fits(TradeoffCurve.gaussian(left * 0.99))
    assert not mixed.fits(TradeoffCurve.gaussian(left * 1.05))
    with pytest.raises(TypeError, match="RiskTarget"):
        PrivacyLedger(0.05)


def _xy(n=400):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 3))
    return X, (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)


def _fil(eps):
    return FILLogisticRegression(epsilon=eps, alpha=0.01, data_norm=2.0,
                                 intercept_scaling=1.0, classes=[0, 1])


def test_estimators_set_their_noise_from_a_risk_target():
    X, y = _xy()
    target = RiskTarget.from_epsilon(1.0, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_eps, by_risk = _fil(1.0).fit(X, y), _fil(target).fit(X, y)
        dp = DPLogisticRegression(epsilon=target, data_norm=2.0, classes=[0, 1]).fit(X, y)
        sc = DPStandardScaler(bounds=(-1, 1), epsilon=target).fit(X)
        lap = DPStandardScaler(bounds=(-1, 1), epsilon=target, mechanism="laplace").fit(X)
    # the same TPR bound at FPR 1 % with 0.66 of the noise
    assert by_risk.noise_scale_ / by_eps.noise_scale_ <= 0.75
    claim = privacy_claim(by_risk)
    assert float(claim.max_tpr(0.01)) == pytest.approx(target.tpr, rel=1e-6)
    assert float(privacy_claim(by_eps).max_tpr(0.01)) < target.tpr
    assert "risk target" in by_risk.epsilon_reason_
    assert dp.epsilon_ == pytest.approx(target.epsilon(1e-5))
    assert float(privacy_claim(dp).max_tpr(0.01)) <= target.tpr * (1 + 1e-9)
    assert privacy_claim(dp).tradeoff.conservative
    assert sc.gaussian_mu_ == pytest.approx(target.gaussian_mu())
    assert lap.epsilon_ == pytest.approx(target.epsilon(0.0))
    pipe = make_pipeline(DPStandardScaler(bounds=(-1, 1), epsilon=target), _fil(target))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    both = tradeoff_curve(pipe)
    assert both.mu == pytest.approx(math.sqrt(2) * target.gaussian_mu(), rel=1e-6)
    assert pickle.loads(pickle.dumps(both)).max_tpr(0.01) == both.max_tpr(0.01)
    with pytest.raises(ValueError, match="'epsilon' parameter"):
        _fil("5%").fit(X, y)


def test_claim_prints_the_curve_bound():
    X, y = _xy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(privacy_claim(_fil(4.0).fit(X, y)))
    assert "TPR at 1% FPR is at most 0.08" in text and "exact (Gaussian DP" in text


def test_report_states_the_curve_bound_not_what_epsilon_alone_allows():
    """At epsilon 4 (delta 1e-5) the headline reads the Gaussian curve's 8.1 %, not the
    54.6 % that (4, 1e-5) alone would allow."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.report import PrivacyReport

    X, y = _xy(1200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _fil(4.0).fit(X[:600], y[:600])
        rep = PrivacyReport.from_estimator(est, X[:600], y[:600], X[600:], y[600:],
                                           n_canaries=0, canary_releases=0,
                                           random_state=0)
    # the default page: the proven bound (public, from the claim); the attacks scored on
    # the training rows are on the private page only
    head = dict(rep._headline())["an attacker's TPR at 1% FPR"]
    assert head in ("at most 0.0805 (proven)", "at most 0.0806 (proven)")
    assert rep.summary["tpr_bound"] == pytest.approx(0.0806, abs=1e-4)
    # (the page's noisy figures are drawn afresh, so a bare "0.546" could be one of
    # them: the bound would be printed as "at most 0.546")
    html = rep.to_html()
    assert "at most 0.546" not in html and "at most 0.547" not in html
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private = PrivacyReport.from_estimator(est, X[:600], y[:600], X[600:], y[600:],
                                               n_canaries=0, canary_releases=0,
                                               include_private_details=True, random_state=0)
    head = dict(private._headline(private=True))["an attacker's TPR at 1% FPR"]
    assert head.startswith(("at most 0.0805 (proven); the strongest attack run reached ",
                            "at most 0.0806 (proven); the strongest attack run reached "))
    assert "refuted" not in head


def test_display_flags_an_attack_above_the_proven_bound():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.attacks import MembershipROCDisplay
    from sklearn_privacy.privacy._tradeoff import empirical_point, refutes

    rng = np.random.default_rng(0)
    n = 4000
    members = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    # scores of an attack that is exactly 1-GDP: the bound of mu = 1 holds, mu = 0.3 not
    scores = np.r_[rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)]
    for mu, expected in ((1.0, False), (0.3, True)):
        disp = MembershipROCDisplay.from_predictions(members, scores, random_state=0,
                                                     n_resamples=200)
        disp.plot_bound(TradeoffCurve.gaussian(mu))
        assert disp.refuted_ is expected
        point = empirical_point(scores[:n], scores[n:], fpr=0.01)
        assert refutes(TradeoffCurve.gaussian(mu), point) is expected
    with pytest.raises(ValueError, match="call plot"):
        MembershipROCDisplay([0, 1], [0, 1]).plot_bound(TradeoffCurve.gaussian(1.0))


def test_random_stopping_search_composes_in_the_same_currency():
    """Candidates whose noise is set from a risk target are accounted at that noise; the
    search's claim is an (epsilon, delta) pair read as a conservative curve."""
    from sklearn_privacy.model_selection import RandomStoppingSearch

    X, y = _xy(2000)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    target = RiskTarget(tpr=0.03, fpr=0.01)
    base = FILLogisticRegression(epsilon=target, fit_intercept=False, data_norm=1.0,
                                 classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = RandomStoppingSearch(base, {"alpha": [0.01, 0.1]}, mean_runs=3,
                                      random_state=0).fit(X, y)
    assert search.candidate_gaussian_mu_ == pytest.approx(target.gaussian_mu(), rel=1e-6)
    curve = privacy_claim(search, allow_seeded=True).tradeoff
    assert curve.conservative and curve.method == "profile"
    assert float(curve.max_tpr(0.01)) > target.tpr   # selection costs more than one model
    ledger = PrivacyLedger(RiskTarget(tpr=0.5, fpr=0.01))
    ledger.record(privacy_claim(search, allow_seeded=True), name="search")
    assert len(ledger.releases_) == 1


# a broken mechanism: releases with sigma / 10, accounts sigma (the canary tests' own)
from test_fil_canary import _TenfoldLessNoise as _TenfoldCutFIL  # noqa: E402


def test_report_draws_the_canary_audit_against_the_proven_curve():
    """The audits (retrained on the population rows: public) are drawn against the
    claim's trade-off curve on the default page: an honest release stays under it; the
    same recipe releasing a tenth of the noise it accounts is flagged as refuted."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.report import PrivacyReport

    X, y = _xy(1200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sigma = float(_fil(2.0).fit(X[:600], y[:600]).noise_scale_)   # epsilon 2
    params = dict(_fil(2.0).get_params(), epsilon=None, sigma=sigma)
    kw = dict(n_canaries=0, canary_releases=3000, random_state=0)
    outcomes = {}
    for cls in (FILLogisticRegression, _TenfoldCutFIL):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(**params).fit(X[:600], y[:600])
            rep = PrivacyReport.from_estimator(est, X[:600], y[:600], X[600:], y[600:],
                                               **kw)
        assert rep.summary["tpr_bound"] == pytest.approx(0.0340, abs=2e-4)
        audits = next(s for s in rep.sections if s.key == "audits")
        row = dict(audits.table)["canary audit: TPR at 1% FPR against the proven bound"]
        assert audits.figure_png is not None
        outcomes[cls.__name__] = ("refuted" in audits.outcomes, "refuted" in row)
    assert outcomes == {"FILLogisticRegression": (False, False),
                        _TenfoldCutFIL.__name__: (True, True)}, outcomes


def test_every_new_dp_step_takes_a_risk_target():
    """The constant models, the private quantile steps, the boosted models and the
    private multicalibrator accept a risk target: their noise is set from the largest
    epsilon whose claim meets it, before the rows are read, and the claim they state
    meets the target."""
    from sklearn_privacy import DPBoostingClassifier
    from sklearn_privacy.dummy import DPDummyClassifier, DPDummyRegressor
    from sklearn_privacy.preprocessing import DPQuantileScaler, DPRowNormClipper

    X, y = _xy(400)
    target = RiskTarget(tpr=0.05, fpr=0.01)
    cases = [
        (DPDummyClassifier(epsilon=target, classes=[0, 1]), y, 0.0),
        (DPDummyRegressor(epsilon=target, target_bound=1.0), X[:, 0], 0.0),
        (DPQuantileScaler(epsilon=target, bounds=(-1.0, 1.0)), None, 0.0),
        (DPRowNormClipper(epsilon=target, max_norm=2.0), None, 0.0),
        (DPBoostingClassifier(epsilon=target, delta=0.0, bounds=(-1.0, 1.0), max_iter=2,
                              classes=[0, 1]), y, 0.0),
        (DPBoostingClassifier(epsilon=target, delta=1e-5, bounds=(-1.0, 1.0), max_iter=2,
                              classes=[0, 1]), y, 1e-5),
    ]
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy import PrivateMulticalibrator

    base = FrozenEstimator(LogisticRegression().fit(X, y))
    cases.append((PrivateMulticalibrator(base, (), n_bins=2, mechanism="numeric_sparse",
                                         epsilon=target, max_updates=2), y, 0.0))
    for est, target_y, delta in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = est.fit(X) if target_y is None else est.fit(X, target_y)
        assert fitted.epsilon_ == pytest.approx(target.epsilon(delta), rel=1e-9), est
        assert privacy_claim(fitted).max_tpr(0.01) <= 0.05 + 1e-9, est
