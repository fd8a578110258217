"""Fisher information loss with respect to a pipeline's raw inputs (chain rule).

The final GLM of a pipeline acts on ``phi(x)``, the preprocessing's output. With the
fitted preprocessing frozen, the gradient of example ``i``'s loss is
``omega_i l'(z_i) x~_i`` with ``x~_i = [phi(x_i); 1]``, and its derivative with respect
to the raw coordinates ``u`` of the row (see :mod:`._feature_maps`) is::

    d grad_i / d u = omega_i [ l''_i x~_i (w^T Phi_i) + l'_i E Phi_i ],
    Phi_i = d phi / d u (x_i)   (p_f x d_u),   E = [I; 0],

so the raw-input Jacobian of the minimiser is ``J_i = -omega_i H^{-1} [l''_i x~_i g_i^T
+ l'_i B Phi_i, (dl'/dy)_i x~_i]`` with ``g_i = Phi_i^T w`` and ``B = H^{-1} E``: the
transformed-feature Jacobian times ``Phi_i``, with ``d_u + 1`` columns instead of
``p_f + 1``. ``B Phi_i`` is assembled from the blocks of ``Phi_i`` (a spline column
touches only its own basis columns; one GEMM per block). For the multinomial model the
derivative of the gradient ``B_i`` (see :mod:`sklearn_privacy.fil._eta._multinomial`) is
multiplied by ``Phi_i`` on its feature columns, the ``K - 1`` label coordinates unchanged.

Every eta and Fisher information matrix of the package's engines is then taken of these
Jacobians: per example (the top eigenvalue of the small ``k x k`` Gram of the selected
columns; or, when the selection holds enough encoded levels, whose columns of ``J_i``
differ from row to row only along ``a_i``, the largest root of a fixed-pole secular
equation of rank ``numeric coordinates + 2``, see :meth:`RawInputAudit._secular_binary`),
per set (``sum_i J_i J_i^T``, ``p x p``) and the FIM ``J_S^T J_S / sigma^2`` (dense, or a
matrix-free operator).
"""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
from scipy import linalg

from ..._glm._multinomial import helmert_basis
from ..._linalg._psd_update import largest_eigenvalue_psd_update
from ...exceptions import PrivacyWarning
from ...utils._validation import errors_name
from ...utils._warnings import warn_user
from .._eta._engine import (
    _GRAM_MAX_COLUMNS,
    FILEngine,
    check_dense_fim_size,
    dense_fim,
    fim_operator,
)
from .._eta._multinomial import MultinomialFILEngine
from ._feature_maps import _take_rows, blocks_to_dense

__all__ = ["RawInputAudit"]

#: Relative tolerance of the check that ``phi(X)`` reproduces the final step's data.
_MATCH_RTOL = 1e-7
_CHUNK_BYTES = 32_000_000
#: Rows (spread over the table) on which the raw rows are checked against the final
#: step's data.
_CHECK_ROWS = 512
#: Route of the per-example etas through a row-dependent map (binary GLMs): "auto" takes
#: the fixed-pole solver (no per-row eigendecomposition) when the selection has at least
#: ``r + 2`` fixed coordinates (encoded levels: ``r + 1`` poles; ``r`` = other coordinates
#: + 2, the rank of the update), the per-row Gram otherwise; "secular" and "gram" force
#: one of them. Measured on Adult (13 levels, 4 numeric): 1.2-2.1x faster than the Gram.
_ROUTE = "auto"
#: Rows per chunk of the fixed-pole solver, at most.
_SECULAR_ROWS = 8192


def _check_raw_columns(fmap, X):
    """Refuse raw rows whose columns are not the pipeline's input columns.

    The derivative reads the raw columns by position, so a frame missing a column (or
    with its columns in another order) would be read out of place.
    """
    if len(X.shape) != 2:
        raise ValueError(f"X must be 2-D (the raw training rows); got shape {X.shape}.")
    names = fmap.feature_names_in
    if fmap.named and hasattr(X, "columns"):
        given = [str(c) for c in X.columns]
        missing = [c for c in names if c not in given]
        if missing:
            raise ValueError(f"X: columns {missing} of the pipeline's input are missing; "
                             "pass the raw training rows with every column it was fitted "
                             "on.")
        if given[: len(names)] != names:
            raise ValueError(f"X: the columns must come in the order the pipeline was "
                             f"fitted on, {names}; got {given}.")
    elif X.shape[1] != fmap.n_features_in:
        raise ValueError(f"X has {X.shape[1]} columns, but the pipeline was fitted on "
                         f"{fmap.n_features_in}; pass the raw training rows.")


def _ix(idx):
    """A slice for a contiguous ascending index array (basic indexing: no gather)."""
    idx = np.asarray(idx)
    if idx.size and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)):
        return slice(int(idx[0]), int(idx[0]) + idx.size)
    return idx


def _top_eigenvalues(G):
    """Largest eigenvalue of each symmetric PSD matrix of the stack ``G`` (m, k, k)."""
    k = G.shape[1]
    if k == 1:
        return G[:, 0, 0].copy()
    if k == 2:
        a, b, c = G[:, 0, 0], G[:, 1, 1], G[:, 0, 1]
        return 0.5 * (a + b) + np.sqrt(0.25 * (a - b) ** 2 + c * c)
    return np.linalg.eigvalsh(G)[:, -1]


def _shared_outputs(terms, vu):
    """Whether the map columns of the coordinates ``vu`` share their outputs: each
    touches, on average, more than half of the outputs any of them touches (a kernel or
    polynomial map; a spline's inputs touch only their own basis columns)."""
    sizes = [np.unique(np.concatenate([o for o, _ in terms[u]])).size for u in vu]
    total = np.unique(np.concatenate([o for u in vu for o, _ in terms[u]])).size
    return 2 * sum(sizes) > len(sizes) * total


class RawInputAudit:
    """Jacobians of a FIL estimator's minimiser with respect to raw input coordinates.

    Parameters
    ----------
    final : fitted FIL estimator
        The last step of the pipeline (its audit engine holds the transformed rows).
    fmap : FeatureMap
        The traced preprocessing (no refusals).
    X : DataFrame, ndarray or None
        The raw training rows, in the order the pipeline was fitted on. ``None`` only
        when ``fmap.constant`` (the derivative does not depend on the row).
    """

    def __init__(self, final, fmap, X):
        fmap.check()
        engine = final._audit_engine()
        if not isinstance(engine, (FILEngine, MultinomialFILEngine)) or \
                type(engine).__name__ == "DaskFILEngine":
            raise ValueError(
                f"raw-input eta is not available for {type(engine).__name__}; use "
                "wrt='features'.")
        if getattr(final, "data_norm", None) is not None:
            raise ValueError(
                "raw-input eta: the final step rescales each row to norm data_norm, a map "
                "whose derivative is not traced; use wrt='features' (the eta of the "
                "scaled features) or fit without data_norm.")
        self.final = final
        self.engine = engine
        self.fmap = fmap
        self.multinomial = isinstance(engine, MultinomialFILEngine)
        self.n = engine.n
        self.p = engine.p
        self.p_f = int(final.n_features_in_)
        self.d_u = fmap.n_coordinates
        self.n_label = engine.K - 1 if self.multinomial else 1
        if X is None and not fmap.constant:
            raise ValueError("X: the raw training rows are needed for this map.")
        if X is not None and X.shape[0] != self.n:
            raise ValueError(
                f"X has {X.shape[0]} rows, but the model was fitted on {self.n}; pass the "
                "raw rows the pipeline was fitted on, in the same order.")
        if X is not None:
            _check_raw_columns(fmap, X)
        self.X = X
        self._checked = X is None
        self._published = None
        self._constant_blocks = None
        if not self.multinomial:
            self._Bf = engine.H_inv[:, : self.p_f]
            self._w = engine.theta[: self.p_f]
            self._N = self._Bf.T @ self._Bf

    # ------------------------------------------------------------------ map blocks
    def _blocks(self, idx):
        """Map blocks at the training rows ``idx`` (checked against the engine's rows)."""
        if self.X is None:
            if self._constant_blocks is None:
                self._constant_blocks = self.fmap.constant_blocks(self.p_f)
            return self._constant_blocks, []
        if not self._checked:
            self._check_rows()
        found = []
        with errors_name("X"):  # e.g. an array for a column transformer selecting by name
            _, blocks = self.fmap.jacobian_blocks(_take_rows(self.X, idx),
                                                  published_rows=found, output=False)
        return blocks, [int(idx[k]) for k in found]

    def _check_rows(self):
        """Refuse raw rows that are not the training rows: ``phi(X)`` must reproduce the
        final step's data on up to ``_CHECK_ROWS`` rows spread over the table (a
        shuffled, shifted or different table fails)."""
        idx = np.unique(np.linspace(0, self.n - 1, min(self.n, _CHECK_ROWS)).astype(np.intp))
        with errors_name("X"):
            Z, _ = self.fmap.jacobian_blocks(_take_rows(self.X, idx))
        Zd = Z.toarray() if hasattr(Z, "toarray") else np.asarray(
            Z.to_numpy() if hasattr(Z, "to_numpy") else Z, dtype=float)
        ref = self.engine.dense_rows(idx)[:, : self.p_f]
        if Zd.shape != ref.shape or not np.allclose(
                Zd, ref, rtol=_MATCH_RTOL, atol=_MATCH_RTOL * max(1.0, np.abs(ref).max())):
            raise ValueError(
                "X: the preprocessing of these rows does not reproduce the data the final "
                "step was fitted on; pass the raw training rows of the pipeline, in the "
                "order it was fitted on.")
        self._checked = True

    # ------------------------------------------------------------------ Jacobians
    def _jt_binary(self, idx, blocks, order):
        """``J_i^T`` of the selected raw columns: (m, k, p)."""
        eng = self.engine
        m = idx.size
        A = eng._aug_rows(idx) @ eng.H_inv  # a_i = H^-1 x~_i
        om, l1, l2, l3 = eng.omega[idx], eng.l1[idx], eng.l2[idx], eng.l3[idx]
        feats = order[order < self.d_u]
        need = np.zeros(self.d_u, bool)
        need[feats] = True
        C = np.zeros((m, self.d_u, self.p))
        g = np.zeros((m, self.d_u))
        Bf, w = self._Bf, self._w
        for o, i, J, diag in blocks:
            sel = need[i]
            if not sel.any():
                continue
            if diag:
                o2, i2 = o[sel], i[sel]
                vals = np.ones((1, o2.size)) if J is None else J[:, sel]
                C[:, i2, :] += vals[:, :, None] * Bf[:, o2].T[None]
                g[:, i2] += vals * w[o2]
            else:
                i2 = i[sel]
                Js = J[:, :, sel]
                C[:, i2, :] += np.matmul(Js.transpose(0, 2, 1), Bf[:, o].T)
                g[:, i2] += np.einsum("mok,o->mk", Js, w[o])
        out = np.empty((m, self._width(order), self.p))
        col = 0
        for c in order:
            if c < self.d_u:
                out[:, col, :] = -((om * l2)[:, None] * g[:, c, None] * A
                                   + (om * l1)[:, None] * C[:, c, :])
                col += 1
            else:
                out[:, col, :] = -(om * l3)[:, None] * A
                col += 1
        return out

    def _gram_binary(self, idx, blocks, order):
        """Per-row Grams ``J_i[:, C]^T J_i[:, C]`` (m, k, k), assembled in the raw space.

        With ``g = Phi^T w``, ``h = Phi^T B^T a`` and ``Q = Phi^T N Phi`` (``N = B^T B``,
        fixed), the Gram of the coordinate columns is ``omega^2 [l''^2 |a|^2 g g^T +
        l'' l' (g h^T + h g^T) + l'^2 Q]`` and the label adds ``omega^2 l3^2 |a|^2`` and
        ``omega^2 l3 (l'' |a|^2 g + l' h)``. Each coordinate's column of ``Phi`` is a few
        output columns with their derivatives (an encoded level: one column, derivative
        1, so its ``N Phi`` is a column of ``N``; a spline input: its own basis columns),
        so ``N Phi`` of all numeric coordinates is one GEMM (:meth:`_numeric_products`).
        """
        eng = self.engine
        m = idx.size
        A = eng._aug_rows(idx) @ eng.H_inv
        na2 = np.einsum("ij,ij->i", A, A)
        E = A @ self._Bf  # rows of B^T a_i
        om, l1, l2, l3 = eng.omega[idx], eng.l1[idx], eng.l2[idx], eng.l3[idx]
        kf = int(np.sum(order < self.d_u))
        N, w = self._N, self._w
        # encoded levels (one output, derivative 1) all at once; then the others
        terms, cu, co, vu = self._split(blocks, order)
        g = np.zeros((m, kf))
        h = np.zeros((m, kf))
        g[:, cu] = w[co]
        h[:, cu] = E[:, co]
        Q = np.empty((m, kf, kf))
        cs = _ix(cu)
        if isinstance(cs, slice):
            Q[:, cs, cs] = N[co][:, co]
        else:
            Q[:, cu[:, None], cu[None, :]] = N[co][:, co]
        if vu.size and _shared_outputs(terms, vu):
            # columns that share their outputs (a kernel or polynomial map): one GEMM
            gV, hV, QVF, QVV = self._numeric_products(terms, vu, co, E, m)
            g[:, vu] = gV
            h[:, vu] = hV
            Q[:, vu[:, None], cu[None, :]] = QVF
            Q[:, cu[:, None], vu[None, :]] = QVF.transpose(0, 2, 1)
            Q[:, vu[:, None], vu[None, :]] = QVV
            vu = vu[:0]
        # columns on their own outputs (a spline's inputs): a small GEMM each
        NP = {}
        for u in vu:
            acc = np.zeros((m, self.p_f))
            for o, vals in terms[u]:
                if vals is None:
                    vals = np.ones((1, o.size))
                acc += vals @ N[o]
                g[:, u] += vals @ w[o]
                h[:, u] += np.einsum("mo,mo->m", np.broadcast_to(vals, (m, o.size)),
                                     E[:, o])
            NP[u] = acc
            Q[:, u, cs] = acc[:, co]
            Q[:, cs, u] = acc[:, co]
        for a, u in enumerate(vu):
            for v in vu[a:]:
                q = np.zeros(m)
                for o, vals in terms[u]:
                    if vals is None:
                        vals = np.ones((1, o.size))
                    q += np.einsum("mo,mo->m", np.broadcast_to(vals, (m, o.size)),
                                   NP[v][:, o])
                Q[:, u, v] = q
                Q[:, v, u] = q
        c_gg = (l2 * l2 * na2)[:, None, None]
        gh = g[:, :, None] * h[:, None, :]
        Gf = c_gg * (g[:, :, None] * g[:, None, :]) + (l2 * l1)[:, None, None] * (
            gh + gh.transpose(0, 2, 1)) + (l1 * l1)[:, None, None] * Q
        lab = np.flatnonzero(order == self.d_u)
        if not lab.size:
            return Gf * (om * om)[:, None, None]
        # internal order: the coordinates, then the label; the caller's order after
        k = kf + 1
        G = np.empty((m, k, k))
        G[:, :kf, :kf] = Gf
        cross = l3[:, None] * (l2[:, None] * na2[:, None] * g + l1[:, None] * h)
        G[:, :kf, kf] = cross
        G[:, kf, :kf] = cross
        G[:, kf, kf] = l3 * l3 * na2
        G *= (om * om)[:, None, None]
        internal = np.empty(k, dtype=np.intp)  # caller position -> internal position
        internal[np.flatnonzero(order < self.d_u)] = np.arange(kf)
        internal[lab[0]] = kf
        if np.array_equal(internal, np.arange(k)):
            return G
        return G[:, internal[:, None], internal[None, :]]

    def _fixed_structure(self, co):
        """Eigen structure of the coordinates whose map column is fixed (encoded levels):
        with ``B_F`` their columns of ``B`` and ``P`` the projector orthogonal to their
        coefficients ``w_F``, ``B_F P B_F^T = sum_j d_j u_j u_j^T``; ``K`` maps ``B_F^T
        y`` to the coordinates ``u_j^T y``."""
        key = co.tobytes()
        cache = self.__dict__.setdefault("_fixed_cache", {})
        if key in cache:
            return cache[key]
        wF = self._w[co]
        QF = self._N[np.ix_(co, co)]
        wn = float(np.linalg.norm(wF))
        if co.size and wn > 0:
            Z = linalg.null_space(wF[None, :] / wn)
        else:
            Z = np.eye(co.size)
        d, V = np.linalg.eigh(Z.T @ QF @ Z)
        d = np.maximum(d, np.finfo(float).tiny)
        K = (Z @ V) / np.sqrt(d)[None, :]
        st = {"d": d, "K": K, "wF": wF, "wn": wn, "vhat": (QF @ wF) @ K,
              "wQw": float(wF @ QF @ wF)}
        cache[key] = st
        return st

    def _split(self, blocks, order):
        """Per selected coordinate its map terms ``(outputs, derivatives or None)``; the
        positions (in the selection) of the fixed coordinates (an encoded level: one
        output, derivative 1) with their outputs, and of the others."""
        feats = order[order < self.d_u]
        kf = feats.size
        pos = np.full(self.d_u, -1, dtype=np.intp)
        pos[feats] = np.arange(kf)
        terms = [[] for _ in range(kf)]
        for o, i, J, diag in blocks:
            for b in np.flatnonzero(pos[i] >= 0):
                u = pos[i[b]]
                if diag:
                    terms[u].append((o[b:b + 1], None if J is None else J[:, b:b + 1]))
                else:
                    terms[u].append((o, J[:, :, b]))
        const = np.array([len(t) == 1 and t[0][1] is None for t in terms], dtype=bool)
        cu = np.flatnonzero(const)
        co = np.array([terms[u][0][0][0] for u in cu], dtype=np.intp)
        return terms, cu, co, np.flatnonzero(~const)

    def _use_secular(self, idx, order):
        """Whether the per-example etas of ``order`` take the fixed-pole route."""
        if _ROUTE != "auto":
            return _ROUTE == "secular"
        blocks, _ = self._blocks(idx[:1])
        _, cu, _, vu = self._split(blocks, order)
        return cu.size - 1 >= vu.size + 2 + 1

    def _numeric_products(self, terms, vu, co, E, m):
        """Products of the map columns ``Phi_u`` of the coordinates ``vu`` (the numeric
        ones) with the fixed matrices, for all rows at once: ``g_u = Phi_u^T w``,
        ``h_u = Phi_u^T B^T a`` (``E`` holds the rows ``B^T a_i``), ``(N Phi_u)[co]``
        and ``Phi_u^T N Phi_v``.

        The columns are laid out densely over the outputs any of them touches (``L``:
        a spline's basis columns of each input, a kernel map's components), so each
        product is one GEMM over ``rows x coordinates`` (``N`` restricted to those
        outputs and ``co``), not one per coordinate and term.
        """
        t = vu.size
        if not t:
            return (np.zeros((m, 0)), np.zeros((m, 0)), np.zeros((m, 0, co.size)),
                    np.zeros((m, 0, 0)))
        outs = np.unique(np.concatenate([o for u in vu for o, _ in terms[u]]))
        L = outs.size
        loc = np.full(self.p_f, -1, dtype=np.intp)
        loc[outs] = np.arange(L)
        Pv = np.zeros((m, t, L))
        for a, u in enumerate(vu):
            for o, vals in terms[u]:
                Pv[:, a, _ix(loc[o])] += 1.0 if vals is None else vals
        N = self._N
        gV = Pv @ self._w[outs]
        hV = np.matmul(Pv, E[:, _ix(outs)][:, :, None])[:, :, 0]
        cols = np.concatenate([co, outs])
        NPc = (Pv.reshape(m * t, L) @ N[np.ix_(outs, cols)]).reshape(m, t, cols.size)
        QVF = NPc[:, :, : co.size]
        QVV = np.matmul(Pv, NPc[:, :, co.size:].transpose(0, 2, 1))
        QVV = 0.5 * (QVV + QVV.transpose(0, 2, 1))
        return gV, hV, QVF, QVV

    def _secular_binary(self, idx, blocks, order):
        """``||J_i[:, C]||_2^2`` of the rows without per-row Grams (see
        :func:`~sklearn_privacy._linalg._psd_update.largest_eigenvalue_psd_update`), and
        the rows that did not converge.

        Split the selected coordinates into those whose map column is fixed (``F``:
        encoded levels, one output of derivative 1) and the others (``V``). With ``P``
        the projector orthogonal to ``w_F`` and ``u = w_F / |w_F|``,

            J_i J_i^T / omega_i^2 = l'^2 B_F P B_F^T + Y_i Y_i^T,
            Y_i = [(l' v_F + l'' |w_F|^2 a) / |w_F|, l'' g_u a + l' b_u (u in V),
                   l3 a],

        ``v_F = B_F w_F``, ``b_u = B Phi_u``: a fixed matrix (diagonalised once)
        scaled per row plus a positive semi-definite update of rank ``|V| + 2``, whose
        coordinates on the fixed eigenvectors and Gram come from the same products as the
        per-row Gram (``B_F^T a``, ``N Phi_u``).
        """
        eng = self.engine
        m = idx.size
        A = eng._aug_rows(idx) @ eng.H_inv
        na2 = np.einsum("ij,ij->i", A, A)
        E = A @ self._Bf
        om, l1, l2, l3 = eng.omega[idx], eng.l1[idx], eng.l2[idx], eng.l3[idx]
        has_label = bool(np.any(order == self.d_u))
        terms, cu, co, vu = self._split(blocks, order)
        t = vu.size
        gV, hV, QVF, QVV = self._numeric_products(terms, vu, co, E, m)
        st = self._fixed_structure(co)
        wF, wn, K = st["wF"], st["wn"], st["K"]
        y0 = bool(co.size) and wn > 0
        # basis [a, v_F (if y0), b_u]: Gram and coordinates on the fixed eigenvectors
        r = 1 + int(y0) + t
        bsl = slice(1 + int(y0), r)
        hF = E[:, co]
        Gam = np.empty((m, r, r))
        Xh = np.empty((m, K.shape[1], r))
        Gam[:, 0, 0] = na2
        Gam[:, 0, bsl] = hV
        Gam[:, bsl, 0] = hV
        Gam[:, bsl, bsl] = QVV
        Xh[:, :, 0] = hF @ K
        Xh[:, :, bsl] = (QVF.reshape(m * t, co.size) @ K).reshape(
            m, t, K.shape[1]).transpose(0, 2, 1)
        if y0:
            av = hF @ wF
            bv = QVF @ wF
            Gam[:, 0, 1] = av
            Gam[:, 1, 0] = av
            Gam[:, 1, 1] = st["wQw"]
            Gam[:, 1, bsl] = bv
            Gam[:, bsl, 1] = bv
            Xh[:, :, 1] = st["vhat"][None, :]
        # coefficients of the update's columns on the basis
        ry = int(y0) + t + int(has_label)
        Cf = np.zeros((m, r, ry))
        c = 0
        if y0:
            Cf[:, 0, 0] = l2 * wn
            Cf[:, 1, 0] = l1 / wn
            c = 1
        Cf[:, 0, c:c + t] = l2[:, None] * gV
        Cf[:, bsl, c:c + t] = l1[:, None, None] * np.eye(t)[None]
        if has_label:
            Cf[:, 0, ry - 1] = l3
        Yh = Xh @ Cf
        YtY = Cf.transpose(0, 2, 1) @ Gam @ Cf
        C0 = YtY - Yh.transpose(0, 2, 1) @ Yh
        pi = (l1 * l1)[:, None] * st["d"][None, :]
        lam, conv = largest_eigenvalue_psd_update(pi, Yh, C0)
        return om * om * np.maximum(lam, 0.0), conv

    def _jt_multinomial(self, idx, blocks, order):
        eng = self.engine
        Bm = eng.dense_b(idx)  # (m, p, d + K - 1)
        m = idx.size
        G = np.zeros((m, self.p, self.d_u))
        for o, i, J, diag in blocks:
            if diag:
                vals = np.ones((1, o.size)) if J is None else J
                G[:, :, i] += Bm[:, :, o] * vals[:, None, :]
            else:
                G[:, :, i] += np.matmul(Bm[:, :, o], J)
        cols = []
        for c in order:
            if c < self.d_u:
                cols.append(G[:, :, c:c + 1])
            else:
                cols.append(Bm[:, :, eng.d:])
        Gs = np.concatenate(cols, axis=2)
        return -np.einsum("pq,mqk->mkp", eng.H_inv, Gs, optimize=True)

    def _width(self, order):
        return int(np.sum(order < self.d_u) + self.n_label * np.sum(order == self.d_u))

    def jacobians_t(self, idx, order, constrained=False):
        """``J_i^T`` (m, k, p) of the rows ``idx`` for the raw columns ``order`` (label:
        ``d_u``), and the training rows among them published by the map."""
        blocks, published = self._blocks(idx)
        if self.multinomial:
            Jt = self._jt_multinomial(idx, blocks, order)
        else:
            Jt = self._jt_binary(idx, blocks, order)
        if constrained:
            Jt = np.einsum("ka,mkp->map", helmert_basis(Jt.shape[1]), Jt)
        return Jt, published

    def _chunks(self, idx, k, secular=False):
        size = max(16, int(_CHUNK_BYTES // (8 * max(1, self.p) * max(1, k + self.d_u))))
        if secular:  # per row: a_i, B^T a_i and N Phi_u of every coordinate at most
            size = max(size, min(_SECULAR_ROWS, int(
                _CHUNK_BYTES // (8 * (self.p + self.p_f * (self.d_u + 2))))))
        for start in range(0, idx.size, size):
            yield idx[start:start + size]

    def _constant_view(self, order):
        """The binary engine with the raw coordinates as its columns, for a map whose
        derivative ``Phi`` is the same at every row (scalers, encoders): ``J_i Phi`` has
        the engine's structure with ``B -> B Phi`` and ``w -> Phi^T w``, so its fast
        routes (Gram or secular) apply unchanged."""
        Phi = blocks_to_dense(self.fmap.constant_blocks(self.p_f), 1, self.p_f,
                              self.d_u)[0]
        feats = order[order < self.d_u]
        P = Phi[:, feats]
        B = self._Bf @ P
        w = P.T @ self._w
        st = {"B": B, "w": w, "v": B @ w, "w2": float(w @ w)}
        view = copy.copy(self.engine)
        view._cache = OrderedDict()
        view._subset_structure = lambda f, h: st
        return view, feats.size, bool(np.any(order == self.d_u))

    # ------------------------------------------------------------------ results
    def per_example_sq_norms(self, order, *, constrained=False, rows=None):
        """``||J_i[:, C]||_2^2`` of each row (unscaled); ``inf`` for a published row."""
        idx = self.engine._rows(rows)
        if self.fmap.constant and not self.multinomial:
            # the rows do not enter (the derivative is the same at every row)
            view, kf, has_label = self._constant_view(order)
            self._published = []
            k = kf + int(has_label)
            if constrained or k <= min(_GRAM_MAX_COLUMNS, self.p - 1):
                return view._gram_route(idx, np.arange(kf), has_label, constrained)
            return view._secular_route(idx, np.arange(kf), has_label,
                                       contiguous=rows is None)
        k = self._width(order) - int(constrained)
        out = np.empty(idx.size)
        pos = 0
        published = []
        secular = not (self.multinomial or constrained or k > self.p) and \
            self._use_secular(idx, order)
        for chunk in self._chunks(idx, k, secular):
            if self.multinomial or k > self.p:
                Jt, pub = self.jacobians_t(chunk, order, constrained)
                if Jt.shape[1] <= self.p:
                    G = np.matmul(Jt, Jt.transpose(0, 2, 1))
                else:
                    G = np.matmul(Jt.transpose(0, 2, 1), Jt)
            elif secular:
                blocks, pub = self._blocks(chunk)
                sq, conv = self._secular_binary(chunk, blocks, order)
                if not conv.all():  # the dense Gram of the few rows left
                    bad = np.flatnonzero(~conv)
                    sub = [(o, i, J, dg) if J is None else
                           (o, i, J[bad] if J.shape[0] == chunk.size else J, dg)
                           for o, i, J, dg in blocks]
                    G = self._gram_binary(chunk[bad], sub, order)
                    sq[bad] = np.maximum(_top_eigenvalues(G), 0.0)
                published.extend(pub)
                out[pos:pos + chunk.size] = sq
                pos += chunk.size
                continue
            else:
                blocks, pub = self._blocks(chunk)
                G = self._gram_binary(chunk, blocks, order)
                if constrained:
                    Qh = helmert_basis(G.shape[1])
                    G = Qh.T[None] @ G @ Qh[None]
            published.extend(pub)
            top = _top_eigenvalues(G)
            out[pos:pos + chunk.size] = np.maximum(top, 0.0)
            pos += chunk.size
        self._published = sorted(set(published))
        if published:
            out[np.isin(idx, published)] = np.inf
        return out

    def group_gram(self, rows=None, order=None, *, constrained=False):
        idx = self.engine._rows(rows, unique=True)
        G = np.zeros((self.p, self.p))
        published = []
        for chunk in self._chunks(idx, self._width(order)):
            Jt, pub = self.jacobians_t(chunk, order, constrained)
            published.extend(pub)
            flat = Jt.reshape(-1, self.p)
            G += flat.T @ flat
        self._published = sorted(set(published))
        return 0.5 * (G + G.T)

    def group_sq_norm(self, rows=None, order=None, *, constrained=False):
        G = self.group_gram(rows, order, constrained=constrained)
        if self._published:
            return np.inf
        return float(max(linalg.eigvalsh(G, subset_by_index=[self.p - 1, self.p - 1])[0],
                         0.0))

    def fim(self, rows=None, order=None, *, sigma, dense=None):
        """FIM of the raw values ``rows x order`` (row-major, label as ``n_label``
        values), dense or as an operator."""
        idx = self.engine._rows(rows, unique=True)
        k = self._width(order)
        size = idx.size * k
        sigma = float(sigma)
        if dense is None:
            dense = size <= 2048
        if dense:
            check_dense_fim_size(size)
            Jt, pub = self.jacobians_t(idx, order)
            self._published = sorted(set(pub))
            return dense_fim(Jt.transpose(0, 2, 1), sigma)
        chunks = list(self._chunks(idx, k))
        self._published = []

        def js(u):
            U = np.asarray(u, float).reshape(idx.size, k)
            out = np.zeros(self.p)
            pos = 0
            for chunk in chunks:
                Jt, _ = self.jacobians_t(chunk, order)
                out += np.einsum("mkp,mk->p", Jt, U[pos:pos + chunk.size])
                pos += chunk.size
            return out

        def jst(g):
            g = np.asarray(g, float).ravel()
            U = np.empty((idx.size, k))
            pos = 0
            for chunk in chunks:
                Jt, _ = self.jacobians_t(chunk, order)
                U[pos:pos + chunk.size] = Jt @ g
                pos += chunk.size
            return U.ravel()

        return fim_operator(js, jst, size, sigma)

    def warn_published(self, stacklevel=3):
        """Warn (PrivacyWarning) when the last computation met rows the map publishes."""
        if self._published or (self.X is None and self.fmap.published):
            rows = self._published or []
            warn_user(
                "The preprocessing publishes training rows verbatim: "
                + "; ".join(self.fmap.published)
                + (f". Rows {rows[:10]}{' ...' if len(rows) > 10 else ''} of this "
                   "computation are among them: their eta is reported as inf (any noise "
                   "on the final step leaves them exposed)." if rows else "."),
                PrivacyWarning, stacklevel=stacklevel)
