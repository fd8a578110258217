"""NumericSparse: noise source, parameter validation, one draw per answer coordinate."""

import numpy as np
import pytest
from scipy.stats import ks_2samp

from sklearn_privacy.mechanisms import NumericSparse

# Level of the two-sample tests below: a correct implementation fails one of them with
# probability 1e-6 per run (the draws use fresh OS entropy, so the outcome is random; at
# 1e-4 a clean CI run did fail once). What they catch is the wrong family or a grossly
# wrong scale (300 Laplace draws at 3x the scale: p < 1e-7 in 200 of 200 trials), not a
# small scale error; repeated or seeded noise is caught by the equality checks.
KS_LEVEL = 1e-6


def _answer_noise_after_global_seed(n_runs, seed=1):
    """Answer noise of ``n_runs`` fresh mechanisms, each created right after np.random.seed."""
    out = np.empty(n_runs)
    for r in range(n_runs):
        np.random.seed(seed)  # noqa: NPY002
        ns = NumericSparse(1.0, 1, -1e9, 1.0, [1.0], test_fraction=0.5)
        out[r] = ns.query(0.0, [0.0])[0]
    return out


def test_random_state_none_ignores_and_keeps_the_global_state():
    np.random.seed(1)  # noqa: NPY002
    before = np.random.get_state()  # noqa: NPY002
    ns = NumericSparse(1.0, 3, -1e9, 1.0, [1.0, 2.0])
    answers = [ns.query(0.0, [0.0, 0.0]) for _ in range(3)]
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0] and before[2:] == after[2:]
    np.testing.assert_array_equal(before[1], after[1])  # global stream not advanced
    np.random.seed(1)  # noqa: NPY002
    ns2 = NumericSparse(1.0, 3, -1e9, 1.0, [1.0, 2.0])
    answers2 = [ns2.query(0.0, [0.0, 0.0]) for _ in range(3)]
    assert not np.any(np.asarray(answers) == np.asarray(answers2))


def test_answer_noise_is_fresh_laplace_whatever_the_global_seed():
    # answer scale: c * sensitivity / eps2 = 1 * 1 / 0.5 = 2
    noise = _answer_noise_after_global_seed(300)
    assert np.unique(noise).size == noise.size  # not one value repeated
    reference = np.random.default_rng(20240601).laplace(0.0, 2.0, size=3000)
    assert ks_2samp(noise, reference).pvalue > KS_LEVEL


def _oracle_stream(seed, eps, c, thr, d, sens, frac, tests, answers):
    """Independent replay of the documented algorithm on RandomState(seed)."""
    rs = np.random.RandomState(seed)
    eps1 = frac * eps
    eps2_k = (eps - eps1) / len(sens)
    noisy_thr = thr + rs.laplace(0.0, 2 * c * d / eps1)
    out, k = [], 0
    for t, a in zip(tests, answers, strict=True):
        if k >= c:
            out.append(None)
            continue
        if t + rs.laplace(0.0, 4 * c * d / eps1) < noisy_thr:
            out.append(None)
            continue
        out.append(np.asarray(a, float) + rs.laplace(0.0, c * np.asarray(sens) / eps2_k))
        k += 1
        if k < c:
            noisy_thr = thr + rs.laplace(0.0, 2 * c * d / eps1)
    return out


def test_int_seed_reproduces_the_documented_stream():
    tests = [0.0, 50.0, 3.0, 80.0, 120.0, 1.0, 400.0, 400.0]
    answers = [[t, 1.0] for t in tests]
    ns = NumericSparse(2.0, 3, 40.0, 2.0, [2.0, 1.0], test_fraction=0.5, random_state=7)
    got = [ns.query(t, a) for t, a in zip(tests, answers, strict=True)]
    want = _oracle_stream(7, 2.0, 3, 40.0, 2.0, [2.0, 1.0], 0.5, tests, answers)
    assert [g is None for g in got] == [w is None for w in want]
    for g, w in zip(got, want, strict=True):
        if g is not None:
            np.testing.assert_array_equal(g, w)


def test_answer_length_must_match_the_sensitivities():
    ns = NumericSparse(1.0, 2, -1e9, 1.0, [1.0], random_state=0)
    with pytest.raises(ValueError, match="answer_values.*3.*answer_sensitivities.*1"):
        ns.query(0.0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="answer_values"):
        ns.query(0.0, [])
    with pytest.raises(ValueError, match="answer_values"):
        ns.query(0.0, [[1.0]])
    assert ns.n_queries_ == 0  # refused queries are not asked


def test_each_answer_coordinate_gets_its_own_draw():
    diffs = []
    for seed in range(200):
        ns = NumericSparse(1.0, 1, -1e9, 1.0, [1.0, 1.0, 1.0], random_state=seed)
        a = ns.query(0.0, [5.0, 5.0, 5.0])
        diffs.append([a[0] - a[1], a[1] - a[2]])
    diffs = np.asarray(diffs)
    assert np.all(diffs != 0)
    # independent Laplace(s) coordinates: the difference has variance 4 s^2 (s = 1 / (1/27))
    s = 1.0 / ((1 - 8 / 9) / 3)
    assert np.var(diffs[:, 0]) == pytest.approx(4 * s**2, rel=0.35)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "3", None, [1.0]])
def test_query_refuses_non_finite_or_non_numeric_test_values(bad):
    ns = NumericSparse(1.0, 1, 1e9, 1.0, [1.0], random_state=0)
    with pytest.raises((ValueError, TypeError), match="test_value"):
        ns.query(bad, [0.0])
    assert ns.n_queries_ == 0


@pytest.mark.parametrize("bad", [[np.nan], [np.inf], ["a"]])
def test_query_refuses_non_finite_answer_values(bad):
    ns = NumericSparse(1.0, 1, -1e9, 1.0, [1.0], random_state=0)
    with pytest.raises((ValueError, TypeError), match="answer_values"):
        ns.query(0.0, bad)


def test_nan_test_value_does_not_pass_the_threshold():
    ns = NumericSparse(1.0, 1, 1e12, 1.0, [1.0], random_state=0)
    with pytest.raises(ValueError, match="test_value"):
        ns.query(float("nan"), [0.0])
    assert not ns.halted_ and ns.n_answers_ == 0


GOOD = dict(epsilon=1.0, max_answers=2, threshold=1.0, test_sensitivity=1.0,
            answer_sensitivities=[1.0], test_fraction=0.5)


@pytest.mark.parametrize("param, value", [
    ("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", np.nan), ("epsilon", np.inf),
    ("epsilon", True), ("epsilon", "1"), ("epsilon", None),
    ("max_answers", 0), ("max_answers", 2.5), ("max_answers", 2.0), ("max_answers", True),
    ("max_answers", "2"), ("max_answers", np.nan), ("max_answers", -1),
    ("threshold", np.nan), ("threshold", np.inf), ("threshold", "1"), ("threshold", False),
    ("test_sensitivity", 0.0), ("test_sensitivity", -1.0), ("test_sensitivity", np.nan),
    ("test_sensitivity", np.inf), ("test_sensitivity", True),
    ("answer_sensitivities", []), ("answer_sensitivities", [np.nan]),
    ("answer_sensitivities", [np.inf]), ("answer_sensitivities", [0.0]),
    ("answer_sensitivities", [[1.0]]), ("answer_sensitivities", "abc"),
    ("answer_sensitivities", [True]), ("answer_sensitivities", None),
    ("test_fraction", 0.0), ("test_fraction", 1.0), ("test_fraction", np.nan),
    ("test_fraction", True), ("test_fraction", "0.5"),
    ("random_state", 1.5), ("random_state", "seed"),
])
def test_constructor_refuses_bad_parameters_naming_them(param, value):
    with pytest.raises((ValueError, TypeError), match=param):
        NumericSparse(**{**GOOD, param: value})


def test_constructor_accepts_numpy_scalars():
    ns = NumericSparse(np.float32(1.0), np.int64(2), np.float64(0.0), np.float32(2.0),
                       np.array([1.0, 2.0]), random_state=np.random.default_rng(0))
    assert ns.max_answers == 2 and isinstance(ns.max_answers, int)
    assert ns.query(1e9, np.array([1.0, 2.0])) is not None


def test_lazy_query_equals_query_on_exact_values():
    """_query_lazy with an approximation within its tolerance: same answers, same noise
    stream, same accounting as query on the exact values; exact() only called near or
    above the noisy threshold."""
    rng = np.random.RandomState(3)
    exact_vals = np.r_[rng.uniform(0, 15, 300), np.full(40, 40.0)]  # some near T = 40
    rng.shuffle(exact_vals)
    kw = dict(epsilon=50.0, max_answers=25, threshold=40.0, test_sensitivity=2.0,
              answer_sensitivities=[2.0, 1.0], test_fraction=0.5)
    a, b = NumericSparse(**kw, random_state=7), NumericSparse(**kw, random_state=7)
    calls = 0
    for v in exact_vals:
        tol = 1e-6
        approx = v + rng.uniform(-tol, tol)

        def exact(v=v):
            nonlocal calls
            calls += 1
            return v, [v, 3.0]

        ra, rb = a.query(v, [v, 3.0]), b._query_lazy(approx, tol, exact)
        assert (ra is None) == (rb is None)
        if ra is not None:
            np.testing.assert_array_equal(ra, rb)
    assert (a.n_queries_, a.n_answers_, a.halted_) == (b.n_queries_, b.n_answers_, b.halted_)
    assert a.n_answers_ > 5 and a.n_queries_ > 100
    assert calls < a.n_queries_  # far-below tests never computed the exact value
