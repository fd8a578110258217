"""Exact objective, gradient, Hessian and mixed derivatives of scikit-learn's MLPs.

The objective is the one ``MLPClassifier`` / ``MLPRegressor`` minimise (checked against
``sklearn/neural_network/_multilayer_perceptron.py`` and ``_base.py``, scikit-learn 1.9)::

    F(theta) = ( sum_i w_i l(z_i, y_i) + alpha / 2 * sum_l ||W_l||_F^2 ) / sum_i w_i

with ``z_i`` the output layer before its output activation, the biases unpenalised
(``alpha`` is the model's for ``solver="lbfgs"``; the stochastic solvers add the penalty
to each of the ``B`` minibatch losses of an epoch, so their objective -- and the
``loss_curve_`` convention -- has ``B * alpha``, see ``_mlp._objective_alpha``), and
``l`` the loss of the canonical output link: ``0.5 (z - y)^2`` (identity output,
``loss="squared_error"``; one target), ``softplus(z) - y z`` (logistic output, binary
classes), ``logsumexp(z) - z . y`` (softmax output, one-hot ``y``) and ``exp(z) - y z +
y log y - y`` (exp output, ``loss="poisson"``). In every case ``dl/dz = out(z) - y``,
which is the ``deltas[last]`` of scikit-learn's back-propagation. (scikit-learn clips the
probabilities to ``[eps, 1 - eps]`` when it *reports* the log-loss; the gradient it
follows, and this objective, have no clipping.)

The parameter vector is scikit-learn's packing (``MLP._pack``): every ``coefs_[l]``
raveled in C order, then every ``intercepts_[l]``.

Second derivatives are computed in forward mode over the analytic gradient (Pearlmutter's
R-operator), vectorised over a block of directions and over rows in chunks:

- ``hessian``: the dense Hessian, one GEMM per pair of layers and term over the rows
  (forward tangents along each layer's pre-activations; ``_hessian_structured``): about
  ``n p^2`` flops, 0.03 s at 5,000 rows x 321 parameters and 0.5 s at 20,000 rows x 921
  (two hidden layers, one BLAS thread), against 1.1 s and 23 s for ``p``
  Hessian-vector products (``generic=True``, kept as the oracle);
- ``hvp``: ``H V`` for a block ``V`` of parameter directions;
- ``mixed``: for each row ``i``, ``G_i = d(w_i grad_theta l_i / sum w) / d(x_i, y_i)``,
  the ``p x q`` derivative of the row's gradient contribution with respect to its ``d``
  input values and its label (one column for a regression target or a binary label, ``K -
  1`` for a one-hot label, in the Helmert basis of the sum-zero changes).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp, softmax, xlogy

__all__ = ["MLPObjective", "ACTIVATIONS"]

#: Hidden activations with a second derivative everywhere.
ACTIVATIONS = ("identity", "logistic", "tanh")

#: Bytes of one chunk's largest temporary array.
_CHUNK_BYTES = 24_000_000
#: Columns and values per tangent array of one pass of
#: :meth:`MLPObjective.hvp_operator`: the products are element-wise bound, so small
#: blocks that stay in cache are fastest (at 2,000 rows x 300 hidden units, CPU per
#: direction for 1 / 8 / 64 directions: 5.7 / 6.0 / 7.1 ms, against 15.7 / 9.7 / 12.0 ms
#: for :meth:`MLPObjective.hvp`; ``benchmarks/bench_block_cg.py``).
_OPERATOR_COLUMNS = 8
_OPERATOR_VALUES = 2 ** 14
#: Largest forward pass kept by :meth:`MLPObjective.hvp_operator`.
_OPERATOR_CACHE_BYTES = 400_000_000


def _hidden(name, a):
    """``g(a), g'(a), g''(a)`` of a hidden activation."""
    if name == "identity":
        return a, np.ones_like(a), np.zeros_like(a)
    if name == "logistic":
        s = expit(a)
        d1 = s * (1.0 - s)
        return s, d1, d1 * (1.0 - 2.0 * s)
    if name == "tanh":
        t = np.tanh(a)
        d1 = 1.0 - t * t
        return t, d1, -2.0 * t * d1
    raise ValueError(f"activation {name!r} has no second derivative")


def _activate(name, a):
    """``g(a)`` of a hidden activation, in place."""
    if name == "logistic":
        return expit(a, out=a)
    if name == "tanh":
        return np.tanh(a, out=a)
    return a


def _times_derivative(name, delta, g):
    """``delta *= g'(a)``, from the activation's output ``g = g(a)``."""
    if name == "identity":
        return
    tmp = g * g
    if name == "tanh":  # 1 - g^2
        np.subtract(1.0, tmp, out=tmp)
    else:  # logistic: g - g^2
        np.subtract(g, tmp, out=tmp)
    delta *= tmp


def _rows(n, per_row_values):
    size = max(1, int(_CHUNK_BYTES // (8 * max(1, per_row_values))))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def _kron(a, b, symmetric):
    """Row-wise Kronecker products ``a_i (x) b_i``; with ``symmetric`` (``a is b``) only
    the pairs ``j <= j'`` (see :func:`_fold_pairs`)."""
    if symmetric:
        j, k = np.triu_indices(a.shape[1])
        return a[:, j] * a[:, k]
    return (a[:, :, None] * b[:, None, :]).reshape(a.shape[0], -1)


def _pair_index(n):
    """``(n, n)`` positions of the pairs ``(min(j, j'), max(j, j'))`` in
    ``np.triu_indices(n)`` order."""
    j, k = np.triu_indices(n)
    out = np.empty((n, n), dtype=np.intp)
    out[j, k] = np.arange(j.size)
    out[k, j] = np.arange(j.size)
    return out


def _fold_pairs(T, n):
    """Rows ``(j, j')`` of ``T`` (``n^2`` of them) folded onto the pairs ``j <= j'``, so
    that ``kron(a, a) @ T == _kron(a, a, True) @ _fold_pairs(T, n)``."""
    j, k = np.triu_indices(n)
    T = T.reshape(n, n, -1)
    out = T[j, k] + T[k, j]
    out[j == k] *= 0.5
    return out


class MLPObjective:
    """Objective of a scikit-learn MLP on fixed data, in scikit-learn's parametrisation.

    Parameters
    ----------
    layer_units : list of int
        ``[n_features, hidden..., n_outputs]``.
    activation : {"identity", "logistic", "tanh"}
        Hidden activation.
    out : {"identity", "logistic", "softmax", "exp"}
        Output activation (``out_activation_``).
    alpha : float
        scikit-learn's ``alpha``.
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, K)
        Target matrix as scikit-learn builds it (one-hot for ``softmax``, 0/1 column for
        ``logistic``, the target column otherwise).
    sample_weight : ndarray of shape (n,) or None
    """

    def __init__(self, layer_units, activation, out, alpha, X, Y, sample_weight=None):
        self.units = [int(u) for u in layer_units]
        self.activation = activation
        self.out = out
        self.alpha = float(alpha)
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.Y = np.ascontiguousarray(Y, dtype=np.float64)
        self.n, self.d = self.X.shape
        self.K = self.units[-1]
        self.w = (np.ones(self.n) if sample_weight is None
                  else np.asarray(sample_weight, dtype=np.float64))
        self.wsum = float(self.w.sum())
        self.shapes = list(zip(self.units[:-1], self.units[1:], strict=True))
        sizes = [i * o for i, o in self.shapes] + [o for _, o in self.shapes]
        self.offsets = np.r_[0, np.cumsum(sizes)]
        self.p = int(self.offsets[-1])
        self.L = len(self.shapes)
        self.penalised = np.zeros(self.p, dtype=bool)
        self.penalised[: self.offsets[self.L]] = True
        # label directions: one per output, in the Helmert basis for a one-hot label
        if out == "softmax":
            from ..._glm._multinomial import helmert_basis

            self.label_dirs = helmert_basis(self.K).T  # (K - 1, K)
        else:
            self.label_dirs = np.eye(self.K)
        self.q = self.d + self.label_dirs.shape[0]
        self._width = max(self.units)

    # ---------------------------------------------------------------- packing
    def unpack(self, theta):
        """Views ``(Ws, bs)`` of a parameter vector (or of a ``(p, k)`` block: then every
        ``W`` is ``(k, i, o)`` and every ``b`` is ``(k, o)``)."""
        theta = np.asarray(theta)
        Ws, bs = [], []
        for layer, (i, o) in enumerate(self.shapes):
            s, e = self.offsets[layer], self.offsets[layer + 1]
            sb, eb = self.offsets[self.L + layer], self.offsets[self.L + layer + 1]
            if theta.ndim == 1:
                Ws.append(theta[s:e].reshape(i, o))
                bs.append(theta[sb:eb])
            else:
                Ws.append(theta[s:e].T.reshape(-1, i, o))
                bs.append(theta[sb:eb].T)
        return Ws, bs

    def pack(self, Ws, bs):
        return np.concatenate([np.ravel(W) for W in Ws] + [np.ravel(b) for b in bs])

    # ---------------------------------------------------------------- forward pass
    def _forward(self, Ws, bs, X):
        """Pre-activations ``a_l`` and activations ``h_l`` (``h_0 = X``); ``a[-1] = z``."""
        hs, ders, acts = [X], [None], []
        for layer in range(self.L):
            a = hs[-1] @ Ws[layer] + bs[layer]
            acts.append(a)
            if layer < self.L - 1:
                g, g1, g2 = _hidden(self.activation, a)
                hs.append(g)
                ders.append((g1, g2))
        return hs, ders, acts

    def _output(self, z):
        if self.out == "identity":
            return z
        if self.out == "logistic":
            return expit(z)
        if self.out == "softmax":
            return softmax(z, axis=1)
        return np.exp(z)

    def _out_jvp(self, z, prob, Rz):
        """``d out(z) / dz`` applied to tangents ``Rz`` of shape (m, k, K)."""
        if self.out == "identity":
            return Rz
        if self.out == "logistic":
            return (prob * (1.0 - prob))[:, None, :] * Rz
        if self.out == "softmax":
            P = prob[:, None, :]
            return P * (Rz - np.sum(P * Rz, axis=2, keepdims=True))
        return prob[:, None, :] * Rz

    def _loss_rows(self, z, Y):
        if self.out == "identity":
            return 0.5 * np.sum((z - Y) ** 2, axis=1)
        if self.out == "logistic":
            return np.sum(np.logaddexp(0.0, z) - Y * z, axis=1)
        if self.out == "softmax":
            return logsumexp(z, axis=1) - np.sum(z * Y, axis=1)
        return np.sum(np.exp(z) - Y * z + xlogy(Y, Y) - Y, axis=1)

    # ---------------------------------------------------------------- value and gradient
    def value_grad(self, theta):
        """``F(theta)`` and its gradient."""
        Ws, bs = self.unpack(theta)
        gW = [self.alpha * W for W in Ws]
        gb = [np.zeros_like(b) for b in bs]
        total = 0.5 * self.alpha * sum(float(np.sum(W * W)) for W in Ws)
        unit = np.all(self.w == 1.0)
        for sl in _rows(self.n, 3 * sum(self.units)):
            X, Y, w = self.X[sl], self.Y[sl], self.w[sl]
            hs = [X]
            for layer in range(self.L - 1):  # activations only (in place)
                a = hs[-1] @ Ws[layer]
                a += bs[layer]
                hs.append(_activate(self.activation, a))
            z = hs[-1] @ Ws[-1]
            z += bs[-1]
            loss = self._loss_rows(z, Y)
            total += float(loss.sum() if unit else w @ loss)
            delta = self._output(z)
            delta -= Y
            if not unit:
                delta *= w[:, None]
            for layer in range(self.L - 1, -1, -1):
                gW[layer] += hs[layer].T @ delta
                gb[layer] += delta.sum(axis=0)
                if layer > 0:
                    delta = delta @ Ws[layer].T
                    _times_derivative(self.activation, delta, hs[layer])
        return total / self.wsum, self.pack(gW, gb) / self.wsum

    def predict_raw(self, theta, X):
        Ws, bs = self.unpack(theta)
        return self._forward(Ws, bs, np.asarray(X, dtype=np.float64))[2][-1]

    # ---------------------------------------------------------------- forward mode
    def _forward_state(self, Ws, bs, X, Y, w):
        """The forward pass of a block of rows at fixed parameters: hidden values
        ``h_l`` (``h_0 = X``), activation derivatives ``(g', g'')`` per hidden layer,
        pre-activations, output probabilities and the weighted residuals ``delta``."""
        hs, ders, acts = self._forward(Ws, bs, X)
        prob = self._output(acts[-1])
        delta = (prob - Y) * w[:, None]
        return hs, ders, acts, prob, delta

    def _tangents(self, Ws, bs, X, Y, w, RW, Rb, RX, RY, per_example, state=None):
        """Forward-mode derivative of the (weighted) gradient along ``k`` tangents.

        ``RW[l]`` ``(k, i, o)`` and ``Rb[l]`` ``(k, o)`` are parameter tangents (or
        None), ``RX`` ``(k, d)`` input tangents shared by the rows (or None), ``RY``
        ``(k, K)`` label tangents (or None). Returns the tangent of ``sum_i w_i grad l_i``
        (``(k, p)``, or ``(m, k, p)`` per row with ``per_example``), without the
        penalty and without the ``1 / sum w`` factor.
        """
        m = X.shape[0]
        if state is None:
            state = self._forward_state(Ws, bs, X, Y, w)
        hs, ders, acts, prob, delta = state
        k = None
        Rh = None  # tangent of h_{l}: (m, k, width) or None (zero)
        Rhs, Ras = [None], []
        if RX is not None:
            k = RX.shape[0]
            Rh = np.broadcast_to(RX[None], (m,) + RX.shape)
            Rhs = [Rh]
        if RW is not None:
            k = RW[0].shape[0]
        if RY is not None:
            k = RY.shape[0]
        for layer in range(self.L):
            h = hs[layer]
            Ra = None
            if Rh is not None:
                Ra = (Rh.reshape(-1, Rh.shape[2]) @ Ws[layer]).reshape(m, k, -1)
            if RW is not None:
                i, o = self.shapes[layer]
                t = (h @ RW[layer].transpose(1, 0, 2).reshape(i, k * o)).reshape(m, k, o)
                t += Rb[layer][None]
                Ra = t if Ra is None else Ra + t
            Ras.append(Ra)
            if layer < self.L - 1:
                Rh = None if Ra is None else ders[layer + 1][0][:, None, :] * Ra
                Rhs.append(Rh)
        z = acts[-1]
        Rdelta = np.zeros((m, k, self.K)) if Ras[-1] is None else self._out_jvp(z, prob, Ras[-1])
        if RY is not None:
            Rdelta = Rdelta - RY[None]
        Rdelta *= w[:, None, None]
        out_W, out_b = [None] * self.L, [None] * self.L
        for layer in range(self.L - 1, -1, -1):
            h = hs[layer]
            Rh = Rhs[layer]
            i, o = self.shapes[layer]
            if per_example:
                gw = h[:, None, :, None] * Rdelta[:, :, None, :]
                if Rh is not None:
                    gw = gw + Rh[:, :, :, None] * delta[:, None, None, :]
                out_W[layer] = gw.reshape(m, k, i * o)
                out_b[layer] = Rdelta
            else:
                gw = (h.T @ Rdelta.reshape(m, k * o)).reshape(i, k, o).transpose(1, 0, 2)
                if Rh is not None:
                    gw = gw + (Rh.reshape(m, k * i).T @ delta).reshape(k, i, o)
                out_W[layer] = gw.reshape(k, i * o)
                out_b[layer] = Rdelta.sum(axis=0)
            if layer > 0:
                g = ders[layer]
                back = Rdelta.reshape(m * k, o) @ Ws[layer].T
                back = back.reshape(m, k, i)
                if RW is not None:
                    back = back + np.einsum("mo,kio->mki", delta, RW[layer])
                dprev = delta @ Ws[layer].T
                Rnew = back * g[0][:, None, :]
                if Ras[layer - 1] is not None:
                    Rnew += (dprev * g[1])[:, None, :] * Ras[layer - 1]
                delta = dprev * g[0]
                Rdelta = Rnew
        return np.concatenate(out_W + out_b, axis=-1)

    def hvp(self, theta, V):
        """``H V`` for a block ``V`` of shape (p, k) (exact Hessian of ``F``)."""
        V = np.asarray(V, dtype=np.float64)
        squeeze = V.ndim == 1
        if squeeze:
            V = V[:, None]
        Ws, bs = self.unpack(theta)
        RW, Rb = self.unpack(V)
        k = V.shape[1]
        out = np.zeros((k, self.p))
        for sl in _rows(self.n, 4 * k * self._width):
            out += self._tangents(Ws, bs, self.X[sl], self.Y[sl], self.w[sl], RW, Rb,
                                  None, None, per_example=False)
        out = out.T
        out[self.penalised] += self.alpha * V[self.penalised]
        out /= self.wsum
        return out[:, 0] if squeeze else out

    def hvp_operator(self, theta):
        """``V -> H V`` at fixed ``theta`` (exact Hessian of ``F``), for many products.

        The forward pass (activations and their derivatives, outputs, residuals) does
        not depend on ``V``: it is computed once and kept (at most ``5 n sum(units)``
        values; above ``_OPERATOR_CACHE_BYTES`` every product recomputes it, as
        :meth:`hvp` does), so a product costs only its tangent passes, on small row
        blocks (``_OPERATOR_VALUES``) and at most ``_OPERATOR_COLUMNS`` columns per pass.
        Equal to :meth:`hvp` (same arithmetic).
        """
        if 8 * 5 * self.n * sum(self.units) > _OPERATOR_CACHE_BYTES:
            return lambda V: self.hvp(theta, V)
        Ws, bs = self.unpack(theta)
        kb = _OPERATOR_COLUMNS
        full = self._forward_state(Ws, bs, self.X, self.Y, self.w)

        def rows_of(sl):
            hs, ders, acts, prob, delta = full
            return ([h[sl] for h in hs], [None] + [(g1[sl], g2[sl]) for g1, g2 in ders[1:]],
                    [a[sl] for a in acts], prob[sl], delta[sl])

        def apply(V):
            V = np.asarray(V, dtype=np.float64)
            squeeze = V.ndim == 1
            if squeeze:
                V = V[:, None]
            out = np.empty((self.p, V.shape[1]))
            for c in range(0, V.shape[1], kb):
                Vc = V[:, c:c + kb]
                RW, Rb = self.unpack(Vc)
                acc = np.zeros((Vc.shape[1], self.p))
                step = max(32, _OPERATOR_VALUES // (Vc.shape[1] * self._width))
                for start in range(0, self.n, step):
                    sl = slice(start, min(self.n, start + step))
                    acc += self._tangents(Ws, bs, self.X[sl], self.Y[sl], self.w[sl],
                                          RW, Rb, None, None, per_example=False,
                                          state=rows_of(sl))
                out[:, c:c + kb] = acc.T
            out[self.penalised] += self.alpha * V[self.penalised]
            out /= self.wsum
            return out[:, 0] if squeeze else out

        return apply

    def _layer_index(self):
        """Per layer, the ``(i + 1, o)`` grid of parameter positions: the weights, then the
        biases as an extra input row of ones."""
        idx = []
        for layer, (i, o) in enumerate(self.shapes):
            w = self.offsets[layer] + np.arange(i * o).reshape(i, o)
            b = self.offsets[self.L + layer] + np.arange(o)[None, :]
            idx.append(np.vstack([w, b]))
        return idx

    def _hessian_structured(self, theta):
        """Dense exact Hessian of a network of any depth, as GEMMs per pair of layers.

        Row ``i``'s weighted gradient in layer ``b`` is ``hat_b (x) delta_b``: ``hat_b``
        the layer's input with a 1 appended (the bias), ``delta_b`` its back-propagated
        residual. For ``a <= b`` it depends on layer ``a``'s weights and bias only through
        the row's pre-activations ``s_a = h_a W_a + b_a`` (``h_b`` through ``s_a``;
        ``delta_b`` through ``s_a, ..., s_L``, the weights above ``b`` entering
        explicitly). With ``Rh_b[c]`` and ``Rdelta_b[c]`` the tangents of the row's
        ``h_b`` and ``delta_b`` along a unit change of ``s_a[c]`` (forward mode from layer
        ``a``, ``o_a`` directions per row; ``Rh_a = 0``, the appended 1 has no tangent)::

            H[(a, j, c), (b, j', c')] = sum_i hat_a[j] (hat_b[j'] Rdelta_b[c, c']
                                                     + Rh_b[c, j'] delta_b[c'])

        The first term is one GEMM ``kron(hat_a, hat_b)^T Rdelta_b`` over the rows
        (``2 n p_a p_b`` flops, per-row operands of ``(i_a + 1)(i_b + 1)`` and ``o_a
        o_b`` values); the second is ``kron(hat_a, delta_b)^T Rh_b``, or, for adjacent
        layers (``Rh_{a+1} = diag(g'(s_a))``), the small ``hat_a^T kron(g'(s_a),
        delta_b)``. A diagonal block ``a = b`` is ``sum_i (hat_a hat_a^T) (x)
        Rdelta_a``, ``Rdelta_a`` the symmetric Hessian of the row's loss in ``s_a``: it is
        built from the pairs ``j <= j'``, ``c <= c'`` (a quarter of the flops). The blocks
        ``a > b`` follow by symmetry; the penalty is added on the weights.
        """
        Ws, bs = self.unpack(theta)
        L = self.L
        aug = [i + 1 for i, _ in self.shapes]
        outs = [o for _, o in self.shapes]
        tri = [np.triu_indices(o) for o in outs]
        pairs = [(a, b) for a in range(L) for b in range(a, L)]
        main, side = {}, {}
        for a, b in pairs:
            if a == b:
                main[a, b] = np.zeros((aug[a] * (aug[a] + 1) // 2, tri[a][0].size))
                continue
            main[a, b] = np.zeros((aug[a] * aug[b], outs[a] * outs[b]))
            side[a, b] = (np.zeros((aug[a], outs[a] * outs[b])) if b == a + 1
                          else np.zeros((aug[a] * outs[b], outs[a] * (aug[b] - 1))))
        width = sum(aug[a] * aug[b] + outs[a] * (outs[b] + aug[b]) for a, b in pairs)
        for sl in _rows(self.n, width + 4 * sum(aug)):
            X, Y, w = self.X[sl], self.Y[sl], self.w[sl]
            m = X.shape[0]
            hs, g1s, g2s = [X], [], []
            for layer in range(L - 1):
                g, g1, g2 = _hidden(self.activation, hs[-1] @ Ws[layer] + bs[layer])
                hs.append(g)
                g1s.append(g1)
                g2s.append(g2)
            z = hs[-1] @ Ws[-1] + bs[-1]
            prob = self._output(z)
            ones = np.ones((m, 1))
            hats = [np.hstack([h, ones]) for h in hs]
            deltas = [None] * L
            curv = [None] * L  # (delta_{l+1} W_{l+1}^T) g''(s_l): the g'' part of Rdelta_l
            deltas[-1] = (prob - Y) * w[:, None]
            for layer in range(L - 1, 0, -1):
                back = deltas[layer] @ Ws[layer].T
                curv[layer - 1] = back * g2s[layer - 1]
                deltas[layer - 1] = back * g1s[layer - 1]
            for a in range(L):
                o = outs[a]
                diag = np.arange(o)
                # forward: tangents of h_l (Rhs) and s_l (Ras) along the o pre-activations
                Ras, Rhs = [None] * L, [None] * L
                for layer in range(a + 1, L):
                    if layer == a + 1:
                        Rh = np.zeros((m, o, o))
                        Rh[:, diag, diag] = g1s[a]
                        Ras[layer] = g1s[a][:, :, None] * Ws[layer][None]
                    else:
                        Rh = g1s[layer - 1][:, None, :] * Ras[layer - 1]
                        Ras[layer] = np.matmul(Rh, Ws[layer])
                    Rhs[layer] = Rh
                Rz = Ras[-1] if a < L - 1 else np.broadcast_to(np.eye(o), (m, o, o))
                Rd = self._out_jvp(z, prob, Rz) * w[:, None, None]
                # backward: Rdelta_b for b = L - 1, ..., a, and the blocks (a, b)
                for b in range(L - 1, a, -1):
                    main[a, b] += _kron(hats[a], hats[b], False).T @ Rd.reshape(m, -1)
                    if b == a + 1:
                        side[a, b] += hats[a].T @ _kron(g1s[a], deltas[b], False)
                    else:
                        side[a, b] += (_kron(hats[a], deltas[b], False).T
                                       @ Rhs[b].reshape(m, -1))
                    Rd = np.matmul(Rd, Ws[b].T) * g1s[b - 1][:, None, :]
                    if b - 1 == a:
                        Rd[:, diag, diag] += curv[a]
                    else:
                        Rd += curv[b - 1][:, None, :] * Ras[b - 1]
                cu, cv = tri[a]
                main[a, a] += _kron(hats[a], hats[a], True).T @ Rd[:, cu, cv]
        H = np.empty((self.p, self.p))
        idx = self._layer_index()
        for a, b in pairs:
            ra, rb = idx[a].ravel(), idx[b].ravel()
            oa, ob = outs[a], outs[b]
            if a == b:
                pj, pc = _pair_index(aug[a]), _pair_index(oa)
                H[np.ix_(ra, ra)] = main[a, a][pj[:, None, :, None],
                                               pc[None, :, None, :]].reshape(ra.size, -1)
                continue
            full = main[a, b].reshape(aug[a], aug[b], oa, ob).transpose(0, 2, 1, 3).copy()
            if b == a + 1:  # (j, c, c, c')
                full[:, np.arange(oa), np.arange(oa), :] += side[a, b].reshape(aug[a], oa, ob)
            else:  # (j, c', c, j') -> (j, c, j', c')
                full[:, :, :-1, :] += side[a, b].reshape(
                    aug[a], ob, oa, aug[b] - 1).transpose(0, 2, 3, 1)
            full = full.reshape(ra.size, rb.size)
            H[np.ix_(ra, rb)] = full
            H[np.ix_(rb, ra)] = full.T
        H = 0.5 * (H + H.T)
        H[self.penalised, self.penalised] += self.alpha
        return H / self.wsum

    def hessian(self, theta, block=64, generic=False):
        """Dense exact Hessian ``(p, p)`` of ``F`` (symmetrised against rounding).

        GEMMs per pair of layers (:meth:`_hessian_structured`); ``generic=True``: ``p``
        Hessian-vector products in blocks of ``block`` directions (the forward-mode
        oracle, 30-50x slower: 1.08 s against 0.029 s at 5,000 rows x 321 parameters).
        """
        if not generic:
            return self._hessian_structured(theta)
        H = np.empty((self.p, self.p))
        eye = np.eye(self.p)
        for s in range(0, self.p, block):
            e = min(self.p, s + block)
            H[:, s:e] = self.hvp(theta, eye[:, s:e])
        return 0.5 * (H + H.T)

    def mixed(self, theta, rows):
        """``G_i`` for the given rows: array of shape (len(rows), q, p).

        ``G_i[c]`` is the derivative of ``w_i grad_theta l_i / sum w`` with respect to data
        value ``c`` of row ``i`` (the ``d`` inputs, then the label directions); the
        minimiser moves by ``-H^{-1} G_i[c]`` per unit change of that value.
        """
        rows = np.asarray(rows)
        Ws, bs = self.unpack(theta)
        RX = np.zeros((self.q, self.d))
        RX[np.arange(self.d), np.arange(self.d)] = 1.0
        RY = np.zeros((self.q, self.K))
        RY[self.d:] = self.label_dirs
        out = self._tangents(Ws, bs, self.X[rows], self.Y[rows], self.w[rows], None, None,
                             RX, RY, per_example=True)
        out /= self.wsum
        return out

    def mixed_chunks(self, theta, rows):
        """``(positions, G)`` chunks of :meth:`mixed` over ``rows`` (bounded memory)."""
        rows = np.asarray(rows)
        for sl in _rows(rows.size, 3 * self.q * self.p):
            yield sl, self.mixed(theta, rows[sl])

    # ---------------------------------------------------------------- structured Grams
    def _row_factors(self, Ws, bs, X, Y, w):
        """Per-layer factors of the mixed derivatives of a block of rows.

        Along data tangent ``k`` (the ``q`` values of a row), the derivative of row
        ``i``'s weighted gradient in layer ``l``'s block is ``h_l (x) Rdelta_l[k] + Rh_l[k]
        (x) delta_l`` for the weights and ``Rdelta_l[k]`` for the biases: ``h_l`` the
        layer's input, ``delta_l`` its back-propagated residual, ``Rh_l``, ``Rdelta_l``
        their tangents. Returns ``[(h_l (m, i), Rh_l (m | 1, q, i), delta_l (m, o),
        Rdelta_l (m, q, o))]`` with the ``w_i / sum w`` factor in the deltas.
        """
        m = X.shape[0]
        q = self.q
        RX = np.zeros((q, self.d))
        RX[np.arange(self.d), np.arange(self.d)] = 1.0
        RY = np.zeros((q, self.K))
        RY[self.d:] = self.label_dirs
        hs, ders, Rhs, Ras = [X], [None], [RX[None]], []
        Rh = RX[None]
        for layer in range(self.L):
            a = hs[-1] @ Ws[layer] + bs[layer]
            Ra = np.matmul(Rh, Ws[layer])
            if Ra.shape[0] != m:
                Ra = np.broadcast_to(Ra, (m,) + Ra.shape[1:])
            Ras.append(Ra)
            if layer < self.L - 1:
                g, g1, g2 = _hidden(self.activation, a)
                hs.append(g)
                ders.append((g1, g2))
                Rh = g1[:, None, :] * Ra
                Rhs.append(Rh)
            else:
                z = a
        scale = (w / self.wsum)[:, None]
        prob = self._output(z)
        delta = (prob - Y) * scale
        Rdelta = (self._out_jvp(z, prob, Ras[-1]) - RY[None]) * scale[:, :, None]
        out = [None] * self.L
        for layer in range(self.L - 1, -1, -1):
            out[layer] = (hs[layer], Rhs[layer], delta, Rdelta)
            if layer > 0:
                g1, g2 = ders[layer]
                dprev = delta @ Ws[layer].T
                Rdelta = (np.matmul(Rdelta, Ws[layer].T) * g1[:, None, :]
                          + (dprev * g2)[:, None, :] * Ras[layer - 1])
                delta = dprev * g1
        return out

    def gram_operator(self, M):
        """Contractions of a symmetric ``(p, p)`` matrix ``M`` for :meth:`row_grams`.

        The rows of ``M`` are regrouped per layer as ``(i + 1) x o`` blocks (the weights,
        then the biases as an extra input row of ones), so that every term of ``G_i M
        G_i^T`` is a bilinear form of Kronecker products of per-row vectors, evaluated
        for all rows by one GEMM.
        """
        idx = self._layer_index()
        terms = {}
        for la in range(self.L):
            ia, oa = self.shapes[la]
            for lb in range(self.L):
                ib, ob = self.shapes[lb]
                blk = M[np.ix_(idx[la].ravel(), idx[lb].ravel())].reshape(
                    ia + 1, oa, ib + 1, ob)
                if la <= lb:
                    # A: h_a (x) h_b -> (o_a, o_b); D: delta_a (x) delta_b -> (i_a, i_b)
                    MA = blk.transpose(0, 2, 1, 3).reshape((ia + 1) * (ib + 1), oa * ob)
                    MD = blk[:ia, :, :ib].transpose(1, 3, 0, 2).reshape(oa * ob, ia * ib)
                    if la == lb:  # symmetric Kronecker squares: the pairs j <= j' only
                        MA = _fold_pairs(MA, ia + 1)
                        MD = _fold_pairs(MD, oa)
                    terms[la, lb, "A"] = np.ascontiguousarray(MA)
                    terms[la, lb, "D"] = np.ascontiguousarray(MD)
                # C: h_a (x) delta_b -> (o_a, i_b)
                MC = blk[:, :, :ib].transpose(0, 3, 1, 2).reshape((ia + 1) * ob, oa * ib)
                terms[la, lb, "C"] = np.ascontiguousarray(MC)
        return terms

    def row_grams(self, theta, rows, terms):
        """``G_i M G_i^T`` ``(len(rows), q, q)`` from :meth:`gram_operator`'s terms.

        Equal to ``mixed(theta, rows) @ M @ mixed(theta, rows).T`` per row, without
        forming the ``q x p`` mixed derivatives: the cost per row is about ``2 p^2`` flops
        in GEMMs with inner dimensions ``(i + 1) (i' + 1)``, ``o o'`` or ``(i + 1) o'``
        (instead of ``q p^2``).
        """
        rows = np.asarray(rows)
        Ws, bs = self.unpack(theta)
        q = self.q
        aug = sum((i + 1) for i, _ in self.shapes)
        width = max(aug * aug, sum(o for _, o in self.shapes) ** 2) + 4 * q * self._width
        out = np.empty((rows.size, q, q))
        for sl in _rows(rows.size, 2 * width):
            r = rows[sl]
            m = r.size
            fac = self._row_factors(Ws, bs, self.X[r], self.Y[r], self.w[r])
            hat = [np.hstack([h, np.ones((m, 1))]) for h, _, _, _ in fac]
            gram = np.zeros((m, q, q))
            cross = np.zeros((m, q, q))
            for la in range(self.L):
                ha, Rha, da, Rda = fac[la]
                for lb in range(self.L):
                    hb, Rhb, db, Rdb = fac[lb]
                    ia, oa = self.shapes[la]
                    ib, ob = self.shapes[lb]
                    if la <= lb:
                        A = (_kron(hat[la], hat[lb], la == lb)
                             @ terms[la, lb, "A"]).reshape(m, oa, ob)
                        part = np.matmul(np.matmul(Rda, A), np.swapaxes(Rdb, 1, 2))
                        D = (_kron(da, db, la == lb) @ terms[la, lb, "D"]).reshape(m, ia, ib)
                        part += np.matmul(np.matmul(Rha, D), np.swapaxes(Rhb, 1, 2))
                        gram += part
                        if la != lb:
                            gram += np.swapaxes(part, 1, 2)
                    kron = (hat[la][:, :, None] * db[:, None, :]).reshape(m, -1)
                    C = (kron @ terms[la, lb, "C"]).reshape(m, oa, ib)
                    cross += np.matmul(np.matmul(Rda, C), np.swapaxes(Rhb, 1, 2))
            gram += cross + np.swapaxes(cross, 1, 2)
            out[sl] = gram
        return out
