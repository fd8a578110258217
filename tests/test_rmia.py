import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_privacy.attacks import (
    LiRAResult,
    MembershipInferenceResult,
    evaluate_scores,
    lira,
    make_membership_scorer,
    rmia,
)


def _small_case(seed=0, n=60):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=n) > 0).astype(int)
    members = np.zeros(n, bool)
    members[rng.permutation(n)[: n // 2]] = True
    target = LogisticRegression(C=50.0).fit(X[members], y[members])
    return X, y, members, target


def _paper_scores(target, refs, ref_in, X, y, z_rows, online, a, gamma):
    """The paper's score, one (x, z) pair at a time, in plain probabilities."""
    def pr(model, i):
        return model.predict_proba(X[i:i + 1])[0, list(model.classes_).index(y[i])]

    def marginal(i):
        if online:
            return np.mean([pr(m, i) for m in refs])
        p_out = np.mean([pr(m, i) for m, inside in zip(refs, ref_in[:, i], strict=True)
                         if not inside])
        return 0.5 * ((1 + a) * p_out + (1 - a))

    ratio = {i: pr(target, i) / marginal(i) for i in range(len(y))}
    scores = np.empty(len(y))
    for i in range(len(y)):
        count = 0
        for z in z_rows:
            if ratio[i] / ratio[z] >= gamma:
                count += 1
        scores[i] = count / len(z_rows)
    return scores


@pytest.mark.parametrize("online, a, gamma, n_population",
                         [(True, 0.33, 1.0, None), (False, 0.33, 1.0, None),
                          (False, 1.0, 2.0, 25), (True, 0.5, 0.5, 40)])
def test_scores_equal_the_papers_formula(online, a, gamma, n_population):
    X, y, members, target = _small_case()
    res = rmia(target, X, y, members, n_reference_models=4, online=online, offline_a=a, gamma=gamma,
               n_population=n_population, random_state=3)
    # independent reference models: refits of the target's hyper-parameters on the
    # reported training halves (lbfgs is deterministic)
    refs = [LogisticRegression(C=50.0).fit(X[m], y[m]) for m in res.shadow_in]
    assert np.all(res.shadow_in.sum(axis=0) == 2)  # balanced design
    z_rows = res.population_rows
    assert len(z_rows) == (len(y) if n_population is None else n_population)
    expected = _paper_scores(target, refs, res.shadow_in, X, y, z_rows, online, a, gamma)
    np.testing.assert_allclose(res.scores_members, expected[members], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.scores_nonmembers, expected[~members], rtol=0, atol=1e-12)
    assert 0 <= expected.min() < expected.max() <= 1  # the test is not degenerate
    assert res.attack == ("rmia_online" if online else "rmia_offline")


def test_same_reference_models_and_result_type_as_lira():
    X, y, members, target = _small_case(1, 120)
    r = rmia(target, X, y, members, n_reference_models=4, random_state=7)
    li = lira(target, X, y, members, n_reference_models=4, random_state=7)
    assert isinstance(r, LiRAResult) and isinstance(r, MembershipInferenceResult)
    np.testing.assert_array_equal(r.shadow_in, li.shadow_in)
    # the same fitted models: LiRA's logit statistic from RMIA's log-probabilities
    logp = r.shadow_statistics
    np.testing.assert_allclose(logp - np.log1p(-np.exp(logp)), li.shadow_statistics,
                               rtol=1e-9, atol=1e-9)
    # the result's scores, put back on their rows, feed evaluate_scores unchanged
    scores = np.empty(len(y))
    scores[members], scores[~members] = r.scores_members, r.scores_nonmembers
    again = evaluate_scores(members, scores, random_state=0)
    np.testing.assert_array_equal(again.scores_members, r.scores_members)
    np.testing.assert_array_equal(again.scores_nonmembers, r.scores_nonmembers)
    assert 0 <= again.auc <= 1


def test_rmia_finds_an_overfit_tree_and_not_a_constant_model():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    members = np.zeros(400, bool)
    members[:200] = True
    tree = DecisionTreeClassifier(random_state=0).fit(X[:200], y[:200])
    res = rmia(tree, X, y, members, n_reference_models=2, random_state=0)
    assert res.auc > 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = LogisticRegression(C=1e-8).fit(X[:200], y[:200])
    res = rmia(flat, X, y, members, n_reference_models=4, online=False, random_state=0)
    assert abs(res.auc - 0.5) < 0.1


def test_parallel_and_sequential_fits_agree(capsys):
    X, y, members, target = _small_case(2, 80)
    a = rmia(target, X, y, members, n_reference_models=4, random_state=0)
    assert capsys.readouterr().out == ""
    b = rmia(target, X, y, members, n_reference_models=4, random_state=0, n_jobs=2,
             verbose=1)
    assert capsys.readouterr().out.splitlines() == [
        f"[rmia] done {k} of 4 reference models fitted" for k in range(1, 5)]
    np.testing.assert_array_equal(a.shadow_statistics, b.shadow_statistics)
    np.testing.assert_array_equal(a.scores_members, b.scores_members)


def test_bad_input_names_the_parameter():
    X, y, members, target = _small_case()
    with pytest.raises(ValueError, match="n_reference_models"):
        rmia(target, X, y, members, n_reference_models=1)
    with pytest.raises(TypeError, match="n_reference_models"):
        rmia(target, X, y, members, n_reference_models=2.5)
    with pytest.raises(ValueError, match="offline_a"):
        rmia(target, X, y, members, offline_a=1.5)
    with pytest.raises(ValueError, match="gamma"):
        rmia(target, X, y, members, gamma=0.0)
    with pytest.raises(ValueError, match="gamma"):
        rmia(target, X, y, members, gamma=float("nan"))
    with pytest.raises(ValueError, match="n_population"):
        rmia(target, X, y, members, n_population=61)
    with pytest.raises(ValueError, match="members"):
        rmia(target, X, y, np.ones(10, bool))
    with pytest.raises(ValueError, match="y has 59 entries"):
        rmia(target, X, y[:-1], members)
    with pytest.raises(TypeError, match="fit_params"):
        rmia(target, X, y, members, fit_params=[1])
    reg = LinearRegression().fit(X, y.astype(float))
    with pytest.raises(ValueError, match="predict_proba"):
        rmia(reg, X, y, members)


def test_scorer_and_membership_pipeline_unchanged():
    # the scorers of the package still build on the same result type
    X, y, members, target = _small_case()
    scorer = make_membership_scorer(X, y, attack="loss", random_state=0)
    assert np.isfinite(scorer(target, X[~members], y[~members]))
