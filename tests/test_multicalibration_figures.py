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
