"""Dense reference implementation of the FIL Jacobians (test oracle and benchmark baseline).

Kept out of the package (and the wheel): the tests and `benchmarks/bench_fil_eta.py` import it.

Builds every per-example Jacobian ``J_i`` (p x (d+1)) explicitly from an independently
inverted Hessian and takes spectral norms with an SVD -- what the FIL paper's public code
does. O(n p^2 d) time and O(n p d) memory: use it on small data only.
"""

from __future__ import annotations

import numpy as np

from sklearn_privacy._glm._core import augment, penalty_diagonal


def dense_hessian_inverse(X, y, theta, *, loss, alpha, fit_intercept, sample_weight=None):
    """Inverse of the Hessian of the objective, formed and inverted explicitly."""
    n, d = X.shape
    omega = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    Xt = augment(X, fit_intercept)
    _, l2, _ = loss.derivatives(Xt @ theta, y)
    H = (Xt * (omega * l2)[:, None]).T @ Xt + np.diag(
        omega.sum() * alpha * penalty_diagonal(d, fit_intercept)
    )
    return np.linalg.inv(H)


def dense_jacobians(X, y, theta, *, loss, alpha, fit_intercept, sample_weight=None, rows=None,
                    H_inv=None):
    """Per-example Jacobians of the minimiser, shape (len(rows), p, d + 1).

    ``rows`` (default: all) selects the examples whose Jacobians are built; the Hessian
    always uses every example. ``H_inv`` (default: formed by
    :func:`dense_hessian_inverse`) lets a caller share the inverse between calls.
    """
    n, d = X.shape
    omega = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    if H_inv is None:
        H_inv = dense_hessian_inverse(X, y, theta, loss=loss, alpha=alpha,
                                      fit_intercept=fit_intercept, sample_weight=omega)
    rows = np.arange(n) if rows is None else np.asarray(rows)
    Xt = augment(X[rows], fit_intercept)
    l1, l2, l3 = loss.derivatives(Xt @ theta, y[rows])
    E = np.vstack([np.eye(d), np.zeros((Xt.shape[1] - d, d))])
    w = theta[:d]
    J = np.empty((rows.size, Xt.shape[1], d + 1))
    for k, i in enumerate(rows):
        xi = Xt[k][:, None]
        block = np.hstack([l2[k] * xi @ w[None, :] + l1[k] * E, l3[k] * xi])
        J[k] = -omega[i] * H_inv @ block
    return J


def dense_eta(J, sigma, columns=None):
    """Per-example ``||J_i[:, columns]||_2 / sigma`` by SVD."""
    if columns is not None:
        J = J[:, :, columns]
    return np.array([np.linalg.norm(Ji, 2) for Ji in J]) / sigma
