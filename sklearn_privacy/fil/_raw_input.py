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
derivative of the gradient ``B_i`` (see :mod:`._multinomial`) is multiplied by ``Phi_i``
on its feature columns, the ``K - 1`` label coordinates unchanged.

Every eta and Fisher information matrix of the package's engines is then taken of these
Jacobians: per example (the top eigenvalue of the small ``k x k`` Gram of the selected
columns), per set (``sum_i J_i J_i^T``, ``p x p``) and the FIM ``J_S^T J_S / sigma^2``
(dense, or a matrix-free operator).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg

from ..exceptions import PrivacyWarning
from ._engine import FILEngine, check_dense_fim_size, dense_fim, fim_operator
from ._feature_maps import _take_rows
from ._multinomial import MultinomialFILEngine, helmert_basis

__all__ = ["RawInputAudit"]

#: Relative tolerance of the check that ``phi(X)`` reproduces the final step's data.
_MATCH_RTOL = 1e-7
_CHUNK_BYTES = 32_000_000


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
        self.X = X
        self._published = None
        self._constant_blocks = None
        if not self.multinomial:
            self._Bf = engine.H_inv[:, : self.p_f]
            self._w = engine.theta[: self.p_f]

    # ------------------------------------------------------------------ map blocks
    def _blocks(self, idx):
        """Map blocks at the training rows ``idx`` (checked against the engine's rows)."""
        if self.X is None:
            if self._constant_blocks is None:
                self._constant_blocks = self.fmap.constant_blocks(self.p_f)
            return self._constant_blocks, []
        found = []
        Z, blocks = self.fmap.jacobian_blocks(_take_rows(self.X, idx), published_rows=found)
        Zd = Z.toarray() if hasattr(Z, "toarray") else np.asarray(
            Z.to_numpy() if hasattr(Z, "to_numpy") else Z, dtype=float)
        ref = self.engine.dense_rows(idx)[:, : self.p_f]
        if Zd.shape != ref.shape or not np.allclose(
                Zd, ref, rtol=_MATCH_RTOL, atol=_MATCH_RTOL * max(1.0, np.abs(ref).max())):
            raise ValueError(
                "X: the preprocessing of these rows does not reproduce the data the final "
                "step was fitted on; pass the raw training rows of the pipeline, in the "
                "order it was fitted on.")
        return blocks, [int(idx[k]) for k in found]

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

    def _chunks(self, idx, k):
        size = max(16, int(_CHUNK_BYTES // (8 * max(1, self.p) * max(1, k + self.d_u))))
        for start in range(0, idx.size, size):
            yield idx[start:start + size]

    # ------------------------------------------------------------------ results
    def per_example_sq_norms(self, order, *, constrained=False, rows=None):
        """``||J_i[:, C]||_2^2`` of each row (unscaled); ``inf`` for a published row."""
        idx = self.engine._rows(rows)
        k = self._width(order) - int(constrained)
        out = np.empty(idx.size)
        pos = 0
        published = []
        for chunk in self._chunks(idx, k):
            Jt, pub = self.jacobians_t(chunk, order, constrained)
            published.extend(pub)
            if Jt.shape[1] == 1:
                top = np.einsum("mp,mp->m", Jt[:, 0], Jt[:, 0])
            elif Jt.shape[1] <= self.p:
                top = np.linalg.eigvalsh(np.matmul(Jt, Jt.transpose(0, 2, 1)))[:, -1]
            else:
                top = np.linalg.eigvalsh(np.matmul(Jt.transpose(0, 2, 1), Jt))[:, -1]
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
            warnings.warn(
                "The preprocessing publishes training rows verbatim: "
                + "; ".join(self.fmap.published)
                + (f". Rows {rows[:10]}{' ...' if len(rows) > 10 else ''} of this "
                   "computation are among them: their eta is reported as inf (any noise "
                   "on the final step leaves them exposed)." if rows else "."),
                PrivacyWarning, stacklevel=stacklevel)
