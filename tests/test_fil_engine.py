"""The structured FIL engine against independent oracles.

Oracles: explicit per-example Jacobians with an SVD (``_fil_dense_oracle``), central finite
differences of exact refits, and the dense definitions of group / attribute / FIM.
"""

import numpy as np
import pytest
from _fil_dense_oracle import dense_jacobians
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.linalg import LinearOperator

from sklearn_privacy._glm._core import LOGISTIC, SQUARED, fit_minimiser
from sklearn_privacy._linalg._secular import largest_eigenvalue_rank2
from sklearn_privacy.fil._eta._engine import FILEngine

CASES = [
    (loss, fit_intercept, weighted)
    for loss in (SQUARED, LOGISTIC)
    for fit_intercept in (True, False)
    for weighted in (False, True)
]


def _ids(case):
    loss, fi, wt = case
    return f"{loss.name}-{'icpt' if fi else 'noicpt'}-{'weighted' if wt else 'unit'}"


def _problem(loss, fit_intercept, weighted, n=50, d=6, alpha=0.03, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.3 + rng.normal(size=n)
    if loss is LOGISTIC:
        y = (y > 0).astype(float)
    sw = rng.uniform(0.2, 3.0, n) if weighted else np.ones(n)
    theta, _ = fit_minimiser(X, y, loss=loss, alpha=alpha, fit_intercept=fit_intercept,
                             sample_weight=sw)
    eng = FILEngine(X, y, theta, loss=loss, alpha=alpha, fit_intercept=fit_intercept,
                    sample_weight=sw)
    J = dense_jacobians(X, y, theta, loss=loss, alpha=alpha, fit_intercept=fit_intercept,
                        sample_weight=sw)
    return X, y, sw, theta, eng, J, alpha


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_per_example_eta_matches_dense_svd(case):
    *_, eng, J, _ = _problem(*case)
    ref = np.array([np.linalg.norm(Ji, 2) ** 2 for Ji in J])
    assert _rel(eng.per_example_sq_norms(), ref) <= 1e-10


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_both_routes_match_dense_for_column_subsets(case, monkeypatch):
    *_, eng, J, _ = _problem(*case)
    d = J.shape[2] - 1
    for cols in ([2], [0, 3], [1, 4, d], list(range(d)), list(range(d + 1))):
        ref = np.array([np.linalg.norm(Ji[:, cols], 2) ** 2 for Ji in J])
        assert _rel(eng.per_example_sq_norms(cols), ref) <= 1e-10, cols
    # force the secular-equation route for small subsets too
    import sklearn_privacy.fil._eta._engine as engine_module

    monkeypatch.setattr(engine_module, "_GRAM_MAX_COLUMNS", 0)
    for cols in ([0, 3], [1, 4, d], list(range(d))):
        ref = np.array([np.linalg.norm(Ji[:, cols], 2) ** 2 for Ji in J])
        assert _rel(eng.per_example_sq_norms(cols), ref) <= 1e-10, cols


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_jacobian_matches_finite_differences_of_refits(case):
    loss, fit_intercept, weighted = case
    X, y, sw, theta, eng, J, alpha = _problem(loss, fit_intercept, weighted, n=30, d=4)
    h = 1e-5
    for i in (0, 7):
        fd = np.empty_like(J[i])
        # every feature and the label; for the logistic loss the label enters the
        # objective linearly (l = log(1 + e^z) - y z), so refits at y_i +- h are exact
        # minimisers of a well-defined objective and the label column is checked too
        for j in range(X.shape[1] + 1):
            Xp, Xm, yp, ym = X.copy(), X.copy(), y.copy(), y.copy()
            if j < X.shape[1]:
                Xp[i, j] += h
                Xm[i, j] -= h
            else:
                yp[i] += h
                ym[i] -= h
            kw = dict(loss=loss, alpha=alpha, fit_intercept=fit_intercept, sample_weight=sw,
                      tol=1e-15)
            tp, _ = fit_minimiser(Xp, yp, theta_init=theta, **kw)
            tm, _ = fit_minimiser(Xm, ym, theta_init=theta, **kw)
            fd[:, j] = (tp - tm) / (2 * h)
        analytic = eng.jacobian_columns(np.array([i]), np.arange(X.shape[1]), True)[0]
        assert np.allclose(analytic, J[i])
        err = np.linalg.norm(fd - J[i]) / np.linalg.norm(J[i])
        assert err <= 1e-6
        # and column by column (no small column hidden by a large one)
        col_err = np.linalg.norm(fd - J[i], axis=0) / np.linalg.norm(J[i], axis=0)
        assert np.all(col_err <= 1e-6), col_err


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_group_and_whole_data_eta_match_dense_definition(case):
    *_, eng, J, _ = _problem(*case)
    rows = [1, 5, 9, 20]
    JS = np.concatenate([J[i] for i in rows], axis=1)
    assert _rel(eng.group_sq_norm(rows), np.linalg.norm(JS, 2) ** 2) <= 1e-10
    Jall = np.concatenate(list(J), axis=1)
    assert _rel(eng.group_sq_norm(), np.linalg.norm(Jall, 2) ** 2) <= 1e-10
    cols = [0, 2, J.shape[2] - 1]
    JSc = np.concatenate([J[i][:, cols] for i in rows], axis=1)
    assert _rel(eng.group_sq_norm(rows, cols), np.linalg.norm(JSc, 2) ** 2) <= 1e-10
    # boolean masks select the same set
    mask = np.zeros(J.shape[0], bool)
    mask[rows] = True
    assert eng.group_sq_norm(mask) == pytest.approx(eng.group_sq_norm(rows), rel=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_constrained_one_hot_variant(case):
    *_, eng, J, _ = _problem(*case)
    cols = [1, 2, 3]
    # orthonormal basis of sum-zero changes, independent construction via QR
    Q, _ = np.linalg.qr(np.vstack([np.eye(2), -np.ones((1, 2))]))
    ref = np.array([np.linalg.norm(Ji[:, cols] @ Q, 2) ** 2 for Ji in J])
    got = eng.per_example_sq_norms(cols, constrained=True)
    assert _rel(got, ref) <= 1e-10
    rows = [0, 4, 8]
    JS = np.concatenate([J[i][:, cols] @ Q for i in rows], axis=1)
    assert _rel(eng.group_sq_norm(rows, cols, constrained=True),
                np.linalg.norm(JS, 2) ** 2) <= 1e-10
    # two columns: the only feasible direction is (1, -1) / sqrt(2)
    two = np.array([np.linalg.norm(Ji[:, [1, 2]] @ [1, -1], 2) ** 2 / 2 for Ji in J])
    assert _rel(eng.per_example_sq_norms([1, 2], constrained=True), two) <= 1e-10
    with pytest.raises(ValueError, match="at least two"):
        eng.per_example_sq_norms([1], constrained=True)


@pytest.mark.parametrize("case", CASES[::3], ids=_ids)
def test_fim_dense_and_operator(case):
    *_, eng, J, _ = _problem(*case)
    sigma = 0.7
    rows, cols = [3, 4], [0, 5, J.shape[2] - 1]
    JS = np.concatenate([J[i][:, cols] for i in rows], axis=1)
    F = eng.fim(rows, cols, sigma=sigma)
    assert F.shape == (6, 6)
    assert np.allclose(F, JS.T @ JS / sigma**2, rtol=1e-10, atol=1e-14)
    op = eng.fim(rows, cols, sigma=sigma, dense=False)
    assert isinstance(op, LinearOperator)
    u = np.random.default_rng(1).normal(size=6)
    assert np.allclose(op @ u, F @ u, rtol=1e-10, atol=1e-14)
    # whole data set as an operator: its top eigenvalue is eta^2 of the data set
    from scipy.sparse.linalg import eigsh

    op_all = eng.fim(sigma=sigma, dense=False)
    top = eigsh(op_all, k=1, which="LA", return_eigenvectors=False, tol=1e-12)[0]
    assert top == pytest.approx(eng.group_sq_norm() / sigma**2, rel=1e-8)


def test_bad_subsets_raise_clear_errors():
    *_, eng, J, _ = _problem(SQUARED, True, False)
    d = J.shape[2] - 1
    with pytest.raises(ValueError, match="out of range"):
        eng.per_example_sq_norms([d + 1])
    with pytest.raises(ValueError, match="out of range"):
        eng.group_sq_norm(rows=[10_000])
    with pytest.raises(ValueError, match="duplicate"):
        eng.per_example_sq_norms([0, 0])
    with pytest.raises(ValueError, match="boolean mask"):
        eng.group_sq_norm(rows=np.ones(3, bool))
    with pytest.raises(TypeError, match="integer"):  # a float is not an index
        eng.per_example_sq_norms([0.5])


@settings(max_examples=60, deadline=None)
@given(
    p=st.integers(1, 9),
    m=st.integers(1, 6),
    seed=st.integers(0, 2**31 - 1),
    zero_s=st.booleans(),
    degenerate=st.booleans(),
)
def test_secular_solver_matches_eigvalsh(p, m, seed, zero_s, degenerate):
    rng = np.random.default_rng(seed)
    d = rng.exponential(size=p)
    if degenerate and p > 1:
        d[:2] = d.max()  # repeated top eigenvalue
    s = np.zeros(m) if zero_s else rng.exponential(size=m)
    A = rng.normal(size=(m, p)) * rng.exponential(size=(m, 1))
    v = rng.normal(size=p)
    alpha = rng.exponential(size=m)
    beta = rng.normal(size=m) * rng.choice([0.0, 1.0, 10.0], size=m)
    got = largest_eigenvalue_rank2(s, d, A, v, alpha, beta)
    for i in range(m):
        M = (np.diag(s[i] * d) + alpha[i] * np.outer(A[i], A[i])
             + beta[i] * (np.outer(A[i], v) + np.outer(v, A[i])))
        ref = np.linalg.eigvalsh(M)[-1]
        scale = np.abs(np.linalg.eigvalsh(M)).max()
        assert abs(got[i] - ref) <= 1e-11 * max(scale, 1e-300)


def test_chunked_engine_memory_does_not_scale_with_n_times_p(monkeypatch):
    """Row chunks keep memory O(chunk * p + p^2): no n x p intermediate is formed."""
    import tracemalloc

    import sklearn_privacy.fil._eta._engine as engine_module

    original = engine_module._chunk_rows
    budget = 200_000  # bytes per chunk array: ~600 rows at p = 41
    d = 40
    peaks, results = {}, {}
    for n in (2000, 8000):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, d))
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(float)
        theta, _ = fit_minimiser(X, y, loss=LOGISTIC, alpha=1e-2, fit_intercept=True,
                                 sample_weight=np.ones(n))
        eng = FILEngine(X, y, theta, loss=LOGISTIC, alpha=1e-2, fit_intercept=True,
                        sample_weight=np.ones(n))
        calls = {
            "secular": lambda e=eng: e.per_example_sq_norms(),
            "gram": lambda e=eng: e.per_example_sq_norms([0, 1, 2]),
            "group": lambda e=eng: e.group_sq_norm(),
        }
        unchunked = {k: f() for k, f in calls.items()}
        monkeypatch.setattr(engine_module, "_chunk_rows",
                            lambda n_, p_, budget_bytes=None: original(n_, p_, budget))
        for name, f in calls.items():
            f()  # warm the per-subset cache
            tracemalloc.start()
            results[n, name] = f()
            peaks[n, name] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            # chunk boundaries do not change the values
            assert _rel(results[n, name], unchunked[name]) <= 1e-12, name
        monkeypatch.setattr(engine_module, "_chunk_rows", original)
    for name in ("secular", "gram", "group"):
        # one n x p array of float64 at n = 8000 would be 2.6 MB
        assert peaks[8000, name] < 8000 * (d + 1) * 8, (name, peaks[8000, name])
        # 6000 more rows cost at most a few O(n) vectors, not O(n p)
        assert peaks[8000, name] - peaks[2000, name] < 16 * 8 * 6000, name
