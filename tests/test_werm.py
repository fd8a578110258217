import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.utils.validation import has_fit_parameter

from sklearn_privacy import WERMClassifier
from sklearn_privacy.werm import (
    effective_sample_size,
    epsilon_ratio,
    generalization_bound,
    weight_for_setting,
)


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _lr():
    return LogisticRegression(tol=1e-12, max_iter=10_000)


def test_two_groups_equal_explicit_weights():
    X, y = _data()
    g = np.r_[np.zeros(100, int), np.ones(200, int)]
    w = 0.3
    clf = WERMClassifier(_lr(), w=w).fit(X, y, data_source=g)
    explicit = np.where(g == 0, (1 - w) / 100, w / 200)
    explicit *= len(y) / explicit.sum()
    ref = _lr().fit(X, y, sample_weight=explicit)
    assert np.allclose(clf.estimator_.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert np.allclose(clf.sample_weight_, explicit)
    assert clf.sample_weight_.mean() == pytest.approx(1.0)
    assert clf.n_eff_ == pytest.approx(1 / ((1 - w) ** 2 / 100 + w**2 / 200))
    assert clf.epsilon_ratio_ == pytest.approx((1 - w) / w * 200 / 100)
    # the weighting really changes the model (not a no-op)
    assert not np.allclose(clf.estimator_.coef_, _lr().fit(X, y).coef_, rtol=1e-3)


def test_three_groups_and_user_weights():
    X, y = _data()
    g = np.repeat(["a", "b", "c"], [50, 100, 150])
    gw = {"a": 0.2, "b": 0.5, "c": 0.3}
    sw = np.random.RandomState(1).uniform(0.5, 2.0, size=len(y))
    clf = WERMClassifier(_lr(), group_weights=gw).fit(X, y, data_source=g, sample_weight=sw)
    explicit = np.empty(len(y))
    for label, weight in gw.items():
        m = g == label
        explicit[m] = weight * sw[m] / sw[m].sum()
    explicit *= sw.sum() / explicit.sum()
    ref = _lr().fit(X, y, sample_weight=explicit)
    assert np.allclose(clf.estimator_.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert list(clf.group_labels_) == ["a", "b", "c"]
    assert np.allclose(clf.group_weights_, [0.2, 0.5, 0.3])
    assert np.isnan(clf.epsilon_ratio_)
    exposure = np.array([0.2, 0.5, 0.3]) / clf.group_sizes_
    assert np.allclose(clf.relative_epsilon_, exposure / exposure.max())


def test_no_data_source_is_plain_erm_and_weight_zero_groups_may_be_absent():
    X, y = _data()
    plain = _lr().fit(X, y)
    for clf in (WERMClassifier(_lr()).fit(X, y),
                WERMClassifier(_lr(), w=0.0).fit(X, y, data_source=np.zeros(len(y), int))):
        assert np.allclose(clf.estimator_.coef_, plain.coef_, rtol=1e-8)
        assert clf.n_eff_ == pytest.approx(len(y))
    # w = 1 with only reference rows also equals plain ERM on them
    clf = WERMClassifier(_lr(), w=1.0).fit(X, y, data_source=np.ones(len(y), int))
    assert np.allclose(clf.estimator_.coef_, plain.coef_, rtol=1e-8)
    # integer sample_weight is the same as repeating rows, inside WERM too
    g = np.arange(len(y)) % 2
    reps = np.random.RandomState(0).randint(1, 4, size=len(y))
    a = WERMClassifier(_lr(), w=0.3).fit(X, y, data_source=g, sample_weight=reps)
    b = WERMClassifier(_lr(), w=0.3).fit(np.repeat(X, reps, axis=0), np.repeat(y, reps),
                                         data_source=np.repeat(g, reps))
    assert np.allclose(a.estimator_.coef_, b.estimator_.coef_, rtol=1e-6)
    assert np.allclose(a.group_sizes_, b.group_sizes_) and a.n_eff_ == pytest.approx(b.n_eff_)


def test_three_groups_plain_equal_explicit_weights():
    X, y = _data(n=360)
    g = np.repeat([0, 1, 2], [60, 120, 180])
    gw = {0: 0.5, 1: 0.3, 2: 0.2}
    clf = WERMClassifier(_lr(), group_weights=gw).fit(X, y, data_source=g)
    sizes = np.array([60, 120, 180])
    explicit = np.array([gw[k] for k in g]) / sizes[g]
    explicit *= len(y) / explicit.sum()
    ref = _lr().fit(X, y, sample_weight=explicit)
    assert np.allclose(clf.estimator_.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert np.allclose(clf.estimator_.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    assert clf.n_eff_ == pytest.approx(1 / np.sum(np.array([0.5, 0.3, 0.2]) ** 2 / sizes))
    # the weights really differ from the size-proportional ones (not plain ERM)
    assert not np.allclose(clf.estimator_.coef_, _lr().fit(X, y).coef_, rtol=1e-3)


def test_weight_zero_group_is_dropped_and_scale_is_mean_one_over_kept_rows():
    X, y = _data()
    g = np.r_[np.zeros(100, int), np.ones(200, int)]
    for w, rows in ((0.0, g == 0), (1.0, g == 1)):
        # C = 0.1 makes the regularisation strength visible: a weight scale other than
        # mean 1 over the rows actually fitted would change the coefficients
        clf = WERMClassifier(LogisticRegression(C=0.1, tol=1e-12, max_iter=10_000), w=w)
        clf.fit(X, y, data_source=g)
        plain = LogisticRegression(C=0.1, tol=1e-12, max_iter=10_000).fit(X[rows], y[rows])
        assert np.allclose(clf.estimator_.coef_, plain.coef_, rtol=1e-8)
        assert np.allclose(clf.sample_weight_[rows], 1.0)
        assert np.all(clf.sample_weight_[~rows] == 0)
    # user sample_weight with zeros: the remaining rows keep their total user weight
    sw = np.where(np.arange(len(y)) % 3 == 0, 0.0, 2.0)
    clf = WERMClassifier(_lr(), w=0.5).fit(X, y, data_source=g, sample_weight=sw)
    assert clf.sample_weight_.sum() == pytest.approx(sw.sum())
    assert np.all(clf.sample_weight_[sw == 0] == 0)


def test_delegation_and_clone():
    X, y = _data()
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    g = np.arange(len(y)) % 2
    inner = _lr()
    clf = WERMClassifier(inner, w=0.3).fit(X, y3, data_source=g)
    assert not hasattr(inner, "coef_")  # the given estimator is cloned, not fitted
    assert clf.estimator_ is not inner
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
        np.testing.assert_array_equal(getattr(clf, method)(X),
                                      getattr(clf.estimator_, method)(X))
    assert clf.predict_proba(X).shape == (len(y), 3)
    # methods the inner estimator lacks are not exposed
    nb = WERMClassifier(GaussianNB(), w=0.3).fit(X, y, data_source=g)
    assert not hasattr(nb, "decision_function") and hasattr(nb, "predict_proba")
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])


def test_zero_weight_rows_are_dropped():
    class Spy(ClassifierMixin, BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            self.n_seen_ = len(X)
            self.min_weight_ = sample_weight.min()
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])

    X, y = _data()
    g = np.r_[np.zeros(100, int), np.ones(200, int)]
    clf = WERMClassifier(Spy(), w=0.0).fit(X, y, data_source=g)
    assert clf.estimator_.n_seen_ == 100 and clf.estimator_.min_weight_ > 0
    assert clf.epsilon_ratio_ == np.inf


_SEEN = []


class _GroupSpy(ClassifierMixin, BaseEstimator):
    """Checks that every row's weight matches the group encoded in column 0 of X.

    The true group of a row travels inside X, so it is split exactly like X. WERM's weights
    come from ``data_source``; they are constant within each true group and in the ratio
    ``(1 - w) / N_T : w / N_R`` only if each fold's ``data_source`` holds exactly the
    groups of that fold's rows. The implied ``w`` and the fold size are recorded.
    """

    def fit(self, X, y, sample_weight=None):
        groups = X[:, 0].astype(int)
        n_r = np.sum(groups == 1)
        a, b = sample_weight[groups == 0], sample_weight[groups == 1]
        np.testing.assert_allclose(a, a[0])
        np.testing.assert_allclose(b, b[0])
        assert sample_weight.mean() == pytest.approx(1.0)
        _SEEN.append((round(b[0] * n_r / len(groups), 10), len(groups)))
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


@pytest.mark.parametrize("routing", [False, True])
def test_grid_search_splits_data_source_per_fold(routing):
    X, y = _data(n=240)
    g = np.random.RandomState(0).randint(0, 2, size=len(y))
    Xg = np.column_stack([g, X])  # the spy reads the true group of each row from X
    _SEEN.clear()
    with sklearn.config_context(enable_metadata_routing=routing):
        est = WERMClassifier(_GroupSpy())
        if routing:
            est.set_fit_request(data_source=True)
        grid = GridSearchCV(est, {"w": [0.2, 0.5, 0.7]}, error_score="raise",
                            cv=KFold(4, shuffle=True, random_state=0))
        grid.fit(Xg, y, data_source=g)
        # a misaligned data_source is caught by the spy (the check can fail)
        with pytest.raises(AssertionError):
            WERMClassifier(_GroupSpy(), w=0.2).fit(Xg, y, data_source=g[::-1])
        # cross_validate: the estimator of each fold saw exactly its training rows' groups
        est = WERMClassifier(_lr(), w=0.25)
        if routing:
            est.set_fit_request(data_source=True)
        cv = cross_validate(est, X, y, cv=KFold(3), return_estimator=True,
                            return_indices=True, params={"data_source": g})
    # 3 candidates x 4 folds of 180 rows, then the refit on all 240 rows
    seen = _SEEN[:13]
    assert sorted(seen[:12]) == sorted((w, 180) for w in (0.2, 0.5, 0.7) for _ in range(4))
    assert seen[12] == (grid.best_params_["w"], 240)
    for fold_est, train in zip(cv["estimator"], cv["indices"]["train"], strict=True):
        sizes = np.bincount(g[train], minlength=2).astype(float)
        assert np.array_equal(fold_est.group_sizes_, sizes)


def test_routing_without_request_raises():
    X, y = _data()
    g = np.zeros(len(y), int)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(Exception, match="data_source"):
            GridSearchCV(WERMClassifier(_lr()), {"w": [0.5]}, cv=2).fit(X, y, data_source=g)


def test_inner_max_iter_is_not_overridden_by_default():
    """Regression: the meta-estimator's max_iter collided with the inner estimator's.
    By default the inner estimator keeps its own value, and a search sets early stopping
    through estimator__max_iter, without any warning."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    X, y = _data()
    group = np.arange(len(y)) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = WERMClassifier(LogisticRegression(max_iter=3), w=0.5).fit(
            X, y, data_source=group)
        assert clf.estimator_.max_iter == 3 and clf.n_iter_.max() <= 3
        gs = GridSearchCV(WERMClassifier(LogisticRegression(), w=0.5),
                          {"estimator__max_iter": [2, 50]}, cv=2).fit(
            X, y, data_source=group)
    assert gs.best_estimator_.estimator_.max_iter in (2, 50)
    assert "max_iter" not in WERMClassifier().get_params()


def test_bad_input():
    X, y = _data()
    with pytest.raises(ValueError, match="entries but X has"):
        WERMClassifier().fit(X, y, data_source=np.zeros(10))
    with pytest.raises(ValueError, match="group_weights"):
        WERMClassifier(w=0.5).fit(X, y, data_source=np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="summing to 1"):
        WERMClassifier(group_weights={0: 0.5, 1: 0.6}).fit(
            X, y, data_source=np.arange(300) % 2)
    with pytest.raises(ValueError, match="not keys of"):
        WERMClassifier(group_weights={0: 1.0}).fit(X, y, data_source=np.arange(300) % 2)
    # a weighted group with no rows: explicit groups, all training but w = 1 (or 0.5)
    with pytest.raises(ValueError, match=r"\['1'\] have positive weight but no rows"):
        WERMClassifier(w=1.0).fit(X, y, data_source=np.zeros(len(y), int))
    with pytest.raises(ValueError, match="positive weight but no rows"):
        WERMClassifier(group_weights={0: 0.5, 1: 0.2, 2: 0.3}).fit(
            X, y, data_source=np.arange(len(y)) % 2)
    # weights that leave no rows for a weighted group
    g = np.arange(len(y)) % 2
    with pytest.raises(ValueError, match="all their sample_weight is 0"):
        WERMClassifier(w=0.5).fit(X, y, data_source=g, sample_weight=(g == 0).astype(float))
    # a base estimator without sample_weight
    with pytest.raises(TypeError, match="does not accept sample_weight"):
        WERMClassifier(KNeighborsClassifier()).fit(X, y, data_source=g)
    for bad_w in (1.5, -0.1):
        with pytest.raises(ValueError, match=r"'w' parameter of WERMClassifier.*\[0.0, 1.0\]"):
            WERMClassifier(w=bad_w).fit(X, y, data_source=g)
    with pytest.raises(ValueError, match="non-negative weights summing to 1"):
        WERMClassifier(group_weights={0: 1.2, 1: -0.2}).fit(X, y, data_source=g)
    with pytest.raises(ValueError, match="non-negative"):
        WERMClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="[Ss]ample weights must contain at least one non-zero"):
        WERMClassifier().fit(X, y, sample_weight=np.zeros(len(y)))


def test_theory_functions():
    assert effective_sample_size([100, 300], [0.25, 0.75]) == pytest.approx(400)
    # N_eff is maximal (= N) at w = N_R / N
    ws = np.linspace(0.01, 0.99, 99)
    neff = [effective_sample_size([100, 300], [1 - w, w]) for w in ws]
    assert ws[int(np.argmax(neff))] == pytest.approx(0.75)
    assert weight_for_setting("equal_privacy", 100, 300) == 0.75
    assert epsilon_ratio(0.75, 100, 300) == pytest.approx(1.0)
    assert weight_for_setting("public_reference", 1, 1) == 1.0
    assert weight_for_setting("high_reference_privacy", 1, 1) == 0.0
    b = [generalization_bound(10, 0.05, [1000, 1000], [1 - w, w]) for w in (0.5, 0.9, 0.99)]
    assert b[0] < b[1] < b[2]
    # closed form at equal weights: N_eff = N
    n, vc, delta = 2000, 10, 0.05
    expected = (2 * np.sqrt(vc / n) * np.sqrt(1 + np.log(n / vc))
                + np.sqrt(2 * np.log(2 / delta) / n))
    assert b[0] == pytest.approx(expected)
    with pytest.raises(ValueError, match="sum to 1"):
        effective_sample_size([10, 10], [0.5, 0.6])
    with pytest.raises(ValueError, match="'w' parameter of epsilon_ratio must be"):
        epsilon_ratio(1.5, 10, 10)


def _study():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "study_werm_mnist_adult.py"
    spec = importlib.util.spec_from_file_location("study_werm_mnist_adult", path)
    module = importlib.util.module_from_spec(spec)
    # the studies import benchmarks/_studies.py, on sys.path when they run as scripts
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


needs_weighted_mlp = pytest.mark.skipif(
    not has_fit_parameter(MLPClassifier(), "sample_weight"),
    reason="MLPClassifier.fit takes sample_weight from scikit-learn 1.7 on",
)


@needs_weighted_mlp
def test_study_example_smoke(tmp_path, capsys):
    out = _study().main(["--quick", "--n-per-part", "40", "--epochs", "3", "--n-jobs", "1",
                         "--out", str(tmp_path)])
    assert (tmp_path / "werm_tradeoff.png").stat().st_size > 0
    assert (tmp_path / "werm_results.csv").exists()
    # 2 data sets x 2 defenses x 5 weights x 1 seed
    assert len(out["records"]) == 20
    printed = capsys.readouterr().out
    assert "Table 2" in printed and "Table 3" in printed
    # Each record's figures against their definitions (replaces ``0 <= mia <= 1``, which
    # any probability meets). 40 rows per part: the attack picks its thresholds on a known
    # half and is scored on the other 20 members and 20 non-members, so a balanced
    # accuracy is (TP / 20 + TN / 20) / 2, a multiple of 1/40; the epsilon ratio is the
    # closed form of Theorem 3.2 for the two part sizes. Mutation check: recording the
    # attack's AUC (a multiple of 1/400) as ``mia_ref`` made this test fail.
    for r in out["records"]:
        assert r["eps_ratio"] == epsilon_ratio(r["w"], 40, 40)
        for key in ("mia_train", "mia_ref"):
            assert 0 <= r[key] <= 1
            assert 40 * r[key] == pytest.approx(round(40 * r[key]), abs=1e-9), (key, r)


@needs_weighted_mlp
@pytest.mark.slow
def test_study_five_seeds_mnist_and_adult(tmp_path):
    """The paper's study at CPU scale (5 seeds x 9 weights x MNIST-5k and Adult, WERM).

    Means over seeds of the per-class confidence attack's balanced accuracy.
    """
    module = _study()
    out = module.main(["--no-es", "--n-jobs", "2", "--out", str(tmp_path)])
    example = module.load_example("werm_mnist_adult")  # the study runs its code
    mean = {d: {r["w"]: r for r in example.mean_over_seeds(out["records"], d, "WERM",
                                                           example.WEIGHTS)}
            for d in ("MNIST", "Adult")}
    ws = list(example.WEIGHTS)
    mnist = mean["MNIST"]
    train = np.array([mnist[w]["mia_train"] for w in ws])
    ref = np.array([mnist[w]["mia_ref"] for w in ws])
    # leakage moves monotonically from the training rows to the reference rows
    assert np.all(np.diff(train) < 0), train
    assert np.all(np.diff(ref) > 0), ref
    assert train[0] - train[-1] > 0.05 and ref[-1] - ref[0] > 0.05
    # equal sizes: w = 0.5 is equal privacy
    assert abs(mnist[0.5]["mia_train"] - mnist[0.5]["mia_ref"]) < 0.015
    # reference rows help utility at every interior weight
    assert all(mnist[w]["test_acc"] >= mnist[0.0]["test_acc"] for w in ws[1:-1])
    adult = mean["Adult"]
    assert np.all(np.diff([adult[w]["mia_ref"] for w in ws]) > 0)
    assert adult[0.0]["mia_train"] - adult[1.0]["mia_train"] > 0.03
    assert abs(adult[0.5]["mia_train"] - adult[0.5]["mia_ref"]) < 0.015
    # Table 3: eps_T / eps_R tracks the empirical relative leakage
    for data in ("MNIST", "Adult"):
        corr = out["correlations"][data]
        assert corr["n_weights"] == 7
        assert corr["accuracy_ratio"] > 0.6, corr
        assert corr["advantage_ratio"] > 0.9, corr


class _AuxSpy(ClassifierMixin, BaseEstimator):
    def fit(self, X, y, sample_weight=None, aux=None):
        self.aux_ = aux
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


@pytest.mark.parametrize("routing", [False, True])
def test_other_fit_params_reach_inner_estimator_on_kept_rows(routing):
    X, y = _data()
    g = np.arange(len(y)) % 2
    aux = np.arange(len(y))
    with sklearn.config_context(enable_metadata_routing=routing):
        inner = _AuxSpy()
        if routing:
            inner.set_fit_request(aux=True)
        clf = WERMClassifier(inner, w=0.0).fit(X, y, data_source=g, aux=aux)
        # reference rows have weight 0 and are dropped, with their aux entries
        assert np.array_equal(clf.estimator_.aux_, aux[g == 0])
        if routing:
            with pytest.raises(Exception, match="aux"):
                WERMClassifier(_AuxSpy(), w=0.0).fit(X, y, data_source=g, aux=aux)


# ---------------------------------------------------------------- misconfiguration


def test_numeric_w_without_data_source_raises():
    # a numeric w cannot mean anything without reference rows: refuse instead of plain ERM
    X, y = _data()
    for kwargs in ({"w": 0.3}, {"w": 0.5}, {"w": 0.0}, {"group_weights": {0: 0.4, 1: 0.6}}):
        with pytest.raises(ValueError, match="data_source"):
            WERMClassifier(_lr(), **kwargs).fit(X, y)


def test_grid_over_w_without_data_source_fails_loudly():
    # the trap of the issue: every w scoring the same; now each fit raises
    X, y = _data()
    grid = GridSearchCV(WERMClassifier(_lr()), {"w": [0.2, 0.5, 0.8]}, cv=2,
                        error_score="raise")
    with pytest.raises(ValueError, match="data_source"):
        grid.fit(X, y)


def test_default_w_is_size_proportional_plain_erm():
    # w=None (default): each group weighs its share of the rows, i.e. plain ERM on all rows,
    # with or without data_source, and with any group labels
    X, y = _data()
    plain = _lr().fit(X, y)
    g = np.r_[np.zeros(100, int), np.ones(200, int)]
    for clf in (WERMClassifier(_lr()).fit(X, y),
                WERMClassifier(_lr()).fit(X, y, data_source=g)):
        assert np.allclose(clf.estimator_.coef_, plain.coef_, rtol=1e-8)
        assert clf.n_eff_ == pytest.approx(len(y))
        np.testing.assert_allclose(clf.sample_weight_, 1.0)
    clf = WERMClassifier(_lr()).fit(X, y, data_source=g)
    # the size-proportional weight is weight_for_setting("equal_privacy", ...)
    np.testing.assert_allclose(clf.group_weights_, [1 / 3, 2 / 3])
    assert clf.epsilon_ratio_ == pytest.approx(1.0)
    assert weight_for_setting("equal_privacy", 100, 200) == pytest.approx(2 / 3)


def test_inner_estimator_must_be_a_weighted_classifier():
    from sklearn.linear_model import LinearRegression

    X, y = _data()
    g = np.arange(len(y)) % 2
    with pytest.raises(TypeError, match="estimator.*classifier.*LinearRegression"):
        WERMClassifier(LinearRegression(), w=0.3).fit(X, y, data_source=g)
    with pytest.raises(TypeError, match="estimator.*sample_weight"):
        WERMClassifier(KNeighborsClassifier(), w=0.3).fit(X, y, data_source=g)


@pytest.mark.parametrize(
    "labels",
    [np.array([0, 1]), np.array([False, True]), np.array(["train", "reference"])],
    ids=["int", "bool", "str"],
)
def test_group_labels_accepted(labels):
    X, y = _data()
    g = np.r_[np.zeros(100, int), np.ones(200, int)]
    ref = WERMClassifier(_lr(), w=0.3).fit(X, y, data_source=g)
    clf = WERMClassifier(_lr(), w=0.3).fit(X, y, data_source=labels[g])
    np.testing.assert_allclose(clf.estimator_.coef_, ref.estimator_.coef_, rtol=1e-10)
    # training group first, whatever the sort order of the labels
    assert list(clf.group_labels_) == list(labels)
    np.testing.assert_allclose(clf.group_sizes_, [100, 200])
    assert clf.epsilon_ratio_ == pytest.approx(ref.epsilon_ratio_)


@pytest.mark.parametrize(
    "group,match",
    [
        (np.r_[np.zeros(299), np.nan], "data_source.*NaN"),
        (np.array([0, 1, None] * 100, dtype=object), "data_source.*missing"),
        (np.array([0.0, 1.0, np.nan] * 100, dtype=object), "data_source.*missing"),
        (np.array(["train", "reference", "other"] * 100), "group_weights"),
        (np.array([0, 1, "reference"] * 100, dtype=object), "data_source"),
        (np.zeros((300, 2)), "data_source.*1-D"),
        (np.zeros(299), "data_source.*299"),
    ],
)
def test_bad_data_source(group, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        WERMClassifier(_lr(), w=0.3).fit(X, y, data_source=group)


@pytest.mark.parametrize(
    "params,error",
    [
        ({"w": True}, TypeError),
        ({"w": np.nan}, ValueError),
        ({"group_weights": {0: "a", 1: 0.5}}, TypeError),
        ({"group_weights": {0: np.nan, 1: 0.5}}, ValueError),
        ({"group_weights": {0: True, 1: False}}, TypeError),
    ],
)
def test_bad_weight_parameters(params, error):
    X, y = _data()
    name = next(iter(params))
    with pytest.raises(error, match=name):
        WERMClassifier(_lr(), **params).fit(X, y, data_source=np.arange(len(y)) % 2)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: generalization_bound(100, 0.05, [10, 10], [0.5, 0.5]), ValueError, "vc_dim"),
        (lambda: generalization_bound(True, 0.05, [10, 10], [0.5, 0.5]), TypeError, "vc_dim"),
        (lambda: generalization_bound(3, 0.05, ["a", "b"], [0.5, 0.5]), TypeError,
         "group_sizes"),
        (lambda: generalization_bound(3, 0.05, [10, 10], ["a", "b"]), TypeError,
         "group_weights"),
        (lambda: effective_sample_size([True, True], [0.5, 0.5]), TypeError, "group_sizes"),
        (lambda: effective_sample_size([10, 10], [True, False]), TypeError, "group_weights"),
        (lambda: effective_sample_size([10, 10], [np.inf, 0.5]), ValueError, "group_weights"),
        (lambda: effective_sample_size([10, -10], [0.5, 0.5]), ValueError, "group_sizes"),
        (lambda: effective_sample_size([10, 0], [0.5, 0.5]), ValueError, "group_sizes"),
        (lambda: effective_sample_size([10, 10, 10], [0.5, 0.5]), ValueError, "same"),
        (lambda: effective_sample_size([], []), ValueError, "group_sizes"),
        (lambda: effective_sample_size([10, 10], [0.5, 0.4]), ValueError, "sum to 1"),
        (lambda: effective_sample_size([10, 10], [1.5, -0.5]), ValueError, "non-negative"),
        (lambda: epsilon_ratio(True, 10, 10), TypeError, "w"),
        (lambda: epsilon_ratio(np.nan, 10, 10), ValueError, "w"),
        (lambda: epsilon_ratio(0.5, np.inf, 10), ValueError, "n_train"),
        (lambda: epsilon_ratio(0.5, 10, True), TypeError, "n_reference_samples"),
        (lambda: epsilon_ratio(0.5, 0, 10), ValueError, "n_train"),
        (lambda: epsilon_ratio("0.5", 10, 10), TypeError, "w"),
        (lambda: weight_for_setting("equal_privacy", True, 10), TypeError, "n_train"),
        (lambda: weight_for_setting("equal_privacy", 10, np.nan), ValueError,
         "n_reference_samples"),
        (lambda: weight_for_setting("equal", 10, 10), ValueError, "setting"),
    ],
)
def test_theory_functions_refuse_impossible_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_theory_functions_accept_numpy_scalars():
    assert epsilon_ratio(np.float32(0.5), np.int64(10), 10) == pytest.approx(1.0)
    assert effective_sample_size(np.array([10, 30]), np.array([0.25, 0.75])) == pytest.approx(40)
    assert weight_for_setting("equal_privacy", np.int64(10), np.int64(30)) == 0.75
    # a bound at N = VC is finite (log term 0); weight-0 groups do not enter N_eff
    assert np.isfinite(generalization_bound(20, 0.05, [10, 10], [0.5, 0.5]))
    assert effective_sample_size([10, 10], [1.0, 0.0]) == pytest.approx(10)


# ---------------------------------------------------------------- data frames and pipelines


def _raw_frame(n=300, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(seed)
    age = rng.uniform(20, 70, size=n)
    city = rng.choice(["Paris", "Lyon", "Nice"], size=n)
    kind = pd.Categorical(rng.choice(["a", "b"], size=n), categories=["a", "b", "c"])
    logit = 0.08 * (age - 45) + np.where(city == "Paris", 1.0, -0.5) + rng.normal(size=n)
    X = pd.DataFrame({"age": age, "city": pd.array(city, dtype="str"), "kind": kind})
    y = (logit > 0).astype(int)
    return X, y


def _frame_pipeline(routing):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    scaler = StandardScaler()
    if routing:
        scaler.set_fit_request(sample_weight=False)  # StandardScaler.fit takes weights too
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["city", "kind"]),
                            ("num", scaler, ["age"])])
    return Pipeline([("ct", ct), ("lr", LogisticRegression(tol=1e-10, max_iter=1000))])


@pytest.mark.parametrize("routing,as_series", [(False, False), (True, True)])
def test_pipeline_on_raw_frame_in_grid_search(routing, as_series):
    import warnings

    pd = pytest.importorskip("pandas")
    X, y = _raw_frame()
    g = np.r_[np.zeros(120, int), np.ones(180, int)]
    group = pd.Series(g, name="group") if as_series else g
    with warnings.catch_warnings(), sklearn.config_context(enable_metadata_routing=routing):
        warnings.simplefilter("error")  # no feature-name (or any other) warning
        est = WERMClassifier(_frame_pipeline(routing), w=0.3)
        if routing:
            est.set_fit_request(data_source=True)
        clf = sklearn.base.clone(est).fit(X, y, data_source=group)
        np.testing.assert_array_equal(clf.feature_names_in_, ["age", "city", "kind"])
        assert clf.n_features_in_ == 3
        # the same weights given by hand to the pipeline's classifier
        explicit = np.where(g == 0, 0.7 / 120, 0.3 / 180)
        explicit *= len(g) / explicit.sum()
        ref = _frame_pipeline(False)
        with sklearn.config_context(enable_metadata_routing=False):
            ref.fit(X, y, lr__sample_weight=explicit)
        np.testing.assert_allclose(clf.estimator_[-1].coef_, ref[-1].coef_, rtol=1e-6)
        np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X),
                                   rtol=1e-6)
        # unseen category at predict time, frame in, labels out
        X_new = X.head(5).copy()
        X_new["city"] = pd.array(["Rome"] * 5, dtype="str")
        assert clf.predict(X_new).shape == (5,)
        grid = GridSearchCV(est, {"w": [0.1, 0.9]}, cv=KFold(2, shuffle=True, random_state=0),
                            error_score="raise")
        grid.fit(X, y, data_source=group)
    # the refit best estimator is the plain fit at the selected w
    fresh = WERMClassifier(_frame_pipeline(False), w=grid.best_params_["w"])
    fresh.fit(X, y, data_source=g)
    np.testing.assert_allclose(grid.best_estimator_.estimator_[-1].coef_,
                               fresh.estimator_[-1].coef_, rtol=1e-6)
    np.testing.assert_array_equal(grid.best_estimator_.feature_names_in_, X.columns)


def test_pipeline_weights_differ_by_w_on_frame():
    X, y = _raw_frame()
    g = np.r_[np.zeros(120, int), np.ones(180, int)]
    coefs = [WERMClassifier(_frame_pipeline(False), w=w).fit(X, y, data_source=g)
             .estimator_[-1].coef_ for w in (0.1, 0.9)]
    assert not np.allclose(coefs[0], coefs[1], rtol=1e-3)


def test_pipeline_whose_classifier_lacks_sample_weight_is_refused():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data()
    with pytest.raises(TypeError, match="estimator.*sample_weight"):
        WERMClassifier(make_pipeline(StandardScaler(), KNeighborsClassifier()), w=0.5).fit(
            X, y, data_source=np.arange(len(y)) % 2)
