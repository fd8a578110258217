import numpy as np
import pytest
import sklearn
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.svm import LinearSVC

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy.attacks import (
    make_attribute_inversion_scorer,
    make_membership_scorer,
    membership_inference,
    refit_under_leakage_bound,
    whitebox_inversion,
)
from sklearn_privacy.datasets import load_mnist

SIGMAS = (1e-3, 10.0, 1e3)


@pytest.fixture(scope="module")
def mnist35():
    """MNIST 3 vs 5 on 100 principal components, 300 rows: 150 per fit, nearly separable."""
    d = load_mnist()
    idx = np.random.RandomState(0).permutation(np.flatnonzero(np.isin(d.target, (3, 5))))
    X = PCA(100, random_state=0).fit_transform(d.data[idx])[:300]
    X /= np.linalg.norm(X, axis=1).max()
    y = (d.target[idx] == 5).astype(int)[:300]
    return X, y


def _onehot_regression(n=120, seed=0):
    rng = np.random.RandomState(seed)
    level = rng.randint(0, 3, size=n)
    X = np.column_stack([rng.normal(size=(n, 3)), np.eye(3)[level][:, 1:]])
    y = X @ [1.0, -0.5, 0.3, 1.5, -1.0] + 0.2 * rng.normal(size=n)
    return X, y, [3, 4], np.array([[0, 0], [1, 0], [0, 1]], float)


def test_membership_scorer_equals_attack_on_the_fold_complement(mnist35):
    X, y = mnist35
    cv = KFold(3, shuffle=True, random_state=0)
    scorer = make_membership_scorer(X, y, attack="loss", thresholds="global",
                                    metric="advantage", random_state=0)
    with sklearn.config_context(enable_metadata_routing=False):
        out = cross_validate(FILLogisticRegression(sigma=1e-3, alpha=1e-6, random_state=0),
                             X, y, cv=cv, scoring={"mia": scorer}, return_estimator=True)
    for (train, test), est, score in zip(cv.split(X), out["estimator"], out["test_mia"],
                                         strict=True):
        rows = np.r_[train, test]
        ref = membership_inference(est, X[rows], y[rows], np.arange(rows.size) < train.size,
                                   attack="loss", thresholds="global", random_state=0)
        assert score == -ref.advantage


def test_cross_validate_trends_over_sigma(mnist35):
    X, y = mnist35
    cv = KFold(2, shuffle=True, random_state=0)
    scoring = {"acc": "accuracy",
               "mia": make_membership_scorer(X, y, attack="loss", thresholds="global",
                                             metric="advantage", random_state=0),
               "auc": make_membership_scorer(X, y, attack="loss", metric="auc", random_state=0)}
    acc, mia, auc = [], [], []
    for sigma in SIGMAS:
        out = cross_validate(FILLogisticRegression(sigma=sigma, alpha=1e-6, random_state=0),
                             X, y, cv=cv, scoring=scoring)
        acc.append(out["test_acc"].mean())
        mia.append(out["test_mia"].mean())
        auc.append(out["test_auc"].mean())
    # more noise: less accurate, more private (score = -advantage rises towards 0)
    assert acc[0] > 0.9 and acc[0] > acc[1] > acc[2] - 0.02
    assert mia[0] < -0.15 and mia[0] < mia[1] < mia[2]
    assert mia[2] > -0.08
    assert auc[0] < -0.03 and abs(auc[2]) < 0.03


def test_grid_search_most_accurate_model_under_an_advantage_bound(mnist35):
    X, y = mnist35
    bound = 0.15
    most_accurate_under_bound = refit_under_leakage_bound("acc", "mia", bound)

    scoring = {"acc": "accuracy",
               "mia": make_membership_scorer(X, y, attack="loss", thresholds="global",
                                             metric="advantage", random_state=0)}
    gs = GridSearchCV(FILLogisticRegression(alpha=1e-6, random_state=0),
                      {"sigma": list(SIGMAS)}, scoring=scoring,
                      cv=KFold(2, shuffle=True, random_state=0),
                      refit=most_accurate_under_bound).fit(X, y)
    res = gs.cv_results_
    adv = -res["mean_test_mia"]
    assert adv[0] > bound  # the least noisy model leaks too much
    ok = np.flatnonzero(adv <= bound)
    assert gs.best_index_ == ok[np.argmax(res["mean_test_acc"][ok])]
    assert gs.best_estimator_.sigma == SIGMAS[gs.best_index_] != SIGMAS[0]
    # refit on an ordinary metric picks the least noisy model instead
    gs2 = GridSearchCV(FILLogisticRegression(alpha=1e-6, random_state=0),
                       {"sigma": list(SIGMAS)}, scoring=scoring,
                       cv=KFold(2, shuffle=True, random_state=0), refit="acc").fit(X, y)
    assert gs2.best_params_["sigma"] == SIGMAS[0]


def test_inversion_scorer_in_grid_search_equals_direct_attack():
    X, y, cols, cand = _onehot_regression()
    inv = make_attribute_inversion_scorer(cols, cand, n_draws=20, random_state=0)
    cv = KFold(2, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=False):
        gs = GridSearchCV(FILLinearRegression(alpha=1e-2, random_state=0),
                          {"sigma": [1e-6, 1e-2, 1.0]}, cv=cv,
                          scoring={"r2": "r2", "inv": inv}, refit="inv").fit(X, y)
    scores = gs.cv_results_["mean_test_inv"]
    assert scores[0] == -1.0  # noiseless release: every attribute recovered
    assert scores[0] < scores[1] < scores[2]
    assert gs.best_params_ == {"sigma": 1.0}
    # oracle: the attack on a model fitted on the first training fold
    train, _ = next(cv.split(X))
    est = FILLinearRegression(sigma=1e-2, alpha=1e-2, random_state=0).fit(X[train], y[train])
    direct = whitebox_inversion(est, sensitive_features=cols, candidates=cand, n_draws=20,
                                random_state=0).accuracy
    assert gs.cv_results_["split0_test_inv"][1] == -direct


def test_map_and_fredrikson_scorers_equal_the_attacks_on_each_fold():
    """Each fold's score is minus the attack's accuracy on a model refit on that fold's
    training rows (independent oracle), for the MAP and the black-box variants.

    Replaces a range check (``-1 <= score <= 0``) that any negated accuracy passes.
    Mutation check: scoring ``attack="map"`` without the prior (``prior=None``: -0.9967
    against -0.9958) or Fredrikson on the fold's rows in reverse order against their
    labels (-0.35 against -1.0) made this test fail.
    """
    from sklearn_privacy.attacks import fredrikson_inversion

    X, y, cols, cand = _onehot_regression()
    cv = KFold(2, shuffle=True, random_state=0)
    make = lambda: FILLinearRegression(sigma=1e-2, alpha=1e-2, random_state=0)  # noqa: E731
    for attack in ("map", "fredrikson"):
        s = make_attribute_inversion_scorer(cols, cand, attack=attack, n_draws=20, random_state=0)
        out = cross_validate(make(), X, y, cv=cv, scoring=s)
        for k, (train, test) in enumerate(cv.split(X)):
            est = make().fit(X[train], y[train])
            if attack == "map":
                acc = whitebox_inversion(est, X[test], sensitive_features=cols, candidates=cand,
                                         prior="empirical", n_draws=20,
                                         random_state=0).accuracy
            else:
                acc = fredrikson_inversion(est, X[test], y[test], sensitive_features=cols,
                                           candidates=cand).accuracy
            assert out["test_score"][k] == -acc


def test_bad_input(mnist35):
    X, y = mnist35
    scorer = make_membership_scorer(X[:200], y[:200], random_state=0)
    est = FILLogisticRegression(sigma=1.0, random_state=0).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="not rows of X_population"):
        scorer(est, X[200:], y[200:])
    svc = LinearSVC().fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="predict_proba"):
        make_membership_scorer(X, y, attack="confidence", random_state=0)(svc, X[200:], y[200:])
    with pytest.raises(ValueError, match="'attack' parameter of make_membership_scorer"):
        make_membership_scorer(X, y, attack="lira", random_state=0)
    with pytest.raises(ValueError, match="'thresholds' parameter"):
        make_membership_scorer(X, y, thresholds="per_row", random_state=0)
    with pytest.raises(ValueError, match="'metric' parameter"):
        make_membership_scorer(X, y, metric="accuracy", random_state=0)
    with pytest.raises(ValueError, match="different numbers of rows"):
        make_membership_scorer(X, y[:-1], random_state=0)
    Xr, yr, cols, cand = _onehot_regression()
    reg = FILLinearRegression(alpha=1e-2, random_state=0).fit(Xr, yr)
    with pytest.raises(ValueError, match="'attack' parameter of make_attribute_inversion_scorer"):
        make_attribute_inversion_scorer(cols, attack="blackbox", random_state=0)
    with pytest.raises(TypeError, match="FIL estimator"):
        make_attribute_inversion_scorer(cols, cand,
                                        random_state=0)(LinearRegression().fit(Xr, yr), Xr, yr)
    with pytest.raises(ValueError, match="not a binary column or a one-hot group"):
        make_attribute_inversion_scorer([0], random_state=0)(reg, Xr, yr)
    with pytest.raises(ValueError, match="not among the candidates"):
        make_attribute_inversion_scorer(cols, cand[1:], random_state=0)(reg, Xr, yr)


def test_cv_scorer_with_duplicated_rows():
    """Duplicated rows: folds are identified by position (``sample_index``), never by
    value; without positions an array fold with identical copies is refused.

    Regression (older): with ``cv=`` given, folds were compared by the positions the
    scorer assigned to their rows by value, so duplicated rows made every fold "not one
    of the test folds of cv".
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_val_score

    rng = np.random.RandomState(0)
    X = rng.randint(0, 2, size=(200, 3)).astype(float)   # 8 distinct rows, many copies
    y = (X[:, 0] + rng.uniform(size=200) > 1).astype(int)
    cv = KFold(4, shuffle=True, random_state=0)
    scorer = make_membership_scorer(X, y, cv=cv, metric="auc", random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=scorer,
                                 error_score="raise",
                                 params={"sample_index": np.arange(200)})
    expected = []
    for train, test in cv.split(X):
        est = LogisticRegression().fit(X[train], y[train])
        rows = np.r_[train, test]
        expected.append(0.5 - membership_inference(est, X[rows], y[rows],
                                                   np.arange(rows.size) < train.size,
                                                   random_state=0).auc)
    np.testing.assert_array_equal(scores, expected)
    with pytest.raises(ValueError, match="identical copies"):
        cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=scorer,
                        error_score="raise")


def test_tpr_at_fpr_counts_the_level_itself():
    """TPR at 1% FPR includes the threshold whose FPR is exactly 1% (2 of 200 non-members).

    Regression: the ROC points computed FPR as ``1 - k / n``, so 2 of 200 came out as
    0.010000000000000009 > 0.01 and that point was skipped (0.145 reported for 0.15 in
    the LiRA test). Independent oracle: scikit-learn's ``roc_curve``.
    """
    from sklearn.metrics import roc_curve

    from sklearn_privacy.attacks import evaluate_scores

    rng = np.random.RandomState(0)
    s_in, s_out = rng.normal(1.0, 1, 400), rng.normal(0.0, 1, 400)
    res = evaluate_scores(np.arange(800) < 400, np.r_[s_in, s_out], random_state=0)
    a, b = s_in[res.eval_members], s_out[res.eval_nonmembers]
    fpr, tpr, _ = roc_curve(np.r_[np.ones(a.size), np.zeros(b.size)], np.r_[a, b],
                            drop_intermediate=False)
    assert res.tpr_at_fpr[0.01] == tpr[fpr <= 0.01].max()
    assert np.isnan(res.tpr_at_fpr[0.001])  # 200 non-members: one false positive is 0.5%


def test_population_label_shape_and_scorer_names():
    """A column-vector ``y_population`` is reported as such, and the WERM scorer shows its
    own name.

    Before: "X_population and y_population have different numbers of rows: y_population
    must be 1-D ..." (the rows were equal), and ``repr`` of
    ``make_werm_membership_scorer(...)`` read ``make_membership_scorer(..., group=0)``.
    """
    from sklearn_privacy.attacks import make_werm_membership_scorer

    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"^y_population must be 1-D .*y\.ravel\(\)"):
        make_membership_scorer(X, y[:, None], random_state=0)
    with pytest.raises(ValueError, match="different numbers of rows: 40 and 39"):
        make_membership_scorer(X, y[:-1], random_state=0)
    werm = make_werm_membership_scorer(X, y, np.arange(40) % 2, group=1, random_state=0)
    assert repr(werm).startswith("make_werm_membership_scorer(")
    assert "group=1" in repr(werm)
    assert repr(make_membership_scorer(X, y)).startswith("make_membership_scorer(")
