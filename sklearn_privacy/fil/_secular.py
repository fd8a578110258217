"""Largest eigenvalue of a diagonal matrix plus a symmetric rank-2 update, vectorised.

For every row ``i`` we need the largest eigenvalue of

.. math::

    A_i = s_i D + \\alpha_i a_i a_i^\\top + \\beta_i (a_i v^\\top + v a_i^\\top)
        = s_i D + P_i S_i P_i^\\top,\\quad P_i = [a_i, v],\\;
          S_i = \\begin{pmatrix}\\alpha_i & \\beta_i \\\\ \\beta_i & 0\\end{pmatrix},

with ``D = diag(d) >= 0`` fixed, ``s_i >= 0`` and ``alpha_i >= 0``. Write
:math:`\\pi_1 = s d_{(1)}` (top pole, index ``k1``), :math:`\\pi_2 = s d_{(2)}` (second
largest, counting multiplicity), :math:`p_1 = (a_{k1}, v_{k1})` and
:math:`F(\\lambda) = \\sum_{k \\neq k1} p_k p_k^\\top / (\\lambda - s d_k)` (2 x 2; the top
pole left out). By the matrix determinant lemma, for :math:`\\lambda > \\pi_2`,

.. math::

    \\psi(\\lambda) = (\\lambda - \\pi_1) \\det(I - S F(\\lambda))
        - p_1^\\top \\mathrm{adj}(I - S F(\\lambda)) S p_1
      = (\\lambda - \\pi_1)\\det(\\lambda - A) / \\det(\\lambda - sD),

with :math:`\\det(I - SF) = 1 - \\alpha f_{aa} - 2\\beta f_{av} - \\beta^2 (f_{aa} f_{vv} -
f_{av}^2)` and :math:`p_1^\\top \\mathrm{adj}(I - SF) S p_1 = p_1^\\top S p_1 + \\beta^2
\\sum_{k \\neq k1} (a_k v_{k1} - v_k a_{k1})^2 / (\\lambda - s d_k)`. :math:`\\psi` has no
pole at :math:`\\pi_1`; its roots above :math:`\\pi_2` are the eigenvalues of ``A`` there
(at most two, by interlacing), the largest eigenvalue lies in
:math:`[\\pi_2, \\pi_1 + \\lambda_{\\max}(P S P^\\top)]`, and ``psi > 0`` beyond it.

Every row runs safeguarded Newton steps on :math:`\\psi` inside a bracket that is kept
exact by the Sylvester inertia count of ``A - lambda`` (Haynsworth additivity on
:math:`[[\\lambda - sD, P], [P^\\top, S^{-1}]]`), which reduces to signs already at hand:
``lambda`` is above the largest eigenvalue iff ``psi > 0`` and either ``lambda >= pi_1``
or the trace of :math:`\\beta^2 (S^{-1} - F_{\\text{full}})`, scaled by
:math:`\\pi_1 - \\lambda`, is positive. A step that leaves the bracket is replaced by
bisection, so convergence never depends on the shape of :math:`\\psi`; in practice
(isolated top pole, nearly linear :math:`\\psi`) two to four vectorised steps suffice
for every row, whether the eigenvalue lies above or below the pole. Rows with
``s = 0`` (the update alone) and ``p = 1`` are closed-form. Cost: O(p) per row and
step; no p x p matrix per row is ever formed.
"""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(float).eps
#: Below this sin^2(angle(a_i, v)) the Gram determinant is formed from q = a - c v.
_PARALLEL = 1e-2


def largest_eigenvalue_rank2(s, d, At, vt, alpha, beta, *, max_iter=100, overwrite_a=False,
                             x0=None):
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
    max_iter : int, default=100
        Iteration cap of the safeguarded Newton loop (bisection alone needs ~60).
    overwrite_a : bool, default=False
        Allow ``At`` to be overwritten (saves one m x p array).
    x0 : ndarray of shape (m,) or None, default=None
        Optional starting points (e.g. the eigenvalues of a nearby problem); clipped into
        the bracket. They change the number of steps, not the result.

    Returns
    -------
    lam : ndarray of shape (m,)
    """
    m, p = At.shape
    s = np.asarray(s, float)
    alpha = np.asarray(alpha, float)
    beta = np.asarray(beta, float)
    d = np.maximum(np.asarray(d, float), 0.0)
    if x0 is not None:
        x0 = np.asarray(x0, float)
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
        return _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a, x0,
                        use_q=bool(np.any(parallel)), norms=(na2, nav) if m else None)
    lam = np.empty(m)
    for sel, use_q in ((np.flatnonzero(parallel), True), (np.flatnonzero(~parallel), False)):
        lam[sel] = _largest(s[sel], d, At[sel], vt, alpha[sel], beta[sel], max_iter, True,
                            None if x0 is None else x0[sel], use_q=use_q,
                            norms=(na2[sel], nav[sel]))
    return lam


def _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a, x0, *, use_q, norms=None):
    m, p = At.shape
    lam = np.empty(m)
    vv = vt * vt
    nvv = float(vv.sum())
    if norms is None:
        norms = np.einsum("ij,ij->i", At, At), At @ vt
    na2, nav = norms
    if p == 1:  # A is a scalar
        return s * d[0] + alpha * na2 + 2.0 * beta * nav
    k1 = int(np.argmax(d))
    d1 = d[k1]
    d2 = np.max(np.delete(d, k1))
    a1 = At[:, k1].copy()
    v1 = float(vt[k1])
    # a_i = q_i + c_i v with q_i orthogonal to v: the 2 x 2 Gram determinants are formed
    # from q (no cancellation when a_i is nearly parallel to v)
    if use_q:
        c = nav / nvv if nvv > 0 else np.zeros(m)
        Q = At - c[:, None] * vt[None, :]
        gram0 = np.einsum("ij,ij->i", Q, Q) * nvv
        q1 = Q[:, k1].copy()
        Q2 = Q * Q
        Qv = np.multiply(Q, vt[None, :], out=Q)
    else:
        Q2 = Qv = q1 = None
        gram0 = na2 * nvv - nav * nav
    # Eigenvalues of the rank-2 part = eigenvalues of S P^T P (2 x 2).
    tr = alpha * na2 + 2.0 * beta * nav
    det = -beta * beta * np.maximum(gram0, 0.0)
    top_update = 0.5 * tr + np.sqrt(np.maximum(0.25 * tr * tr - det, 0.0))

    # s d = 0 (or below the rounding level of the update): the update alone, closed form.
    closed = (s <= 0) | (s * d1 <= 0.25 * _EPS * top_update)
    lam[closed] = np.maximum(top_update[closed], 0.0)
    todo = np.flatnonzero(~closed)
    if todo.size == 0:
        return lam
    Av = At * vt[None, :]
    A2 = np.multiply(At, At, out=At if overwrite_a else None)
    rows = [s, A2, Av, Q2, Qv, alpha, beta, a1, q1]
    if todo.size < m:
        rows = [None if a is None else a[todo] for a in rows]
    s_, A2, Av, Q2, Qv, al, be, a1, q1 = rows
    pi1 = s_ * d1
    pi2 = s_ * d2
    hi = (pi1 + np.maximum(top_update[todo], 0.0)) * (1.0 + 1e-12) + 1e-300
    # Bracket (blo, bhi]: blo = pi_2 is a lower bound (interlacing) but psi may have a
    # pole there, so it is never evaluated.
    blo, bhi = pi2.copy(), hi.copy()
    if x0 is not None:
        x = np.clip(x0[todo], blo + 0.5 * (bhi - blo) * 1e-3, bhi)
    else:
        x = _ritz_start(A2, Av, d, vv, al, be, s_, top_update[todo], nvv,
                        na2[todo], nav[todo], a1, v1, pi1)
        ok = np.isfinite(x) & (x > blo) & (x < bhi)
        # fallback: the top pole (a regular point of psi) when it is isolated and the
        # update is small against it, else the Weyl upper bound
        x = np.where(ok, x, np.where((d1 > d2) & (top_update[todo] < pi1), pi1, hi))
    out = np.empty(todo.size)
    pos = np.arange(todo.size)  # positions (in ``todo``) of the working set
    live = np.ones(todo.size, bool)
    buf = np.empty((todo.size, p))
    prev = np.full(todo.size, np.inf)  # previous Newton step (inf after a bisection)
    state = [s_, A2, Av, Q2, Qv, al, be, a1, q1, pi1, blo, bhi, x, prev]
    tol = 4 * _EPS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(max_iter):
            s_, A2, Av, Q2, Qv, al, be, a1, q1, pi1, blo, bhi, x, prev = state
            psi, dpsi, upper, below2 = _psi(x, s_, d, k1, A2, Av, Q2, Qv, vv, al, be,
                                            a1, v1, q1, pi1, buf)
            bhi = np.where(upper, x, bhi)
            blo = np.where(upper, blo, x)
            x_new = x - psi / dpsi
            step = np.abs(x_new - x)
            # Converged: a Newton step below the tolerance -- or whose successor is, by
            # the quadratic rate measured on the last two steps (e_next ~ step^3 /
            # prev^2, trusted once the steps are below 1e-6) -- taken at the largest
            # root: psi crosses zero upwards there (psi' > 0) and downwards at the
            # smaller root, so the sign of psi' tells them apart even when the step is
            # below one ulp; or a collapsed bracket.
            side = (upper | ~below2) & (dpsi > 0)
            small = (step <= tol * np.abs(x)) | (
                (step <= 1e-6 * np.abs(x)) & np.isfinite(prev)
                & (step * step * step <= tol * np.abs(x) * prev * prev))
            narrow = bhi - blo <= tol * bhi
            exact = (psi == 0) & (dpsi > 0)
            done = live & ((small & side) | exact | narrow)
            result = np.where(exact, x, np.where(narrow, bhi, np.clip(x_new, blo, bhi)))
            out[pos[done]] = result[done]
            bad = ~np.isfinite(x_new) | (x_new <= blo) | (x_new >= bhi)
            state[10:] = (blo, bhi, np.where(bad, 0.5 * (blo + bhi), x_new),
                          np.where(bad, np.inf, step))
            live &= ~done
            n_live = np.count_nonzero(live)
            if n_live == 0:
                break
            # The working set is compacted only when it has shrunk enough: gathering the
            # m x p arrays costs about one evaluation.
            if n_live < 0.7 * live.size:
                keep = np.flatnonzero(live)
                pos = pos[keep]
                state = [None if a is None else a[keep] for a in state]
                live = np.ones(keep.size, bool)
        else:  # pragma: no cover - bisection alone converges within ~1100 halvings
            out[pos[live]] = state[11][live]
    lam[todo] = out
    return lam


def _ritz_start(A2, Av, d, vv, alpha, beta, s, top, nvv, na2, nav, a1, v1, pi1):
    """Rayleigh-Ritz value of ``A`` on span{e_k1, u} (``u``: top eigenvector of the
    update ``P S P^T``): a lower bound on the largest eigenvalue that is exact when the
    top eigenvector lies in that plane -- the usual case when either the pole term or
    the update dominates. Two matrix-vector products for all rows."""
    # u = a y1 + v y2 with (S P^T P) y = top y
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ya = np.stack([top - beta * nav, beta * na2])
        yb = np.stack([alpha * nav + beta * nvv, top - alpha * na2 - beta * nav])
        use_b = np.abs(yb).sum(axis=0) > np.abs(ya).sum(axis=0)
        y1 = np.where(use_b, yb[0], ya[0])
        y2 = np.where(use_b, yb[1], ya[1])
        norm2 = y1 * y1 * na2 + 2.0 * y1 * y2 * nav + y2 * y2 * nvv
        scale = 1.0 / np.sqrt(norm2)
        y1, y2 = y1 * scale, y2 * scale
        uDu = y1 * y1 * (A2 @ d) + 2.0 * y1 * y2 * (Av @ d) + y2 * y2 * float(vv @ d)
        u1 = y1 * a1 + y2 * v1
        a11 = pi1 + alpha * a1 * a1 + 2.0 * beta * a1 * v1
        a1u = (pi1 + top) * u1
        auu = top + s * uDu
        # largest root of det([[a11, a1u], [a1u, auu]] - x [[1, u1], [u1, 1]]) = 0
        c2 = 1.0 - u1 * u1
        c1 = -(a11 + auu - 2.0 * u1 * a1u)
        c0 = a11 * auu - a1u * a1u
        disc = np.sqrt(np.maximum(c1 * c1 - 4.0 * c2 * c0, 0.0))
        x = np.where(c2 > 1e-8, (-c1 + disc) / (2.0 * c2), np.maximum(a11, auu))
    return x


def _psi(x, s, d, k1, A2, Av, Q2, Qv, vv, alpha, beta, a1, v1, q1, pi1, buf):
    """psi, psi', ``upper`` (x is at or above the largest eigenvalue) and ``below2``
    (x is below both roots of psi above pi_2: psi > 0 but not an upper bound)."""
    m = x.size
    r = buf[:m]
    # r_k = s / (x - s d_k) = 1 / (x/s - d_k); the top pole is treated analytically
    np.subtract.outer(x / s, d, out=r)
    np.reciprocal(r, out=r)
    r[:, k1] = 0.0
    inv_s = 1.0 / s
    f = np.einsum("ij,ij->i", A2, r) * inv_s
    g = np.einsum("ij,ij->i", Av, r) * inv_s
    h = (r @ vv) * inv_s
    if Q2 is not None:
        fqq = np.einsum("ij,ij->i", Q2, r) * inv_s
        fqv = np.einsum("ij,ij->i", Qv, r) * inv_s
    np.square(r, out=r)
    inv_s2 = -inv_s * inv_s
    df = np.einsum("ij,ij->i", A2, r) * inv_s2
    dg = np.einsum("ij,ij->i", Av, r) * inv_s2
    dh = (r @ vv) * inv_s2
    if Q2 is None:
        G = f * h - g * g
        dG = df * h + f * dh - 2.0 * g * dg
        K = f * v1 * v1 - 2.0 * g * a1 * v1 + h * a1 * a1
        dK = df * v1 * v1 - 2.0 * dg * a1 * v1 + dh * a1 * a1
    else:
        dfqq = np.einsum("ij,ij->i", Q2, r) * inv_s2
        dfqv = np.einsum("ij,ij->i", Qv, r) * inv_s2
        G = fqq * h - fqv * fqv
        dG = dfqq * h + fqq * dh - 2.0 * fqv * dfqv
        K = fqq * v1 * v1 - 2.0 * fqv * q1 * v1 + h * q1 * q1
        dK = dfqq * v1 * v1 - 2.0 * dfqv * q1 * v1 + dh * q1 * q1
    b2 = beta * beta
    dm = 1.0 - alpha * f - 2.0 * beta * g - b2 * G
    gap = x - pi1
    psi = gap * dm - (alpha * a1 * a1 + 2.0 * beta * a1 * v1) - b2 * K
    dpsi = dm + gap * (-alpha * df - 2.0 * beta * dg - b2 * dG) - b2 * dK
    trn = b2 * (a1 * a1 + v1 * v1) + gap * (alpha + b2 * (f + h))
    upper = (psi > 0) & ((gap >= 0) | (trn > 0))
    below2 = (psi > 0) & ~upper
    return psi, dpsi, upper, below2
