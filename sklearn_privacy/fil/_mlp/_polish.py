"""Polish of an MLP's parameters to a certified strict local minimum.

Block conjugate gradients for the operator route, L-BFGS (plain and preconditioned by the
exact Hessian), Newton and Newton-CG with backtracking, and the two routes of
:func:`~sklearn_privacy.fil._mlp._audit.audit_mlp` (``polish_dense``,
``polish_operator``): each ends with the smallest and largest eigenvalue of the exact
Hessian on the complement of the gauge directions, which the audit certifies.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator, eigsh

from ...exceptions import UncertifiedMinimumError

#: Newton polish stops when ||grad F||_2 <= MLP_GTOL (F is a mean over rows, so the
#: threshold does not depend on the data).
MLP_GTOL = 1e-10
#: Relative residual of the conjugate-gradient solves of the operator route.
_CG_RTOL = 1e-10
#: Block conjugate gradients end a pass (then restart from the true residual) when the
#: worst residual has not halved over this many steps: stagnation at rounding level.
_CG_WINDOW = 100
#: Memory for the search directions block conjugate gradients keep (and their products).
_CG_BASIS_BYTES = 256_000_000
_MAX_NEWTON = 100
#: Dense route: L-BFGS preconditioned by the exact Hessian runs until the largest gradient
#: entry is at most _PRECOND_GTOL, then Newton (the Hessian is cheap: GEMMs per pair of
#: layers). Each round of at most _PRECOND_ROUND gradients works in the coordinates of the
#: Hessian's eigenvectors scaled by |eigenvalue|^{-1/2}, the magnitudes floored at
#: _PRECOND_FLOOR times the largest. Measured with BLAS on one thread (gradients + Newton
#: steps of the polish): 20,000 rows x (24, 16), 921 parameters, 546 + 4 against 5,674 + 3
#: for plain L-BFGS to 1e-7 then Newton (the audit 9.7 s against 46 s); 5,000 x (16, 8):
#: 599 + 2 against 1,298 + 2; 20,000 x (40,): 68 + 2 against 140 + 4 from plain L-BFGS to
#: 1e-5. Plain L-BFGS stalls on these ill-conditioned, non-convex objectives (condition
#: number about 5e6 at the minimum, indefinite Hessians on the way).
_PRECOND_GTOL = 1e-6
_PRECOND_ROUND = 300
_PRECOND_FLOOR = 1e-3
#: Operator route (no dense Hessian): plain L-BFGS to this threshold, then Newton-CG.
_LBFGS_GTOL = 1e-7


# ------------------------------------------------------------------ linear algebra
def _block_cg(hop, B, project, rtol=_CG_RTOL, max_products=None):
    """Solve ``H X = B`` for all columns of ``B`` at once on the complement of the gauge.

    Block conjugate gradients: every step searches the span of the residuals of all
    columns together (H-conjugate to the previous block), so the columns share one Krylov
    space. Row Jacobians' right-hand sides span few directions of ``H`` between them:
    at the operator route's minimum of a 1,681-parameter network (condition number
    2.6e4, 410 right-hand sides for 10 rows) this takes 2,091 Hessian-vector products
    against 254,452 for one conjugate-gradient run per column; on 3,001 parameters
    (condition 5.9e4, 90 right-hand sides) 245 against 15,035
    (``benchmarks/bench_block_cg.py``, the dense Hessian as the product).

    The search block is orthonormalised by a pivoted QR of the new directions, each
    measured in units of its column's tolerance, dropping directions below 1e-3 of a
    tolerance (:func:`_orthonormal_directions`). Dropping directions breaks the short
    recurrence of plain block conjugate gradients (one row of the pipeline network of
    ``tests/test_fil_mlp.py::test_operator_route_through_a_pipeline_of_a_raw_frame`` did
    not converge in ``20 p`` products on the minimum-version stack), so each new block
    is made H-conjugate to every stored block explicitly (twice; the blocks and their
    products are kept, up to ``_CG_BASIS_BYTES``). Columns whose relative residual is below
    ``rtol`` stop generating directions but are still updated by every step (a Galerkin
    step never increases any column's error in the H-norm). At the end the true residual
    ``B - H X`` is recomputed and the solve restarted on it, at most twice, so the
    recursion's rounding cannot hide an unconverged column; a pass whose worst residual
    has not halved in ``_CG_WINDOW`` steps ends early (stagnation at rounding level).
    ``P^T H P`` must be positive definite at every step (Cholesky); otherwise the Hessian
    is not, and the audit refuses. At most ``max_products`` (default ``20 p``)
    Hessian-vector products.
    """
    B = project(np.asarray(B, dtype=float))
    squeeze = B.ndim == 1
    if squeeze:
        B = B[:, None]
    p = B.shape[0]
    max_products = max_products or 20 * p
    keep = max(4 * B.shape[1], _CG_BASIS_BYTES // (16 * p))  # stored directions, at most
    bn = np.linalg.norm(B, axis=0)
    tol = rtol * bn
    X = np.zeros_like(B)
    R = B.copy()
    used = 0
    for _ in range(3):
        active = np.linalg.norm(R, axis=0) > tol
        if not active.any():
            return X[:, 0] if squeeze else X
        P = _orthonormal_directions(R[:, active], tol[active])
        basis = []  # (P_j, H P_j, Cholesky of P_j^T H P_j) of the blocks searched
        history = []  # the worst column's residual in tolerances, per step
        while P.shape[1]:
            Q = project(hop(P))
            used += P.shape[1]
            PQ = P.T @ Q
            try:
                c = linalg.cho_factor(0.5 * (PQ + PQ.T))
            except linalg.LinAlgError:
                raise UncertifiedMinimumError(
                    "audit: conjugate gradients met a direction of non-positive "
                    "curvature: the Hessian is not positive definite at the polished "
                    "point.") from None
            a = linalg.cho_solve(c, P.T @ R)
            X += P @ a
            R -= Q @ a
            basis.append((P, Q, c))
            while sum(Pj.shape[1] for Pj, _, _ in basis) > keep:
                basis.pop(0)
            worst = np.linalg.norm(R, axis=0) / np.where(tol > 0, tol, np.inf)
            active = worst > 1.0
            history.append(float(worst.max()))
            if not active.any() or used >= max_products or (
                    len(history) > _CG_WINDOW
                    and history[-1] > 0.5 * min(history[:-_CG_WINDOW])):
                break  # converged, out of products, or stalled (at rounding level)
            # the next directions: the residuals made H-conjugate to every stored block,
            # twice (dropped directions break the three-term recurrence of plain block
            # conjugate gradients, so conjugacy is enforced explicitly)
            Z = R[:, active]
            for _ in range(2):
                for Pj, Qj, cj in basis:
                    Z = Z - Pj @ linalg.cho_solve(cj, Qj.T @ Z)
            P = _orthonormal_directions(Z, tol[active])
        R = B - project(hop(X))  # the true residual
        used += X.shape[1]
        if used >= max_products and np.any(np.linalg.norm(R, axis=0) > tol):
            break
    if np.all(np.linalg.norm(R, axis=0) <= tol):
        return X[:, 0] if squeeze else X
    raise UncertifiedMinimumError(
        "audit: conjugate gradients did not converge (the Hessian is too ill-conditioned "
        "to certify the Jacobians); use hessian='dense' on a smaller network.")


def _orthonormal_directions(Z, scale, drop=1e-3):
    """Orthonormal basis of the span of the columns of ``Z`` without the directions that
    are negligible for the solve: each column is measured in units of its tolerance
    (``scale``), and a direction whose pivoted-QR diagonal is below ``drop`` of a
    tolerance is left out (rounding noise, which would otherwise grow the block once the
    residuals are small)."""
    Zs = Z / scale
    if not Zs.shape[1]:
        return Zs
    Q, Rr, _ = linalg.qr(Zs, mode="economic", pivoting=True)
    dg = np.abs(np.diag(Rr))
    return Q[:, dg > drop]


def _gauge(obj):
    """Orthonormal basis ``U`` (p x r) of the exact symmetry directions of the loss."""
    if obj.out != "softmax":
        return np.zeros((obj.p, 0))
    u = np.zeros(obj.p)
    s, e = obj.offsets[2 * obj.L - 1], obj.offsets[2 * obj.L]
    u[s:e] = 1.0 / np.sqrt(e - s)
    return u[:, None]


def _lbfgs(obj, theta, project):
    """Approach the minimum with L-BFGS (gradient only) before the Newton-CG steps."""
    from scipy.optimize import minimize

    def fun(t):
        F, g = obj.value_grad(t)
        return F, project(g)

    res = minimize(fun, theta, jac=True, method="L-BFGS-B",
                   options={"maxiter": 20_000, "ftol": 0.0, "maxcor": 30,
                            "gtol": _LBFGS_GTOL})
    return project(res.x - theta) + theta


class _Reached(Exception):
    """Raised by the preconditioned L-BFGS's callback at the threshold (carries ``x``)."""

    def __init__(self, x):
        super().__init__()
        self.x = np.array(x, dtype=float)


def _lbfgs_preconditioned(obj, theta, Z, gtol, max_rounds=50):
    """L-BFGS in the coordinates ``u`` of ``theta + Z Q |Lambda|^{-1/2} u``, ``Q Lambda
    Q^T`` the exact Hessian on the complement ``Z`` of the gauge at the start of a round
    (magnitudes floored at ``_PRECOND_FLOOR`` times the largest), rebuilt every
    ``_PRECOND_ROUND`` gradients, until the largest gradient entry is at most ``gtol``
    (or ``max_rounds`` rounds). Where the Hessian is indefinite the scaled coordinates
    still make the curvature of every direction about one in magnitude; L-BFGS's line
    search keeps the objective decreasing."""
    from scipy.optimize import minimize

    F, g = obj.value_grad(theta)
    state = {"g": g}

    for _ in range(max_rounds):
        if np.abs(state["g"]).max() <= gtol:
            break
        lam, Q = linalg.eigh(Z.T @ obj.hessian(theta) @ Z)
        S = Z @ (Q / np.sqrt(np.maximum(np.abs(lam), _PRECOND_FLOOR * abs(lam[-1]))))

        def fun(u, theta=theta, S=S):
            F, g = obj.value_grad(theta + S @ u)
            state["g"] = g
            return F, S.T @ g

        def stop(xk):  # at an accepted iterate (the last evaluation)
            if np.abs(state["g"]).max() <= gtol:
                raise _Reached(xk)

        try:
            u = minimize(fun, np.zeros(S.shape[1]), jac=True, method="L-BFGS-B",
                         callback=stop,
                         options={"maxfun": _PRECOND_ROUND, "ftol": 0.0, "gtol": 0.0,
                                  "maxcor": 30}).x
        except _Reached as reached:  # an exception of ours: scipy < 1.11 has no
            u = reached.x            # StopIteration protocol for callbacks
        theta = theta + S @ u
        F_new, state["g"] = obj.value_grad(theta)
        if not F_new < F - 1e-15 * max(1.0, abs(F)):
            break  # no progress (rounding): Newton takes over
        F = F_new
    return theta


def _one_blas_thread():
    """BLAS limited to one thread for the dense audit (polish, Hessian, certificate and
    every row's eta): its products are small (one gradient pass per L-BFGS step; row
    chunks of a few hundred), and threaded BLAS on a busy machine made them several times
    slower (measured: the polish 16.6 s against 0.95 s at 5,000 rows x 241 parameters,
    load 6 on 2 cores; the etas of 20,000 rows x 881 parameters 9.2 s against 1.9 s at
    load 2.4-3.4), with no gain on a quiet machine (the audit 4.40x against 4.37x one
    default fit)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _polish_dense(obj, theta, project, U, Z):
    """Preconditioned L-BFGS, then Newton; if Newton meets an indefinite Hessian or needs
    a damped step, preconditioned L-BFGS runs to a tight threshold before Newton resumes."""
    theta = _lbfgs_preconditioned(obj, theta, Z, _PRECOND_GTOL)
    theta, g, steps, ok = _newton_dense(obj, theta, U, Z, strict=True)
    if not ok:
        theta = _lbfgs_preconditioned(obj, theta, Z, 1e-3 * _PRECOND_GTOL)
        theta, g, more, _ = _newton_dense(obj, theta, U, Z)
        steps += more
    return theta, g, steps


def _newton_dense(obj, theta, U, Z, strict=False):
    """Newton polish with the exact dense Hessian (reused while it converges fast).

    Returns ``(theta, gradient, steps, ok)``; with ``strict``, stops (``ok=False``) at the
    first indefinite Hessian or damped step."""
    F, g = obj.value_grad(theta)
    steps, eig = 0, None
    last_norm = np.inf
    while np.linalg.norm(g) > MLP_GTOL and steps < _MAX_NEWTON:
        gn = np.linalg.norm(g)
        if eig is None or gn > 0.25 * last_norm:
            Hc = Z.T @ obj.hessian(theta) @ Z
            lam, Q = linalg.eigh(Hc)
            if strict and not lam[0] > 0:
                return theta, g, steps, False
            scale = max(abs(lam[-1]), 1e-300)
            # far from a minimum: a saddle-free step (|lambda|) keeps the polish descending;
            # only the final, exact Hessian certifies
            eig = (np.maximum(np.abs(lam), 1e-8 * scale), Q)
        last_norm = gn
        lam_s, Q = eig
        step = -Z @ (Q @ ((Q.T @ (Z.T @ g)) / lam_s))
        t, F_new, g_new = _backtrack(
            obj, theta, F, g, step,
            f"audit: the Newton polish stalled at gradient norm {gn:.3g} (no descent "
            "along the Newton direction).")
        theta = theta + t * step
        F, g = F_new, g_new
        steps += 1
        if t < 1.0:
            if strict:
                return theta, g, steps, False
            eig = None  # a damped step: rebuild the Hessian
    return theta, g, steps, True


def _backtrack(obj, theta, F, g, step, stalled):
    """Armijo backtracking along ``step``: ``(t, F(theta + t step), grad there)``; raises
    :class:`UncertifiedMinimumError` with ``stalled`` when no descent is found."""
    t, slope = 1.0, float(g @ step)
    while True:
        F_new, g_new = obj.value_grad(theta + t * step)
        if F_new <= F + 1e-4 * t * slope or abs(slope) < 1e-13 * max(1.0, abs(F)):
            return t, F_new, g_new
        t *= 0.5
        if t < 1e-12:
            raise UncertifiedMinimumError(stalled)


def _newton_cg_direction(hop, g, project, rtol, maxiter=None):
    """Truncated conjugate gradients for ``H s = -g`` (Steihaug's rule): the iterate is
    returned when the relative residual reaches ``rtol`` or at the first direction of
    non-positive curvature (``-g`` if that is the first direction), so the step is always
    a descent direction, also where ``H`` is indefinite."""
    b = -project(np.asarray(g, dtype=float))
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    rs = float(r @ r)
    stop = rtol ** 2 * rs
    for k in range(maxiter or 10 * b.size):
        Hd = project(hop(d))
        curv = float(d @ Hd)
        if curv <= 0:
            return x if k else b
        a = rs / curv
        x += a * d
        r -= a * Hd
        rs_new = float(r @ r)
        if rs_new <= stop:
            break
        d = r + (rs_new / rs) * d
        rs = rs_new
    return x


def _newton_operator(obj, theta, hop_at, project):
    F, g = obj.value_grad(theta)
    steps = 0
    while np.linalg.norm(g) > MLP_GTOL and steps < _MAX_NEWTON:
        gn = np.linalg.norm(g)
        step = _newton_cg_direction(hop_at(theta), g, project, min(0.1, np.sqrt(gn)))
        t, F_new, g_new = _backtrack(
            obj, theta, F, g, step,
            f"audit: the Newton-CG polish stalled at gradient norm {gn:.3g}.")
        theta = theta + t * step
        F, g = F_new, g_new
        steps += 1
    return theta, g, steps


def polish_dense(obj, theta0, project, U, name):
    """Dense route: polish ``theta0`` with the exact Hessian (preconditioned L-BFGS, then
    Newton) and certify the gradient norm; return ``(theta, gnorm, steps, lmin, lmax,
    state)`` with the eigen-decomposition of the Hessian on the gauge's complement in
    ``state`` (``_Z``, ``_Qc``, ``_lam``)."""
    Z = linalg.null_space(U.T) if U.shape[1] else np.eye(obj.p)
    with _one_blas_thread():
        theta, g, steps = _polish_dense(obj, theta0, project, U, Z)
    gnorm = float(np.linalg.norm(g))
    if gnorm > MLP_GTOL:
        raise UncertifiedMinimumError(
            f"audit of {name}: the Newton polish stopped at gradient norm {gnorm:.3g} "
            f"> {MLP_GTOL:g} after {steps} steps; no certified minimum.")
    with _one_blas_thread():
        H = obj.hessian(theta)
        lam, Qc = linalg.eigh(Z.T @ H @ Z)
    lmin, lmax = float(lam[0]), float(lam[-1])
    return theta, gnorm, steps, lmin, lmax, {"_Z": Z, "_Qc": Qc, "_lam": lam}


def polish_operator(obj, theta0, project, U, name):
    """Operator route (Hessian-vector products only): L-BFGS then Newton-CG, the gradient
    norm certified, the extreme eigenvalues of the projected Hessian by Lanczos; return
    ``(theta, gnorm, steps, lmin, lmax, state)`` with the Hessian operator and the
    projection in ``state`` (``_hop``, ``_project``)."""
    def hop_at(t):
        return obj.hvp_operator(t)

    with _one_blas_thread():
        theta, g, steps = _newton_operator(obj, _lbfgs(obj, theta0, project),
                                           hop_at, project)
    gnorm = float(np.linalg.norm(g))
    if gnorm > MLP_GTOL:
        raise UncertifiedMinimumError(
            f"audit of {name}: the Newton-CG polish stopped at gradient norm "
            f"{gnorm:.3g} > {MLP_GTOL:g} after {steps} steps; no certified minimum.")
    hop = hop_at(theta)
    op = LinearOperator((obj.p, obj.p), dtype=float,
                        matvec=lambda v: project(hop(project(np.ravel(v)))))
    lmax = float(eigsh(op, k=1, which="LA", tol=1e-6, return_eigenvectors=False)[0])
    shifted = LinearOperator(
        (obj.p, obj.p), dtype=float,
        matvec=lambda v: (project(hop(project(np.ravel(v))))
                          + lmax * (U @ (U.T @ np.ravel(v)) if U.shape[1] else 0.0)))
    # smallest eigenvalue of H on the complement of the gauge: largest of lmax I - H
    flip = LinearOperator((obj.p, obj.p), dtype=float,
                          matvec=lambda v: lmax * np.ravel(v) - shifted.matvec(v))
    top = float(eigsh(flip, k=1, which="LA", tol=1e-10, ncv=min(obj.p, 60),
                      maxiter=20 * obj.p, return_eigenvectors=False)[0])
    lmin = lmax - top
    return theta, gnorm, steps, lmin, lmax, {"_hop": hop, "_project": project}
