"""Largest eigenvalue of fixed poles plus a positive semi-definite update of small rank.

For every row ``i``: the largest eigenvalue of ``sum_j pi_ij u_j u_j^T + Y_i Y_i^T``
(``u_j`` fixed orthonormal vectors, ``Y_i`` of rank ``r``) by Laguerre steps on the
secular polynomial, bracketed by an exact definiteness test
(:func:`largest_eigenvalue_psd_update`). The rank-2 case of a diagonal matrix is
:mod:`._secular`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Newton steps of :func:`largest_eigenvalue_psd_update` stop below this relative size.
_PSD_TOL = 1e-13
#: Laguerre converges cubically: a step below this relative size leaves an error of
#: order its cube (times the inverse squared relative gap to the next eigenvalue).
_PSD_STOP = 1e-7
#: Laguerre steps beyond the bracket by less than this (relative) are kept: a
#: definiteness test within rounding of the root may fall on either side.
_PSD_SLACK = 1e-6


def largest_eigenvalue_psd_update(pi, Yh, C0, *, max_iter=80):
    r"""Largest eigenvalue of ``sum_j pi_ij u_j u_j^T + Y_i Y_i^T`` for every row ``i``.

    ``u_j`` are fixed orthonormal vectors, ``pi_ij >= 0`` the row's poles and ``Y_i``
    (``r`` columns) the row's update, given through ``Yh_i = U^T Y_i`` (its coordinates
    on the ``u_j``) and ``C0_i = Y_i^T (I - U U^T) Y_i`` (the Gram of its part
    orthogonal to them). For ``lambda`` above every pole,

    .. math::

        \det(\lambda - A_i) = \lambda^{p - q} \prod_j (\lambda - \pi_{ij})
        \det T_i(\lambda),\qquad T_i(\lambda) = I_r - \sum_j
        \frac{\hat y_j \hat y_j^\top}{\lambda - \pi_{ij}} - \frac{C_0}{\lambda},

    and, the update being positive semi-definite, ``lambda`` is above the largest
    eigenvalue iff ``T_i(lambda)`` is positive definite (Haynsworth inertia additivity on
    ``[[lambda - D, Y], [Y^T, I]]``): an ``L D L^T`` factorisation of the ``r x r``
    matrix is an exact test. The largest eigenvalue is the largest root of the polynomial
    ``lambda^r prod_j (lambda - pi_j) det T(lambda)`` (degree ``q + r``, all roots real),
    whose logarithmic derivatives ``r / lambda + sum_j 1 / (lambda - pi_j) + tr(T^-1
    T')`` and the next one need only ``T``, ``T'``, ``T''`` (sums over the poles with
    weights ``(lambda - pi_j)^-k``: the packed products ``y_j y_j^T``, ``C_0`` as one
    more with its pole at 0, are formed once, and each step's three sums are one
    batched ``(3 x (q + 1)) (q + 1 x r(r+1)/2)`` GEMM) and ``T^-1``. Every row runs
    Laguerre steps from Weyl's upper bound (top pole plus the update's largest
    eigenvalue, bounded by its Gram's row sums): for a polynomial with real roots they
    decrease monotonically to the largest root and converge cubically, in three to
    four steps on the data sets of ``benchmarks/``. The definiteness test keeps a bracket
    (up to ``_PSD_SLACK``: within rounding of the root the test may fall on either side);
    a step leaving it is replaced by bisection, and a step below ``_PSD_STOP`` (relative)
    ends the row. Cost per step and row: O(q r^2 + r^3).

    Parameters
    ----------
    pi : ndarray of shape (m, q), non-negative
    Yh : ndarray of shape (m, q, r)
    C0 : ndarray of shape (m, r, r), symmetric positive semi-definite
    max_iter : int, default=80

    Returns
    -------
    lam : ndarray of shape (m,)
    converged : ndarray of bool, shape (m,)
        False for the rows that did not converge in ``max_iter`` steps (``lam`` is then
        an upper bound); the caller solves those another way.
    """
    m, q, r = Yh.shape
    YY, Cg, pack = _packed_update(Yh, C0)
    dpk = pack.full[np.arange(r), np.arange(r)]
    pmax = pi.max(axis=1) if q else np.zeros(m)
    trY = Cg[:, dpk].sum(axis=1)
    lam = np.empty(m)
    conv = np.zeros(m, bool)
    # rows without update: the top pole
    none = trY <= 0.0
    lam[none] = pmax[none]
    conv[none] = True
    act = np.flatnonzero(~none)
    # Weyl: the top pole plus the largest eigenvalue of the update's Gram (at most its
    # largest absolute row sum, and its trace) bounds the eigenvalue from above
    gersh = np.minimum(np.abs(Cg[:, pack.full]).sum(axis=2).max(axis=1), trY)
    hi_a = (pmax[act] + gersh[act]) * (1.0 + 1e-12) + 1e-300
    lo_a = pmax[act]
    x = hi_a.copy()
    if act.size < m:
        YY, pi_a = YY[act], pi[act]
    else:
        pi_a = pi
    lag = np.zeros(act.size, bool)  # x was reached by a Laguerre step
    n_deg = q + r  # degree of the polynomial (the rank of A restricted to its span)
    for _ in range(max_iter):
        if not act.size:
            break
        step, pd = _laguerre_step(x, pi_a, YY, pack, n_deg)
        nxt = x - step
        hi_a = np.where(pd, np.minimum(x, hi_a), hi_a)
        lo_a = np.where(pd, lo_a, np.maximum(lo_a, x))
        # the bracket's ends come from definiteness tests, exact up to rounding near the
        # root: a step beyond them by less than _PSD_SLACK is kept
        slack = _PSD_SLACK * x
        ok = np.isfinite(nxt) & (nxt > lo_a - slack) & (nxt <= hi_a + slack)
        # T singular to working precision at a point Laguerre's steps reached from
        # above: that point is the root
        at_root = ~np.isfinite(nxt) & lag
        done = (ok & (np.abs(step) <= _PSD_STOP * x)) | at_root \
            | ((hi_a - lo_a) <= _PSD_TOL * hi_a)
        nxt = np.where(ok, nxt, 0.5 * (lo_a + hi_a))
        res = np.where(ok, nxt, np.where(at_root, x, hi_a))
        lag = ok
        if done.any():
            lam[act[done]] = res[done]
            conv[act[done]] = True
            keep = ~done
            act, x, hi_a, lo_a, lag = (act[keep], nxt[keep], hi_a[keep], lo_a[keep],
                                       lag[keep])
            YY, pi_a = YY[keep], pi_a[keep]
        else:
            x = nxt
    lam[act] = hi_a
    return lam, conv


class _Packing(NamedTuple):
    """Packed storage of symmetric ``r x r`` matrices: their upper triangles."""

    iu: np.ndarray    # row of each packed entry
    ju: np.ndarray    # column of each packed entry
    full: np.ndarray  # (a, b) -> packed position
    off: np.ndarray   # 2 off the diagonal: <P, S> of symmetric P, S from packed entries


def _packed_update(Yh, C0):
    """``(YY, Cg, packing)``: the rank-one terms ``y_j y_j^T`` of every row with
    ``C0`` as one more term (its pole at 0), packed ``(m, q + 1, r(r+1)/2)``, and the
    update's Gram ``Y^T Y`` packed ``(m, r(r+1)/2)``."""
    m, q, r = Yh.shape
    C0 = np.asarray(C0, float).reshape(m, r, r)
    iu, ju = np.triu_indices(r)
    npk = iu.size
    # packed upper triangles of the rank-one terms y_j y_j^T, the part orthogonal to the
    # poles (C0) as one more term with its pole at 0: every sum over the poles below is
    # one small batched GEMM (weights times these products), not a product per pole
    Yl = np.ascontiguousarray(np.asarray(Yh, float).transpose(1, 2, 0))  # (q, r, m)
    Cl = np.ascontiguousarray(C0.transpose(1, 2, 0))
    YYl = np.empty((npk, q + 1, m))
    for p in range(npk):  # element-wise along the rows
        np.multiply(Yl[:, iu[p]], Yl[:, ju[p]], out=YYl[p, :q])
        YYl[p, q] = Cl[iu[p], ju[p]]
    Cg = YYl.sum(axis=1).T  # the update's Gram Y^T Y, packed (m, npk)
    YY = np.ascontiguousarray(YYl.transpose(2, 1, 0))  # (m, q + 1, npk)
    del YYl, Yl, Cl
    full = np.empty((r, r), dtype=np.intp)  # (a, b) -> packed position
    full[iu, ju] = np.arange(npk)
    full[ju, iu] = np.arange(npk)
    off = np.where(iu != ju, 2.0, 1.0)  # <P, S> of symmetric P, S from packed entries
    return YY, Cg, _Packing(iu, ju, full, off)


def _laguerre_step(x, pi_a, YY, pack, n_deg):
    """Laguerre's step at ``x`` for every active row, and whether ``T(x)`` is positive
    definite (``x`` above the largest eigenvalue)."""
    iu, ju, full, off = pack
    r = full.shape[0]
    ma, q = pi_a.shape
    ix = 1.0 / x
    W = np.empty((ma, 3, q + 1))
    w1 = np.divide(1.0, x[:, None] - pi_a, out=W[:, 0, :q])
    w2 = np.multiply(w1, w1, out=W[:, 1, :q])
    np.multiply(w2, w1, out=W[:, 2, :q])
    W[:, 0, q] = ix
    W[:, 1, q] = ix * ix
    W[:, 2, q] = W[:, 1, q] * ix
    # sum_j w_j^k y_j y_j^T for k = 1, 2, 3 (T, T' and -T''/2), packed, then with
    # the rows last (element-wise passes along the rows)
    TT = np.ascontiguousarray(np.matmul(W, YY).transpose(1, 2, 0))  # (3, npk, ma)
    T = -TT[0][full]
    T[np.arange(r), np.arange(r)] += 1.0
    # T = L D L^T (unit L): T is definite iff every pivot is positive; with
    # P = T^-1, tr(T^-1 T') = <P, T'>, tr((T^-1 T')^2) = <PT', (PT')^T>
    P, pd = _ldl_inverse_rows_last(T)
    with np.errstate(invalid="ignore", over="ignore"):
        Pp = P[iu, ju] * off[:, None]
        tr1 = np.einsum("pm,pm->m", Pp, TT[1])
        tr2 = np.einsum("pm,pm->m", Pp, TT[2])
        Q = np.einsum("acm,cbm->abm", P, TT[1][full])
        tr11 = np.einsum("abm,bam->m", Q, Q)
        # log-derivatives of the polynomial lambda^r prod_j (lambda - pi_j) det T
        G = tr1 + r * ix + w1.sum(axis=1)
        H = tr11 + 2.0 * tr2 + r * ix * ix + w2.sum(axis=1)
        # Laguerre's step (all roots real: from above the largest root it decreases
        # monotonically to it, cubically near it; from just below, it rises to it)
        disc = np.sqrt(np.maximum((n_deg - 1) * (n_deg * H - G * G), 0.0))
        step = n_deg / (G + np.copysign(disc, G))
    return step, pd


def _ldl_inverse_rows_last(T):
    """Inverses of a stack of small symmetric matrices stored with the rows last
    (``T``: (r, r, m)) by ``T = L D L^T`` (unit ``L``, no pivoting), and whether every
    pivot is positive (``T`` positive definite)."""
    r, _, m = T.shape
    L = np.zeros_like(T)
    dv = np.empty((r, m))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(r):
            v = L[j, :j] * dv[:j]  # (j, m)
            d = T[j, j] - (L[j, :j] * v).sum(axis=0)
            d[d == 0.0] = np.finfo(float).tiny
            dv[j] = d
            L[j, j] = 1.0
            if j + 1 < r:
                L[j + 1:, j] = (T[j + 1:, j] - (L[j + 1:, :j] * v[None]).sum(axis=1)) / d
        # Li = L^-1 (unit lower), by forward substitution
        Li = np.zeros_like(T)
        for i in range(r):
            Li[i, i] = 1.0
            if i:
                Li[i, :i] = -(L[i, :i, None] * Li[:i, :i]).sum(axis=0)
        # P = Li^T D^-1 Li
        Ls = Li / dv[:, None, :]
        P = np.einsum("kam,kbm->abm", Ls, Li)
    return P, np.all(dv > 0, axis=0)
