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
    regression_inversion,
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
        "evaluate_scores": lambda: evaluate_scores(
            members, np.r_[s_in, s_out], random_state=None).eval_members,
        "membership_inference": lambda: membership_inference(
            clf, X, y, members, random_state=None).eval_members,
        "lira": lambda: lira(clf, X, y, members, n_reference_models=4, random_state=None).shadow_in,
        "whitebox": lambda: whitebox_inversion(reg, sensitive_features=cols, candidates=cand,
                                               n_draws=5,
                                               random_state=None).predictions,
        "whitebox_map": lambda: whitebox_inversion(reg, sensitive_features=cols, candidates=cand,
                                                   n_draws=5,
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
    members = np.arange(80) < 40
    a = evaluate_scores(members, np.r_[s_in, s_out], random_state=3)
    b = evaluate_scores(members, np.r_[s_in, s_out], random_state=3)
    assert np.array_equal(a.eval_members, b.eval_members)


# ---------------------------------------------------------------- item 2: row order
def test_candidate_minimisers_and_whitebox_keep_row_order():
    X, y, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=0.05, alpha=1e-2, random_state=0).fit(X, y)
    rows = [7, 2, 2, 30]
    thetas, truth, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                            rows=rows)
    assert thetas.shape[0] == len(rows)
    for k, r in enumerate(rows):
        one, t1, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand, rows=[r])
        np.testing.assert_allclose(thetas[k], one[0], rtol=1e-12, atol=1e-14)
        assert truth[k] == t1[0]
        ref, _, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand, rows=[r],
                                         method="refit")
        np.testing.assert_allclose(thetas[k], ref[0], rtol=1e-9, atol=1e-11)
    released = est._audit_engine().theta + 0.05 * np.random.RandomState(1).normal(size=5)
    res = whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=rows,
                             released=released)
    assert res.predictions.shape == (1, len(rows))
    for k, r in enumerate(rows):
        one = whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=[r],
                                 released=released)
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
    members = np.arange(80) < 40
    with pytest.raises(ValueError, match="y has 70 entries but X has 80 rows"):
        membership_inference(clf, X, y[:70], members)
    with pytest.raises(ValueError, match="y must be 1-D"):
        membership_inference(clf, X, y[:, None], members)
    with pytest.raises(ValueError, match="members as a boolean mask must have shape"):
        membership_inference(clf, X, y, members[:-1])
    reg = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="1-D"):
        membership_scores(reg, X, y[:, None].astype(float), attack="loss")
    truth, scores = np.arange(20) < 10, np.r_[np.ones(10), np.zeros(10)]
    with pytest.raises(ValueError, match="y has 19 entries but scores has 20"):
        evaluate_scores(truth, scores, y=np.ones(19), thresholds="per_class")
    with pytest.raises(ValueError, match="y must be 1-D"):
        evaluate_scores(truth, scores, y=np.ones((20, 1)))
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
    truth = np.arange(20) < 10
    with pytest.raises(ValueError, match="scores contains 10 NaN"):
        evaluate_scores(truth, np.r_[np.full(10, np.nan), np.zeros(10)])
    with pytest.raises(ValueError, match="scores contains 1 NaN or infinite"):
        evaluate_scores(truth, np.r_[np.zeros(19), np.inf])
    with pytest.raises(ValueError, match="1-D"):
        evaluate_scores(truth, np.zeros((20, 2)))
    # known_fraction leaving an empty evaluation half
    with pytest.raises(ValueError, match="evaluation"):
        evaluate_scores(np.arange(6) < 3, np.arange(6.0), known_fraction=0.9)
    with pytest.raises(ValueError, match="known_fraction"):
        evaluate_scores(truth, np.arange(20.0), known_fraction=0.01)
    for kf in (np.nan, "0.5", True):
        with pytest.raises((ValueError, TypeError), match="known_fraction"):
            evaluate_scores(truth, np.arange(20.0), known_fraction=kf)
    with pytest.raises(ValueError, match="thresholds"):
        evaluate_scores(truth, np.arange(20.0), thresholds=["global"])
    with pytest.raises(TypeError, match="random_state"):
        evaluate_scores(truth, np.arange(20.0), random_state=0.5)
    # a model whose probabilities are NaN: no "no leakage" figure
    X, y = _clf_data()

    class NanModel(LogisticRegression):
        def predict_proba(self, X):
            return np.full((len(X), 2), np.nan)

    nan_model = NanModel().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        membership_inference(nan_model, X, y, np.arange(80) < 40)


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
            fredrikson_inversion(reg, X, y, sensitive_features=cols, candidates=cand,
                                 residual_std=bad)
    with pytest.raises(TypeError, match="residual_std"):
        fredrikson_inversion(reg, X, y, sensitive_features=cols, candidates=cand, residual_std="1")
    with pytest.raises(ValueError, match="y"):
        fredrikson_inversion(reg, X, y[:10], sensitive_features=cols, candidates=cand)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fredrikson_inversion(reg, Xn, y, sensitive_features=cols, candidates=cand)
    with pytest.raises(ValueError, match="candidates"):
        prior_baseline(X, sensitive_features=cols, candidates=[[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="candidates.*NaN|NaN.*candidates"):
        prior_baseline(X, sensitive_features=cols, candidates=[[0, 0], [np.nan, 1]])
    with pytest.raises(ValueError, match="sensitive_features is empty"):
        prior_baseline(X, sensitive_features=[], candidates=cand)
    with pytest.raises(TypeError, match="sensitive_features"):
        prior_baseline(X, sensitive_features=[2.0, 3.0], candidates=cand)
    est = FILLinearRegression(sigma=0.1, alpha=1e-2, random_state=0).fit(X, y)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="n_draws"):
            whitebox_inversion(est, sensitive_features=cols, candidates=cand, n_draws=bad)
    with pytest.raises(TypeError, match="n_draws"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand, n_draws=2.5)
    theta = est._audit_engine().theta
    with pytest.raises(ValueError, match="released"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                           released=np.r_[theta[:-1], np.nan])
    with pytest.raises(ValueError, match="rows"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=[len(y)])
    with pytest.raises(ValueError, match="rows"):
        candidate_minimisers(est, sensitive_features=cols, candidates=cand, rows=[0.5])
    with pytest.raises(ValueError, match="prior"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand, prior=[np.nan, 0.5, 0.5])
    with pytest.raises(ValueError, match="calibrate"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand, prior="empirical",
                           calibrate="yes")


def test_one_row_and_empty_inputs():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X, y)
    assert membership_scores(clf, X[:1], y[:1]).shape == (1,)
    with pytest.raises(ValueError, match="at least 2 members"):
        membership_inference(clf, X, y, [0])
    with pytest.raises(ValueError, match="empty|at least"):
        membership_scores(clf, X[:0], y[:0])


def test_more_edge_inputs():
    X, y = _clf_data()
    clf = LogisticRegression().fit(X[:40], y[:40])
    with pytest.raises(ValueError, match="members is empty"):
        lira(clf, X, y, [])
    with pytest.raises(TypeError, match="'attack' parameter of evaluate_scores"):
        evaluate_scores(np.arange(10) < 5, np.arange(10.0), attack=3)
    Xr, yr, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=0.1, alpha=1e-2, random_state=0).fit(Xr, yr)
    with pytest.raises(ValueError, match="rows selects no training row"):
        whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=[])
    with pytest.raises(ValueError, match="2-D"):
        prior_baseline(Xr[0], sensitive_features=cols)
    with pytest.raises(ValueError, match="X_population"):
        make_membership_scorer(X[:, 0], y, random_state=0)
    with pytest.raises(TypeError, match="random_state"):
        make_membership_scorer(X, y, random_state=1.5)


def test_inversion_call_shape_estimator_X_y():
    """(estimator, X, y, *, sensitive_features): y of the white box is checked, not used."""
    X, y, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y)
    released = est._audit_engine().theta
    plain = whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                               released=released)
    with_xy = whitebox_inversion(est, X, y, sensitive_features=cols, candidates=cand,
                                 released=released)
    np.testing.assert_array_equal(plain.predictions, with_xy.predictions)
    with pytest.raises(ValueError, match="y is given without X"):
        whitebox_inversion(est, None, y, sensitive_features=cols)
    with pytest.raises(ValueError, match="y has 10 entries but X has 60 rows"):
        candidate_minimisers(est, X, y[:10], sensitive_features=cols)
    with pytest.raises(TypeError, match="sensitive_features"):
        whitebox_inversion(est, cols)          # the old positional form
    with pytest.raises(TypeError, match="positional"):
        prior_baseline(X, cols)
    reg = LinearRegression().fit(X, y)
    kw = {"X_population": X, "y_population": y, "n_grid": 3, "random_state": 0}
    one = regression_inversion(reg, X, y, sensitive_features=0, **kw)
    listed = regression_inversion(reg, X, y, sensitive_features=[0], **kw)
    np.testing.assert_array_equal(one.predictions, listed.predictions)
    with pytest.raises(ValueError, match="sensitive_features must name one numeric column"):
        regression_inversion(reg, X, y, sensitive_features=[0, 1], **kw)
