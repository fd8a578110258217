"""Skeleton poles of the secular sums (``compress_poles``) and the solver that iterates on
them (``largest_eigenvalue_rank2_compressed``), against the sums over all poles, the
solver on all poles and ``numpy.linalg.eigvalsh`` of the explicit matrices."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_privacy import FILLinearRegression, FILLogisticRegression
from sklearn_privacy._linalg import _secular
from sklearn_privacy._linalg._secular import (
    compress_poles,
    largest_eigenvalue_rank2,
    largest_eigenvalue_rank2_compressed,
)
from sklearn_privacy.datasets import load_adult
from sklearn_privacy.fil._eta import _engine


def _spectrum(kind, p, rng):
    if kind == "wide":  # eigenvalues of H^-2 for a condition number ~1e4
        return np.sort(10.0 ** rng.uniform(-8, 0, p))
    if kind == "clustered":  # near-equal top poles, many zeros and duplicates
        d = np.concatenate([1.0 - 1e-3 * rng.random(5), np.zeros(p // 3),
                            np.repeat(rng.random(3), (p - 5 - p // 3) // 3 + 1)])[:p]
        return np.sort(d)
    return np.sort(rng.uniform(0.1, 1.0, p))  # "flat": poles all within a factor 10


@pytest.mark.parametrize("kind", ["wide", "clustered", "flat"])
@pytest.mark.parametrize("p", [40, 200])
def test_skeleton_poles_reproduce_the_secular_sums(kind, p):
    """For x in the region (from the margin above the second pole to 1e12 times it) the
    sums over the skeleton poles equal the sums over all poles but the top one to 1e-14
    relative (non-negative weights) or relative to the sum of magnitudes (signed)."""
    rng = np.random.default_rng(p)
    d = _spectrum(kind, p, rng)
    comp = compress_poles(d)
    if comp is None:
        assert kind == "flat" or p < 60  # nothing to gain: poles not separated enough
        pytest.skip("no compression for this spectrum")
    assert comp["rank"] <= p // 2
    k1 = int(np.argmax(d))
    d2 = np.max(np.delete(d, k1))
    WT = comp["WT"][:, :-1]  # skeleton columns and the (zero) slot of the top pole
    w_pos = rng.random((50, p))
    w_signed = rng.normal(size=(50, p))
    mu = d2 * (1.0 + comp["u_min"] * np.exp(rng.uniform(0, np.log(1e14), 50)))
    full = 1.0 / (mu[:, None] - d[None, :])
    full[:, k1] = 0.0
    skel = 1.0 / (mu[:, None] - comp["d"][None, :])
    skel[:, -1] = 0.0
    for w, signed in ((w_pos, False), (w_signed, True)):
        exact = np.einsum("ij,ij->i", w, full)
        approx = np.einsum("ij,ij->i", w @ WT, skel)
        ref = np.einsum("ij,ij->i", np.abs(w), np.abs(full)) if signed else exact
        assert np.max(np.abs(approx - exact) / ref) <= 1e-14


def test_skeleton_poles_are_refused_when_they_do_not_pay():
    assert compress_poles(np.linspace(0.1, 1.0, 10)) is None  # too few poles
    assert compress_poles(np.r_[np.zeros(50), 1.0]) is None  # one nonzero pole: closed form


def _problem(m, p, seed, kind="wide"):
    rng = np.random.default_rng(seed)
    d = _spectrum(kind, p, rng)
    X = rng.normal(size=(m, p))
    K = rng.normal(size=(p, p)) / np.sqrt(p)
    offset = 0.3 * rng.normal(size=p)
    vt = rng.normal(size=p) / np.sqrt(p)
    s = rng.uniform(0.2, 2.0, m)
    alpha = rng.uniform(0.0, 1.0, m)
    beta = rng.normal(size=m)
    return X, K, offset, s, d, vt, alpha, beta


def _explicit(X, K, offset, s, d, vt, alpha, beta):
    """Largest eigenvalue of every row's matrix, and its largest |eigenvalue| (scale)."""
    A = X @ K + offset
    out, scale = np.empty(len(s)), np.empty(len(s))
    for i in range(len(s)):
        M = (np.diag(s[i] * d) + alpha[i] * np.outer(A[i], A[i])
             + beta[i] * (np.outer(A[i], vt) + np.outer(vt, A[i])))
        ev = np.linalg.eigvalsh(M)
        out[i], scale[i] = ev[-1], np.abs(ev).max()
    return out, scale


@pytest.mark.parametrize("block_rows", [None, 97])
@pytest.mark.parametrize("kind", ["wide", "clustered"])
@pytest.mark.parametrize("seed", range(2))
def test_compressed_solver_equals_eigvalsh_and_the_full_solver(seed, kind, block_rows,
                                                               monkeypatch):
    """Mixed rows: ordinary ones, the update alone (s = 0, closed form), a_i nearly
    parallel to v (q-form, solved on all poles) and, with clustered top poles, rows whose
    eigenvalue lies just above the second pole (outside the skeleton region: solved on
    all poles)."""
    X, K, offset, s, d, vt, alpha, beta = _problem(400, 60, seed, kind)
    s[::17] = 0.0
    X[5::29] = np.linalg.solve(K.T, 3.0 * vt - offset) + 1e-9 * X[5::29]  # a_i ~ 3 v
    alpha[7::13], beta[7::13], s[7::13] = 1e-9, 1e-9, 1.0  # tiny update: root at the pole
    comp = compress_poles(d)
    assert comp is not None
    fallback = []
    real = _secular.largest_eigenvalue_rank2

    def spy(s_, *args, **kwargs):
        fallback.append(len(s_))
        return real(s_, *args, **kwargs)

    monkeypatch.setattr(_secular, "largest_eigenvalue_rank2", spy)
    got = largest_eigenvalue_rank2_compressed(X, K, offset, s, d, vt, alpha, beta, comp,
                                              block_rows=block_rows)
    monkeypatch.undo()
    # the parallel rows (14), and the rows at a clustered pole, went to all poles
    assert sum(fallback) >= (14 if kind == "wide" else 14 + 20)
    full = largest_eigenvalue_rank2(s, d, X @ K + offset, vt, alpha, beta)
    ref, scale = _explicit(X, K, offset, s, d, vt, alpha, beta)
    assert np.max(np.abs(got - full) / scale) <= 1e-13
    assert np.max(np.abs(got - ref) / scale) <= 1e-11


def test_compressed_solver_takes_sparse_rows_and_no_offset():
    X, K, _, s, d, vt, alpha, beta = _problem(300, 50, 7)
    X[np.abs(X) < 1.0] = 0.0
    comp = compress_poles(d)
    dense = largest_eigenvalue_rank2_compressed(X, K, None, s, d, vt, alpha, beta, comp)
    sparse = largest_eigenvalue_rank2_compressed(sp.csr_matrix(X), K, None, s, d, vt, alpha,
                                                 beta, comp)
    ref, scale = _explicit(X, K, 0.0, s, d, vt, alpha, beta)
    assert np.max(np.abs(sparse - dense) / scale) <= 1e-14
    assert np.max(np.abs(dense - ref) / scale) <= 1e-11


def test_compressed_solver_refuses_skeleton_poles_of_other_poles():
    X, K, offset, s, d, vt, alpha, beta = _problem(50, 40, 1)
    comp = compress_poles(d[::-1].copy())  # top pole elsewhere
    with pytest.raises(ValueError, match="other poles"):
        largest_eigenvalue_rank2_compressed(X, K, offset, s, d, vt, alpha, beta, comp)


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
@pytest.mark.parametrize("columns", [None, "age", "race"])
def test_engine_etas_on_skeleton_poles_equal_the_full_solver(Est, columns, monkeypatch):
    """Adult (30,162 rows, p = 87): all per-example etas, per attribute too, with the
    skeleton poles equal those of the solver on all poles to 1e-13 relative."""
    adult = load_adult(variant="fil")
    X = np.ascontiguousarray(adult.data, dtype=float)[:6000]
    y = adult.target.astype(float)[:6000]
    y = 2 * y - 1 if Est is FILLinearRegression else y
    est = Est(alpha=1e-3, random_state=0).fit(X, y)
    engine = est._audit_engine()
    cols = None if columns is None else [j for j, name in enumerate(adult.feature_names)
                                         if name.startswith(columns)]
    calls = []
    real = _engine.largest_eigenvalue_rank2_compressed

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_engine, "largest_eigenvalue_rank2_compressed", spy)
    got = engine.per_example_sq_norms(cols)
    if columns is None:
        assert calls  # the compressed path ran
    monkeypatch.setattr(_engine, "compress_poles", lambda d: None)
    engine._cache.clear()
    ref = engine.per_example_sq_norms(cols)
    assert np.max(np.abs(got - ref) / ref) <= 1e-13


@pytest.mark.parametrize("Est", [FILLinearRegression, FILLogisticRegression])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_engine_skeleton_poles_on_synthetic_problems(Est, fit_intercept, weighted,
                                                     monkeypatch):
    """Without intercept (no offset), with sample weights, with and without the label
    among the columns: etas on skeleton poles equal those on all poles to 1e-13."""
    rng = np.random.default_rng(int(fit_intercept) + 2 * int(weighted))
    n, d = 2500, 40
    X = rng.normal(size=(n, d)) * np.exp(rng.uniform(-1, 1, d))
    logit = X @ rng.normal(size=d) / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    y = logit + 0.3 * rng.normal(size=n) if Est is FILLinearRegression else y
    weight = rng.uniform(0.5, 2.0, n) if weighted else None
    est = Est(alpha=1e-2, fit_intercept=fit_intercept, random_state=0).fit(
        X, y, sample_weight=weight)
    engine = est._audit_engine()
    got = [engine.per_example_sq_norms(), engine.per_example_sq_norms(list(range(d)))]
    assert engine._cache
    assert any(st.get("compression") is not None for st in engine._cache.values())
    monkeypatch.setattr(_engine, "compress_poles", lambda d: None)
    engine._cache.clear()
    ref = [engine.per_example_sq_norms(), engine.per_example_sq_norms(list(range(d)))]
    for a, b in zip(got, ref, strict=True):
        assert np.max(np.abs(a - b) / b) <= 1e-13
