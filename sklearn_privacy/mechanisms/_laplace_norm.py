"""Laplace-norm noise: the pure epsilon-DP mechanism for a vector of L2 sensitivity Delta.

The density ``p(b) ∝ exp(-||b||_2 / s)`` on ``R^p`` is spherically symmetric: its
direction is uniform on the unit sphere and its norm has density ``∝ r^(p-1) exp(-r / s)``
(the surface of the sphere of radius ``r`` grows as ``r^(p-1)``), i.e. ``||b|| ~
Gamma(shape=p, scale=s)``. Releasing ``f(D) + b`` is ``epsilon``-DP with ``delta = 0``
when ``s = Delta / epsilon``: for neighbours, ``log p(v - f(D)) - log p(v - f(D')) <=
||f(D) - f(D')|| / s <= epsilon`` by the triangle inequality (Chaudhuri, Monteleoni &
Sarwate, JMLR 2011, output perturbation).

**Fisher information** (the FIL view of such a release). For the location family
``theta + b``, the score is ``grad_theta log p = b / (s ||b||)``, a unit vector over
``s``; its second moment is ``E[u u^T] / s^2 = I_p / (p s^2)`` (``u`` uniform on the
sphere, ``E[u u^T] = I_p / p``). So the Fisher information of ``theta`` is
``I_p / (p s^2)``: the release leaks exactly as a Gaussian release of standard deviation
``s sqrt(p)`` per coordinate, and the FIL of a set of training values with Jacobian
``J_S`` is ``eta_S = ||J_S||_2 / (s sqrt(p))``. (For ``p >= 2`` the same value follows
from the expected negative Hessian, ``(I - u u^T) / (s ||b||)``, with ``E[1/||b||] =
1/(s (p - 1))``.) The per-coordinate variance of the noise is ``s^2 (p + 1)``, larger
than ``1 / I = s^2 p``, as the Cramér-Rao bound requires.
"""

from __future__ import annotations

import numpy as np

__all__ = ["laplace_norm_fisher_sigma", "laplace_norm_noise"]


def laplace_norm_noise(rng, n_dims: int, scale: float = 1.0, size=None) -> np.ndarray:
    """Draws of density ``∝ exp(-||b|| / scale)`` in ``R^n_dims``.

    Parameters
    ----------
    rng : numpy.random.Generator or numpy.random.RandomState
        The noise source (from :func:`sklearn_privacy.utils.noise_generator`).
    n_dims : int >= 1
        Dimension ``p`` of every draw.
    scale : float > 0, default=1.0
        The scale ``s`` (``Delta / epsilon`` for an epsilon-DP release).
    size : int or None, default=None
        Number of draws: ``None`` returns one vector of shape ``(n_dims,)``, an int a
        ``(size, n_dims)`` array (all draws in two vectorised calls).

    Returns
    -------
    noise : ndarray
        Direction uniform on the sphere (normalised standard normal), norm drawn from
        ``Gamma(n_dims, scale)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.mechanisms._laplace_norm import laplace_norm_noise
    >>> b = laplace_norm_noise(np.random.default_rng(0), 3, scale=2.0, size=20000)
    >>> b.shape, bool(abs(np.linalg.norm(b, axis=1).mean() - 6.0) < 0.1)  # E||b|| = p s
    ((20000, 3), True)
    """
    n_dims = int(n_dims)
    if n_dims < 1:
        raise ValueError(f"n_dims must be >= 1; got {n_dims!r}.")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0; got {scale!r}.")
    m = 1 if size is None else int(size)
    direction = rng.standard_normal((m, n_dims))
    norms = np.linalg.norm(direction, axis=1)
    norms[norms == 0] = 1.0  # probability zero; keeps the draw finite
    radius = rng.gamma(float(n_dims), 1.0, size=m)
    out = direction * (float(scale) * radius / norms)[:, None]
    return out[0] if size is None else out


def laplace_norm_fisher_sigma(scale: float, n_dims: int) -> float:
    """Gaussian standard deviation with the same Fisher information: ``scale sqrt(p)``.

    See the module docstring: the Fisher information of the location family is
    ``I_p / (p scale^2)``.
    """
    return float(scale) * float(np.sqrt(n_dims))
