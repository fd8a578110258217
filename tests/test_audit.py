import numpy as np
import pytest
from scipy.stats import beta
from sklearn.base import BaseEstimator

from sklearn_privacy.attacks import (
    CanaryAuditResult,
    canary_audit,
    epsilon_lower_bound,
    evaluate_scores,
)


# ------------------------------------------------------------------ epsilon_lower_bound
def _hand_bound(tp, fp, n_pos, n_neg, delta, confidence):
    """The bound by hand: Clopper-Pearson upper limits at level (1 - confidence) / 2."""
    a = (1 - confidence) / 2
    fpr_hi = 1.0 if fp == n_neg else beta.ppf(1 - a, fp + 1, n_neg - fp)
    fn = n_pos - tp
    fnr_hi = 1.0 if fn == n_pos else beta.ppf(1 - a, fn + 1, n_pos - fn)
    cands = [0.0]
    if 1 - delta - fnr_hi > 0:
        cands.append(np.log((1 - delta - fnr_hi) / fpr_hi))
    if 1 - delta - fpr_hi > 0:
        cands.append(np.log((1 - delta - fpr_hi) / fnr_hi))
    return max(cands), 1 - fnr_hi, fpr_hi


@pytest.mark.parametrize("delta, confidence", [(0.0, 0.95), (1e-3, 0.99), (0.05, 0.9)])
def test_bound_equals_hand_computation(delta, confidence):
    rng = np.random.RandomState(0)
    scores = np.r_[rng.normal(2.0, 1.0, 300), rng.normal(0.0, 1.0, 300)]
    members = np.r_[np.ones(300, int), np.zeros(300, int)]   # 0/1 like roc_curve's y_true
    res = epsilon_lower_bound(members=members, scores=scores, delta=delta,
                              confidence=confidence, random_state=1)
    # recount the evaluation part independently: the split is the documented one
    split = np.random.RandomState(1)
    pos, neg = scores[:300], scores[300:]
    e_pos = np.sort(split.permutation(300)[150:])
    e_neg = np.sort(split.permutation(300)[150:])
    assert res.orientation == "greater"
    tp = int(np.sum(pos[e_pos] >= res.threshold))
    fp = int(np.sum(neg[e_neg] >= res.threshold))
    assert (res.true_positives, res.false_positives) == (tp, fp)
    assert (res.n_positive, res.n_negative) == (150, 150)
    eps, tpr_lo, fpr_hi = _hand_bound(tp, fp, 150, 150, delta, confidence)
    assert res.epsilon_lower_bound == pytest.approx(eps, abs=1e-12)
    assert res.tpr_lower == pytest.approx(tpr_lo, abs=1e-12)
    assert res.fpr_upper == pytest.approx(fpr_hi, abs=1e-12)
    assert res.epsilon_lower_bound > 0.5  # a separation of 2 standard deviations shows


def test_known_counts_and_reversed_orientation():
    # hand-made counts: perfect separation with low scores pointing to D'
    scores = np.r_[np.zeros(40), np.ones(40)]
    members = np.r_[np.ones(40, bool), np.zeros(40, bool)]
    res = epsilon_lower_bound(members=members, scores=scores, random_state=0)
    assert res.orientation == "less"
    assert (res.true_positives, res.false_positives) == (20, 0)
    # FPR_hi = 1 - 0.025^(1/20) (zero false positives), TPR_lo = 0.025^(1/20)
    fpr_hi = 1 - 0.025 ** (1 / 20)
    assert res.fpr_upper == pytest.approx(fpr_hi, rel=1e-10)
    assert res.epsilon_lower_bound == pytest.approx(np.log((1 - fpr_hi) / fpr_hi), rel=1e-10)


def test_from_membership_result_uses_its_split():
    rng = np.random.RandomState(0)
    mi = evaluate_scores(np.arange(800) < 400,
                         np.r_[rng.normal(1.0, 1, 400), rng.normal(0.0, 1, 400)],
                         random_state=0)
    res = epsilon_lower_bound(mi, delta=1e-5)
    a = mi.scores_members[mi.eval_members]
    b = mi.scores_nonmembers[mi.eval_nonmembers]
    tp, fp = int(np.sum(a >= res.threshold)), int(np.sum(b >= res.threshold))
    assert (res.true_positives, res.false_positives) == (tp, fp)
    assert res.epsilon_lower_bound == pytest.approx(
        _hand_bound(tp, fp, a.size, b.size, 1e-5, 0.95)[0], abs=1e-12)


def test_no_signal_gives_a_bound_near_zero():
    rng = np.random.RandomState(3)
    s = rng.normal(size=2000)
    res = epsilon_lower_bound(members=np.arange(2000) < 1000, scores=s, random_state=0)
    assert res.epsilon_lower_bound < 0.15


def test_coverage_on_randomised_response():
    """Over repeated audits of an exactly eps-DP mechanism, the bound stays below eps."""
    eps = 1.0
    p = np.exp(eps) / (1 + np.exp(eps))
    rng = np.random.RandomState(0)
    bounds = []
    for r in range(40):
        s = np.r_[rng.uniform(size=500) < p, rng.uniform(size=500) < 1 - p].astype(float)
        members = np.arange(1000) < 500
        bounds.append(epsilon_lower_bound(members=members, scores=s,
                                          random_state=r).epsilon_lower_bound)
    bounds = np.array(bounds)
    assert np.mean(bounds > eps) <= 0.05 + 1e-12  # at most the 5% allowed
    assert np.median(bounds) > 0.5                 # and the test is not vacuous


def test_epsilon_lower_bound_bad_input():
    s, lab = np.arange(10.0), np.r_[np.ones(5, bool), np.zeros(5, bool)]
    with pytest.raises(ValueError, match="'delta' parameter"):
        epsilon_lower_bound(members=lab, scores=s, delta=1.0)
    with pytest.raises(ValueError, match="'confidence' parameter"):
        epsilon_lower_bound(members=lab, scores=s, confidence=1.0)
    with pytest.raises(ValueError, match="members must be 1-D with one entry per"):
        epsilon_lower_bound(members=lab[:-1], scores=s)
    with pytest.raises(ValueError, match="members must be boolean"):
        epsilon_lower_bound(members=np.arange(10), scores=s)
    with pytest.raises(ValueError, match="members is None"):
        epsilon_lower_bound(members=None, scores=s)
    with pytest.raises(ValueError, match="scores"):
        epsilon_lower_bound(members=lab, scores=np.r_[s[:-1], np.nan])
    with pytest.raises(ValueError, match="or members and scores"):
        epsilon_lower_bound()
    with pytest.raises(ValueError, match="not both"):
        epsilon_lower_bound(evaluate_scores(lab, s, random_state=0), members=lab, scores=s)
    with pytest.raises(TypeError, match="'result' parameter"):
        epsilon_lower_bound({"auc": 1.0})
    with pytest.raises(ValueError, match="members: 1 member"):
        epsilon_lower_bound(members=lab[[0, 5, 6, 7, 8]], scores=s[:5])


# ------------------------------------------------------------------ canary_audit
class _NoisyMean(BaseEstimator):
    """Laplace mechanism on the mean of the first column (values in [0, 1])."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X, y=None):
        rng = np.random.RandomState(self.random_state)
        self.mean_ = np.asarray(X)[:, 0].mean() + rng.laplace(0, 1 / (len(X) * self.epsilon))
        self.epsilon_ = self.epsilon
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)

    def __sklearn_privacy_attributes__(self):
        return {"mean_": "dp", "epsilon_": "constant"}


def _mean(est):
    return est.mean_


@pytest.mark.statistical
def test_canary_audit_places_a_frame_replacement_by_column_name():
    """A replacement row given as a DataFrame or Series is aligned on X's column names.

    Before, its values were written by position: with its columns in another order the
    canary silently went into the wrong columns (here the audited mean did not move at
    all instead of by 1/10), and other names were not noticed.
    """
    pd = pytest.importorskip("pandas")
    X, y = pd.DataFrame({"a": np.zeros(10), "b": np.zeros(10)}), np.zeros(10)
    ordered = canary_audit(_NoisyMean(1.0), X, y, 3, pd.DataFrame({"a": [1.0], "b": [0.0]}),
                           0.0, attack=_mean, n_releases=1000, random_state=0)
    for row in (pd.DataFrame({"b": [0.0], "a": [1.0]}), pd.Series({"b": 0.0, "a": 1.0})):
        swapped = canary_audit(_NoisyMean(1.0), X, y, 3, row, 0.0, attack=_mean,
                               n_releases=1000, random_state=0)
        np.testing.assert_array_equal(swapped.statistics_replaced,
                                      ordered.statistics_replaced)
    assert abs(np.median(ordered.statistics_replaced)
               - np.median(ordered.statistics_original) - 0.1) < 0.02
    with pytest.raises(ValueError, match=r"x_replacement lacks the columns \['b'\] of X"):
        canary_audit(_NoisyMean(1.0), X, y, 3, pd.DataFrame({"a": [1.0], "c": [0.0]}), 0.0,
                     attack=_mean, n_releases=20, random_state=0)


@pytest.mark.statistical
def test_canary_audit_of_a_laplace_mechanism_is_tight_and_catches_a_lie():
    X, y = np.zeros((10, 1)), np.zeros(10)
    ok = canary_audit(_NoisyMean(1.0), X, y, 3, [1.0], 0.0, attack=_mean,
                      n_releases=1000, random_state=0)
    assert isinstance(ok, CanaryAuditResult)
    assert ok.claimed_epsilon == 1.0 and ok.claimed_delta == 0.0  # pure DP
    assert 0.6 < ok.epsilon_lower_bound <= 1.0 and not ok.violates_claim
    # the releases: D' moves the mean by exactly 1/10
    assert abs(np.median(ok.statistics_replaced) - np.median(ok.statistics_original)
               - 0.1) < 0.02

    class _Liar(_NoisyMean):
        def fit(self, X, y=None):
            super().fit(X, y)
            self.epsilon_ = self.epsilon / 4   # claims 4x more privacy than it gives
            return self

    lie = canary_audit(_Liar(1.0), X, y, 3, [1.0], 0.0, attack=_mean, n_releases=1000,
                       random_state=0)
    assert lie.claimed_epsilon == 0.25 and lie.violates_claim
    # the default statistic (the output at the canary) sees the same thing
    default = canary_audit(_NoisyMean(1.0), X, y, 3, [1.0], 0.0, n_releases=1000,
                           random_state=0)
    np.testing.assert_array_equal(default.statistics_original, ok.statistics_original)


def test_canary_audit_parallel_and_sequential_agree(capsys):
    X, y = np.zeros((10, 1)), np.zeros(10)
    a = canary_audit(_NoisyMean(1.0), X, y, 0, [1.0], 0.0, attack=_mean, n_releases=20,
                     random_state=5)
    assert capsys.readouterr().out == ""                 # verbose=0: silent
    b = canary_audit(_NoisyMean(1.0), X, y, 0, [1.0], 0.0, attack=_mean, n_releases=20,
                     random_state=5, n_jobs=2, verbose=1)
    # 40 releases, a line after every fourth (the parent process prints, as they arrive)
    assert capsys.readouterr().out.splitlines() == [
        f"[canary_audit] done {k} of 40 releases refitted" for k in range(4, 41, 4)]
    np.testing.assert_array_equal(a.statistics_original, b.statistics_original)
    np.testing.assert_array_equal(a.statistics_replaced, b.statistics_replaced)
    # distinct seeds per release
    assert np.unique(np.r_[a.statistics_original, a.statistics_replaced]).size == 40


def test_canary_audit_on_frames_and_sparse():
    pd = pytest.importorskip("pandas")
    import scipy.sparse as sp

    X = np.zeros((10, 2))
    frame = pd.DataFrame(X, columns=["a", "b"])
    r = canary_audit(_NoisyMean(1.0), frame, np.zeros(10), 2, [1.0, 0.0], 0.0,
                     attack=lambda e: e.mean_, n_releases=10, random_state=0)
    dense = canary_audit(_NoisyMean(1.0), X, np.zeros(10), 2, [1.0, 0.0], 0.0,
                         attack=lambda e: e.mean_, n_releases=10, random_state=0)
    np.testing.assert_allclose(r.statistics_replaced, dense.statistics_replaced)

    class _SparseMean(_NoisyMean):
        def fit(self, X, y=None):
            return super().fit(np.asarray(X.todense()), y)

    s = canary_audit(_SparseMean(1.0), sp.csr_matrix(X), np.zeros(10), 2, [1.0, 0.0], 0.0,
                     attack=lambda e: e.mean_, n_releases=10, random_state=0)
    np.testing.assert_allclose(s.statistics_replaced, dense.statistics_replaced)


def test_canary_audit_bad_input():
    X, y = np.zeros((10, 1)), np.zeros(10)
    est = _NoisyMean(1.0)
    with pytest.raises(ValueError, match="index"):
        canary_audit(est, X, y, 10, [1.0], 0.0)
    with pytest.raises(TypeError, match="index"):
        canary_audit(est, X, y, 1.5, [1.0], 0.0)
    with pytest.raises(ValueError, match="x_replacement"):
        canary_audit(est, X, y, 0, [1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="y_replacement"):
        canary_audit(est, X, y.astype(int), 0, [1.0], 0.5)
    with pytest.raises(ValueError, match="n_releases"):
        canary_audit(est, X, y, 0, [1.0], 0.0, n_releases=2)
    with pytest.raises(TypeError, match="attack"):
        canary_audit(est, X, y, 0, [1.0], 0.0, attack="mean_")
    with pytest.raises(ValueError, match="attack"):
        canary_audit(est, X, y, 0, [1.0], 0.0, attack=lambda e: np.nan, n_releases=4)
    with pytest.raises(ValueError, match="attack"):
        canary_audit(est, X, y, 0, [1.0], 0.0, attack=lambda e: [1.0, 2.0], n_releases=4)
    with pytest.raises(ValueError, match="y must be 1-D"):
        canary_audit(est, X, y[:-1], 0, [1.0], 0.0)
    with pytest.raises(ValueError, match="delta"):
        canary_audit(est, X, y, 0, [1.0], 0.0, delta=-0.1)


def test_canary_audit_of_a_pipeline_reseeds_the_final_step_and_reads_its_claim():
    """A Pipeline's releases get their own noise and the final step's claim.

    Regression: only a top-level ``random_state`` was reseeded, so every release of a
    pipeline ending in a fixed-seed FIL model had the same noise (all statistics equal),
    and the claim (``epsilon_`` of the final step) was reported as None.
    """
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_privacy import FILLogisticRegression

    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), FILLogisticRegression(
        sigma=1.0, fit_intercept=False, data_norm=5.0, alpha=1.0, random_state=0))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = canary_audit(pipe, X, y, 0, -X[0], 1 - y[0], n_releases=20, random_state=0,
                           attack=lambda p: float(p[-1].coef_.ravel()[0]))
    assert np.unique(res.statistics_original).size == 20
    assert np.unique(res.statistics_replaced).size == 20
    final = clone(pipe).fit(X, y)[-1]
    assert np.isfinite(final.epsilon_)   # the model's own claim, for the rows it receives
    # the published pipeline's claim: the scaler was fitted on the rows -> inf, named
    assert res.claimed_epsilon == np.inf and not res.violates_claim
    assert "standardscaler" in res.claim.reasons[0]
