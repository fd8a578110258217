"""The fast paths of the multinomial FIL engine keep its exactness.

Oracles: dense per-example Jacobians ``J_i = -H^-1 B_i`` with an SVD (the Gram assembly
and the certified top eigenvalue, on Grams large enough for the Lanczos path), LAPACK's
``eigvalsh`` (the certificate, including a deliberately wrong Ritz vector it must
reject), and the Hessian recomputed at the returned minimiser (the early-stopped L-BFGS
start followed by chord steps).
"""

import numpy as np
import pytest

from sklearn_privacy._glm._multinomial import _hessian, _regulariser, fit_multinomial, one_hot
from sklearn_privacy.fil._eta import _multinomial as mn
from sklearn_privacy.fil._eta._multinomial import (
    MultinomialFILEngine,
    _certified_rayleigh,
    top_eigenvalues,
)


def _problem(n=300, d=20, k=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = rng.randint(k, size=n)
    X[:, :k] += 1.5 * np.eye(k)[y]
    w = rng.uniform(0.3, 3.0, size=n)
    return X, y, w


def _engine(X, y, w, k, fit_intercept, alpha=1e-2):
    theta, _, H = fit_multinomial(X, one_hot(y, k), alpha=alpha,
                                  fit_intercept=fit_intercept, sample_weight=w)
    return MultinomialFILEngine(X, y, theta, n_classes=k, alpha=alpha,
                                fit_intercept=fit_intercept, sample_weight=w, hessian=H)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_row_grams_and_etas_match_dense_jacobians(fit_intercept):
    X, y, w = _problem()
    eng = _engine(X, y, w, 4, fit_intercept)
    assert eng.m > mn.LANCZOS_STEPS + 4  # the Lanczos path, not eigvalsh
    rows = np.arange(60)
    J = -np.einsum("pq,iqm->ipm", eng.H_inv, eng.dense_b(rows))
    G_dense = np.einsum("ipm,ipn->imn", J, J)
    G = eng.row_grams(rows)
    scale = np.abs(G_dense).max(axis=(1, 2))[:, None, None]
    assert np.max(np.abs(G - G_dense) / scale) < 1e-11
    sv = np.linalg.svd(J, compute_uv=False)[:, 0]
    sq = eng.per_example_sq_norms(rows=rows)
    np.testing.assert_allclose(sq, sv**2, rtol=1e-9)
    assert np.all(sq <= sv**2 * (1 + 1e-12))


def test_cheap_certificate_skips_cholesky(monkeypatch):
    rng = np.random.RandomState(1)
    m = 40
    V = np.linalg.qr(rng.normal(size=(m, m)))[0]
    spectra = np.sort(rng.uniform(0.0, 0.1, size=(200, m)), axis=1)
    spectra[:, -1] = 1.0 + rng.uniform(size=200)  # a well separated top eigenvalue
    G = np.einsum("ab,ib,cb->iac", V, spectra, V)
    calls = []
    real = mn.dpotrf
    monkeypatch.setattr(mn, "dpotrf", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = top_eigenvalues(G)
    assert not calls  # every row certified by the Frobenius / 2 x 2 bound
    ref = spectra[:, -1]
    assert np.all(out <= ref * (1 + 1e-13))
    assert np.all(out >= ref * (1 - mn.LANCZOS_RTOL))


def test_certificate_rejects_a_wrong_ritz_vector(monkeypatch):
    # vectors pointing at the *second* eigenvector: their Rayleigh quotient is a true
    # eigenvalue with a zero residual, so only the bound on the rest of the spectrum
    # (and then the Cholesky test) can reject it; the value must be the top eigenvalue
    rng = np.random.RandomState(2)
    m, r = 30, 50
    V = np.linalg.qr(rng.normal(size=(m, m)))[0]
    spectra = np.tile(np.linspace(0.01, 0.1, m), (r, 1))
    spectra[:, -1] = 1.0
    spectra[:, -2] = 0.9
    G = np.einsum("ab,ib,cb->iac", V, spectra, V)
    y = np.tile(V[:, -2], (r, 1))
    calls = []
    real = mn.dpotrf
    monkeypatch.setattr(mn, "dpotrf", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = _certified_rayleigh(G, y, mn.LANCZOS_RTOL)
    assert len(calls) == r  # the cheap bound refused every row; Cholesky failed too
    np.testing.assert_allclose(out, 1.0, rtol=1e-12)  # eigvalsh, not 0.9
    # the right vector is certified cheaply
    calls.clear()
    out = _certified_rayleigh(G, np.tile(V[:, -1], (r, 1)), mn.LANCZOS_RTOL)
    assert not calls
    np.testing.assert_allclose(out, 1.0, rtol=1e-12)
    # non-finite vectors go to eigvalsh
    out = _certified_rayleigh(G, np.full((r, m), np.nan), mn.LANCZOS_RTOL)
    np.testing.assert_allclose(out, 1.0, rtol=1e-12)


def test_fit_returns_the_exact_hessian_at_the_minimiser():
    X, y, w = _problem(n=400, d=8, k=5, seed=3)
    Y = one_hot(y, 5)
    far = np.random.RandomState(4).normal(scale=3.0, size=5 * 9)
    for init in (None, far):  # L-BFGS start; a far start (Newton, line search, chords)
        theta, n_iter, H = fit_multinomial(X, Y, alpha=1e-3, fit_intercept=True,
                                           sample_weight=w, theta_init=init)
        Theta = theta.reshape(5, 9)
        P = np.exp(X @ Theta[:, :8].T + Theta[:, 8])
        P /= P.sum(axis=1, keepdims=True)
        H_loss = _hessian(X, P, w, True, 5, 9)
        H_ref = H_loss + _regulariser(5, 9, 8, w.sum(), 1e-3, H_loss)[0]
        np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-9 * np.abs(H_ref).max())
        G = ((P - Y) * w[:, None]).T @ np.column_stack([X, np.ones(len(y))])
        G[:, :8] += w.sum() * 1e-3 * Theta[:, :8]
        assert np.abs(G).max() < 1e-9 * w.sum()  # the gradient vanishes
        np.testing.assert_allclose(Theta.sum(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize("n", [1, 7, 511, 512, 513, 1100])
def test_mirror_lower(n):
    from sklearn_privacy.fil._eta._multinomial import _mirror_lower

    a = np.random.RandomState(n).normal(size=(n, n))
    np.testing.assert_array_equal(_mirror_lower(a.copy()), np.tril(a) + np.tril(a, -1).T)


def test_row_chunking_does_not_change_the_etas(monkeypatch):
    X, y, w = _problem(n=120, d=16, k=5, seed=5)
    eng = _engine(X, y, w, 5, True)
    whole = eng.per_example_sq_norms()
    monkeypatch.setattr(mn, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(mn, "MIN_CHUNK_ROWS", 7)  # chunks of 7 rows, the last shorter
    np.testing.assert_allclose(eng.per_example_sq_norms(), whole, rtol=1e-12)


def test_engine_reuses_the_fit_factor():
    X, y, w = _problem(n=200, d=6, k=3, seed=5)
    theta, _, H, factor = fit_multinomial(X, one_hot(y, 3), alpha=1e-2,
                                          fit_intercept=True, sample_weight=w,
                                          return_factor=True)
    np.testing.assert_array_equal(H, H.T)  # exactly symmetric, as the factor's matrix
    kw = dict(n_classes=3, alpha=1e-2, fit_intercept=True, sample_weight=w)
    fresh = MultinomialFILEngine(X, y, theta, hessian=H, **kw)
    reused = MultinomialFILEngine(X, y, theta, hessian=H, factor=factor, **kw)
    np.testing.assert_allclose(reused.H_inv, fresh.H_inv, rtol=0,
                               atol=1e-13 * np.abs(fresh.H_inv).max())
    np.testing.assert_allclose(reused.H_inv @ H, np.eye(H.shape[0]), atol=1e-10)
    np.testing.assert_array_equal(reused.per_example_sq_norms(), fresh.per_example_sq_norms())


def test_single_precision_chord_hessian_is_never_returned():
    # the first Hessian after the L-BFGS start is formed in float32 (chord steps only);
    # stopped after that step, the fit still returns the float64 Hessian of its iterate
    from sklearn_privacy.exceptions import ConvergenceWarning

    X, y, w = _problem(n=400, d=8, k=5, seed=6)
    Y = one_hot(y, 5)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        theta, n_iter, H = fit_multinomial(X, Y, alpha=1e-3, fit_intercept=True,
                                           sample_weight=w, max_iter=1)
    assert n_iter == 1
    Theta = theta.reshape(5, 9)
    P = np.exp(X @ Theta[:, :8].T + Theta[:, 8])
    P /= P.sum(axis=1, keepdims=True)
    H_loss = _hessian(X, P, w, True, 5, 9)
    H_ref = H_loss + _regulariser(5, 9, 8, w.sum(), 1e-3, H_loss)[0]
    np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-12 * np.abs(H_ref).max())
    # the float32 Hessian itself is only close (this is what the check above excludes)
    H32 = _hessian(X, P, w, True, 5, 9, dtype=np.float32)
    gap = np.abs(H32 - H_loss).max() / np.abs(H_loss).max()
    assert 1e-12 < gap < 1e-5


def test_heavy_spectra_take_more_steps_then_cholesky(monkeypatch):
    # the rest of the spectrum outweighs the top (sum of squares), so the Frobenius /
    # 2 x 2 bound cannot certify; the extra Lanczos steps make the Rayleigh quotient
    # accurate enough for the Cholesky test: every row certified, none to eigvalsh
    rng = np.random.RandomState(7)
    m, r = 40, 60
    V = np.linalg.qr(rng.normal(size=(m, m)))[0]
    spectra = np.sort(rng.uniform(0.0, 1e-3, size=(r, m)), axis=1)
    spectra[:, -9:-1] = np.linspace(0.35, 0.7, 8) * rng.uniform(0.9, 1.0, size=(r, 1))
    spectra[:, -1] = 1.0
    assert np.all((spectra[:, :-1] ** 2).sum(axis=1) > 1.0)
    G = np.einsum("ab,ib,cb->iac", V, spectra, V)
    potrf, eigh = [], []
    real_potrf, real_eigh = mn.dpotrf, np.linalg.eigvalsh
    monkeypatch.setattr(mn, "dpotrf", lambda *a, **k: potrf.append(1) or real_potrf(*a, **k))
    monkeypatch.setattr(mn.np.linalg, "eigvalsh",
                        lambda A: eigh.append(len(A)) or real_eigh(A))
    out = top_eigenvalues(G)
    assert len(potrf) == r and not eigh
    assert np.all(out <= 1.0 + 1e-14)
    assert np.all(out >= 1.0 - mn.LANCZOS_RTOL)


def test_single_precision_hessian_out_of_range_falls_back(recwarn):
    # features near 1e20 overflow a float32 Hessian (n x^2 > 3.4e38); the float64 one
    # is fine: the fit must equal the rescaled fit of the unscaled data
    X, y, _ = _problem(n=300, d=5, k=3, seed=8)
    Y = one_hot(y, 3)
    ref = fit_multinomial(X, Y, alpha=1e-2, fit_intercept=False)[0]
    s = 1e20
    theta = fit_multinomial(X * s, Y, alpha=1e-2 * s**2, fit_intercept=False)[0]
    # (the step tolerance is absolute below |theta| = 1: 1e-9 relative here)
    np.testing.assert_allclose(theta * s, ref, rtol=1e-7)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
