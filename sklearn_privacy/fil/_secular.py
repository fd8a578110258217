"""Largest eigenvalue of a diagonal matrix plus a symmetric rank-2 update, vectorised.

For every row ``i`` we need the largest eigenvalue of

.. math::

    A_i = s_i D + \\alpha_i a_i a_i^\\top + \\beta_i (a_i v^\\top + v a_i^\\top)
        = s_i D + P_i S_i P_i^\\top,\\quad P_i = [a_i, v],\\;
          S_i = \\begin{pmatrix}\\alpha_i & \\beta_i \\\\ \\beta_i & 0\\end{pmatrix},

with ``D = diag(d) >= 0`` fixed, ``s_i >= 0`` and ``alpha_i >= 0``. With
:math:`F(\\lambda) = P^\\top (\\lambda - sD)^{-1} P` (2 x 2), the matrix determinant lemma gives
:math:`\\det(\\lambda - A) = \\det(\\lambda - sD)\\det(I - S F(\\lambda))`. For
:math:`\\lambda > s\\max d`, :math:`F \\succeq 0` and the eigenvalues of :math:`SF` are real;
``S`` has at most one positive eigenvalue, so :math:`SF` has at most one positive
eigenvalue :math:`\\mu(\\lambda)`, and :math:`\\mu` decreases with :math:`\\lambda` because
:math:`F` decreases in the Loewner order. Hence the largest eigenvalue of ``A`` above the
pole :math:`s\\max d` is the unique root of :math:`\\mu(\\lambda) = 1`, found by safeguarded
Newton steps on :math:`h(\\lambda) = 1/\\mu(\\lambda) - 1` (nearly linear in
:math:`\\lambda`; a handful of vectorised iterations from the Weyl upper bound).

When the positive direction of the update does not reach above the pole (no root), the
eigenvalue lies in :math:`[s d_{(2)}, s d_{(1)}]` (interlacing) and is found by bisection on
the Sylvester inertia count: with :math:`N(\\lambda) = \\beta^2 S^{-1} - \\beta^2 F(\\lambda)`,
the number of eigenvalues of ``A`` above :math:`\\lambda` is
:math:`\\#\\{k: s d_k > \\lambda\\} + \\mathrm{neg}(N(\\lambda)) - 1` (Haynsworth inertia
additivity applied to both Schur complements of
:math:`[[\\lambda - sD, P], [P^\\top, S^{-1}]]`); for :math:`\\beta = 0` it is the rank-1 count
:math:`\\#\\{k: s d_k > \\lambda\\} + [\\alpha f_{aa}(\\lambda) > 1]`. Cost: O(p) per row and
iteration; no p x p matrix per row is ever formed.
"""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(float).eps
#: Below this sin^2(angle(a_i, v)) the Gram determinant is formed from q = a - c v.
_PARALLEL = 1e-2


def _secular_terms(lam, s, d, A2, Av, Q2, Qv, vv, with_derivative=True, buf=None):
    # r = 1 / (lam - s d), built in one buffer that is squared in place for the derivatives;
    # ``buf`` (at least len(lam) rows) is reused across calls to avoid fresh large arrays.
    # Returns f_aa, f_av, f_vv and the Gram determinant f_aa f_vv - f_av^2 (then the
    # derivatives of the four). The determinant is formed as f_qq f_vv - f_qv^2 with
    # q = a - c v orthogonal to v (unimodular change of basis, same determinant): with a
    # nearly parallel to v -- an ill-conditioned Hessian turns every H^-1 x towards its
    # top eigenvector -- the direct difference cancels catastrophically.
    r = np.multiply.outer(s, d, out=None if buf is None else buf[: lam.size])
    np.subtract(lam[:, None], r, out=r)
    np.reciprocal(r, out=r)
    # Rows whose a is not nearly parallel to v pass Q2 = Qv = None (direct formula, two
    # fewer passes over the chunk).
    faa = np.einsum("ij,ij->i", A2, r)
    fav = np.einsum("ij,ij->i", Av, r)
    fvv = r @ vv
    if Q2 is None:
        gram = faa * fvv - fav * fav
    else:
        fqq = np.einsum("ij,ij->i", Q2, r)
        fqv = np.einsum("ij,ij->i", Qv, r)
        gram = fqq * fvv - fqv * fqv
    if not with_derivative:
        return faa, fav, fvv, gram
    np.square(r, out=r)
    dfaa = -np.einsum("ij,ij->i", A2, r)
    dfav = -np.einsum("ij,ij->i", Av, r)
    dfvv = -(r @ vv)
    if Q2 is None:
        dgram = dfaa * fvv + faa * dfvv - 2.0 * fav * dfav
    else:
        dfqq = -np.einsum("ij,ij->i", Q2, r)
        dfqv = -np.einsum("ij,ij->i", Qv, r)
        dgram = dfqq * fvv + fqq * dfvv - 2.0 * fqv * dfqv
    return faa, fav, fvv, gram, dfaa, dfav, dgram


def _mu(lam, s, d, A2, Av, Q2, Qv, vv, alpha, beta, buf=None, with_derivative=True):
    """Positive eigenvalue of S F(lam) and its derivative in lam (or None)."""
    terms = _secular_terms(lam, s, d, A2, Av, Q2, Qv, vv, with_derivative, buf)
    faa, fav, _, gram = terms[:4]
    tr = alpha * faa + 2.0 * beta * fav
    b2 = beta * beta
    det = -b2 * gram
    if not with_derivative:
        return 0.5 * tr + np.sqrt(np.maximum(0.25 * tr * tr - det, 0.0)), None
    dfaa, dfav, dgram = terms[4:]
    dtr = alpha * dfaa + 2.0 * beta * dfav
    ddet = -b2 * dgram
    disc = np.maximum(0.25 * tr * tr - det, 0.0)
    sq = np.sqrt(disc)
    mu = 0.5 * tr + sq
    with np.errstate(divide="ignore", invalid="ignore"):
        dmu = 0.5 * dtr + np.where(sq > 0, (0.5 * tr * dtr - ddet) / (2.0 * sq), 0.5 * dtr)
    return mu, dmu


def _count_above(lam, s, d, A2, Av, Q2, Qv, vv, alpha, beta, buf=None):
    """Number of eigenvalues of A strictly above ``lam`` (rows: arrays of equal length)."""
    faa, fav, fvv, gram = _secular_terms(lam, s, d, A2, Av, Q2, Qv, vv, False, buf)
    n_pole = np.sum(s[:, None] * d[None, :] > lam[:, None], axis=1)
    b2 = beta * beta
    n11 = -b2 * faa
    n22 = -alpha - b2 * fvv
    # det N = n11 n22 - n12^2 with n12 = beta - b2 f_av, expanded so that the Gram
    # determinant enters in its stable form
    detn = alpha * b2 * faa + b2 * b2 * gram - b2 + 2.0 * beta * b2 * fav
    trn = n11 + n22
    neg = np.where(detn < 0, 1, np.where(detn > 0, np.where(trn < 0, 2, 0), (trn < 0) * 1))
    rank2 = n_pole + neg - 1
    rank1 = n_pole + (alpha * faa > 1.0)
    return np.where(beta != 0, rank2, rank1)


def largest_eigenvalue_rank2(s, d, At, vt, alpha, beta, *, max_iter=100, overwrite_a=False):
    """Largest eigenvalue of ``s_i diag(d) + alpha_i a_i a_i^T + beta_i (a_i v^T + v a_i^T)``.

    Parameters
    ----------
    s : ndarray of shape (m,), non-negative
    d : ndarray of shape (p,), non-negative (eigenvalues of the fixed matrix)
    At : ndarray of shape (m, p)
        The vectors ``a_i`` in the eigenbasis of the fixed matrix.
    vt : ndarray of shape (p,)
        The vector ``v`` in the same basis.
    alpha, beta : ndarray of shape (m,); ``alpha >= 0``.
    overwrite_a : bool, default=False
        Allow ``At`` to be overwritten (saves one m x p array).

    Returns
    -------
    lam : ndarray of shape (m,)
    """
    m, p = At.shape
    s = np.asarray(s, float)
    alpha = np.asarray(alpha, float)
    beta = np.asarray(beta, float)
    d = np.maximum(np.asarray(d, float), 0.0)
    # Rows with a_i nearly parallel to v (sin^2 of the angle below _PARALLEL: the direct
    # Gram determinant would lose more than two digits) are solved with the q-form.
    nvv = float(vt @ vt)
    if nvv > 0 and m:
        na2 = np.einsum("ij,ij->i", At, At)
        nav = At @ vt
        with np.errstate(invalid="ignore", divide="ignore"):
            sin2 = 1.0 - nav * nav / (na2 * nvv)
        parallel = sin2 < _PARALLEL
    else:
        parallel = np.zeros(m, bool)
    if np.all(parallel) or not np.any(parallel):
        return _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a,
                        use_q=bool(np.any(parallel)))
    lam = np.empty(m)
    for sel, use_q in ((np.flatnonzero(parallel), True), (np.flatnonzero(~parallel), False)):
        lam[sel] = _largest(s[sel], d, At[sel], vt, alpha[sel], beta[sel], max_iter, True,
                            use_q=use_q)
    return lam


def _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a, *, use_q):
    m, p = At.shape
    order = np.argsort(d)
    d_max = d[order[-1]]
    d_second = d[order[-2]] if p > 1 else 0.0
    vv = vt * vt
    nvv = vv.sum()
    # a_i = q_i + c_i v with q_i orthogonal to v: the 2 x 2 Gram determinants are formed
    # from q (no cancellation when a_i is nearly parallel to v)
    A2 = At * At
    Av = At * vt[None, :]
    na2 = A2.sum(axis=1)
    nav = Av.sum(axis=1)
    if use_q:
        c = nav / nvv if nvv > 0 else np.zeros(m)
        Qv = At if overwrite_a else At.copy()
        Qv -= c[:, None] * vt[None, :]
        Q2 = Qv * Qv
        Qv *= vt[None, :]
        gram0 = Q2.sum(axis=1) * nvv
    else:
        Q2 = Qv = None
        gram0 = na2 * nvv - nav * nav
    # Eigenvalues of the rank-2 part = eigenvalues of S P^T P (2 x 2).
    tr = alpha * na2 + 2.0 * beta * nav
    det = -beta * beta * gram0
    top_update = 0.5 * tr + np.sqrt(np.maximum(0.25 * tr * tr - det, 0.0))
    pole = s * d_max
    lam = np.empty(m)

    # s = 0: A is the rank-2 update alone (closed form); p = 1: A is a scalar.
    closed = s == 0
    if p == 1:
        closed[:] = True
        lam[:] = s * d[0] + alpha * na2 + 2.0 * beta * nav
    else:
        lam[closed] = np.maximum(top_update[closed], 0.0)
    todo = np.flatnonzero(~closed)
    if todo.size == 0:
        return lam

    hi = pole[todo] + np.maximum(top_update[todo], 0.0)
    hi = hi * (1.0 + 1e-12) + 1e-300
    lo = pole[todo]
    # per-row arrays of the rows still to solve; d and vv are shared by all rows
    rows = tuple(None if a is None else a[todo]
                 for a in (s, A2, Av, Q2, Qv, alpha, beta))

    def take(sel):
        if sel.size == todo.size:  # every row: no copies
            return rows
        return tuple(None if a is None else a[sel] for a in rows)

    buf = np.empty((todo.size, p))

    def mu_of(lam_, r, with_derivative=True):
        s_, A2_, Av_, Q2_, Qv_, al_, be_ = r
        return _mu(lam_, s_, d, A2_, Av_, Q2_, Qv_, vv, al_, be_, buf, with_derivative)

    # Does the root lie above the pole?  Probe mu just above it.
    probe = lo + 1e-9 * (hi - lo) + 4 * _EPS * lo
    mu_probe, _ = mu_of(probe, rows, with_derivative=False)
    above = (mu_probe > 1.0) & (top_update[todo] > 0)

    # --- safeguarded Newton on h = 1/mu - 1 for rows whose root is above the pole.
    # The working set (pos: positions in ``idx``) is compacted only when it has shrunk
    # enough, so the per-row arrays are not gathered again at every iteration.
    idx = np.flatnonzero(above)
    if idx.size:
        x_all = hi[idx].copy()
        pos = np.arange(idx.size)
        sub = take(idx)
        x, blo, bhi = x_all.copy(), probe[idx].copy(), hi[idx].copy()
        live = np.ones(idx.size, bool)
        for _ in range(max_iter):
            mu, dmu = mu_of(x, sub)
            with np.errstate(divide="ignore", invalid="ignore"):
                h = 1.0 / mu - 1.0
                x_new = x + h * mu * mu / dmu
            bhi = np.where(h >= 0, x, bhi)
            blo = np.where(h < 0, x, blo)
            bad = ~np.isfinite(x_new) | (x_new < blo) | (x_new > bhi)
            x_new = np.where(bad, 0.5 * (blo + bhi), x_new)
            # h is 1/mu - 1 evaluated in floating point: |h| <= 4 eps carries no more
            # information about the root, so the row is converged.
            floor = np.abs(h) <= 4 * _EPS
            x_new = np.where(floor, x, x_new)
            done = floor | (np.abs(x_new - x) <= 4 * _EPS * np.abs(x_new)) | (
                bhi - blo <= 4 * _EPS * bhi
            )
            x = x_new
            x_all[pos[live]] = x[live]
            live &= ~done
            n_live = np.count_nonzero(live)
            if n_live == 0:
                break
            if n_live < 0.7 * live.size:
                keep = np.flatnonzero(live)
                pos, x, blo, bhi = pos[keep], x[keep], blo[keep], bhi[keep]
                sub = tuple(None if a is None else a[keep] for a in sub)
                live = np.ones(keep.size, bool)
        lam[todo[idx]] = x_all

    # --- inertia bisection for rows whose largest eigenvalue is at or below the pole
    idx = np.flatnonzero(~above)
    if idx.size:
        s_, A2_, Av_, Q2_, Qv_, al_, be_ = take(idx)
        blo = s_ * d_second
        bhi = probe[idx].copy()
        for _ in range(200):
            mid = 0.5 * (blo + bhi)
            count = _count_above(mid, s_, d, A2_, Av_, Q2_, Qv_, vv, al_, be_, buf)
            blo = np.where(count >= 1, mid, blo)
            bhi = np.where(count >= 1, bhi, mid)
            if np.all(bhi - blo <= 2 * _EPS * np.abs(bhi)):
                break
        lam[todo[idx]] = 0.5 * (blo + bhi)
    return lam
