"""DPQuantileScaler and DPRowNormClipper: the exponential mechanism's density against
brute force over replace-one neighbours, its accuracy, the claim composed with the model
after it, and bad input."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from sklearn_privacy import privacy_claim
from sklearn_privacy.linear_model import DPLogisticRegression, with_declared_bounds
from sklearn_privacy.preprocessing import DPQuantileScaler, DPRowNormClipper
from sklearn_privacy.preprocessing._dp_quantile import dp_quantile, quantile_intervals


def quantile_log_density(values, low, high, q, epsilon, points):
    """Log density of ``dp_quantile``'s output at ``points``: the exponential
    mechanism's density written out from the intervals between sorted values."""
    edges, half_u = quantile_intervals(values, low, high, q)
    width = np.diff(edges)
    with np.errstate(divide="ignore"):
        logw = np.log(width) + epsilon * half_u
    top = np.max(logw)
    log_z = top + np.log(np.sum(np.exp(logw - top)))
    z = edges[1:-1]
    below = np.searchsorted(z, np.asarray(points), side="left")  # #{z_j < x}
    n = z.size
    return epsilon * (-np.abs(below - q * n)) / 2.0 - log_z


def test_density_ratio_never_exceeds_epsilon_over_replace_one_pairs():
    """Random and adversarial (a value moved from one end of the range to the other,
    duplicates, values outside the range) neighbours: the exact log density of the
    release, evaluated at every interval of both data sets, differs by at most epsilon,
    and the worst pair comes within 25 % of it (a mechanism charging half the
    budget fails)."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for trial in range(200):
        n = int(rng.integers(1, 12))
        low, high = 0.0, 10.0
        x = rng.uniform(-2, 12, n) if trial % 3 else np.round(rng.uniform(0, 10, n))
        xp = x.copy()
        j = int(rng.integers(n))
        xp[j] = high + 5 if (trial % 2 and x[j] < 5) else rng.uniform(-2, 12)
        q = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0]))
        eps = float(10 ** rng.uniform(-1, 1))
        # points: the middle of every interval of both data sets, and near the edges
        edges = np.unique(np.clip(np.concatenate([x, xp, [low, high]]), low, high))
        pts = np.concatenate([(edges[:-1] + edges[1:]) / 2, edges[:-1] + 1e-9,
                              edges[1:] - 1e-9])
        pts = pts[(pts > low) & (pts < high)]
        a = quantile_log_density(x, low, high, q, eps, pts)
        b = quantile_log_density(xp, low, high, q, eps, pts)
        ratio = float(np.max(np.abs(a - b)))
        assert ratio <= eps * (1 + 1e-9), (trial, ratio, eps)
        worst = max(worst, ratio / eps)
    assert worst > 0.75


def test_density_integrates_to_one_and_matches_the_sampler():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, 30)
    grid = np.linspace(0, 10, 200_001)[1:-1]
    dens = np.exp(quantile_log_density(x, 0.0, 10.0, 0.5, 2.0, grid))
    assert np.sum(dens) * (grid[1] - grid[0]) == pytest.approx(1.0, rel=1e-3)
    draws = np.array([dp_quantile(x, 0.0, 10.0, 0.5, 2.0, rng) for _ in range(4000)])
    below = np.searchsorted(np.sort(x), draws)
    # mass of "between the 13th and 17th value" by the density and by the sampler
    z = np.sort(x)
    mask = (grid > z[12]) & (grid < z[17])
    expected = np.sum(dens[mask]) * (grid[1] - grid[0])
    assert np.mean((below >= 13) & (below <= 17)) == pytest.approx(expected, abs=0.03)


def test_scaler_bounds_are_close_to_the_quantiles_and_the_output_is_in_range():
    rng = np.random.default_rng(2)
    X = rng.normal(50, 10, size=(5000, 3))
    sc = DPQuantileScaler([(0, 1000)] * 3, epsilon=1.0, random_state=0).fit(X)
    q = np.quantile(X, [0.02, 0.98], axis=0)
    np.testing.assert_allclose(sc.lower_, q[0], atol=2.0)
    np.testing.assert_allclose(sc.upper_, q[1], atol=2.0)
    out = sc.transform(X)
    assert out.min() >= -1.0 and out.max() <= 1.0
    assert sc.epsilon_ == 1.0 and sc.delta_ == 0.0


def test_claim_composes_with_the_model_and_bounds_are_read():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 3)) * [1, 10, 100]
    y = (X[:, 0] > 0).astype(int)
    pipe = with_declared_bounds(make_pipeline(
        DPQuantileScaler([(-10, 10), (-100, 100), (-1000, 1000)], epsilon=0.5),
        DPLogisticRegression(1.0, delta=0.0, classes=[0, 1])))
    assert pipe[-1].data_norm == pytest.approx(np.sqrt(1.25 * 3))
    pipe.fit(X, y)
    claim = privacy_claim(pipe)
    assert claim.is_private and claim.epsilon == pytest.approx(1.5)
    clip = with_declared_bounds(make_pipeline(
        DPRowNormClipper(max_norm=1000.0, epsilon=0.5),
        DPLogisticRegression(1.0, delta=0.0, classes=[0, 1]))).fit(X, y)
    assert clip[-1].data_norm == pytest.approx(np.sqrt(1.25))
    assert privacy_claim(clip).epsilon == pytest.approx(1.5)
    assert np.linalg.norm(clip[0].transform(X), axis=1).max() <= 1 + 1e-12


def test_bad_input():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="quantiles must be"):
        DPQuantileScaler(quantiles=(0.9, 0.1)).fit(X)
    with pytest.raises(ValueError, match="'epsilon' parameter"):
        DPQuantileScaler(epsilon=0.0).fit(X)
    with pytest.raises(ValueError, match="'quantile' parameter"):
        DPRowNormClipper(quantile=0.0).fit(X)
