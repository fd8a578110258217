import numpy as np
import pytest
from scipy.stats import beta
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from sklearn_privacy import PrivateMulticalibrator
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.mechanisms import NumericSparse
from sklearn_privacy.metrics import multicalibration_error
from sklearn_privacy.multicalibration import (
    GradientDescentLogisticRegression,
    Group,
    conjunction_groups,
    membership_matrix,
)
from sklearn_privacy.multicalibration import _multicalibrator as mc_module


@pytest.fixture(scope="module")
def adult():
    tr, te = load_adult(), load_adult(subset="test")
    mu, sd = tr.data.mean(0), tr.data.std(0)
    sd[sd == 0] = 1
    sens = tr.sensitive_columns
    cols = sens["race"] + sens["sex"]
    # all columns standardised (the paper's base input) + raw indicators for the groups
    Xtr = np.hstack([(tr.data - mu) / sd, tr.data[:, cols]])
    Xte = np.hstack([(te.data - mu) / sd, te.data[:, cols]])
    d = tr.data.shape[1]
    remap = {j: d + k for k, j in enumerate(cols)}
    groups = conjunction_groups({"race": [remap[j] for j in sens["race"]],
                                 "sex": [remap[j] for j in sens["sex"]]}, max_order=2)
    keep = ColumnTransformer([("features", "passthrough", list(range(d)))])
    weak = make_pipeline(keep, GradientDescentLogisticRegression()).fit(Xtr, tr.target)
    strong = make_pipeline(keep, LogisticRegression(max_iter=1000)).fit(Xtr, tr.target)
    return Xtr, tr.target, Xte, te.target, groups, weak, strong


def test_non_private_weak_base_reaches_paper_accuracy(adult):
    Xtr, ytr, Xte, yte, groups, weak, strong = adult
    assert weak.score(Xte, yte) == pytest.approx(0.80, abs=0.01)  # the weak base
    mc = PrivateMulticalibrator(weak, groups, alpha=0.1, prefit=True).fit(Xtr, ytr)
    assert mc.score(Xte, yte) >= 0.835
    M = membership_matrix(mc.groups_, Xtr)
    err = multicalibration_error(ytr, mc.predict_proba(Xtr)[:, 1], M,
                                 min_size=mc.min_cell_size_)
    assert err <= 0.1  # every training cell with >= m members within alpha
    before = multicalibration_error(ytr, weak.predict_proba(Xtr)[:, 1], M,
                                    min_size=mc.min_cell_size_)
    assert before > 0.1
    mc2 = PrivateMulticalibrator(strong, groups, alpha=0.1, prefit=True).fit(Xtr, ytr)
    assert abs(mc2.score(Xte, yte) - strong.score(Xte, yte)) <= 0.002


def test_numeric_sparse_accuracy_and_budget(adult):
    Xtr, ytr, Xte, yte, groups, weak, strong = adult
    weak_acc, strong_acc = [], []
    for seed in range(20):
        a = PrivateMulticalibrator(weak, groups, mechanism="numeric_sparse", epsilon=1.0,
                                   prefit=True, random_state=seed).fit(Xtr, ytr)
        b = PrivateMulticalibrator(strong, groups, mechanism="numeric_sparse", epsilon=1.0,
                                   prefit=True, random_state=seed).fit(Xtr, ytr)
        assert a.epsilon_spent_ <= 1.0 and b.epsilon_spent_ <= 1.0
        assert a.n_updates_ <= a.max_updates_
        weak_acc.append(a.score(Xte, yte))
        strong_acc.append(b.score(Xte, yte))
    assert np.median(weak_acc) >= 0.83
    assert min(strong_acc) >= strong.score(Xte, yte) - 0.01


def test_replay_equals_fit_time_predictions():
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=3000), rng.randint(0, 2, 3000), rng.randint(0, 2, 3000)])
    y = (rng.uniform(size=3000) < 0.2 + 0.6 * (X[:, 1] * (X[:, 0] > 0))).astype(int)
    base = LogisticRegression().fit(X, y)
    mc = PrivateMulticalibrator(base, [1, 2, (1, 2)], alpha=0.02, prefit=True).fit(X, y)
    assert mc.n_updates_ > 0
    # independent replay, one row at a time
    p = base.predict_proba(X)[:, 1].copy()
    M = membership_matrix(mc.groups_, X)
    for i in range(0, 3000, 97):
        q = p[i]
        for g, bucket, shift in mc.updates_:
            if M[i, g] and min(int(q * 10), 9) == bucket:
                q = min(max(q + shift, 0.0), 1.0)
        assert mc.predict_proba(X[i:i + 1])[0, 1] == pytest.approx(q, abs=1e-12)
    assert mc.groups_[0].name == "all"  # the whole population is updated first
    assert np.all((mc.predict_proba(X) >= 0) & (mc.predict_proba(X) <= 1))


def _audit_datasets():
    # One cell (single bucket, whole population); a constant base p = 0.5 except for the
    # two special rows: replacing (x = 1, y = 0, p = 1) by (x = 2, y = 1, p = 0) moves the
    # residual sum by the full sensitivity 2.
    X = np.zeros((30, 1))
    y = np.r_[np.ones(20), np.zeros(10)].astype(int)
    X1, y1 = X.copy(), y.copy()
    X1[-1, 0], y1[-1] = 1.0, 0
    X2, y2 = X.copy(), y.copy()
    X2[-1, 0], y2[-1] = 2.0, 1
    return (X1, y1), (X2, y2)


class _StepBase(DummyClassifier):
    def predict_proba(self, X):
        p = np.where(X[:, 0] == 1.0, 1.0, np.where(X[:, 0] == 2.0, 0.0, 0.5))
        return np.column_stack([1 - p, p])


def _events(data, runs, seed0):
    (X, y) = data
    base = _StepBase().fit(X, y)
    out = np.empty(runs, dtype=int)
    edges = np.array([-0.2, 0.0, 0.2])
    for r in range(runs):
        mc = PrivateMulticalibrator(base, (), n_bins=1, mechanism="numeric_sparse",
                                    epsilon=1.0, max_updates=1, min_cell_size=1,
                                    threshold=5.0, max_rounds=1, prefit=True,
                                    random_state=seed0 + r).fit(X, y)
        out[r] = 0 if not mc.updates_ else 1 + np.searchsorted(edges, mc.updates_[0][2])
    return np.bincount(out, minlength=5)


def _max_log_ratio_lower_bound(a, b, runs, conf=1e-3):
    best = -np.inf
    for k1, k2 in ((a, b), (b, a)):
        for e in range(len(k1)):
            if k1[e] == 0:
                continue
            lo = beta.ppf(conf, k1[e], runs - k1[e] + 1)          # lower bound of p
            hi = beta.ppf(1 - conf, k2[e] + 1, runs - k2[e])       # upper bound of q
            best = max(best, np.log(lo / hi))
    return best


class _BrokenNumericSparse(NumericSparse):
    """Budget accounting off by 10x: the noise of an epsilon = 10 mechanism."""

    def __init__(self, epsilon, *args, **kwargs):
        super().__init__(epsilon * 10, *args, **kwargs)
        self.epsilon = epsilon

    def query(self, test_value, answer_values):
        answer = super().query(test_value, answer_values)
        self.epsilon_spent_ = self.epsilon
        return answer


@pytest.mark.parametrize("broken", [False, True])
def test_privacy_audit_on_neighbouring_calibration_sets(broken, monkeypatch):
    if broken:
        monkeypatch.setattr(mc_module, "NumericSparse", _BrokenNumericSparse)
    runs = 1500
    d1, d2 = _audit_datasets()
    a, b = _events(d1, runs, 0), _events(d2, runs, 10_000)
    bound = _max_log_ratio_lower_bound(a, b, runs)
    if broken:
        assert bound > 1.0       # the audit catches a mechanism that under-noises
    else:
        assert bound <= 1.0      # empirical privacy loss within the claimed epsilon


def test_input_perturbation_is_reported_honestly():
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=2000), rng.randint(0, 2, 2000)])
    y = (rng.uniform(size=2000) < 0.3 + 0.4 * X[:, 1]).astype(int)
    mc = PrivateMulticalibrator(LogisticRegression(), [1], mechanism="input_perturbation",
                                epsilon=1.0, delta=1e-3, random_state=0).fit(X, y)
    expected = np.sqrt(8 * 1500 * np.log(1e3) / (2000 * 1999))
    assert mc.feature_noise_std_ == pytest.approx(expected)
    assert mc.epsilon_spent_ == np.inf  # labels are used exactly: no end-to-end claim


def test_groups_and_metric():
    X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 0]], float)
    g = conjunction_groups([[0], [1, 2]], max_order=2)
    assert [grp.spec for grp in g] == [(0,), (1,), (2,), (0, 1), (0, 2)]
    M = membership_matrix(g, X)
    assert M[:, 3].tolist() == [False, True, False, False]
    call = Group(lambda Z: Z[:, 2] > 0.5, name="c2")
    assert call.mask(X).tolist() == [True, False, True, False]
    y = np.array([1, 0, 1, 0])
    p = np.array([0.9, 0.2, 0.6, 0.1])
    assert multicalibration_error(y, p, n_bins=2) == pytest.approx(
        max(abs(np.mean([0 - 0.2, 0 - 0.1])), abs(np.mean([1 - 0.9, 1 - 0.6]))))
    with pytest.raises(ValueError, match="weighting"):
        multicalibration_error(y, p, weighting="mean")
    with pytest.raises(ValueError, match="probabilities"):
        multicalibration_error(y, p + 1)


def test_bad_input():
    X = np.random.RandomState(0).normal(size=(50, 2))
    y = np.arange(50) % 2
    with pytest.raises(ValueError, match="binary"):
        PrivateMulticalibrator().fit(X, np.arange(50) % 3)
    with pytest.raises(ValueError, match="alpha"):
        PrivateMulticalibrator(alpha=0).fit(X, y)
    with pytest.raises(ValueError, match="mechanism"):
        PrivateMulticalibrator(mechanism="laplace").fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        PrivateMulticalibrator(groups=[5]).fit(X, y)
    with pytest.raises(TypeError, match="A group must be"):
        PrivateMulticalibrator(groups=["sex"]).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        NumericSparse(0.0, 1, 1.0, 1.0, [1.0])
