"""Derivatives of single fitted transformers: scalers, ``FunctionTransformer`` of a ufunc,
splines, polynomial features, random Fourier features and Nystroem kernel maps.

Each returns the derivative of the step's output with respect to its input at the given
rows, in the block layout :class:`~sklearn_privacy.fil._raw._feature_maps.FeatureMap`
composes along a pipeline.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

#: Derivatives of NumPy ufuncs accepted as ``FunctionTransformer(func=...)``.
_UFUNC_DERIVATIVES = {
    np.log: lambda x: 1.0 / x,
    np.log1p: lambda x: 1.0 / (1.0 + x),
    np.exp: np.exp,
    np.expm1: np.exp,
    np.sqrt: lambda x: 0.5 / np.sqrt(x),
    np.square: lambda x: 2.0 * x,
    np.arcsinh: lambda x: 1.0 / np.sqrt(1.0 + x * x),
    np.tanh: lambda x: 1.0 - np.tanh(x) ** 2,
    np.sin: np.cos,
    np.cos: lambda x: -np.sin(x),
}


# ---------------------------------------------------------------------- step derivatives
def _scaler_derivative(step, Zd):
    """Element-wise derivative (m, k) of a (clipping) scaler, or None if not a scaler."""
    from ...preprocessing import BoundedScaler, DPStandardScaler

    m, k = Zd.shape
    if isinstance(step, StandardScaler):
        s = np.ones(k) if step.scale_ is None else 1.0 / step.scale_
        return np.broadcast_to(s, (m, k))
    if isinstance(step, RobustScaler):
        s = np.ones(k) if step.scale_ is None else 1.0 / step.scale_
        return np.broadcast_to(s, (m, k))
    if isinstance(step, MaxAbsScaler):
        return np.broadcast_to(1.0 / step.scale_, (m, k))
    if isinstance(step, MinMaxScaler):
        s = np.broadcast_to(step.scale_, (m, k)).copy()
        if step.clip:
            y = Zd * step.scale_ + step.min_
            lo, hi = step.feature_range
            s[(y < lo) | (y > hi)] = 0.0
        return s
    if isinstance(step, DPStandardScaler):
        s = np.broadcast_to(1.0 / step.scale_, (m, k)).copy()
        s[(Zd < step.lower_) | (Zd > step.upper_)] = 0.0
        return s
    if isinstance(step, BoundedScaler):
        lo, hi = step._check_range()
        s = np.broadcast_to((hi - lo) / (step.upper_ - step.lower_), (m, k)).copy()
        s[(Zd < step.lower_) | (Zd > step.upper_)] = 0.0
        return s
    return None


def _is_scaler(step):
    from ...preprocessing import BoundedScaler, DPStandardScaler

    return isinstance(step, (StandardScaler, RobustScaler, MaxAbsScaler, MinMaxScaler,
                             DPStandardScaler, BoundedScaler))


def _function_derivative(step):
    """The derivative callable of a FunctionTransformer, or None."""
    func = step.func
    if func is None:
        return lambda X, **kw: np.ones_like(X)
    deriv = getattr(func, "derivative", None)
    if callable(deriv):
        return deriv
    for uf, d in _UFUNC_DERIVATIVES.items():
        if func is uf:
            return lambda X, _d=d, **kw: _d(X)
    return None


def _spline_derivative(step, Zd):
    """Step blocks of a SplineTransformer: one per input column."""
    n_spl = step.bsplines_[0].c.shape[1]
    deg = step.degree
    keep_cols = n_spl if step.include_bias else n_spl - 1
    blocks = []
    for j, spl in enumerate(step.bsplines_):
        x = Zd[:, j]
        mode = step.extrapolation
        if mode == "periodic":
            n = spl.t.size - spl.k - 1
            period = spl.t[n] - spl.t[spl.k]
            if period > 0:
                x = spl.t[spl.k] + (x - spl.t[spl.k]) % period
                D = spl(x, nu=1)
            else:
                D = np.zeros((x.size, n_spl))
        elif mode in ("continue", "error"):
            D = spl(x, nu=1)
        else:  # constant, linear: the spline inside the knots
            xmin, xmax = spl.t[deg], spl.t[-deg - 1]
            D = np.zeros((x.size, n_spl))
            inside = (xmin <= x) & (x <= xmax)
            if inside.any():
                D[inside] = spl(x[inside], nu=1)
            if mode == "linear":
                fp_min, fp_max = spl(xmin, nu=1), spl(xmax, nu=1)
                dg = deg + 1 if deg <= 1 else deg
                below, above = x < xmin, x > xmax
                for c in range(dg):
                    D[below, c] = fp_min[c]
                    k = n_spl - 1 - c
                    D[above, k] = fp_max[k]
        D = D[:, :keep_cols]
        out = j * keep_cols + np.arange(keep_cols)
        blocks.append((out, np.array([j]), D[:, :, None]))
    return blocks


def _poly_derivative(step, Zd):
    P = np.asarray(step.powers_.toarray() if sp.issparse(step.powers_) else step.powers_)
    m, k = Zd.shape
    P = P.astype(np.intp)
    # integer powers by products (no float pow): pw[e, :, l] = Zd[:, l] ** e
    pw = np.ones((int(P.max(initial=0)) + 1, m, k))
    for e in range(1, pw.shape[0]):
        pw[e] = pw[e - 1] * Zd
    J = np.zeros((m, P.shape[0], k))
    for j in range(k):
        has = np.flatnonzero(P[:, j] > 0)
        if not has.size:
            continue
        Pj = P[has].copy()
        Pj[:, j] -= 1
        val = np.broadcast_to(P[has, j].astype(float), (m, has.size)).copy()
        for col in range(k):
            val *= pw[Pj[:, col], :, col].T
        J[:, has, j] = val
    return [(np.arange(P.shape[0]), np.arange(k), J)]


def _rbf_sampler_derivative(step, Zd):
    W = step.random_weights_  # (k, D)
    D = W.shape[1]
    s = np.sin(Zd @ W + step.random_offset_)
    J = -np.sqrt(2.0 / D) * s[:, :, None] * W.T[None]
    return [(np.arange(D), np.arange(Zd.shape[1]), J)]


def _kernel_params(step):
    """The keyword arguments Nystroem passes to its kernel (``pairwise_kernels`` keeps
    those the kernel takes, ``filter_params=True``)."""
    params = dict(step.kernel_params or {})
    for name in ("gamma", "degree", "coef0"):
        if getattr(step, name, None) is not None:
            params[name] = getattr(step, name)
    return params


def _nystroem_params(step, k):
    params = _kernel_params(step)
    gamma = params.get("gamma")
    return {
        "gamma": 1.0 / k if gamma is None else float(gamma),
        "degree": float(params.get("degree", 3)),
        "coef0": float(params.get("coef0", 1)),
    }


def _nystroem_derivative(step, Zd):
    C = np.asarray(step.components_, dtype=float)
    kern = step.kernel
    m, k = Zd.shape
    pr = _nystroem_params(step, k)
    g = pr["gamma"]
    diff = Zd[:, None, :] - C[None]  # (m, c, k)
    if kern == "rbf":
        K = np.exp(-g * np.einsum("mck,mck->mc", diff, diff))
        dK = -2.0 * g * K[:, :, None] * diff
    elif kern == "laplacian":
        K = np.exp(-g * np.abs(diff).sum(axis=2))
        dK = -g * K[:, :, None] * np.sign(diff)
    elif kern in ("poly", "polynomial"):
        base = g * Zd @ C.T + pr["coef0"]
        K = base ** pr["degree"]
        dK = (pr["degree"] * g * base ** (pr["degree"] - 1))[:, :, None] * C[None]
    elif kern == "linear":
        K = Zd @ C.T
        dK = np.broadcast_to(C[None], (m,) + C.shape)
    elif kern == "sigmoid":
        K = np.tanh(g * Zd @ C.T + pr["coef0"])
        dK = (g * (1.0 - K * K))[:, :, None] * C[None]
    elif kern == "cosine":
        nx = np.linalg.norm(Zd, axis=1)
        nc = np.linalg.norm(C, axis=1)
        dot = Zd @ C.T
        K = dot / (nx[:, None] * nc[None])
        dK = (C[None] / (nx[:, None, None] * nc[None, :, None])
              - (dot / (nx[:, None] ** 3 * nc[None]))[:, :, None] * Zd[:, None, :])
    else:  # pragma: no cover - refused by the structural scan
        raise ValueError(f"Nystroem kernel {kern!r} has no derivative here.")
    few = slice(0, min(m, 64))  # safety net on a few rows: the kernel's parameters
    ref = pairwise_kernels(Zd[few], C, metric=kern, filter_params=True,
                           **_kernel_params(step))
    if not np.allclose(K[few], ref, rtol=1e-9, atol=1e-12):  # pragma: no cover
        raise ValueError(f"Nystroem: the kernel {kern!r} recomputed for its derivative "
                         "does not match scikit-learn's; its parameters were not understood.")
    norm = np.asarray(step.normalization_, dtype=float)
    J = np.empty((m, norm.shape[0], k))
    for j in range(k):  # one GEMM per input column
        J[:, :, j] = dK[:, :, j] @ norm.T
    return [(np.arange(J.shape[1]), np.arange(k), J)]
