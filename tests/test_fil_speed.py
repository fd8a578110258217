"""Fast paths of the FIL engine against independent oracles.

The eigenvalue solver is checked against ``numpy.linalg.eigvalsh`` of the explicit
matrices, including rows whose largest eigenvalue lies below the top pole (two roots of
the secular function above the second pole) and arbitrary starting points; the Hessian
reuse and the IRFIL warm starts against fresh computations.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_privacy import IRFILLinearRegression, IRFILLogisticRegression
from sklearn_privacy._glm._core import LOGISTIC, SQUARED, augment, fit_minimiser, weighted_gram
from sklearn_privacy._linalg._secular import largest_eigenvalue_rank2
from sklearn_privacy.fil._eta._engine import FILEngine


def _explicit_top(s, d, A, v, alpha, beta):
    out, scale = [], []
    for i in range(len(s)):
        M = (np.diag(s[i] * d) + alpha[i] * np.outer(A[i], A[i])
             + beta[i] * (np.outer(A[i], v) + np.outer(v, A[i])))
        ev = np.linalg.eigvalsh(M)
        out.append(ev[-1])
        scale.append(np.abs(ev).max())
    return np.array(out), np.array(scale)


def _rows_below_pole(m, p, seed):
    """Rows with a large pole term and a small update: half of them have their largest
    eigenvalue below s * max(d), with a second eigenvalue between the two top poles."""
    rng = np.random.default_rng(seed)
    d = np.sort(rng.uniform(0.5, 1.0, p))
    s = rng.uniform(0.5, 2.0, m)
    A = 0.05 * rng.normal(size=(m, p))
    v = 0.05 * rng.normal(size=p)
    alpha = rng.uniform(0.0, 0.2, m)
    beta = rng.normal(size=m)
    return s, d, A, v, alpha, beta


@pytest.mark.parametrize("seed", range(4))
def test_solver_below_the_pole_matches_eigvalsh(seed):
    s, d, A, v, alpha, beta = _rows_below_pole(400, 12, seed)
    ref, scale = _explicit_top(s, d, A, v, alpha, beta)
    assert np.mean(ref < s * d.max()) > 0.2  # the case the bisection branch used to handle
    got = largest_eigenvalue_rank2(s, d, A, v, alpha, beta)
    assert np.max(np.abs(got - ref) / scale) <= 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), low=st.floats(0.0, 1.0), high=st.floats(1.0, 3.0))
def test_solver_result_does_not_depend_on_the_starting_point(seed, low, high):
    """Regression: a start below the second root once converged to that root (a Newton
    step below one ulp was read as an upward step); the result is now the largest root
    from any start."""
    s, d, A, v, alpha, beta = _rows_below_pole(60, 7, seed)
    ref, scale = _explicit_top(s, d, A, v, alpha, beta)
    rng = np.random.default_rng(seed)
    x0 = ref * rng.uniform(low, high, ref.size)
    got = largest_eigenvalue_rank2(s, d, A, v, alpha, beta, x0=x0)
    assert np.max(np.abs(got - ref) / scale) <= 1e-12


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_gram_is_the_dense_definition(fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 7))
    c = rng.uniform(0.0, 3.0, 1000)
    Xt = augment(X, fit_intercept)
    ref = Xt.T @ (c[:, None] * Xt)
    # several chunks, and the sparse path
    got = weighted_gram(X, c, fit_intercept, chunk_bytes=8 * 8 * 100)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-12)
    import scipy.sparse as sp

    np.testing.assert_allclose(weighted_gram(sp.csr_matrix(X), c, fit_intercept), ref,
                               rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_hessian_returned_by_the_fit_gives_the_same_engine(loss):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=400)
    if loss is LOGISTIC:
        y = (y > 0).astype(float)
    sw = rng.uniform(0.5, 2.0, 400)
    kw = dict(loss=loss, alpha=1e-2, fit_intercept=True, sample_weight=sw)
    theta, _, hess = fit_minimiser(X, y, return_hessian=True, **kw)
    fresh = FILEngine(X, y, theta, **kw)
    reused = FILEngine(X, y, theta, hessian=hess, **kw)
    np.testing.assert_allclose(reused.H, fresh.H, rtol=1e-12)
    np.testing.assert_allclose(reused.per_example_sq_norms(), fresh.per_example_sq_norms(),
                               rtol=1e-10)


@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
def test_irfil_verbose_prints_one_line_per_iteration(Est, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.3 * rng.normal(size=200)
    if Est is IRFILLogisticRegression:
        y = (y > 0).astype(int)
    est = Est(alpha=1e-2, eta_max_iter=3, verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == est.n_iter_ + 1 == 4
    for t, line in enumerate(lines):
        assert f"iteration {t}/3" in line
        cv = float(line.split("cv ")[1].split(",")[0])
        assert cv == pytest.approx(est.eta_history_["cv"][t], rel=1e-3)
        mean = float(line.split("eta mean ")[1].split(",")[0])
        assert mean == pytest.approx(est.eta_history_["mean"][t], rel=1e-5)
    Est(alpha=1e-2, eta_max_iter=3, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def _logistic_problem(n, d, seed, *, scale=1.0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale / np.sqrt(d)
    if sparse:
        import scipy.sparse as sp

        X[rng.uniform(size=X.shape) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    w = rng.normal(size=d)
    y = (np.asarray(X @ w).ravel() + rng.logistic(size=n) > 0).astype(float)
    return X, y


@pytest.mark.parametrize("case", [
    dict(n=3000, d=100, fit_intercept=True),     # float32 directions, then one exact step
    dict(n=3000, d=100, fit_intercept=False, weights=True),
    dict(n=500, d=10, fit_intercept=True),       # below _SINGLE_MIN_P: float64 chord steps
    dict(n=2000, d=80, fit_intercept=True, sparse=True),
    dict(n=2000, d=70, fit_intercept=True, scale=30.0),  # strong separation, large theta
])
def test_two_phase_newton_gives_the_exact_newton_minimiser_and_hessian(case):
    """The approximate-Hessian phase changes the path, not the result: the minimiser and
    the returned Hessian equal those of Newton's method with an exact Hessian at every
    iteration, and the Hessian equals the one built afresh at the returned minimiser."""
    X, y = _logistic_problem(case["n"], case["d"], 0, scale=case.get("scale", 1.0),
                             sparse=case.get("sparse", False))
    sw = (np.random.default_rng(1).uniform(0.5, 2.0, case["n"]) if case.get("weights")
          else np.ones(case["n"]))
    kw = dict(loss=LOGISTIC, alpha=1e-3, fit_intercept=case["fit_intercept"],
              sample_weight=sw, return_hessian=True)
    t_exact, _, (H_exact, _) = fit_minimiser(X, y, approximate=False, **kw)
    t_two, _, (H_two, factor) = fit_minimiser(X, y, **kw)
    assert np.max(np.abs(t_two - t_exact)) <= 1e-12 * max(1.0, np.max(np.abs(t_exact)))
    np.testing.assert_allclose(H_two, H_exact, rtol=1e-10, atol=1e-10 * np.abs(H_exact).max())
    fresh = FILEngine(X, y, t_two, loss=LOGISTIC, alpha=1e-3,
                      fit_intercept=case["fit_intercept"], sample_weight=sw)
    reused = FILEngine(X, y, t_two, loss=LOGISTIC, alpha=1e-3,
                       fit_intercept=case["fit_intercept"], sample_weight=sw,
                       hessian=(H_two, factor))
    np.testing.assert_allclose(reused.per_example_sq_norms(), fresh.per_example_sq_norms(),
                               rtol=1e-10)


def test_two_phase_newton_builds_the_exact_hessian_once(monkeypatch):
    """The point of the two phases: on a well-conditioned problem with d >= 64, every
    Hessian but the last is formed in single precision -- the first ones, while the
    steps are large, from every k-th row only -- and exactly one in double precision,
    from every row."""
    from sklearn_privacy._glm import _core as _glm

    X, y = _logistic_problem(4000, 100, 3)
    calls = []
    original = _glm.weighted_gram

    def recording(Xc, *args, **kwargs):
        calls.append((np.dtype(kwargs.get("dtype", np.float64)).name, Xc.shape[0]))
        return original(Xc, *args, **kwargs)

    monkeypatch.setattr(_glm, "weighted_gram", recording)
    kw = dict(loss=LOGISTIC, alpha=1e-3, fit_intercept=True, sample_weight=np.ones(4000))
    theta, _ = fit_minimiser(X, y, **kw)
    stride = _glm.coarse_stride(4000, 101)
    assert stride > 1
    assert [c for c in calls if c[0] == "float64"] == [("float64", 4000)] == calls[-1:]
    assert calls[0] == ("float32", len(range(0, 4000, stride)))  # coarse: far away
    assert ("float32", 4000) in calls  # then every row, closer to the minimiser
    calls.clear()
    exact, _ = fit_minimiser(X, y, approximate=False, **kw)
    assert all(c == ("float64", 4000) for c in calls) and len(calls) >= 4
    assert np.max(np.abs(theta - exact)) <= 1e-12 * np.max(np.abs(exact))


def test_two_phase_newton_falls_back_to_double_precision_when_ill_conditioned(monkeypatch):
    """Columns on scales 1e-3..1e3 (equilibrated condition number above _SINGLE_MAX_COND
    even after scaling, because the columns are nearly collinear): float32 directions are
    refused after the first try and the result is still the exact minimiser."""
    from sklearn_privacy._glm import _core as _glm

    rng = np.random.default_rng(4)
    base = rng.normal(size=(3000, 1))
    X = np.hstack([base + 1e-4 * rng.normal(size=(3000, 70)), rng.normal(size=(3000, 5))])
    y = (X[:, 0] + X[:, -1] + rng.logistic(size=3000) > 0).astype(float)
    kw = dict(loss=LOGISTIC, alpha=1e-6, fit_intercept=True, sample_weight=np.ones(3000))
    calls = []
    original = _glm.weighted_gram

    def recording(*args, **kwargs):
        calls.append(np.dtype(kwargs.get("dtype", np.float64)).name)
        return original(*args, **kwargs)

    monkeypatch.setattr(_glm, "weighted_gram", recording)
    t_two, _ = fit_minimiser(X, y, **kw)
    assert calls.count("float32") == 1  # tried once, refused for the rest of the fit
    assert calls[-1] == "float64"
    t_exact, _ = fit_minimiser(X, y, approximate=False, **kw)
    assert np.max(np.abs(t_two - t_exact)) <= 1e-10 * max(1.0, np.max(np.abs(t_exact)))


def test_weighted_gram_in_single_precision_is_close_and_returned_as_float64():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 90))
    c = rng.uniform(0.0, 0.25, 2000)
    ref = weighted_gram(X, c, True)
    got = weighted_gram(X, c, True, dtype=np.float32, chunk_bytes=4 * 91 * 300)
    assert got.dtype == np.float64
    scale = np.sqrt(np.outer(np.diag(ref), np.diag(ref)))
    err = np.max(np.abs(got - ref) / scale)
    assert 1e-10 < err < 1e-5  # single precision: not exact, but close


@pytest.mark.parametrize("closed_every", [17, 2])
@pytest.mark.parametrize("block_rows", [7, 64, 1000])
def test_blocked_solver_equals_the_unblocked_one_and_eigvalsh(block_rows, closed_every):
    """Rows solved block by block with the stragglers of all blocks merged (and rows
    with a closed-form answer -- a few, kept in the solver on a trivial problem, or many,
    gathered out -- or a_i parallel to v mixed in) give the same eigenvalues as one call
    over all rows and as eigvalsh of the explicit matrices."""
    s, d, A, v, alpha, beta = _rows_below_pole(300, 9, 11)
    s[::closed_every] = 0.0  # the update alone: closed form
    A[5::23] = 3.0 * v + 1e-6 * A[5::23]  # nearly parallel to v: the q-form
    ref, scale = _explicit_top(s, d, A, v, alpha, beta)
    whole = largest_eigenvalue_rank2(s, d, A.copy(), v, alpha, beta)
    blocked = largest_eigenvalue_rank2(s, d, A.copy(), v, alpha, beta, block_rows=block_rows)
    assert np.max(np.abs(blocked - whole) / scale) <= 1e-14
    assert np.max(np.abs(blocked - ref) / scale) <= 1e-12


@pytest.mark.parametrize("block_rows", [None, 50])
def test_solver_with_v_zero(block_rows):
    """Regression: with v = 0 (coefficients exactly zero on the columns asked for) the
    row norms were never computed and the solver raised NameError; the update is then
    alpha_i a_i a_i^T and the answer is checked against eigvalsh."""
    s, d, A, v, alpha, beta = _rows_below_pole(120, 6, 3)
    v = np.zeros_like(v)
    ref, scale = _explicit_top(s, d, A, v, alpha, beta)
    got = largest_eigenvalue_rank2(s, d, A.copy(), v, alpha, beta, block_rows=block_rows)
    assert np.max(np.abs(got - ref) / scale) <= 1e-12


@pytest.mark.parametrize("sparse", [False, True])
def test_two_phase_newton_on_a_raw_adult_frame_pipeline(sparse):
    """Raw Adult rows (string categories, integer columns) through a ColumnTransformer:
    109 encoded columns, so the fit runs the single-precision phase (dense output) or the
    double-precision chord phase (sparse one-hot output); minimiser and etas equal those
    of Newton's method with the exact Hessian at every step."""
    from functools import partial
    from unittest import mock

    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    import sklearn_privacy.fil._base as base
    from sklearn_privacy import FILLogisticRegression
    from sklearn_privacy.datasets import load_adult

    frame = load_adult(raw=True, as_frame=True)
    X, y = frame.data.iloc[:3000], frame.target.iloc[:3000]
    cat = X.select_dtypes(exclude="number").columns
    num = X.select_dtypes("number").columns
    fits = []
    for approximate in (True, False):
        encode = ColumnTransformer(
            [("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=sparse), cat),
             ("num", StandardScaler(), num)], sparse_threshold=1.0 if sparse else 0.0)
        with mock.patch.object(base, "fit_minimiser",
                               partial(fit_minimiser, approximate=approximate)):
            pipe = make_pipeline(encode, FILLogisticRegression(alpha=1e-3, random_state=0))
            pipe.fit(X, y)
        fits.append(pipe[-1])
    two, exact = fits
    t2, te = two._audit_engine().theta, exact._audit_engine().theta
    assert t2.size >= 64 + 1
    assert np.max(np.abs(t2 - te)) <= 1e-12 * np.max(np.abs(te))
    np.testing.assert_allclose(two.eta_, exact.eta_, rtol=1e-10)
    # same noise draw on the same minimiser: the releases agree too
    np.testing.assert_allclose(two.coef_, exact.coef_, rtol=1e-10, atol=1e-12)
