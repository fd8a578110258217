"""Bucket edges, private-fit diagnostics, held-out check and the display for many groups."""

import warnings

import numpy as np
import pytest

from sklearn_privacy.metrics import multicalibration_error
from sklearn_privacy.utils._buckets import score_buckets


def _oracle_bucket(p, k):
    """Bucket by the documented intervals, with the float64 edges j / k."""
    j = min(int(p * k), k - 1)
    for cand in (j - 1, j, j + 1):
        if 0 <= cand < k and cand / k <= p and (p < (cand + 1) / k or cand == k - 1):
            return cand
    raise AssertionError(f"no bucket for {p!r}")


@pytest.mark.parametrize("k", [1, 2, 3, 7, 10, 49, 100, 997, 1000])
def test_buckets_exact_at_every_edge(k):
    edges = np.arange(k + 1) / k
    below = np.nextafter(edges, -np.inf)
    above = np.nextafter(edges, np.inf)
    p = np.concatenate([edges, below, above])
    p = p[(p >= 0) & (p <= 1)]
    got = score_buckets(p, k)
    # independent oracle: position among the sorted float edges
    want = np.minimum(np.searchsorted(edges, p, side="right") - 1, k - 1)
    np.testing.assert_array_equal(got, want)
    assert [_oracle_bucket(float(v), k) for v in p[:50]] == got[:50].tolist()


@pytest.mark.parametrize("k", [2**20 + 7, 2**40 - 3, 2**53])
def test_buckets_exact_for_huge_n_bins(k):
    rng = np.random.default_rng(0)
    j = np.unique(np.r_[rng.integers(1, k, size=200), 1, k - 1]).astype(np.int64)
    e = j.astype(float) / k
    p = np.concatenate([e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf)])
    p = p[(p >= 0) & (p <= 1)]
    got = score_buckets(p, k)
    lo = got.astype(float) / k
    hi = (got.astype(float) + 1) / k
    assert np.all(lo <= p)
    assert np.all((p < hi) | (got == k - 1))


def test_one_ulp_below_an_edge_is_in_the_lower_bucket():
    # floor(p * k) put nextafter(0.9, 0) in bucket 9 with 0.95 (error 0.425)
    p = [np.nextafter(0.9, 0), 0.95]
    assert score_buckets(p, 10).tolist() == [8, 9]
    assert multicalibration_error([1, 0], p, n_bins=10) == pytest.approx(0.95)


# ---------------------------------------------------------------- the private and exact fits
from _expected_warnings import MULTICALIBRATION_ADVICE, STRIP_RESETS_SEED  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402

from sklearn_privacy import PrivateMulticalibrator  # noqa: E402
from sklearn_privacy.multicalibration._multicalibrator import (  # noqa: E402
    _laplace_difference_sf,
    _update_probability,
)
from sklearn_privacy.utils import strip_for_release  # noqa: E402


class _ColumnZero(ClassifierMixin, BaseEstimator):
    """Predicts the probability stored in column 0 (a known, fixed base model)."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        p = np.asarray(X, dtype=float)[:, 0]
        return np.column_stack([1 - p, p])


def _twelve_groups(n, seed, shift=0.0):
    """Base probability in column 0 and 12 one-hot groups; group 1 is off by ``shift``."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.7, n)
    g = rng.integers(0, 12, n)
    X = np.column_stack([p, np.eye(12)[g]])
    truth = np.clip(p + shift * (g == 0), 0, 1)
    y = (rng.uniform(size=n) < truth).astype(int)
    G = np.column_stack([np.ones(n, bool), X[:, 1:].astype(bool)])
    return X, y, G


GROUPS = list(range(1, 13))


def _base():
    return FrozenEstimator(_ColumnZero().fit(None, None))


def test_laplace_difference_tail_matches_monte_carlo():
    rng = np.random.default_rng(0)
    for a, b in ((16.0, 8.0), (3.0, 3.0), (1.0, 5.0)):
        d = rng.laplace(0, a, 400_000) - rng.laplace(0, b, 400_000)
        for z in (-20.0, -3.0, 0.0, 2.5, 10.0, 40.0):
            assert _laplace_difference_sf(z, a, b) == pytest.approx(np.mean(d >= z), abs=4e-3)


def test_smallest_correctable_cell_is_where_the_update_probability_crosses():
    mc = PrivateMulticalibrator(groups=GROUPS, mechanism="numeric_sparse", epsilon=1.0)
    s = mc.smallest_correctable_cell(0.22, probability=0.5)
    # the setting: 13 groups x 10 bins, m = ln(130) / (0.1^2 * 1) = 487
    assert 487 <= s <= 600
    m, c, thr = 487, 6, 48.7
    assert _update_probability(s, 0.22, m, c, thr, 1.0) >= 0.5
    assert _update_probability(s - 1, 0.22, m, c, thr, 1.0) < 0.5
    # Monte Carlo of the mechanism's own noise at that size
    rng = np.random.default_rng(1)
    k = 200_000
    test = 0.22 * s + rng.laplace(0, 16 * c, k) >= thr + rng.laplace(0, 8 * c, k)
    count = s + rng.laplace(0, 4 * c, k) >= m
    assert np.mean(test & count) == pytest.approx(0.5, abs=0.02)
    # more budget, smaller cells; before fitting, no data needed
    assert mc.set_params(epsilon=8.0).smallest_correctable_cell(0.22) < s / 4
    with pytest.raises(ValueError, match="numeric_sparse"):
        PrivateMulticalibrator().smallest_correctable_cell(0.2)
    with pytest.raises(ValueError, match="probability"):
        mc.smallest_correctable_cell(0.2, probability=1.0)


@MULTICALIBRATION_ADVICE
@STRIP_RESETS_SEED
def test_private_fit_warns_when_no_cell_can_be_corrected():
    # issue: epsilon = 1, 12 groups, ~2,200 rows: 0 or 1 updates without any message
    X, y, _ = _twelve_groups(2200, 0, shift=0.22)
    with pytest.warns(UserWarning, match="min_cell_size_=487") as rec:
        mc = PrivateMulticalibrator(_base(), GROUPS, mechanism="numeric_sparse",
                                    random_state=0).fit(X, y)
    assert "smallest_correctable_cell" in str(rec[0].message)
    assert mc.min_cell_size_ == 487
    assert 0 < mc.largest_cell_size_ < mc.min_cell_size_
    assert "largest_cell_size_" not in vars(strip_for_release(mc))
    # enough budget for cells of ~30 rows: no group is out of reach ...
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        big = PrivateMulticalibrator(_base(), GROUPS, mechanism="numeric_sparse", epsilon=50.0,
                                     random_state=0).fit(X, y)
    assert big.largest_cell_sizes_.min() >= big.smallest_correctable_cell(1.0)
    assert not any("have no" in str(w.message) or "min_cell_size_=" in str(w.message)
                   for w in rec)
    # ... but the c answers of NumericSparse are spent before the last groups: said so
    assert big.n_updates_ == big.max_updates_
    assert any("stopped after max_updates_" in str(w.message) for w in rec)
    # a middle budget: the whole population can be corrected, the 12 groups cannot
    with pytest.warns(UserWarning, match="Some groups have no") as rec:
        mid = PrivateMulticalibrator(_base(), GROUPS, mechanism="numeric_sparse", epsilon=8.0,
                                     random_state=0).fit(X, y)
    # the message holds no exact count and no group name (the pickle drops the counts)
    assert not any("12 of 13" in str(w.message) for w in rec)
    need = mid.smallest_correctable_cell(1.0)
    assert mid.largest_cell_sizes_[0] >= need
    assert int(np.sum(mid.largest_cell_sizes_ < need)) == 12
    assert "largest_cell_sizes_" not in vars(strip_for_release(mid))


def test_exact_fit_warns_on_noise_updates_and_validation_keeps_the_base():
    # a calibrated base: every update of the exact fit is sampling noise
    X, y, _ = _twelve_groups(2000, 0)
    Xte, yte, Gte = _twelve_groups(20000, 1)

    def test_error(model):
        return multicalibration_error(yte, model.predict_proba(Xte)[:, 1], Gte, min_size=20)

    base_error = multicalibration_error(yte, Xte[:, 0], Gte, min_size=20)
    with pytest.warns(UserWarning, match="validation_fraction"):
        plain = PrivateMulticalibrator(_base(), GROUPS).fit(X, y)
    assert plain.n_updates_ > 5
    assert test_error(plain) > base_error + 0.05       # overfitting small cells
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        held = PrivateMulticalibrator(_base(), GROUPS, validation_fraction=0.3,
                                      random_state=0).fit(X, y)
    assert held.validation_errors_.shape == (len(held.validation_errors_),)
    assert held.n_updates_ == int(np.argmin(held.validation_errors_))
    assert test_error(held) < test_error(plain)


def test_validation_keeps_updates_that_generalise():
    X, y, _ = _twelve_groups(6000, 2, shift=0.25)
    Xte, yte, Gte = _twelve_groups(20000, 3, shift=0.25)
    held = PrivateMulticalibrator(_base(), GROUPS, validation_fraction=0.3,
                                  random_state=0).fit(X, y)
    before = multicalibration_error(yte, Xte[:, 0], Gte, min_size=20)
    after = multicalibration_error(yte, held.predict_proba(Xte)[:, 1], Gte, min_size=20)
    assert held.n_updates_ >= 1
    assert after < before - 0.1


def test_validation_fraction_is_refused_under_a_mechanism():
    X, y, _ = _twelve_groups(500, 0)
    with pytest.raises(ValueError, match="mechanism=None"):
        PrivateMulticalibrator(_base(), GROUPS, mechanism="numeric_sparse",
                               validation_fraction=0.2, random_state=0).fit(X, y)


# ---------------------------------------------------------------- the display, 12+ groups
def _display_data(n_groups=13, n=6000, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_groups, n)
    p = rng.uniform(0.05, 0.95, n)
    bias = np.linspace(-0.3, 0.3, n_groups)[g]
    y = (rng.uniform(size=n) < np.clip(p + bias, 0, 1)).astype(int)
    G = np.eye(n_groups, dtype=bool)[g]
    return y, p, G, [f"group number {k} with a long name" for k in range(n_groups)]


def test_display_uses_small_multiples_beyond_four_groups():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_privacy.multicalibration import MulticalibrationDisplay

    y, p, G, names = _display_data()
    disp = MulticalibrationDisplay.from_predictions(y, p, G, y_prob_before=p, group_names=names,
                                                    min_size=20)
    try:
        visible = [a for a in disp.axes_ if a.get_visible()]
        assert len(visible) == 13 and disp.ax_ is visible[0]
        # one legend for the figure, no legend on any axes (none covers a plot)
        assert all(a.get_legend() is None for a in visible)
        assert len(disp.figure_.legends) == 1
        errors = disp.group_errors("after")
        for a, name, e in zip(visible, names, errors, strict=True):
            assert name[:20] in a.get_title() and f"after {e:.2f}" in a.get_title()
        # the worst groups, worst first: the most biased groups are at both ends
        top = MulticalibrationDisplay.from_predictions(y, p, G, group_names=names, worst=3,
                                                       min_size=20)
        want = np.argsort(-errors)[:3]
        drawn = [k[0] for k in top.lines_]
        assert drawn == [names[k] for k in want]
        assert set(want) <= {0, 1, 11, 12}
        # an overlay keeps its legend outside the axes and gives each group its colour
        over = MulticalibrationDisplay.from_predictions(y, p, G, group_names=names, worst=4,
                                                        layout="overlay")
        over.figure_.canvas.draw()
        legend = over.ax_.get_legend().get_window_extent()
        assert legend.x0 >= over.ax_.get_window_extent().x1
        colours = [line.get_color() for line in over.lines_.values()]
        assert len(set(colours)) == 4
    finally:
        plt.close("all")


def test_display_rejects_bad_layout_arguments():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_privacy.multicalibration import MulticalibrationDisplay

    y, p, G, names = _display_data(n_groups=6, n=600)
    try:
        with pytest.raises(ValueError, match="worst"):
            MulticalibrationDisplay.from_predictions(y, p, G, worst=0)
        with pytest.raises(ValueError, match="layout"):
            MulticalibrationDisplay.from_predictions(y, p, G, layout="tiles")
        _, ax = plt.subplots()
        with pytest.raises(ValueError, match="layout='overlay'"):
            MulticalibrationDisplay.from_predictions(y, p, G, ax=ax)
        disp = MulticalibrationDisplay.from_predictions(y, p, G, ax=ax, layout="overlay")
        assert disp.ax_ is ax
        _, axes = plt.subplots(2, 3)
        disp = MulticalibrationDisplay.from_predictions(y, p, G, ax=axes)
        assert disp.ax_ is axes[0, 0]
    finally:
        plt.close("all")
