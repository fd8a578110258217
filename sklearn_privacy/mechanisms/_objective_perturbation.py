"""Objective perturbation: the constants, the noise calibration and the solver.

The release minimises the perturbed, normalised objective

.. math::

    G_b(\\theta) = \\frac1n \\sum_i \\phi(\\theta^\\top x_i, y_i)
                 + \\frac{\\Lambda}{2}\\lVert\\theta\\rVert^2 + \\frac{b^\\top\\theta}{n},
    \\qquad \\Lambda = \\alpha + \\Delta ,

with ``b`` random and independent of the rows (Chaudhuri, Monteleoni & Sarwate 2011,
Algorithm 2; Kifer, Smith & Thakurta 2012, Algorithm 1 for the Gaussian variant).

**Constants of the loss** under ``||x|| <= R`` (``data_norm``), valid at *every*
``theta`` (the perturbed minimiser can lie anywhere, so no bound on ``||theta||`` may be
used): ``zeta`` bounds the norm of a row's loss gradient, ``c`` the largest eigenvalue of
a row's loss Hessian, ``rank`` the Hessian's rank and ``dim`` the dimension of the space
in which the difference of two rows' gradients lies:

======================= ===================== ============= ========== ===============
loss                    zeta                  c             rank       dim
======================= ===================== ============= ========== ===============
logistic (two classes)  ``R`` (``|p - y| <    ``R^2 / 4``   1          2
                        1``)
multinomial (K classes) ``sqrt(2) R``         ``R^2 / 2``   ``K - 1``  ``2 (K - 1)``
                        (``||p - e_y|| <=     (Boehning's
                        sqrt 2``)             bound)
least squares (Huber    ``M R``               ``R^2``       1          2
beyond ``M``)
======================= ===================== ============= ========== ===============

The multinomial Hessian of a row is ``(diag(p) - p p^T) kron x x^T``; ``diag(p) - p p^T
<= (I - 1 1^T / K) / 2`` (Boehning 1992) gives ``c = R^2 / 2`` and its rank is at most
``K - 1``; the gradient ``(p - e_y) x^T`` has a sum-zero first factor, so the difference
of two rows' gradients lies in ``{u x^T + v x'^T : 1^T u = 1^T v = 0}``, of dimension
``2 (K - 1)``.

Least squares has an unbounded gradient at large ``theta``; it is replaced by the Huber
loss with threshold ``M = B (1 + R k(Lambda))`` (``B`` = ``target_bound``, ``k(L) =
max_(s <= R) s / (s^2 + L)``): every residual of a *noiseless* ridge fit is at most
``M`` (``sklearn_privacy.mechanisms._output_perturbation``),
so without noise the minimiser is exactly the
ridge solution; with noise it is least squares for residuals up to ``M`` and linear in
the residual beyond.

**Privacy (replace-one neighbours, n public).** ``b`` maps one-to-one onto the release:
``b(theta; D) = -n grad(G_0)(theta)``. The density of the release is ``nu(b(theta; D))
|det n H_D(theta)|`` (``H_D`` the Hessian of ``G_0``; for the Huber loss almost
everywhere, by the area formula for a bi-Lipschitz map). Replacing row ``j``:

* ``b(theta; D') - b(theta; D)`` is the difference of the two rows' gradients: norm at
  most ``2 zeta``, in a fixed subspace of dimension ``dim``;
* ``n H_D = A + U``, ``n H_D' = A + U'`` with ``A >= n Lambda I`` and ``U, U'`` of rank
  at most ``rank`` and eigenvalues at most ``c``, so the ratio of determinants is at
  most ``(1 + c / (n Lambda))^rank``. The papers' term, used here for the binary losses,
  is its square, ``eps_J = 2 rank log(1 + c / (n Lambda))`` (``log(1 + 2c/(n L) +
  c^2/(n L)^2)`` for ``rank = 1``).

*Multinomial Jacobian term (K >= 3), through the trace.* The largest-eigenvalue bound
above charges every one of the ``K - 1`` directions with ``c = R^2 / 2``. A tighter
bound uses all eigenvalues at once. The Hessian of a loss is positive semi-definite, so
``det(A + U) >= det(A)`` and the log ratio of the determinants is at most ``log det(A
+ U') - log det(A) = sum_i log(1 + mu_i)`` with ``mu_i`` the eigenvalues of ``A^-1/2
U' A^-1/2``; since ``A >= n Lambda I``, ``mu_i <= lambda_i(U') / (n Lambda)``
(Ostrowski). ``U' = (diag(p) - p p^T) kron x x^T`` has the eigenvalues ``s_i ||x||^2``
with ``s_i`` those of ``S = diag(p) - p p^T``: at most ``K - 1`` of them non-zero, and
``sum_i s_i = tr S = 1 - ||p||^2 <= 1 - 1/K``. ``log(1 + t)`` is concave, so the sum of
``log(1 + s_i R^2 / (n Lambda))`` under these constraints is largest when the ``K - 1``
values are equal:

.. math::

    \\varepsilon_J = (K - 1) \\log\\left(1 + \\frac{R^2}{K n \\Lambda}\\right),

reached by a row of norm ``R`` whose class probabilities are uniform (``S = I/K - 1
1^T / K^2``, eigenvalues ``1/K``) when the other rows add nothing to ``A`` beyond the
penalty: the bound is tight. It is one factor, not the square, because the one-sided
inequality ``det(A + U) >= det(A)`` replaces the papers' two-sided argument. At ``K =
8`` and ``R^2 / (n Lambda) = 3.32`` it is 2.44 where the eigenvalue bound charges 13.7.
``plan`` uses it for the multinomial loss (``curvature`` is then ``R^2 / K``, the
per-direction curvature of the tight case, and ``jacobian_factor`` is 1).

*Pure* (``delta = 0``): ``b`` has density proportional to ``exp(-eps' ||b|| / (2
zeta))`` (norm ``Gamma(p, 2 zeta / eps')``, uniform direction); the density ratio is at
most ``exp(eps' + eps_J)``. Algorithm 2: ``eps' = eps - eps_J(alpha)``; if ``eps' <=
0``, the penalty grows by ``Delta = c / (n (exp(eps / (4 rank)) - 1)) - alpha`` so that
``eps_J = eps / 2``, and ``eps' = eps / 2``. This package applies the same ``Delta``
whenever ``eps' < eps / 2`` (not only when ``eps' <= 0``): with the paper's trigger an
``eps'`` barely above 0 releases noise of scale ``2 zeta / eps'``, unboundedly large
(measured: ``eps' = 0.027`` at ``eps = 1``, ``n = 40``, ``alpha = 0.01``, a noise 37 times
that of ``eps' = eps / 2``); any ``Delta >= 0`` is covered by the same proof.

*Gaussian* (``delta > 0``): ``b ~ N(0, s^2 I)``. The log density ratio of the noise is
``(2 b^T v + ||v||^2) / (2 s^2)`` with ``v`` the gradient difference, so it is at most
``2 zeta ||P b|| / s^2 + 2 zeta^2 / s^2`` (``P`` the projection on the fixed subspace);
``||P b||^2 / s^2`` is chi-square with at most ``dim`` degrees of freedom, below ``t^2 =
chi2.isf(delta, dim)`` with probability ``1 - delta``. With ``eps_g = eps - eps_J``
(the same rule for ``Delta`` when ``eps_g < eps / 2``), ``s = zeta / u``, ``u`` the positive
root of ``2 u^2 + 2 t u = eps_g``. The privacy loss is then at most ``eps`` with
probability ``1 - delta``, hence (eps, delta)-DP.

**Approximate minimiser** (approximate minima perturbation, after Iyengar et al. 2019).
The released centre must be within a radius ``r`` of the exact perturbed minimiser
``theta_b`` for *every* data set, and ``r`` must be fixed by public quantities: the
residual noise added to the centre has norm scale ``r / eps_r``, and that scale is part
of the mechanism whose density ratio the proof bounds. (An ``r`` that grows with
``||b||`` is not enough: given the output ``theta``, ``b = -n grad G_0(theta; D)``
differs between ``D`` and ``D'``, so a scale read from ``||b||`` is a different kernel on
the two sides and the chain below no longer composes.)

* ``r = 2^-44 (zeta + E||b|| / n) / Lambda`` (:func:`public_radius`): ``zeta``,
  ``Lambda``, ``n`` and the law of ``b`` are public. It is ``certified_distance_``.
* The solver (:func:`minimise`) runs Newton's method for at most ``max_iter`` steps and
  stops once ``||grad G_b|| <= Lambda r`` (``G_b`` is ``Lambda``-strongly convex, so the
  centre is then within ``r`` of ``theta_b``). If it has not, it continues from the
  iterate of smallest ``G_b`` (never above ``G_b(0)``) with Nesterov's accelerated
  gradient method (constant momentum, step ``1 / L``, ``L = c + Lambda`` the public
  smoothness bound of ``G_b``) for at most ``T(||b||)`` steps
  (:func:`fallback_steps`), still stopping at the gradient test. In exact arithmetic the
  centre is within ``r`` of ``theta_b`` after those steps whatever the rows: with ``q =
  sqrt(Lambda / L)`` and ``x_0`` the starting point, Nesterov (2004, Theorem 2.2.3)
  gives ``G_b(x_k) - G* <= (1 - q)^k (G_b(x_0) - G* + Lambda ||x_0 - theta_b||^2 / 2)``;
  strong convexity gives ``Lambda ||x - theta_b||^2 / 2 <= G_b(x) - G*`` and ``G_b(0) -
  G* <= ||grad G_b(0)||^2 / (2 Lambda)``, and ``||grad G_b(0)|| <= zeta + ||b|| / n`` (a
  row's loss gradient at ``0`` is at most ``zeta``). Hence ``||x_k - theta_b||^2 <= 2 (1
  - q)^k D_0^2`` with ``D_0 = (zeta + ||b|| / n) / Lambda``, at most ``r^2`` once ``k >=
  log(2 D_0^2 / r^2) / -log(1 - q)``. That count depends on ``||b||``, which is
  independent of the rows, so whether and when the centre is certified is not an event
  about the data: every fit yields a release with the same claim (``max_iter`` only
  trades Newton steps for cheaper gradient steps).

The centre is released plus noise ``z`` of density proportional to ``exp(-||z|| eps_r /
r)``. Given ``b``, the release from the approximate centre and the one from the exact
minimiser are the same kernel (scale ``r / eps_r``, public) applied to points at most
``r`` apart: a density ratio at most ``exp(eps_r)`` at every output, hence after
integrating over ``b`` too. Chaining (approximate D) -> (exact D) -> (exact D') ->
(approximate D'), where the middle step is the exact mechanism followed by the same
data-independent kernel (post-processing), gives ``eps_obj + 2 eps_r`` and ``delta_obj
exp(eps_r)``; the objective stage runs at ``eps_r = min(eps / 1000, 10)``, ``eps_obj = eps
- 2 eps_r``, ``delta_obj = delta exp(-eps_r)``, so the release is (eps, delta)-DP exactly
as requested. The residual noise is of the order of ``1e-8 / eps`` times the scale of
the coefficients. ``tests/test_objective_perturbation.py`` checks the bound by brute
force: the accelerated phase alone, started at 0 and run for ``T`` steps, lands within
``r`` of the exact minimiser on adversarial data.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_softmax
from scipy.stats import chi2

#: share of epsilon spent on the residual noise of the approximate minimiser (twice)
RESIDUAL_SHARE = 1e-3
#: ... and at most this much
RESIDUAL_CAP = 10.0
#: relative gradient threshold of the solver's certificate
GRADIENT_RELATIVE = 2.0**-44


def ridge_norm_factor(alpha: float, data_norm: float) -> float:
    """``max over 0 <= s <= R of s / (s^2 + alpha)``: ridge solutions have norm <= it * B."""
    root = np.sqrt(alpha)
    return float(1.0 / (2.0 * root) if root <= data_norm else data_norm / (data_norm**2
                                                                           + alpha))


def loss_constants(loss: str, data_norm: float, n_classes: int = 2):
    """``(zeta / g, c, rank, dim)``: the gradient bound per unit of the loss derivative,
    the curvature bound, the Hessian rank and the gradient-difference dimension.

    The gradient bound ``zeta`` is ``g * data_norm`` with ``g`` the bound on the loss's
    derivative: 1 (logistic), ``sqrt 2`` (multinomial), ``M`` (Huber); the first value
    returned is ``zeta`` for logistic / multinomial and ``data_norm`` (to be multiplied by
    ``M``) for the Huber loss.
    """
    R = float(data_norm)
    if loss == "logistic":
        return R, R * R / 4.0, 1, 2
    if loss == "multinomial":
        k = int(n_classes)
        return np.sqrt(2.0) * R, R * R / 2.0, k - 1, 2 * (k - 1)
    if loss == "multinomial_trace":  # the Jacobian term's per-direction curvature
        k = int(n_classes)
        return np.sqrt(2.0) * R, R * R / k, k - 1, 2 * (k - 1)
    if loss == "huber":
        return R, R * R, 1, 2
    raise ValueError(f"unknown loss {loss!r}")


def jacobian_epsilon(curvature: float, n: int, penalty: float, rank: int,
                     factor: float = 2.0) -> float:
    """The Jacobian term ``factor rank log(1 + c / (n Lambda))`` (the papers' ``factor =
    2``; the multinomial trace bound: ``factor = 1``, ``c = R^2 / K``)."""
    return float(factor * rank * np.log1p(curvature / (n * penalty)))


def extra_penalty(curvature, n, alpha, rank, epsilon, factor=2.0):
    """Algorithm 2's ``Delta``: the extra penalty making the Jacobian term ``epsilon / 2``."""
    return float(curvature / (n * np.expm1(epsilon / (2.0 * factor * rank))) - alpha)


def multinomial_jacobian_bound(n_classes: int, data_norm: float, n: int,
                               penalty: float) -> float:
    """The trace-based Jacobian term of the multinomial loss, ``(K - 1) log(1 + R^2 /
    (K n Lambda))`` (derivation in the module docstring)."""
    k = int(n_classes)
    return jacobian_epsilon(float(data_norm) ** 2 / k, n, penalty, k - 1, factor=1.0)


def gaussian_noise_scale(zeta: float, epsilon_g: float, delta: float, dim: int) -> float:
    """``s`` with ``2 zeta t / s + 2 zeta^2 / s^2 = epsilon_g``, ``t^2 = chi2.isf(delta, dim)``."""
    t = float(np.sqrt(chi2.isf(delta, dim)))
    u = epsilon_g / (t + np.sqrt(t * t + 2.0 * epsilon_g))
    return float(zeta / u)


def gaussian_noise_epsilon(zeta: float, scale: float, delta: float, dim: int) -> float:
    """The inverse of :func:`gaussian_noise_scale`: the noise part's epsilon at ``delta``."""
    t = float(np.sqrt(chi2.isf(delta, dim)))
    u = zeta / scale
    return float(2.0 * t * u + 2.0 * u * u)


def plan(*, loss, epsilon, delta, alpha, n, data_norm, n_classes=2, target_bound=None):
    """The data-independent noise plan of one release (a dict).

    Keys: ``penalty`` (``Lambda``), ``extra_penalty`` (``Delta``), ``zeta``, ``curvature``,
    ``rank``, ``dim``, ``huber_threshold`` (least squares), ``epsilon_objective``,
    ``epsilon_jacobian``, ``epsilon_noise``, ``epsilon_residual``, ``delta_objective``,
    ``noise`` (``"gamma"`` or ``"gaussian"``) and ``noise_scale`` (the Gamma scale ``2 zeta
    / eps'`` of ``||b||``, or the Gaussian standard deviation).
    """
    g_zeta, c, rank, dim = loss_constants(loss, data_norm, n_classes)
    factor = 2.0
    if loss == "multinomial":  # the trace bound (module docstring)
        c, factor = loss_constants("multinomial_trace", data_norm, n_classes)[1], 1.0
    eps_r = min(RESIDUAL_SHARE * epsilon, RESIDUAL_CAP)
    eps_obj = epsilon - 2.0 * eps_r
    delta_obj = delta * np.exp(-eps_r) if delta > 0 else 0.0
    penalty, extra = float(alpha), 0.0
    eps_j = jacobian_epsilon(c, n, penalty, rank, factor) if penalty > 0 else np.inf
    eps_noise = eps_obj - eps_j
    if eps_noise < eps_obj / 2:
        extra = max(extra_penalty(c, n, alpha, rank, eps_obj, factor), 0.0)
        penalty = float(alpha) + extra
        eps_j = jacobian_epsilon(c, n, penalty, rank, factor)
        eps_noise = eps_obj - eps_j
    out = dict(extra_penalty=extra, penalty=penalty, curvature=c, rank=rank, dim=dim,
               jacobian_factor=factor,
               epsilon_objective=eps_obj, epsilon_jacobian=eps_j, epsilon_noise=eps_noise,
               epsilon_residual=eps_r, delta_objective=float(delta_obj),
               huber_threshold=None)
    if loss == "huber":
        M = float(target_bound) * (1.0 + float(data_norm) * ridge_norm_factor(
            penalty, float(data_norm)))
        out["huber_threshold"] = M
        zeta = M * g_zeta
    else:
        zeta = g_zeta
    out["zeta"] = float(zeta)
    if delta > 0:
        out["noise"] = "gaussian"
        out["noise_scale"] = gaussian_noise_scale(zeta, eps_noise, delta_obj, dim)
    else:
        out["noise"] = "gamma"
        out["noise_scale"] = float(2.0 * zeta / eps_noise)
    return out


def expected_noise_norm(the_plan, p: int) -> float:
    """``E ||b||``: ``p`` times the Gamma scale, or about ``sqrt(p)`` standard deviations."""
    if the_plan["noise"] == "gamma":
        return float(p * the_plan["noise_scale"])
    return float(np.sqrt(p) * the_plan["noise_scale"])


def public_radius(the_plan, n_params: int, n: int) -> float:
    """The certified distance ``r`` between the released centre and the exact perturbed
    minimiser, from public quantities only: ``2^-44 (zeta + E||b|| / n) / Lambda``."""
    scale = the_plan["zeta"] + expected_noise_norm(the_plan, n_params) / n
    return float(GRADIENT_RELATIVE * scale / the_plan["penalty"])


def smoothness(the_plan) -> float:
    """``L = c + Lambda``: the largest eigenvalue of ``G_b``'s Hessian at any point."""
    return float(the_plan["curvature"] + the_plan["penalty"])


def fallback_steps(the_plan, noise_norm: float, n: int, radius: float) -> int:
    """``T``: accelerated gradient steps after which the centre is within ``radius`` of
    the exact perturbed minimiser, whatever the rows (see the module docstring).

    ``T = ceil(log(2 D_0^2 / r^2) / -log(1 - q))``, ``D_0 = (zeta + ||b|| / n) /
    Lambda``, ``q = sqrt(Lambda / L)``. It reads ``||b||`` (independent of the rows) and
    public constants, never a row.
    """
    lam = float(the_plan["penalty"])
    q = float(np.sqrt(lam / smoothness(the_plan)))
    d0 = (float(the_plan["zeta"]) + float(noise_norm) / n) / lam
    ratio = 2.0 * d0 * d0 / (radius * radius)
    if ratio <= 1.0:
        return 0
    if q >= 1.0:  # pragma: no cover - c > 0 always
        return 1
    return int(np.ceil(np.log(ratio) / -np.log1p(-q)))


def draw_objective_noise(rng, the_plan, shape):
    """``b``: Gamma-norm (uniform direction) or Gaussian, of the given shape."""
    p = int(np.prod(shape))
    if the_plan["noise"] == "gaussian":
        return the_plan["noise_scale"] * rng.standard_normal(shape)
    return gamma_norm_vector(rng, p, the_plan["noise_scale"]).reshape(shape)


def gamma_norm_vector(rng, p: int, scale: float) -> np.ndarray:
    """A vector of density proportional to ``exp(-||z|| / scale)`` in ``R^p``."""
    direction = rng.standard_normal(p)
    norm = np.linalg.norm(direction)
    while norm == 0:  # pragma: no cover - probability zero
        direction = rng.standard_normal(p)
        norm = np.linalg.norm(direction)
    return direction / norm * rng.gamma(p, scale)


# ------------------------------------------------------------------------ the objective
def _gram(X, w, X32=None):
    """``X^T diag(w) X`` as a dense array (``w >= 0`` on the dense paths).

    Dense rows: ``A^T A`` with ``A = sqrt(w) X``, which BLAS forms as a symmetric rank-k
    update (half the flops of a general product). ``X32``: a float32 copy of ``X``; the
    product is then formed in single precision -- for Newton *directions* only: the
    solver's certificate reads the gradient, always float64, so the precision of the
    Hessian changes the number of steps, never the certificate.
    """
    if sp.issparse(X):
        return np.asarray((X.T @ sp.diags(w) @ X).toarray())
    if X32 is not None:
        A = np.multiply(X32, np.sqrt(w).astype(np.float32)[:, None])
        return (A.T @ A).astype(np.float64)
    A = X * np.sqrt(w)[:, None]
    return A.T @ A


def objective(loss, X, y, theta, penalty, b, n, huber_threshold=None, n_classes=2,
              order=2, X32=None):
    """``G_b``, its gradient and (``order=2``) Hessian at ``theta`` (flat, row-major).

    ``y`` is 0/1 (logistic), class indices (multinomial) or real (Huber). ``X32``: see
    :func:`_gram` (binary losses only).
    """
    if loss == "multinomial":
        K = int(n_classes)
        Theta = theta.reshape(K, -1)
        Z = np.asarray(X @ Theta.T)
        logp = log_softmax(Z, axis=1)
        rows = np.arange(Z.shape[0])
        value = -np.sum(logp[rows, y]) / n
        P = np.exp(logp)
        Rm = P.copy()
        Rm[rows, y] -= 1.0
        grad = np.asarray(X.T @ Rm).T / n
        value += 0.5 * penalty * float(theta @ theta) + float(b @ theta) / n
        grad = grad.ravel() + penalty * theta + b / n
        if order < 2:
            return value, grad, None
        d = Theta.shape[1]
        H = np.empty((K * d, K * d))
        for k in range(K):
            for m in range(k, K):
                w = P[:, k] * ((k == m) - P[:, m])
                block = (np.asarray((X.T @ sp.diags(w) @ X).toarray()) if sp.issparse(X)
                         else (X.T * w) @ X) / n  # w < 0 off the diagonal blocks
                H[k * d:(k + 1) * d, m * d:(m + 1) * d] = block
                if m != k:
                    H[m * d:(m + 1) * d, k * d:(k + 1) * d] = block.T
        H[np.diag_indices_from(H)] += penalty
        return value, grad, H
    z = np.asarray(X @ theta).ravel()
    if loss == "logistic":
        value = float(np.sum(np.logaddexp(0.0, z) - y * z)) / n
        sig = expit(z)
        l1 = sig - y
        l2 = sig * (1.0 - sig) if order >= 2 else None
    else:  # Huber
        M = huber_threshold
        r = z - y
        a = np.abs(r)
        inside = a <= M
        value = float(np.sum(np.where(inside, 0.5 * r * r, M * a - 0.5 * M * M))) / n
        l1 = np.clip(r, -M, M)
        l2 = inside.astype(np.float64)
    value += 0.5 * penalty * float(theta @ theta) + float(b @ theta) / n
    grad = np.asarray(X.T @ l1).ravel() / n + penalty * theta + b / n
    if order < 2:
        return value, grad, None
    H = _gram(X, l2, X32) / n
    H[np.diag_indices_from(H)] += penalty
    return value, grad, H


#: rows x parameters above which the Newton directions of the binary losses use a
#: float32 Hessian (see ``_gram``)
SINGLE_PRECISION_HESSIAN = 2_000_000
#: ... and start from the minimiser of every this-many-th row's objective
WARM_START_STRIDE = 16


def _hessian(loss, X, theta, penalty, n, huber_threshold=None, n_classes=2, X32=None):
    """The Hessian of ``G_b`` at ``theta`` (it does not depend on ``y`` for the logistic
    loss, nor on ``b``); the multinomial one through :func:`objective`."""
    if loss == "multinomial":
        raise ValueError("_hessian: binary losses only")  # pragma: no cover
    z = np.asarray(X @ theta).ravel()
    if loss == "logistic":
        sig = expit(z)
        w = sig * (1.0 - sig)
    else:  # the Huber weight needs the residuals: y enters through the caller
        raise ValueError("_hessian: the Huber loss goes through objective")  # pragma: no cover
    H = _gram(X, w, X32) / n
    H[np.diag_indices_from(H)] += penalty
    return H


def minimise(loss, X, y, penalty, b, n, *, threshold, max_iter=100, huber_threshold=None,
             n_classes=2, fallback=None, _warm=True):
    """Newton's method with backtracking on ``G_b`` until ``||grad|| <= threshold``.

    The Hessian is formed again only when the last step cut the gradient norm by less
    than a factor 32 (a stale Hessian still gives a descent direction; near the minimiser
    it changes little and each step costs two products with ``X`` instead of a weighted
    Gram product). On large dense binary problems the Newton directions use a float32
    Hessian and the iteration starts from the minimiser of every ``WARM_START_STRIDE``-th
    row's objective; any start and any direction are covered by the certificate, which
    reads the full float64 gradient.

    ``fallback``: ``None``, or ``(L, T)``: when Newton has not reached the threshold
    within ``max_iter`` steps, Nesterov's accelerated gradient method with step ``1 / L``
    continues from the iterate of smallest ``G_b`` (the last Newton iterate, or 0 when
    that is lower) for at most ``T`` steps (see :func:`fallback_steps`; the module
    docstring has the proof that the result is then within ``threshold / penalty`` of the
    exact minimiser in exact arithmetic).

    Returns ``(theta, gradient_norm, n_iter)``; ``gradient_norm`` is re-evaluated at the
    returned ``theta`` and ``n_iter`` counts Newton and gradient steps.
    """
    kw = dict(huber_threshold=huber_threshold, n_classes=n_classes)
    theta, gnorm, it, value = _newton(loss, X, y, penalty, b, n, threshold, max_iter, kw,
                                      _warm)
    if gnorm <= threshold or fallback is None:
        return theta, gnorm, it
    start = theta
    value0 = objective(loss, X, y, np.zeros(b.size), penalty, b, n, order=1, **kw)[0]
    if not value <= value0:  # the bound needs G_b(start) <= G_b(0)
        start = np.zeros(b.size)
    theta, gnorm, steps = _accelerated(loss, X, y, penalty, b, n, start, threshold,
                                       fallback, kw)
    return theta, gnorm, it + steps


def _newton(loss, X, y, penalty, b, n, threshold, max_iter, kw, warm=True):
    """Newton's method: ``(theta, gradient norm, steps, G_b(theta))``."""
    p = b.size
    theta = np.zeros(p)
    X32 = None
    big = (warm and loss != "multinomial" and not sp.issparse(X)
           and X.shape[0] * X.shape[1] >= SINGLE_PRECISION_HESSIAN
           and X.shape[0] >= 4 * WARM_START_STRIDE)
    if big:
        X32 = X.astype(np.float32)
        # a start from every WARM_START_STRIDE-th row (the mean loss of those rows, the
        # same penalty and noise term): any start is covered by the certificate, which
        # reads the full gradient at the end
        step = WARM_START_STRIDE
        m = X[::step].shape[0]
        theta = minimise(loss, X[::step], y[::step], penalty, b * (m / n), m,
                         threshold=1e-3 * (float(np.linalg.norm(b)) / n + 1e-3),
                         max_iter=max_iter, _warm=False, **kw)[0]
    value, grad, H = objective(loss, X, y, theta, penalty, b, n, X32=X32, **kw)
    factor = None
    gnorm = float(np.linalg.norm(grad))
    refresh = False
    it = 0
    for it in range(1, max_iter + 1):
        if gnorm <= threshold:
            return theta, gnorm, it - 1, value
        if refresh:
            H = (_hessian(loss, X, theta, penalty, n, X32=X32, **kw) if loss == "logistic"
                 else objective(loss, X, y, theta, penalty, b, n, X32=X32, **kw)[2])
            factor = None
        if factor is None:
            try:
                factor = _cho(H)
            except np.linalg.LinAlgError:  # pragma: no cover - H >= penalty I
                factor = None
        step = -_cho_solve(*factor, grad) if factor is not None else -grad / penalty
        slope = float(grad @ step)
        cand = theta + step
        v, g, _ = objective(loss, X, y, cand, penalty, b, n, order=1, **kw)
        # the full step near the minimiser: accepted when it decreases G or halves the
        # gradient (at the rounding floor of G its values no longer order the iterates)
        if not (v <= value + 1e-4 * slope or np.linalg.norm(g) <= 0.5 * gnorm):
            t = 0.5
            while True:
                cand = theta + t * step
                v, g, _ = objective(loss, X, y, cand, penalty, b, n, order=1, **kw)
                if v <= value + 1e-4 * t * slope:
                    break
                t *= 0.5
                if t < 1e-10:  # no progress possible in floating point
                    if not refresh and factor is not None:
                        break  # a stale Hessian: form it again and retry
                    return theta, gnorm, it, value
            if t < 1e-10:
                refresh = True
                continue
        new_norm = float(np.linalg.norm(g))
        refresh = new_norm > gnorm / 32.0
        theta, value, grad, gnorm = cand, v, g, new_norm
    return theta, gnorm, max_iter, value


def _accelerated(loss, X, y, penalty, b, n, start, threshold, fallback, kw):
    """Nesterov's constant-momentum scheme from ``start`` for at most ``T`` steps,
    stopping at the gradient test (checked every few steps): ``(theta, gnorm, steps)``."""
    L, T = fallback
    q = float(np.sqrt(penalty / L))
    beta = (1.0 - q) / (1.0 + q)
    x = start.copy()
    z = start.copy()
    gnorm = float(np.linalg.norm(objective(loss, X, y, x, penalty, b, n, order=1,
                                           **kw)[1]))
    k = 0
    while k < T and gnorm > threshold:
        grad = objective(loss, X, y, z, penalty, b, n, order=1, **kw)[1]
        x_new = z - grad / L
        z = x_new + beta * (x_new - x)
        x = x_new
        k += 1
        if k % 8 == 0 or k == T:
            gnorm = float(np.linalg.norm(objective(loss, X, y, x, penalty, b, n,
                                                   order=1, **kw)[1]))
    return x, gnorm, k


def _cho(H):
    from scipy.linalg import cho_factor

    return cho_factor(H, lower=True, check_finite=False)


def _cho_solve(c, low, g):
    from scipy.linalg import cho_solve

    return cho_solve((c, low), g, check_finite=False)


# ------------------------------------------------------------------ Renyi DP (selection)
def _log_chi_mgf(t, k):
    """An upper bound on ``log E[exp(t X)]``, ``X ~ chi_k``, for an array ``t >= 0``.

    The log-integrand ``(k - 1) log r - r^2 / 2 + t r`` is concave with curvature at
    least 1, so the integrand is unimodal and, 12 units from its peak, below ``exp(-72)``
    times its largest value. A Riemann sum with step ``h`` of a unimodal function exceeds
    its integral minus ``h`` times its largest value; adding that (and the tails, far
    below it) gives an upper bound.
    """
    from scipy.special import gammaln, logsumexp

    t = np.asarray(t, dtype=np.float64)[..., None]
    peak = 0.5 * (t + np.sqrt(t * t + 4.0 * max(k - 1, 0)))
    h = 0.01
    r = np.maximum(peak + np.arange(-1200, 1201) * h, 1e-300)
    logc = (1.0 - k / 2.0) * np.log(2.0) - gammaln(k / 2.0)
    logf = (k - 1) * np.log(r) - 0.5 * r * r + t * r + logc
    top = np.max(logf, axis=-1)
    total = logsumexp(logf, axis=-1)
    return np.logaddexp(total, top + np.log(2.0)) + np.log(h)


def gaussian_objective_rdp(orders, *, epsilon: float, delta: float, dim: int,
                           cells: int = 8) -> np.ndarray:
    """Renyi-DP curve of a Gaussian objective-perturbation release (``delta > 0``),
    whatever the data-dependent split of the budget between the Jacobian term and the
    noise.

    **Derivation.** For a release ``theta`` from ``D`` (noise ``b`` with ``b ~ N(0, s^2
    I)``), the privacy loss against a neighbour ``D'`` is at most ``eps_J + 2 u ||P b||
    / s + 2 u^2`` with ``u = zeta / s`` (module docstring, Gaussian part; ``||P b|| / s ~
    chi_dim``), pointwise in ``b``. Hence ``E_D[exp((lambda - 1) L)] <= exp((lambda - 1)
    (eps_J + 2 u^2)) E[exp(2 u (lambda - 1) chi_dim)]``:

    ``rho_E(lambda) <= eps_J + 2 u^2 + log E[exp(2 u (lambda - 1) chi_dim)] / (lambda -
    1)``.

    The plan sets ``eps_J`` in ``[0, eps_obj / 2]`` (from ``alpha`` and the number of
    parameters, which a search does not know before the rows) and ``u`` from ``eps_g =
    eps_obj - eps_J`` (``2 u^2 + 2 t u = eps_g``, increasing in ``eps_g``); the bound is
    increasing in ``u``, so over a cell ``eps_J in [lo, hi]`` it is at most ``hi`` plus
    its value at ``eps_g = eps_obj - lo``; the curve is the largest over ``cells`` cells.
    The residual noise of the approximate minimiser (pointwise ratios ``P_A <= e^{eps_r}
    P_E`` and ``Q_A >= e^{-eps_r} Q_E``) adds ``2 eps_r + eps_r / (lambda - 1)``. At
    ``lambda = 1`` the value at the smallest order above 1 in ``orders`` is returned
    (Renyi divergences grow with the order).

    Parameters
    ----------
    orders : ndarray
        Renyi orders ``>= 1``.
    epsilon, delta : float
        The release's parameters (``delta > 0``).
    dim : int
        Dimension of the gradient-difference subspace (2, or ``2 (K - 1)``).
    cells : int, default=8

    Returns
    -------
    rho : ndarray of the shape of ``orders``
    """
    orders = np.asarray(orders, dtype=np.float64)
    eps_r = min(RESIDUAL_SHARE * epsilon, RESIDUAL_CAP)
    eps_obj = epsilon - 2.0 * eps_r
    delta_obj = delta * np.exp(-eps_r)
    t = float(np.sqrt(chi2.isf(delta_obj, dim)))
    above = orders[orders > 1.0]
    lam = np.where(orders > 1.0, orders, above.min() if above.size else 2.0)
    # evaluated on a coarse grid of orders; an order between two grid points takes the
    # value of the next one up (the true curve is nondecreasing in the order)
    grid = np.unique(np.r_[np.geomspace(lam.min(), max(lam.max(), lam.min()), 400),
                           lam.max()])
    top = 0.5 * eps_obj * (1.0 + 1e-9)
    edges = np.linspace(0.0, top, cells + 1)
    worst = np.full(grid.shape, -np.inf)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        e = eps_obj - lo
        u = e / (t + np.sqrt(t * t + 2.0 * e))
        value = hi + 2.0 * u * u + _log_chi_mgf(2.0 * u * (grid - 1.0), dim) / (grid - 1.0)
        worst = np.maximum(worst, value)
    worst = worst + 2.0 * eps_r + eps_r / (grid - 1.0)
    up = np.minimum(np.searchsorted(grid, lam * (1.0 - 1e-12), side="left"),
                    grid.size - 1)
    return worst[up]
