"""multicalibration_error and its scorer: brute-force oracle, huge n_bins, input checks."""

import time
from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_privacy.metrics import make_multicalibration_scorer, multicalibration_error


def _oracle(y, p, G, n_bins, min_size, weighting):
    """Cell errors by dictionaries, one row at a time (independent of the vectorised code)."""
    cells = defaultdict(lambda: [0.0, 0])
    for i in range(len(y)):
        bucket = min(int(p[i] * n_bins), n_bins - 1)
        for g in range(G.shape[1]):
            if G[i, g]:
                cells[g, bucket][0] += y[i] - p[i]
                cells[g, bucket][1] += 1
    valid = {k: (abs(s) / c, c) for k, (s, c) in cells.items() if c >= min_size}
    if not valid:
        return None  # undefined: the metric must refuse
    if weighting == "max":
        return max(e for e, _ in valid.values())
    if weighting == "size_weighted":
        return sum(e * c for e, c in valid.values()) / sum(c for _, c in valid.values())
    per = []
    for g in range(G.shape[1]):
        mine = [(e, c) for (gg, _), (e, c) in valid.items() if gg == g]
        per.append(sum(e * c for e, c in mine) / sum(c for _, c in mine) if mine else np.nan)
    if weighting == "per_group_ece":
        return np.asarray(per)
    return float(np.nanmean(per))


@pytest.mark.parametrize("n_bins", [1, 3, 10, 997, 10**9, 2**53])
@pytest.mark.parametrize("weighting", ["max", "size_weighted", "mean_group_ece",
                                       "per_group_ece"])
def test_matches_a_brute_force_oracle(n_bins, weighting):
    rng = np.random.RandomState(n_bins % 1000)
    n = 300
    y = rng.randint(0, 2, n)
    p = np.r_[rng.uniform(size=n - 3), 0.0, 1.0, 0.5]
    G = rng.uniform(size=(n, 4)) < 0.4
    G[:, 3] = False
    G[:5, 3] = True  # a small group: its cells fall under min_size at min_size=2 or 3
    for min_size in (1, 2, 3):
        want = _oracle(y, p, G, n_bins, min_size, weighting)
        if want is None:
            with pytest.raises(ValueError, match="min_size"):
                multicalibration_error(y, p, G, n_bins=n_bins, min_size=min_size,
                                       weighting=weighting)
            continue
        got = multicalibration_error(y, p, G, n_bins=n_bins, min_size=min_size,
                                     weighting=weighting)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_huge_n_bins_neither_allocates_nor_hangs():
    rng = np.random.RandomState(0)
    n = 20000
    y = rng.randint(0, 2, n)
    p = rng.uniform(size=n)
    G = rng.uniform(size=(n, 20)) < 0.5
    t0 = time.perf_counter()
    err = multicalibration_error(y, p, G, n_bins=10**9, weighting="size_weighted")
    assert time.perf_counter() - t0 < 5.0
    # at 1e9 buckets every cell holds one row: the error is the mean |y - p| over members
    resid = np.abs(y - p)
    assert err == pytest.approx((resid[:, None] * G).sum() / G.sum(), rel=1e-12)


def test_min_size_nan_and_nan_groups_are_refused():
    y = np.array([0, 1, 0, 1])
    p = np.array([0.2, 0.7, 0.4, 0.9])
    with pytest.raises((ValueError, TypeError), match="min_size"):
        multicalibration_error(y, p, min_size=np.nan)
    G = np.array([[1.0], [np.nan], [0.0], [1.0]])
    with pytest.raises(ValueError, match="groups"):
        multicalibration_error(y, p, G)
    with pytest.raises(ValueError, match="groups"):
        multicalibration_error(y, p, np.array([[1], [2], [0], [1]]))  # not 0/1


def test_no_cell_reaching_min_size_is_an_error_not_zero():
    y = np.array([0, 1, 0, 1])
    p = np.array([0.2, 0.7, 0.4, 0.9])
    with pytest.raises(ValueError, match="min_size"):
        multicalibration_error(y, p, min_size=5)
    # a group with no qualifying cell reports NaN in per_group_ece, not 0
    G = np.array([[1, 1], [1, 0], [1, 0], [1, 0]], bool)
    per = multicalibration_error(y, p, G, n_bins=1, min_size=2, weighting="per_group_ece")
    assert per[0] == pytest.approx(abs(np.mean(y - p))) and np.isnan(per[1])
    assert multicalibration_error(y, p, G, n_bins=1, min_size=2,
                                  weighting="mean_group_ece") == pytest.approx(per[0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(y_true=[0, 2, 1]), "y_true"),
    (dict(y_true=[0, np.nan, 1]), "y_true"),
    (dict(y_true=["a", "b", "a"]), "y_true"),
    (dict(y_true=[0, 1]), "y_true.*y_prob|y_prob.*y_true"),
    (dict(y_true=[[0, 1, 1]]), "y_true"),
    (dict(y_prob=[0.1, 1.2, 0.3]), "y_prob"),
    (dict(y_prob=[0.1, -0.1, 0.3]), "y_prob"),
    (dict(y_prob=[0.1, np.nan, 0.3]), "y_prob"),
    (dict(y_prob=[0.1, np.inf, 0.3]), "y_prob"),
    (dict(y_prob=["0.1", "0.2", "0.3"]), "y_prob"),
    (dict(y_prob=[[0.1, 0.2, 0.3]]), "y_prob"),
    (dict(y_true=[], y_prob=[]), "empty"),
    (dict(groups=np.ones((2, 1), bool)), "groups"),
    (dict(groups=np.ones((3, 1, 1), bool)), "groups"),
    (dict(groups=np.ones((3, 0), bool)), "groups"),
    (dict(groups=[["a"], ["b"], ["c"]]), "groups"),
    (dict(n_bins=0), "n_bins"),
    (dict(n_bins=2.5), "n_bins"),
    (dict(n_bins=True), "n_bins"),
    (dict(n_bins=np.nan), "n_bins"),
    (dict(n_bins=2**60), "n_bins"),
    (dict(min_size=0), "min_size"),
    (dict(min_size=2.5), "min_size"),
    (dict(min_size=-1), "min_size"),
    (dict(weighting="mean"), "weighting"),
    (dict(weighting=["max"]), "weighting"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    args = dict(y_true=[0, 1, 1], y_prob=[0.1, 0.8, 0.6])
    args.update(kwargs)
    y_true, y_prob = args.pop("y_true"), args.pop("y_prob")
    with pytest.raises((ValueError, TypeError), match=match):
        multicalibration_error(y_true, y_prob, **args)


def test_accepted_input_forms():
    y = np.array([True, False, True])
    p = [0.9, 0.2, 0.6]
    assert multicalibration_error(y, p, n_bins=1) == pytest.approx(abs(np.mean(y - np.r_[p])))
    G = sp.csr_matrix(np.array([[1], [0], [1]]))
    assert multicalibration_error(y, p, G, n_bins=1) == pytest.approx(0.25)
    assert multicalibration_error(y, p, np.array([1, 0, 1]), n_bins=1) == pytest.approx(0.25)
    # one row
    assert multicalibration_error([1], [0.75]) == pytest.approx(0.25)


def test_scorer_validates_its_parameters():
    for kwargs, match in ((dict(n_bins=0), "n_bins"), (dict(min_size=np.nan), "min_size"),
                          (dict(weighting="per_group_ece"), "one number")):
        with pytest.raises((ValueError, TypeError), match=match):
            make_multicalibration_scorer(**kwargs)


def test_scorer_names_a_classifier_without_predict_proba():
    """A margin classifier is refused by name, inside a search as well.

    Before: ``AttributeError: 'LinearSVC' object has no attribute 'predict_proba'`` from
    inside the scorer (and, in ``GridSearchCV``, a NaN score per candidate).
    """
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=(120, 2)), rng.randint(0, 2, size=(120, 1))])
    y = (X[:, 0] > 0).astype(int)
    scorer = make_multicalibration_scorer(groups=[2])
    with pytest.raises(TypeError, match="needs predict_proba; LinearSVC has none"):
        scorer(LinearSVC(random_state=0).fit(X, y), X, y)
    with pytest.raises(TypeError, match="LinearSVC has none"):
        GridSearchCV(LinearSVC(random_state=0), {"C": [1.0]}, scoring=scorer, cv=2,
                     error_score="raise").fit(X, y)


def test_group_specifications_without_data_say_how_to_evaluate_them():
    """``groups`` of the metric (and the display) is a membership matrix: specifications
    there have no data to be evaluated on.

    Before: "groups has 2 rows but y_true has 200", as if a matrix had the wrong length.
    """
    from sklearn_privacy.multicalibration import Group, MulticalibrationDisplay, membership_matrix

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=200), rng.randint(0, 2, size=200)])
    y = rng.randint(0, 2, size=200)
    p = np.full(200, 0.5)
    for groups in ([0, 1], [Group(1)]):
        with pytest.raises(ValueError, match=r"membership_matrix\(groups, X\)"):
            multicalibration_error(y, p, groups)
    with pytest.raises(ValueError, match=r"membership_matrix\(groups, X\)"):
        MulticalibrationDisplay.from_predictions(y, p, [Group(1)])
    G = membership_matrix([Group(1)], X)
    assert multicalibration_error(y, p, G) == multicalibration_error(y, p, X[:, 1] == 1)
