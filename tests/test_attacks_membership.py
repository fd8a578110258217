import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy.attacks import evaluate_scores, membership_inference, membership_scores


def _pool(s_in, s_out):
    """(members, scores): the members' scores first, then the non-members'."""
    s_in, s_out = np.asarray(s_in, float), np.asarray(s_out, float)
    return np.r_[np.ones(s_in.size, bool), np.zeros(s_out.size, bool)], np.r_[s_in, s_out]


def _data(n=400, seed=0, k=3):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    y = np.digitize(X[:, 0] + rng.normal(size=n), [-0.5, 0.5]) if k == 3 else \
        (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_scores_match_their_definitions():
    X, y = _data()
    clf = LogisticRegression().fit(X, y)
    P = clf.predict_proba(X)
    py = P[np.arange(len(y)), y]
    assert np.allclose(membership_scores(clf, X, y, attack="confidence"), py)
    assert np.allclose(membership_scores(clf, X, y, attack="loss"), np.log(py))
    assert np.allclose(membership_scores(clf, X, y, attack="entropy"),
                       np.sum(P * np.log(P), axis=1))
    mentr = np.array([
        -(1 - P[i, y[i]]) * np.log(P[i, y[i]])
        - sum(P[i, j] * np.log(1 - P[i, j]) for j in range(3) if j != y[i])
        for i in range(len(y))
    ])
    assert np.allclose(membership_scores(clf, X, y, attack="modified_entropy"), -mentr)
    assert np.array_equal(membership_scores(clf, X, y, attack="gap"),
                          (clf.predict(X) == y).astype(float))
    reg = LinearRegression().fit(X, X[:, 0])
    assert np.allclose(membership_scores(reg, X, X[:, 0], attack="loss"),
                       -(reg.predict(X) - X[:, 0]) ** 2)


def test_separable_and_identical_scores():
    rng = np.random.RandomState(0)
    res = evaluate_scores(*_pool(rng.uniform(2, 3, 200), rng.uniform(0, 1, 200)),
                          random_state=0)
    assert res.balanced_accuracy == 1.0 and res.advantage == 1.0 and res.auc == 1.0
    assert res.tpr_at_fpr[0.01] == 1.0
    # 100 evaluation non-members do not resolve an FPR of 0.1%
    assert np.isnan(res.tpr_at_fpr[0.001])
    same = evaluate_scores(np.arange(8000) < 4000, rng.normal(size=8000), random_state=0)
    assert abs(same.balanced_accuracy - 0.5) < 0.03 and abs(same.auc - 0.5) < 0.03


def test_auc_and_advantage_against_sklearn():
    rng = np.random.RandomState(1)
    s_in, s_out = rng.normal(0.5, 1, 300), rng.normal(0, 1, 300)
    res = evaluate_scores(*_pool(s_in, s_out), random_state=3)
    a, b = s_in[res.eval_members], s_out[res.eval_nonmembers]
    labels = np.r_[np.ones(a.size), np.zeros(b.size)]
    assert res.auc == pytest.approx(roc_auc_score(labels, np.r_[a, b]), abs=1e-12)
    thr = np.unique(np.r_[a, b])
    adv = max(np.mean(a >= t) - np.mean(b >= t) for t in thr)
    assert res.advantage == pytest.approx(adv, abs=1e-12)


def test_overfit_tree_leaks_and_per_class_thresholds():
    X, y = _data(n=600)
    members = np.arange(600) < 300
    tree = DecisionTreeClassifier(random_state=0).fit(X[:300], y[:300])
    res = membership_inference(tree, X, y, members, attack="gap", random_state=0)
    assert list(res.thresholds) == [None]   # "auto": the gap attack is one rule
    explicit = membership_inference(tree, X, y, members, attack="gap", thresholds="global",
                                    random_state=0)
    assert (res.thresholds, res.balanced_accuracy) == (explicit.thresholds,
                                                       explicit.balanced_accuracy)
    train_acc, test_acc = 1.0, tree.score(X[300:], y[300:])
    # the gap attack's balanced accuracy is 1/2 + (train acc - test acc)/2
    assert res.balanced_accuracy == pytest.approx(0.5 + (train_acc - test_acc) / 2, abs=0.06)
    lr = LogisticRegression(C=1e4).fit(X[:300], y[:300])
    per = membership_inference(lr, X, y, members, random_state=0)
    assert set(per.thresholds) == {0, 1, 2}
    glob = membership_inference(lr, X, y, members, thresholds="global", random_state=0)
    assert list(glob.thresholds) == [None]
    # the default is documented: "auto" is "per_class" with labels, "global" without
    explicit = membership_inference(lr, X, y, members, thresholds="per_class",
                                    random_state=0)
    assert explicit.thresholds == per.thresholds
    assert explicit.balanced_accuracy == per.balanced_accuracy
    scores = membership_scores(lr, X, y)
    assert evaluate_scores(members, scores, y=y, random_state=0).thresholds == per.thresholds
    assert (evaluate_scores(members, scores, random_state=0).thresholds
            == glob.thresholds)
    # an explicit choice is honoured, also for the gap attack
    gap_per = membership_inference(tree, X, y, members, attack="gap",
                                   thresholds="per_class", random_state=0)
    assert set(gap_per.thresholds) == {0, 1, 2}


def test_bad_input():
    X, y = _data()
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="'attack' parameter of membership_scores"):
        membership_scores(clf, X, y, attack="shadow")
    with pytest.raises(ValueError, match="not trained on"):
        membership_scores(clf, X, np.full(len(y), 7))
    reg = LinearRegression().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="attack='loss'"):
        membership_scores(reg, X, X[:, 0], attack="confidence")
    svc = LinearSVC().fit(X, y)
    for attack in ("confidence", "entropy", "modified_entropy"):
        with pytest.raises(ValueError, match="needs a classifier with predict_proba"):
            membership_inference(svc, X, y, np.arange(400) < 200, attack=attack)
    # without probabilities the gap attack still runs
    assert np.array_equal(membership_scores(svc, X, y, attack="gap"),
                          (svc.predict(X) == y).astype(float))
    members = np.arange(400) < 200
    with pytest.raises(ValueError, match="'thresholds' parameter"):
        membership_inference(clf, X, y, members, thresholds="none")
    with pytest.raises(ValueError, match="known_fraction"):
        membership_inference(clf, X, y, members, known_fraction=1.0)
    with pytest.raises(ValueError, match="at least 2"):
        evaluate_scores([True, False, False], [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="per_class' needs y"):
        evaluate_scores(members, np.arange(400.0), thresholds="per_class")
    with pytest.raises(ValueError, match="members must be boolean"):
        evaluate_scores(np.full(400, 2), np.arange(400.0))
    with pytest.raises(ValueError, match="members must be 1-D with one entry per"):
        evaluate_scores(members[:-1], np.arange(400.0))
