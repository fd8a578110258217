"""Sufficient-statistics perturbation with an adaptive ridge (AdaSSP, Wang 2018).

The release perturbs three statistics of the bounded rows ``x_i`` (the constant column of
``intercept_scaling`` appended, ``||x_i|| <= R``) and bounded, centred targets ``y_i``
(``|y_i| <= B``) and solves a ridge problem on them; nothing else reads the rows:

* ``lambda_min(X^T X)``, the smallest eigenvalue of the Gram matrix (it sets how much
  ridge the noisy Gram matrix needs);
* ``X^T X``, as the vector ``g`` of its ``p (p + 1) / 2`` upper-triangle entries with
  the off-diagonal ones multiplied by ``sqrt 2``, so that ``||g|| = ||X^T X||_F``;
* ``X^T y``.

**Sensitivities (replace-one neighbours, n public).** Replacing row ``(x, y)`` by
``(x', y')`` changes

* ``X^T X`` by ``x' x'^T - x x^T``, whose Frobenius norm is ``sqrt(||x||^4 + ||x'||^4 - 2
  (x^T x')^2) <= sqrt 2 R^2`` (the cross term is a square, hence non-negative): the L2
  sensitivity of ``g`` is ``sqrt 2 R^2``, reached by two orthogonal rows of norm ``R``;
* ``X^T y`` by ``y' x' - y x``, of norm at most ``|y'| ||x'|| + |y| ||x|| <= 2 R B``,
  reached by ``x' = x``, ``y' = -y = B``;
* ``lambda_min(X^T X)`` by at most ``R^2``: with ``A`` the Gram matrix of the other rows,
  ``lambda_min(A) <= lambda_min(A + x x^T) <= lambda_min(A) + ||x||^2`` (Weyl), and the
  same for ``x'``.

**Noise and accounting.** ``delta > 0``: each statistic gets Gaussian noise; three
Gaussian mechanisms with sensitivity-to-noise ratios ``mu_1, mu_2, mu_3`` compose
*exactly* to one Gaussian mechanism with ``mu^2 = mu_1^2 + mu_2^2 + mu_3^2`` (the privacy
loss of each is Gaussian, and independent Gaussian losses add), so ``mu`` is set by the
analytic Gaussian mechanism (Balle & Wang 2018) at the requested ``(epsilon, delta)`` and
shared as ``mu_k^2 = w_k mu^2`` with ``w = (0.1, 0.45, 0.45)``. ``delta = 0``: the
budget is split ``epsilon_k = w_k epsilon``; ``lambda_min`` gets Laplace noise of scale
``R^2 / epsilon_1`` and the two vectors get noise of density proportional to
``exp(-epsilon_k ||z|| / Delta_k)`` (the K-norm mechanism of the L2 ball, norm
``Gamma(dim, Delta_k / epsilon_k)``), each pure ``epsilon_k``-DP; basic composition gives
``epsilon``.

**Ridge (post-processing).** ``lambda_min`` is released as a lower confidence value
``max(lambda_min + noise - q, 0)`` (``q`` the noise's 95 % quantile); ``alpha="auto"``
takes ``lambda = max(s - lambda_min~, 0)`` with ``s`` a high-probability bound on the
spectral norm of the Gram noise (``sigma_e (2 sqrt p + sqrt(2 log 20))``, ``sigma_e``
the root-mean-square noise of an entry), the rule of AdaSSP; a number ``alpha`` fixes
``lambda = n alpha`` (``Ridge(alpha=n alpha)`` without noise). The noisy Gram matrix is
projected on the positive semi-definite cone and ``(G~ + lambda I)^-1 X^T y~`` is
released. Everything after the three noisy statistics is post-processing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm

from ._gaussian import analytic_gaussian_sigma
from ._objective_perturbation import gamma_norm_vector

#: budget shares of (lambda_min, X^T X, X^T y): in mu^2 (Gaussian) or epsilon (pure)
SHARES = (0.1, 0.45, 0.45)
#: one-sided failure probability of the lambda_min lower value and of the spectral bound
RHO = 0.05


def ssp_sensitivities(data_norm: float, target_bound: float) -> tuple:
    """L2 sensitivities of ``(lambda_min(X^T X), vec(X^T X), X^T y)`` under replace-one."""
    R, B = float(data_norm), float(target_bound)
    return R * R, np.sqrt(2.0) * R * R, 2.0 * R * B


def ssp_plan(*, epsilon: float, delta: float, data_norm: float, target_bound: float,
             n_params: int) -> dict:
    """The data-independent noise plan: per statistic, the kind and scale of the noise.

    Keys: ``noise`` (``"gaussian"`` or ``"pure"``), ``scales`` (standard deviations, or
    Laplace scale and the two Gamma-norm scales), ``sensitivities``, ``mu`` (Gaussian:
    the composed ratio) and ``entry_rms`` (root-mean-square noise of one Gram entry).
    """
    sens = ssp_sensitivities(data_norm, target_bound)
    p = int(n_params)
    m = p * (p + 1) // 2
    if delta > 0:
        mu = 1.0 / analytic_gaussian_sigma(float(epsilon), float(delta), 1.0)
        scales = tuple(s / (mu * np.sqrt(w)) for s, w in zip(sens, SHARES, strict=True))
        entry_rms = scales[1]
        noise = "gaussian"
    else:
        mu = None
        scales = tuple(s / (w * float(epsilon)) for s, w in zip(sens, SHARES, strict=True))
        # ||z|| ~ Gamma(m, scale): E||z||^2 = m (m + 1) scale^2 over m entries
        entry_rms = scales[1] * np.sqrt(m + 1.0)
        noise = "pure"
    return {"noise": noise, "scales": tuple(float(s) for s in scales),
            "sensitivities": tuple(float(s) for s in sens), "mu": mu,
            "entry_rms": float(entry_rms), "n_params": p}


def _sym_to_vec(G):
    iu = np.triu_indices(G.shape[0])
    v = G[iu].copy()
    off = iu[0] != iu[1]
    v[off] *= np.sqrt(2.0)
    return v


def _vec_to_sym(v, p):
    iu = np.triu_indices(p)
    off = iu[0] != iu[1]
    v = v.copy()
    v[off] /= np.sqrt(2.0)
    G = np.zeros((p, p))
    G[iu] = v
    G.T[iu] = v
    return G


def draw_ssp_noise(rng, the_plan) -> tuple:
    """``(noise of lambda_min, noise of vec(X^T X), noise of X^T y)``, from public
    quantities only, in this order of draws."""
    p = the_plan["n_params"]
    m = p * (p + 1) // 2
    s_l, s_g, s_c = the_plan["scales"]
    if the_plan["noise"] == "gaussian":
        return (s_l * float(rng.standard_normal()), s_g * rng.standard_normal(m),
                s_c * rng.standard_normal(p))
    return (float(rng.laplace(0.0, s_l)), gamma_norm_vector(rng, m, s_g),
            gamma_norm_vector(rng, p, s_c))


def lambda_min_margin(the_plan) -> float:
    """``q``: the noise of ``lambda_min`` is below it with probability ``1 - RHO``."""
    s_l = the_plan["scales"][0]
    if the_plan["noise"] == "gaussian":
        return float(s_l * norm.isf(RHO))
    return float(s_l * np.log(1.0 / (2.0 * RHO)))


def spectral_noise_bound(the_plan) -> float:
    """A high-probability bound on the spectral norm of the symmetric Gram noise."""
    p = the_plan["n_params"]
    return float(the_plan["entry_rms"] * (2.0 * np.sqrt(p) + np.sqrt(2.0 * np.log(1 / RHO))))


def sufficient_statistics(X, y) -> tuple:
    """``(lambda_min(X^T X), X^T X, X^T y)`` of the bounded rows (dense)."""
    if sp.issparse(X):
        G = np.asarray((X.T @ X).toarray())
        c = np.asarray(X.T @ y).ravel()
    else:
        G = X.T @ X
        c = X.T @ y
    G = 0.5 * (G + G.T)
    lam_min = float(np.linalg.eigvalsh(G)[0])
    return lam_min, G, c


def ssp_release(stats, noise, the_plan, *, n, alpha):
    """The released coefficients and the ridge ``lambda`` (both post-processing of the
    three noisy statistics). ``alpha``: ``"auto"`` or a number (``lambda = n alpha``)."""
    lam_min, G, c = stats
    e_l, e_g, e_c = noise
    p = G.shape[0]
    lam_tilde = max(lam_min + e_l - lambda_min_margin(the_plan), 0.0)
    G_noisy = _vec_to_sym(_sym_to_vec(G) + e_g, p)
    c_noisy = c + e_c
    w, V = np.linalg.eigh(G_noisy)
    w = np.maximum(w, 0.0)
    if isinstance(alpha, str):
        lam = max(spectral_noise_bound(the_plan) - lam_tilde, 0.0)
    else:
        lam = float(n) * float(alpha)
    floor = 1e-10 * max(float(np.max(w, initial=0.0)), 1.0)
    coef = V @ ((V.T @ c_noisy) / np.maximum(w + lam, floor))
    return coef, float(lam), float(lam_tilde)
