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
from sklearn_privacy.fil._engine import FILEngine
from sklearn_privacy.fil._glm import LOGISTIC, SQUARED, augment, fit_minimiser, weighted_gram
from sklearn_privacy.fil._secular import largest_eigenvalue_rank2


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
    est = Est(alpha=1e-2, n_iter=3, verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == est.n_iter_ + 1 == 4
    for t, line in enumerate(lines):
        assert f"iteration {t}/3" in line
        cv = float(line.split("cv ")[1].split(",")[0])
        assert cv == pytest.approx(est.eta_history_["cv"][t], rel=1e-3)
        mean = float(line.split("eta mean ")[1].split(",")[0])
        assert mean == pytest.approx(est.eta_history_["mean"][t], rel=1e-5)
    Est(alpha=1e-2, n_iter=3, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
