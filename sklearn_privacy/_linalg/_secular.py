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

Skeleton poles (:func:`compress_poles`, :func:`largest_eigenvalue_rank2_compressed`): all
secular sums are sums of ``w_k / (x/s - d_k)`` over the same poles ``d_k`` (the top one
left out), only the weights change from row to row. Above the second pole the Cauchy
kernel ``1 / (mu - d_k)`` has low numerical rank, so a fixed set of ``r`` poles (15 to 27
on the data sets of ``benchmarks/``, independent of ``p``) reproduces every such sum to
about ``1e-15`` relative, with weights ``W w`` that one GEMM computes for all rows at
once. The iterations then cost O(r) per row instead of O(p); rows that may leave the
region where this holds are solved on all poles.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_EPS = np.finfo(float).eps
#: Below this sin^2(angle(a_i, v)) the Gram determinant is formed from q = a - c v.
_PARALLEL = 1e-2


def largest_eigenvalue_rank2(s, d, At, vt, alpha, beta, *, max_iter=100, overwrite_a=False,
                             x0=None, block_rows=None, offset=None):
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
    block_rows : int or None, default=None
        Set up and run the first Newton steps on blocks of this many rows (cache-sized),
        then the few rows left of every block together. ``None``: all rows at once.
        The rows are independent: the result depends on the blocking only at rounding
        level (the order of the row-wise sums).
    offset : ndarray of shape (p,) or None, default=None
        Added to every row of ``At`` first (in place, so ``overwrite_a`` must be true),
        block by block while the block is in cache.

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
    if offset is not None:
        if not overwrite_a:
            raise ValueError("offset is added in place: pass overwrite_a=True.")
        step = block_rows or max(m, 1)
        na2, nav = np.empty(m), np.empty(m)
        for b in range(0, m, step):
            blk = At[b:b + step]
            blk += offset
            na2[b:b + step] = _rowsum(blk, blk)
            nav[b:b + step] = _rowdot(blk, vt)
    elif m:
        na2 = _rowsum(At, At)
        nav = _rowdot(At, vt)
    if nvv > 0 and m:
        with np.errstate(invalid="ignore", divide="ignore"):
            sin2 = 1.0 - nav * nav / (na2 * nvv)
        parallel = sin2 < _PARALLEL
    else:
        parallel = np.zeros(m, bool)
    if np.all(parallel) or not np.any(parallel):
        return _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a, x0,
                        use_q=bool(np.any(parallel)), norms=(na2, nav) if m else None,
                        block_rows=block_rows)
    lam = np.empty(m)
    for sel, use_q in ((np.flatnonzero(parallel), True), (np.flatnonzero(~parallel), False)):
        lam[sel] = _largest(s[sel], d, At[sel], vt, alpha[sel], beta[sel], max_iter, True,
                            None if x0 is None else x0[sel], use_q=use_q,
                            norms=(na2[sel], nav[sel]), block_rows=block_rows)
    return lam


#: Skeleton poles: relative tolerance of the interpolative decomposition, the region's
#: distance from the second pole (relative to it), the number of sample points, and the
#: least rows and poles (and most skeleton poles per pole) for which they are used.
_ID_TOL = 1e-15
_U_MIN = 0.01
_ID_SAMPLES = 160
_COMPRESS_MIN_ROWS = 2000
_COMPRESS_MIN_P = 24
_COMPRESS_MAX_FRACTION = 0.5
#: Rows per outer block of the skeleton-pole solver (at most _COMPRESSED_BYTES of rotated
#: rows): the narrow GEMM and the first iterations run on it.
_COMPRESSED_ROWS = 8192
_COMPRESSED_BYTES = 32_000_000
#: Least rows per GEMM block of the rotation (narrower blocks run far from peak).
_COMPRESSED_GEMM_ROWS = 1024


def compress_poles(d, *, u_min=_U_MIN, tol=_ID_TOL, n_samples=_ID_SAMPLES):
    r"""Skeleton poles for the secular sums ``sum_{k != k1} w_k / (mu - d_k)``.

    For ``mu >= d_(2) (1 + u_min)`` (``d_(2)``: the largest pole other than the top one,
    ``k1``) the functions ``mu / (mu - d_k)`` of all poles are reproduced, to relative
    accuracy about ``tol``, by a few of them: an interpolative decomposition (QR with
    column pivoting) of their values on ``n_samples`` points of the region (geometric in
    ``mu - d_(2)`` near the pole, Chebyshev in ``1/mu`` up to infinity), each column
    scaled to unit maximum. Their number grows like ``log(1/u_min) log(1/tol)``, not with
    ``p`` (the Cauchy kernel on separated sets has low numerical rank). Then, for every
    weight vector ``w``,

    .. math::

        \sum_{k \neq k_1} \frac{w_k}{\mu - d_k} = \sum_{l \in S}
        \frac{c_l}{\mu - d_l},\qquad c = W w,

    so one GEMM per weight vector turns every row's secular sums over ``p`` poles into
    sums over ``|S|`` poles, and the solver iterates on those.

    Returns None when there is nothing to gain (few poles, ``d_(2) = 0``, or more than
    ``_COMPRESS_MAX_FRACTION * p`` skeleton poles); else a dict with ``WT`` (p x (r+2):
    ``W^T``, a zero column for the top pole's slot, and ``d`` for the d-weighted sums),
    ``d`` (the r skeleton poles and the top pole), ``k1``, ``d2``, ``u_min``, ``rank``.
    """
    d = np.maximum(np.asarray(d, float), 0.0)
    p = d.size
    if p < _COMPRESS_MIN_P:
        return None
    k1 = int(np.argmax(d))
    cols = np.delete(np.arange(p), k1)
    d2 = float(d[cols].max())
    if not d2 > 0:
        return None
    half = n_samples // 2
    mu_near = d2 * (1.0 + np.geomspace(u_min, 1e3, half))
    t_max = 1.0 / (d2 * (1.0 + u_min))
    t = 0.5 * t_max * (1.0 - np.cos(np.pi * np.arange(1, half + 1) / half))
    mu = np.concatenate([mu_near, 1.0 / t])
    dk = d[cols]
    K = mu[:, None] / (mu[:, None] - dk[None, :])  # in [1, (1 + u_min) / u_min]
    scale = K.max(axis=0)
    K /= scale
    skeleton, coef = _interpolative(K, tol)
    r = skeleton.size
    if r + 2 > _COMPRESS_MAX_FRACTION * p:
        return None
    W = coef * scale[None, :] / scale[skeleton][:, None]  # c = W w
    WT = np.zeros((p, r + 2))
    WT[cols, :r] = W.T
    WT[:, r + 1] = d
    return {"WT": WT, "d": np.append(dk[skeleton], d[k1]), "k1": k1, "d2": d2,
            "u_min": float(u_min), "rank": r}


def _interpolative(K, tol):
    """Column interpolative decomposition ``K ~= K[:, S] @ coef`` (``coef[:, S] = I``).

    Greedy column pivoting with classical Gram-Schmidt applied twice (numerically
    orthogonal to working precision): the column of largest residual norm joins ``S``
    until that norm is below ``tol`` times the first one. ``coef`` solves
    ``R_SS coef = R_S:`` from the triangular factor of the selected columns.

    numpy only, on purpose: :func:`scipy.linalg.interpolative.interp_decomp`
    (deterministic column-pivoted QR) gives the same rank and skeleton to rounding, but
    it runs on scipy's own OpenBLAS thread pool, and waking a second pool next to
    numpy's slowed the numpy GEMMs of every per-example eta that follows by 25-45 % on
    the 2-core benchmark machine (``benchmarks/bench_fil_eta.py``, quiet, side by side
    with the revision before the switch; see ``benchmarks/RESULTS.md``).
    """
    n, p = K.shape
    Rres = K.copy()
    norms = np.einsum("ij,ij->j", Rres, Rres)
    Q = np.empty((n, min(n, p)))
    skeleton = []
    first = None
    for j in range(min(n, p)):
        k = int(np.argmax(norms))
        nk = float(np.sqrt(norms[k]))
        if first is None:
            first = nk
        if not nk > tol * first:
            break
        q = Rres[:, k].copy()
        for _ in range(2):  # reorthogonalise against the basis so far
            q -= Q[:, :j] @ (Q[:, :j].T @ q)
        q /= np.linalg.norm(q)
        Q[:, j] = q
        Rres -= np.outer(q, q @ Rres)
        norms = np.einsum("ij,ij->j", Rres, Rres)
        norms[skeleton + [k]] = -1.0
        skeleton.append(k)
    S = np.asarray(skeleton, int)
    Qs = Q[:, :S.size]
    R = Qs.T @ K  # (r, p): the triangular factor on S, the rest projected
    coef = np.linalg.solve(R[:, S], R)
    coef[:, S] = np.eye(S.size)
    return S, coef


def largest_eigenvalue_rank2_compressed(X, K, offset, s, d, vt, alpha, beta, compression, *,
                                        max_iter=100, block_rows=None):
    """:func:`largest_eigenvalue_rank2` of ``At = X @ K + offset``, on skeleton poles.

    The same eigenvalues (to rounding level: the secular sums over the skeleton poles
    of :func:`compress_poles` reproduce those over all poles to about ``1e-15``
    relative), with the rotation done here, block by block: one GEMM against ``[K, K
    E]`` gives the rotated rows and, in its extra columns, the weights ``a_k v_k`` already
    reduced to the skeleton poles (and the sums ``a.v`` and ``sum_k a_k v_k d_k``); the
    squares ``a_k^2`` are reduced by a second, narrow GEMM. The solver then iterates on
    arrays of (skeleton poles) x (rows) -- stored transposed, so that the element-wise
    passes run along the rows -- instead of (rows) x (p).

    Rows that the compressed problem does not cover are solved by
    :func:`largest_eigenvalue_rank2` on all poles (their rotation is recomputed): rows
    nearly parallel to ``v`` (the q-form), and rows whose starting value is not inside
    the region of the skeleton poles with a margin (see :func:`compress_poles`).
    Closed-form rows (``s d_max`` below the rounding level of the update) are answered
    directly.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (m, q)
    K : ndarray of shape (q, p)
    offset : ndarray of shape (p,) or None
    s, alpha, beta : ndarray of shape (m,)
    d, vt : ndarray of shape (p,)
    compression : dict from :func:`compress_poles` for ``d``
    max_iter : int, default=100
    block_rows : int or None, default=None
        Rows per block of the two GEMMs (cache-sized); None: all at once.

    Returns
    -------
    lam : ndarray of shape (m,)
    """
    m, p = X.shape[0], K.shape[1]
    s = np.asarray(s, float)
    alpha = np.asarray(alpha, float)
    beta = np.asarray(beta, float)
    d = np.maximum(np.asarray(d, float), 0.0)
    k1 = int(np.argmax(d))
    if compression["k1"] != k1 or compression["WT"].shape[0] != p:
        raise ValueError("compression was computed for other poles.")
    WT = compression["WT"]
    r1 = WT.shape[1] - 1  # skeleton poles and the slot of the top pole
    # columns of the first GEMM after the p rotated ones: a_k v_k on the skeleton poles,
    # sum_k a_k v_k d_k and a.v; of the second (on a_k^2): the skeleton poles,
    # sum_k a_k^2 d_k and |a|^2
    E = np.column_stack([vt[:, None] * WT[:, :r1], vt * d, vt])
    W2 = np.column_stack([WT[:, :r1], d, np.ones(p)])
    KK = np.hstack([K, K @ E])
    off = None if offset is None else np.concatenate([offset, offset @ E])
    vv = vt * vt
    v1 = float(vt[k1])
    consts = (compression["d"], r1 - 1, vv @ WT[:, :r1], v1)
    lam = np.empty(m)
    fallback, rest = [], []
    step = max(block_rows or m, _COMPRESSED_GEMM_ROWS, 1)
    outer = max(step, min(_COMPRESSED_ROWS, _COMPRESSED_BYTES // (8 * KK.shape[1])))
    buf = None
    for ob in range(0, m, outer):
        osl = slice(ob, min(m, ob + outer))
        n_o = osl.stop - osl.start
        # the rotation in cache-sized GEMM blocks (rows of the problem as rows), then
        # the squares reduced to the skeleton poles by one narrow GEMM over the outer
        # block; the narrow results are stored transposed (rows of the problem as columns)
        if buf is None or buf.shape[0] != n_o:
            buf = np.empty((n_o, KK.shape[1]))
        G = buf
        for b in range(ob, osl.stop, step):
            loc = slice(b - ob, min(osl.stop, b + step) - ob)
            if sp.issparse(X):
                G[loc] = X[b:b + loc.stop - loc.start] @ KK
            else:
                np.matmul(X[b:b + loc.stop - loc.start], KK, out=G[loc])
        if off is not None:
            G += off
        a1 = G[:, k1].copy()
        Av = np.ascontiguousarray(G[:, p:p + r1].T)
        Avd = G[:, p + r1].copy()
        nav = G[:, p + r1 + 1].copy()
        At = G[:, :p]
        np.square(At, out=At)
        H = W2.T @ At.T
        A2, A2d, na2 = H[:r1], H[r1], H[r1 + 1]
        state, pos, fb, live = _compressed_block(
            np.arange(osl.start, osl.stop), s[osl], alpha[osl], beta[osl], A2, Av, A2d, Avd,
            na2, nav, a1, d, k1, vv, v1, compression, lam)
        if fb.size:
            fallback.append(fb)
        if pos.size:
            res = _newton_rows(state, pos, lam, consts, max_iter,
                               stop=max(1, int(_STRAGGLERS * pos.size)), rows_last=True,
                               live=live)
            if res[1].size:
                rest.append(([None if a is None else a[..., res[1]] for a in res[0]],
                             res[2]))
    if rest:  # the rows left of every block, together
        merged = [None if a is None else np.concatenate([r[0][k] for r in rest], axis=-1)
                  for k, a in enumerate(rest[0][0])]
        _newton_rows(merged, np.concatenate([r[1] for r in rest]), lam, consts, max_iter,
                     stop=0, rows_last=True)
    if fallback:
        fallback = np.concatenate(fallback)
        At = np.asarray(X[fallback] @ K)
        if offset is not None:
            At += offset
        lam[fallback] = largest_eigenvalue_rank2(s[fallback], d, At, vt, alpha[fallback],
                                                 beta[fallback], overwrite_a=True,
                                                 max_iter=max_iter, block_rows=block_rows)
    return lam


def _compressed_block(rows, s, alpha, beta, A2, Av, A2d, Avd, na2, nav, a1, d, k1, vv, v1,
                      compression, lam):
    """Closed-form rows (written to ``lam``), the rows to solve on all poles (returned
    as positions) and the iteration state of the others on the skeleton poles (``A2``,
    ``Av``: skeleton x rows, only read), for one block of
    :func:`largest_eigenvalue_rank2_compressed`. Returns ``(state, positions,
    fallback positions, live)``; ``live`` is None, or the mask of the rows to solve when
    a few others are left in the state."""
    nvv = float(vv.sum())
    d1 = d[k1]
    d2 = compression["d2"]  # the largest pole but the top one
    u = compression["u_min"]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if nvv > 0:
            parallel = 1.0 - nav * nav / (na2 * nvv) < _PARALLEL
        else:
            parallel = np.zeros(rows.size, bool)
        top_update = _update_top(alpha, beta, na2, nav, na2 * nvv - nav * nav)
        closed = ~parallel & _closed_form(s, d1, top_update)
        if closed.any():
            lam[rows[closed]] = np.maximum(top_update[closed], 0.0)
        pi1 = s * d1
        bhi = (pi1 + np.maximum(top_update, 0.0)) * (1.0 + 1e-12) + 1e-300
        x = _ritz_start(A2d, Avd, d, vv, alpha, beta, s, top_update, nvv, na2, nav, a1, v1,
                        pi1)
        # The skeleton poles reproduce the sums for x >= s d2 (1 + u_min); the Ritz value
        # is a lower bound on the eigenvalue, so rows starting at twice that distance
        # from the pole stay in the region (their bracket starts at its edge).
        inside = np.isfinite(x) & (x < bhi) & (x >= s * (d2 * (1.0 + 2.0 * u)))
    solve = ~parallel & ~closed & inside
    fallback = rows[~(closed | solve)]
    blo = s * (d2 * (1.0 + u))
    state = [s, A2, Av, None, None, alpha, beta, a1, None, pi1, blo, bhi, x,
             np.full(rows.size, np.inf)]
    live = None
    if not solve.all():
        if np.count_nonzero(~solve) > _GATHER_CLOSED * rows.size:
            keep = np.flatnonzero(solve)
            state = [None if a is None else a[..., keep] for a in state]
            rows = rows[keep]
        else:  # a few: cheaper to leave them in, never iterated (``live``)
            live = solve
    return state, rows, fallback, live


def _largest(s, d, At, vt, alpha, beta, max_iter, overwrite_a, x0, *, use_q, norms=None,
             block_rows=None):
    m, p = At.shape
    if norms is None:
        norms = _rowsum(At, At), _rowdot(At, vt)
    na2, nav = norms
    if p == 1:  # A is a scalar
        return s * d[0] + alpha * na2 + 2.0 * beta * nav
    lam = np.empty(m)
    k1 = int(np.argmax(d))
    consts = (d, k1, vt * vt, float(vt[k1]))
    if block_rows is None or m <= block_rows:
        state, pos, fix = _prepare(np.arange(m), s, At, vt, alpha, beta, overwrite_a, x0,
                                   na2, nav, use_q, consts, lam)
        if pos.size:
            _newton_rows(state, pos, lam, consts, max_iter, stop=0)
        if fix is not None:
            lam[fix[0]] = fix[1]
        return lam
    # Every block of rows is set up and runs its first Newton steps while its arrays are
    # in cache; the few rows left of every block are then solved together, so the small
    # last iterations (whose cost is mostly per call, not per row) are not repeated block
    # by block.
    blocks = [slice(b, min(m, b + block_rows)) for b in range(0, m, block_rows)]

    fixes = []

    def first_steps(sl):
        state, pos, fix = _prepare(np.arange(sl.start, sl.stop), s[sl], At[sl], vt,
                                   alpha[sl], beta[sl], overwrite_a,
                                   None if x0 is None else x0[sl], na2[sl], nav[sl], use_q,
                                   consts, lam)
        if fix is not None:
            fixes.append(fix)
        if not pos.size:
            return state, pos, pos
        return _newton_rows(state, pos, lam, consts, max_iter,
                            stop=max(1, int(_STRAGGLERS * pos.size)))

    rest = [r for r in map(first_steps, blocks) if r[2].size]
    if rest:
        # one gather per array straight into the merged state
        sizes = np.cumsum([0] + [r[1].size for r in rest])
        merged = []
        for k, first in enumerate(rest[0][0]):
            if first is None:
                merged.append(None)
                continue
            dest = np.empty((sizes[-1],) + first.shape[1:])
            for (state, keep, _), lo, hi in zip(rest, sizes[:-1], sizes[1:], strict=True):
                # (mode="clip": valid indices; the default "raise" buffers ``out``)
                np.take(state[k], keep, axis=0, out=dest[lo:hi], mode="clip")
            merged.append(dest)
        _newton_rows(merged, np.concatenate([r[2] for r in rest]), lam, consts, max_iter,
                     stop=0)
    for positions, values in fixes:
        lam[positions] = values
    return lam


def _update_top(alpha, beta, na2, nav, gram0):
    """Largest eigenvalue of the rank-2 update ``P S P^T`` (= that of ``S P^T P``, 2 x 2)
    from ``|a|^2``, ``a.v`` and the Gram determinant ``|a|^2 |v|^2 - (a.v)^2``."""
    tr = alpha * na2 + 2.0 * beta * nav
    det = -beta * beta * np.maximum(gram0, 0.0)
    return 0.5 * tr + np.sqrt(np.maximum(0.25 * tr * tr - det, 0.0))


def _closed_form(s, d1, top_update):
    """Rows whose pole term ``s d`` is zero or below the rounding level of the update:
    the eigenvalue is the update's, in closed form."""
    return (s <= 0) | (s * d1 <= 0.25 * _EPS * top_update)


def _prepare(rows, s, At, vt, alpha, beta, overwrite_a, x0, na2, nav, use_q, consts, lam):
    """Closed-form rows (written to ``lam[rows]``) and the Newton state of the others.

    Returns ``(state, positions in lam, fix)`` of the rows left to solve; ``fix`` is None
    or ``(positions, values)`` of closed-form rows kept in the state, to be written over
    the solver's values at the end.
    """
    d, k1, vv, v1 = consts
    nvv = float(vv.sum())
    d1 = d[k1]
    d2 = np.max(np.delete(d, k1))
    # Eigenvalues of the rank-2 part = eigenvalues of S P^T P (2 x 2); the Gram
    # determinant of [a_i, v] is formed from q_i = a_i - c_i v (orthogonal to v) when
    # a_i is nearly parallel to v (no cancellation).
    if use_q:
        c = nav / nvv if nvv > 0 else np.zeros(rows.size)
        Q = At - c[:, None] * vt[None, :]
        gram0 = _rowsum(Q, Q) * nvv
    else:
        Q = None
        gram0 = na2 * nvv - nav * nav
    top_update = _update_top(alpha, beta, na2, nav, gram0)
    closed = _closed_form(s, d1, top_update)
    n_closed = int(np.count_nonzero(closed))
    fix = None
    if n_closed == rows.size:
        lam[rows] = np.maximum(top_update, 0.0)
        return [], rows[:0], None
    if n_closed > _GATHER_CLOSED * rows.size:  # one gather of the rows still to solve
        lam[rows[closed]] = np.maximum(top_update[closed], 0.0)
        todo = np.flatnonzero(~closed)
        At, Q = At[todo], None if Q is None else Q[todo]
        s, alpha, beta = s[todo], alpha[todo], beta[todo]
        top_update, na2, nav = top_update[todo], na2[todo], nav[todo]
        if x0 is not None:
            x0 = x0[todo]
        overwrite_a = True
        rows = rows[todo]
    elif n_closed:
        # A few closed-form rows: cheaper than copying the block without them is to
        # give them the problem diag(d) (s = 1, no update; psi = x - d_max, solved at the
        # first evaluation) and to write their values over the solver's afterwards.
        fix = (rows[closed], np.maximum(top_update[closed], 0.0))
        s, alpha, beta = (np.where(closed, 1.0, s), np.where(closed, 0.0, alpha),
                          np.where(closed, 0.0, beta))
        top_update = np.where(closed, 0.0, top_update)
        if x0 is not None:
            x0 = np.where(closed, d1, x0)
    a1 = At[:, k1].copy()
    Av = At * vt[None, :]
    A2 = np.multiply(At, At, out=At if overwrite_a else None)
    if use_q:
        q1 = Q[:, k1].copy()
        Q2 = Q * Q
        Qv = np.multiply(Q, vt[None, :], out=Q)
    else:
        Q2 = Qv = q1 = None
    pi1 = s * d1
    pi2 = s * d2
    hi = (pi1 + np.maximum(top_update, 0.0)) * (1.0 + 1e-12) + 1e-300
    # Bracket (blo, bhi]: blo = pi_2 is a lower bound (interlacing) but psi may have a
    # pole there, so it is never evaluated.
    blo, bhi = pi2.copy(), hi.copy()
    if x0 is not None:
        x = np.clip(x0, blo + 0.5 * (bhi - blo) * 1e-3, bhi)
    else:
        x = _ritz_start(_rowdot(A2, d), _rowdot(Av, d), d, vv, alpha, beta, s, top_update,
                        nvv, na2, nav, a1, v1, pi1)
        ok = np.isfinite(x) & (x > blo) & (x < bhi)
        # fallback: the top pole (a regular point of psi) when it is isolated and the
        # update is small against it, else the Weyl upper bound
        x = np.where(ok, x, np.where((d1 > d2) & (top_update < pi1), pi1, hi))
    prev = np.full(rows.size, np.inf)  # previous Newton step (inf after a bisection)
    return [s, A2, Av, Q2, Qv, alpha, beta, a1, q1, pi1, blo, bhi, x, prev], rows, fix


#: Closed-form rows are gathered out of a block when they are more than this fraction of
#: it (else they ride along in the solver on a trivial problem).
_GATHER_CLOSED = 0.25
#: A block stops its own iterations once at most this fraction of its rows is left.
_STRAGGLERS = 0.25


def _newton_rows(state, pos, out, consts, max_iter, *, stop, rows_last=False, live=None):
    """Safeguarded Newton iterations on psi for the rows of ``state`` (see
    :func:`_largest`), writing each converged root to ``out[pos[i]]``. Once at most
    ``stop`` rows are left (after at least one step), returns ``(state, keep, pos[keep])``
    with ``keep`` the rows of ``state`` not yet converged (empty when all have).
    ``rows_last``: the state's matrices are stored transposed (poles x rows). ``live``:
    the rows to solve (default all); the others ride along and are never written."""
    d, k1, vv, v1 = consts
    live = np.ones(pos.size, bool) if live is None else live.copy()
    buf = np.empty((d.size, pos.size) if rows_last else (pos.size, d.size))
    tol = 4 * _EPS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(max_iter):
            s_, A2, Av, Q2, Qv, al, be, a1, q1, pi1, blo, bhi, x, prev = state
            psi, dpsi, upper, below2 = _psi(x, s_, d, k1, A2, Av, Q2, Qv, vv, al, be,
                                            a1, v1, q1, pi1, buf, rows_last)
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
            state = state[:10] + [blo, bhi, np.where(bad, 0.5 * (blo + bhi), x_new),
                                  np.where(bad, np.inf, step)]
            live &= ~done
            n_live = np.count_nonzero(live)
            if n_live <= stop:  # the caller gathers the rows left (``keep``) itself
                keep = np.flatnonzero(live)
                return state, keep, pos[keep]
            # The working set is compacted only when it has shrunk enough: gathering the
            # m x p arrays costs about one evaluation.
            if n_live < 0.7 * live.size:
                keep = np.flatnonzero(live)
                pos = pos[keep]
                state = [None if a is None else a[..., keep] if rows_last else a[keep]
                         for a in state]
                live = np.ones(keep.size, bool)
    # max_iter reached (not seen: bisection alone converges within ~1100 halvings)
    out[pos[live]] = state[11][live]
    return state, pos[:0], pos[:0]


def _rowdot(A, v):
    """``A @ v`` (a row block against one vector)."""
    return A @ v


if hasattr(np, "vecdot"):  # numpy >= 2: a SIMD inner-product loop, ~30 % faster
    def _rowsum(A, B):
        """Row-wise inner products ``sum_j A_ij B_ij``."""
        return np.vecdot(A, B)
else:  # pragma: no cover - numpy 1.x
    def _rowsum(A, B):
        """Row-wise inner products ``sum_j A_ij B_ij``."""
        return np.einsum("ij,ij->i", A, B)


def _colsum(A, B):
    """Column-wise inner products ``sum_k A_ki B_ki`` (rows of the problem as columns)."""
    return np.einsum("ki,ki->i", A, B)


def _coldot(A, v):
    """``v @ A`` (rows of the problem as columns)."""
    return v @ A


def _ritz_start(A2d, Avd, d, vv, alpha, beta, s, top, nvv, na2, nav, a1, v1, pi1):
    """Rayleigh-Ritz value of ``A`` on span{e_k1, u} (``u``: top eigenvector of the
    update ``P S P^T``): a lower bound on the largest eigenvalue that is exact when the
    top eigenvector lies in that plane -- the usual case when either the pole term or
    the update dominates. ``A2d``, ``Avd``: the row sums of ``a_k^2 d_k`` and
    ``a_k v_k d_k``."""
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
        uDu = y1 * y1 * A2d + 2.0 * y1 * y2 * Avd + y2 * y2 * float(vv @ d)
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


def _psi(x, s, d, k1, A2, Av, Q2, Qv, vv, alpha, beta, a1, v1, q1, pi1, buf,
         rows_last=False):
    """psi, psi', ``upper`` (x is at or above the largest eigenvalue) and ``below2``
    (x is below both roots of psi above pi_2: psi > 0 but not an upper bound)."""
    m = x.size
    # r_k = s / (x - s d_k) = 1 / (x/s - d_k); the top pole is treated analytically
    # (broadcast subtract and divide: numpy's SIMD loops; np.reciprocal and ufunc.outer
    # are about twice slower on float64)
    if rows_last:
        r = buf[:, :m]
        np.subtract((x / s)[None, :], d[:, None], out=r)
        top, rowsum, rowdot = k1, _colsum, _coldot
    else:
        r = buf[:m]
        np.subtract((x / s)[:, None], d[None, :], out=r)
        top, rowsum, rowdot = (slice(None), k1), _rowsum, _rowdot
    r[top] = 1.0  # (no division by zero at the top pole)
    np.divide(1.0, r, out=r)
    r[top] = 0.0
    inv_s = 1.0 / s
    f = rowsum(A2, r) * inv_s
    g = rowsum(Av, r) * inv_s
    h = rowdot(r, vv) * inv_s
    if Q2 is not None:
        fqq = rowsum(Q2, r) * inv_s
        fqv = rowsum(Qv, r) * inv_s
    np.square(r, out=r)
    inv_s2 = -inv_s * inv_s
    df = rowsum(A2, r) * inv_s2
    dg = rowsum(Av, r) * inv_s2
    dh = rowdot(r, vv) * inv_s2
    if Q2 is None:
        G = f * h - g * g
        dG = df * h + f * dh - 2.0 * g * dg
        K = f * v1 * v1 - 2.0 * g * a1 * v1 + h * a1 * a1
        dK = df * v1 * v1 - 2.0 * dg * a1 * v1 + dh * a1 * a1
    else:
        dfqq = rowsum(Q2, r) * inv_s2
        dfqv = rowsum(Qv, r) * inv_s2
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


