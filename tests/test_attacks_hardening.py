"""Regression tests: randomness, row order and input checks of the attacks."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, cross_val_score

from sklearn_privacy import FILLinearRegression
from sklearn_privacy.attacks import (
    candidate_minimisers,
    evaluate_scores,
    fredrikson_inversion,
    lira,
    make_attribute_inversion_scorer,
    make_membership_scorer,
    membership_inference,
    membership_scores,
    prior_baseline,
    whitebox_inversion,
)


def _clf_data(n=80, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return X, y


def _onehot_data(n=60, seed=0):
    rng = np.random.RandomState(seed)
    level = rng.randint(0, 3, size=n)
    X = np.column_stack([rng.normal(size=(n, 2)), np.eye(3)[level][:, 1:]])
    y = X @ [1.0, -0.5, 1.5, -1.0] + 0.2 * rng.normal(size=n)
    return X, y, [2, 3], np.array([[0, 0], [1, 0], [0, 1]], float)


# ---------------------------------------------------------------- item 1: randomness
def _random_calls():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X[:40], y[:40])
    Xr, yr, cols, cand = _onehot_data()
    reg = FILLinearRegression(sigma=0.2, alpha=1e-2, random_state=0).fit(Xr, yr)
    members = np.zeros(len(y), bool)
    members[:40] = True
    s_in = np.linspace(0, 1, 40)
    s_out = np.linspace(0.2, 1.2, 40)
    return {
        "evaluate_scores": lambda: evaluate_scores(s_in, s_out, random_state=None).eval_members,
        "membership_inference": lambda: membership_inference(
            clf, X[:40], y[:40], X[40:], y[40:], random_state=None).eval_members,
        "lira": lambda: lira(clf, X, y, members, n_reference_models=4, random_state=None).shadow_in,
        "whitebox": lambda: whitebox_inversion(reg, cols, cand, n_draws=5,
                                               random_state=None).predictions,
        "whitebox_map": lambda: whitebox_inversion(reg, cols, cand, n_draws=5,
                                                   prior="empirical",
                                                   random_state=None).predictions,
        "membership_scorer": lambda: np.array(cross_val_score(
            LogisticRegression(), X, y, cv=KFold(2),
            scoring=make_membership_scorer(X, y, random_state=None))),
    }


@pytest.mark.parametrize("name", ["evaluate_scores", "membership_inference", "lira",
                                  "whitebox", "whitebox_map", "membership_scorer"])
def test_random_state_none_ignores_and_keeps_global_state(name):
    call = _random_calls()[name]
    np.random.seed(0)  # noqa: NPY002 (the global state is the subject)
    before = np.random.get_state()  # noqa: NPY002
    first = call()
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]  # the global stream did not advance
    np.random.seed(0)  # noqa: NPY002
    second = call()
    np.random.seed(0)  # noqa: NPY002
    third = call()
    # fresh OS entropy: the same global seed does not reproduce the draws
    assert not (np.array_equal(first, second) and np.array_equal(second, third))


def test_fixed_seed_reproducible():
    s_in, s_out = np.linspace(0, 1, 40), np.linspace(0.2, 1.2, 40)
    a = evaluate_scores(s_in, s_out, random_state=3)
    b = evaluate_scores(s_in, s_out, random_state=3)
    assert np.array_equal(a.eval_members, b.eval_members)


# ---------------------------------------------------------------- item 2: row order
def test_candidate_minimisers_and_whitebox_keep_row_order():
    X, y, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=0.05, alpha=1e-2, random_state=0).fit(X, y)
    rows = [7, 2, 2, 30]
    thetas, truth, _ = candidate_minimisers(est, cols, cand, rows=rows)
    assert thetas.shape[0] == len(rows)
    for k, r in enumerate(rows):
        one, t1, _ = candidate_minimisers(est, cols, cand, rows=[r])
        np.testing.assert_allclose(thetas[k], one[0], rtol=1e-12, atol=1e-14)
        assert truth[k] == t1[0]
        ref, _, _ = candidate_minimisers(est, cols, cand, rows=[r], method="refit")
        np.testing.assert_allclose(thetas[k], ref[0], rtol=1e-9, atol=1e-11)
    released = est._audit_engine().theta + 0.05 * np.random.RandomState(1).normal(size=5)
    res = whitebox_inversion(est, cols, cand, rows=rows, released=released)
    assert res.predictions.shape == (1, len(rows))
    for k, r in enumerate(rows):
        one = whitebox_inversion(est, cols, cand, rows=[r], released=released)
        assert res.predictions[0, k] == one.predictions[0, 0]
        assert res.truth[k] == one.truth[0]


# ---------------------------------------------------------------- item 3: input checks
def test_membership_scores_length_and_shape():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="y has 50 entries but X has 80 rows"):
        membership_scores(clf, X, y[:50])
    with pytest.raises(ValueError, match="1-D"):
        membership_scores(clf, X, y[:, None])
    with pytest.raises(ValueError, match="y_members"):
        membership_inference(clf, X[:40], y[:30], X[40:], y[40:])
    with pytest.raises(ValueError, match="y_nonmembers"):
        membership_inference(clf, X[:40], y[:40], X[40:], y[40:, None])
    reg = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="1-D"):
        membership_scores(reg, X, y[:, None].astype(float), attack="loss")
    with pytest.raises(ValueError, match="y_in"):
        evaluate_scores(np.ones(10), np.zeros(10), y_in=np.ones(9), y_out=np.ones(10),
                        thresholds="per_class")
    with pytest.raises(ValueError, match="y_out"):
        evaluate_scores(np.ones(10), np.zeros(10), y_in=np.ones(10), y_out=np.ones((10, 1)),
                        thresholds="per_class")
    with pytest.raises(ValueError, match="y"):
        lira(clf, X, y[:, None], np.arange(40), n_reference_models=4)


def test_lira_members_mask_or_indices():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X[:40], y[:40])
    mask01 = np.r_[np.ones(40, int), np.zeros(40, int)]
    with pytest.raises(ValueError, match="boolean mask"):
        lira(clf, X, y, mask01, n_reference_models=4, random_state=0)
    a = lira(clf, X, y, mask01.astype(bool), n_reference_models=4, random_state=0)
    b = lira(clf, X, y, np.arange(40), n_reference_models=4, random_state=0)
    assert np.array_equal(a.scores_members, b.scores_members)
    with pytest.raises(ValueError, match="duplicate"):
        lira(clf, X, y, np.r_[np.arange(40), 3], n_reference_models=4)
    with pytest.raises(TypeError, match="members"):
        lira(clf, X, y, np.linspace(0, 1, 40), n_reference_models=4)
    with pytest.raises(TypeError, match="n_reference_models"):
        lira(clf, X, y, np.arange(40), n_reference_models=4.5)
    with pytest.raises(ValueError, match="known_fraction"):
        lira(clf, X, y, np.arange(40), n_reference_models=4, known_fraction=np.nan)


def test_evaluate_scores_refuses_nan_inf_and_tiny_inputs():
    with pytest.raises(ValueError, match="s_in.*NaN"):
        evaluate_scores(np.full(10, np.nan), np.zeros(10))
    with pytest.raises(ValueError, match="s_out.*NaN"):
        evaluate_scores(np.zeros(10), np.r_[np.zeros(9), np.inf])
    with pytest.raises(ValueError, match="1-D"):
        evaluate_scores(np.zeros((10, 2)), np.zeros(10))
    # known_fraction leaving an empty evaluation half
    with pytest.raises(ValueError, match="evaluation"):
        evaluate_scores(np.arange(3.0), np.arange(3.0), known_fraction=0.9)
    with pytest.raises(ValueError, match="known_fraction"):
        evaluate_scores(np.arange(10.0), np.arange(10.0), known_fraction=0.01)
    for kf in (np.nan, "0.5", True):
        with pytest.raises((ValueError, TypeError), match="known_fraction"):
            evaluate_scores(np.arange(10.0), np.arange(10.0), known_fraction=kf)
    with pytest.raises(ValueError, match="thresholds"):
        evaluate_scores(np.arange(10.0), np.arange(10.0), thresholds=["global"])
    with pytest.raises(TypeError, match="random_state"):
        evaluate_scores(np.arange(10.0), np.arange(10.0), random_state=0.5)
    # a model whose probabilities are NaN: no "no leakage" figure
    X, y = _clf_data()

    class NanModel(LogisticRegression):
        def predict_proba(self, X):
            return np.full((len(X), 2), np.nan)

    nan_model = NanModel().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        membership_inference(nan_model, X[:40], y[:40], X[40:], y[40:])


def test_attack_and_metric_parameters():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X, y)
    for bad in (None, 3, ["confidence"]):
        with pytest.raises((ValueError, TypeError), match="attack"):
            membership_scores(clf, X, y, attack=bad)
    with pytest.raises(ValueError, match="metric"):
        make_membership_scorer(X, y, metric=None, random_state=0)
    with pytest.raises(ValueError, match="known_fraction"):
        make_membership_scorer(X, y, known_fraction=np.nan, random_state=0)
    with pytest.raises(ValueError, match="n_draws"):
        make_attribute_inversion_scorer([0], n_draws=0, random_state=0)


def test_fredrikson_and_inversion_parameters():
    X, y, cols, cand = _onehot_data()
    reg = LinearRegression().fit(X, y)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="residual_std"):
            fredrikson_inversion(reg, X, y, cols, cand, residual_std=bad)
    with pytest.raises(TypeError, match="residual_std"):
        fredrikson_inversion(reg, X, y, cols, cand, residual_std="1")
    with pytest.raises(ValueError, match="y"):
        fredrikson_inversion(reg, X, y[:10], cols, cand)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fredrikson_inversion(reg, Xn, y, cols, cand)
    with pytest.raises(ValueError, match="candidates"):
        prior_baseline(X, cols, [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="candidates.*NaN|NaN.*candidates"):
        prior_baseline(X, cols, [[0, 0], [np.nan, 1]])
    with pytest.raises(ValueError, match="columns"):
        prior_baseline(X, [], cand)
    with pytest.raises(TypeError, match="columns"):
        prior_baseline(X, [2.0, 3.0], cand)
    est = FILLinearRegression(sigma=0.1, alpha=1e-2, random_state=0).fit(X, y)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="n_draws"):
            whitebox_inversion(est, cols, cand, n_draws=bad)
    with pytest.raises(TypeError, match="n_draws"):
        whitebox_inversion(est, cols, cand, n_draws=2.5)
    theta = est._audit_engine().theta
    with pytest.raises(ValueError, match="released"):
        whitebox_inversion(est, cols, cand, released=np.r_[theta[:-1], np.nan])
    with pytest.raises(ValueError, match="rows"):
        whitebox_inversion(est, cols, cand, rows=[len(y)])
    with pytest.raises(ValueError, match="rows"):
        candidate_minimisers(est, cols, cand, rows=[0.5])
    with pytest.raises(ValueError, match="prior"):
        whitebox_inversion(est, cols, cand, prior=[np.nan, 0.5, 0.5])
    with pytest.raises(ValueError, match="calibrate"):
        whitebox_inversion(est, cols, cand, prior="empirical", calibrate="yes")


def test_one_row_and_empty_inputs():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X, y)
    assert membership_scores(clf, X[:1], y[:1]).shape == (1,)
    with pytest.raises(ValueError, match="at least"):
        membership_inference(clf, X[:1], y[:1], X[40:], y[40:])
    with pytest.raises(ValueError, match="empty|at least"):
        membership_scores(clf, X[:0], y[:0])


def test_more_edge_inputs():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X[:40], y[:40])
    with pytest.raises(ValueError, match="members is empty"):
        lira(clf, X, y, [])
    with pytest.raises(TypeError, match="attack must be a string"):
        evaluate_scores(np.arange(5.0), np.arange(5.0), attack=3)
    Xr, yr, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=0.1, alpha=1e-2, random_state=0).fit(Xr, yr)
    with pytest.raises(ValueError, match="rows selects no training row"):
        whitebox_inversion(est, cols, cand, rows=[])
    with pytest.raises(ValueError, match="2-D"):
        prior_baseline(Xr[0], cols)
    with pytest.raises(ValueError, match="X_population"):
        make_membership_scorer(X[:, 0], y, random_state=0)
    with pytest.raises(TypeError, match="random_state"):
        make_membership_scorer(X, y, random_state=1.5)
