"""FIL audit of scikit-learn's multi-layer perceptrons (``MLPClassifier``, ``MLPRegressor``).

What eta means for a non-convex model
-------------------------------------
A network's training objective has many local minima; scikit-learn's solver returns one
of them, ``theta*``. The audit describes the *output-perturbation* mechanism that releases
that local minimiser with Gaussian noise, ``theta* + N(0, sigma^2 I)`` on every weight and
bias, and it is a **local** statement: where ``theta*`` is a strict local minimum (gradient
zero, Hessian positive definite), the implicit function theorem gives a differentiable
map from the training data to the nearby minimiser, with Jacobian

    d theta* / d(x_i, y_i) = - H^{-1} G_i,

``H`` the exact Hessian of scikit-learn's objective at ``theta*`` and ``G_i`` the
derivative of row ``i``'s gradient contribution with respect to its values. The Fisher
information of the release about row ``i``'s values is ``J_i^T J_i / sigma^2`` and ``eta_i
= ||J_i||_2 / sigma`` (the library's GLM convention). It bounds how precisely an unbiased
adversary who knows every other row *and which local minimum training reached* can
reconstruct row ``i``'s values from the release (standard deviation at least ``1 /
eta_i`` for a unit-norm change): a reconstruction / attribute-inference bound. It is not a
membership score, and it says nothing about perturbations large enough to move training
to another basin.

Exactness
---------
The user's parameters are polished by Newton's method on scikit-learn's own objective (see
:mod:`._math`) until the Euclidean norm of the gradient is at most ``MLP_GTOL`` (a
fixed threshold, the objective being a mean over rows), then the exact Hessian at the
polished point is checked: its smallest eigenvalue must exceed ``MLP_EIG_RTOL`` times its
largest. Otherwise :class:`~sklearn_privacy.exceptions.UncertifiedMinimumError` is raised
with the reason. No damped, Gauss-Newton or Fisher substitute of ``H`` is used for eta.
With a softmax output the loss is unchanged when one number is added to every output
bias; that direction carries no information about the data (every ``G_i`` is orthogonal
to it) and no penalty, so it is factored out: the output biases are centred (a shift
changes no prediction) and ``H`` is certified and inverted on the complement.
"""

from __future__ import annotations

import copy
import math
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ...exceptions import AuditStateUnavailableError, UncertifiedMinimumError
from ...utils import noise_generator
from ...utils._validation import check_flag, errors_name, positional_rows
from ...utils._warnings import warn_user
from .._raw._feature_maps import _take_rows, blocks_to_dense, feature_map
from ._math import ACTIVATIONS, MLPObjective

__all__ = ["AuditedMLP", "audit_mlp"]

#: Newton polish stops when ||grad F||_2 <= MLP_GTOL (F is a mean over rows, so the
#: threshold does not depend on the data).
MLP_GTOL = 1e-10
#: The exact Hessian is certified positive definite when lambda_min > MLP_EIG_RTOL *
#: lambda_max.
MLP_EIG_RTOL = 1e-9
#: Dense exact Hessian up to this many parameters; Hessian-vector products beyond.
MLP_DENSE_MAX = 1500
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

#: Fitted attributes of an MLP that a release keeps (the rest -- loss curves, iteration
#: counts, the optimiser's moment estimates, best-so-far copies -- is data-dependent).
_RELEASE_KEEP = ("coefs_", "intercepts_", "classes_", "n_features_in_", "feature_names_in_",
                 "n_layers_", "n_outputs_", "out_activation_", "_label_binarizer")


class AuditedMLP:
    """FIL audit of a scikit-learn ``MLPClassifier`` / ``MLPRegressor`` (from :func:`audit`).

    Holds the polished local minimiser, the certificate (smallest eigenvalue of the exact
    Hessian) and the per-example Jacobians' structure. Every eta is with respect to the
    raw input columns of what was audited (through the elementwise scalers of a
    pipeline: a change of one unit of the raw column) and the label; see the module
    docstring and the user guide ("Auditing a neural network") for what eta means for a
    non-convex model.

    Attributes
    ----------
    sigma : float
        Noise scale of the output perturbation.
    eta_ : ndarray of shape (n_rows,)
        Per-example eta (all input values and the label of a row) of the rows ``rows_``.
    rows_ : ndarray of int
        Training rows that ``eta_`` describes (all rows on the dense route).
    hessian_min_eigenvalue_, hessian_max_eigenvalue_ : float
        Extreme eigenvalues of the exact Hessian of scikit-learn's objective at the
        polished point (the certificate: the minimum is strict when the first is > 0).
    gradient_norm_ : float
        Euclidean norm of the gradient at the polished point (at most ``MLP_GTOL``).
    polish_distance_, polish_relative_ : float
        Distance from the model's parameters to the polished minimiser (relative: divided
        by ``max(1, ||theta||)``).
    n_newton_steps_ : int
        Newton steps of the polish.
    n_parameters_ : int
        Number of weights and biases.
    objective_alpha_ : float
        The penalty of the audited objective ``(sum_i s_i l_i + objective_alpha_ / 2
        sum ||W||^2) / sum_i s_i``: the model's ``alpha`` for ``solver="lbfgs"``,
        ``n_minibatches_ * alpha`` for ``"adam"`` and ``"sgd"`` (each minibatch adds the
        penalty once; scikit-learn's ``loss_curve_`` convention).
    n_minibatches_ : int
        Minibatches per epoch of a stochastic solver (1 for lbfgs).
    hessian_ : {"dense", "operator"}
        Exact dense Hessian, or Hessian-vector products with conjugate gradients.
    n_label_columns_ : int
        Label values per row (1, or ``K - 1`` Helmert coordinates of a one-hot label).
    feature_names_in_ : ndarray of str
        Raw input column names when the audited data had them.
    coordinate_names_ : ndarray of str
        Names of the raw coordinates the Jacobian columns refer to: a numeric column's
        name, or one encoded level of a categorical column (``"race_White"``).
    published_rows_ : ndarray of int
        Training rows a preprocessing step publishes verbatim (``Nystroem``'s
        ``components_``): their eta with respect to the inputs is ``inf``.
    epsilon_, delta_ : float
        ``inf`` and ``0``: no differential-privacy guarantee is derived for a network.
    epsilon_reason_, release_claim_ : str
        Why, and what :meth:`release` publishes.
    """

    # --------------------------------------------------------------- audit state
    def _state(self):
        obj = self.__dict__.get("_obj")
        if obj is None:
            raise AuditStateUnavailableError(
                "This MLP audit was loaded from a dump: the training rows and the exact "
                "minimiser are not pickled. Run fil.audit again in the session that "
                "owns the data.")
        return obj

    @property
    def eta_(self):
        """Per-example eta of ``rows_`` (audit state: not in a pickle)."""
        self._state()
        return self._eta_values

    def __getstate__(self):
        state = dict(self.__dict__)
        for key in ("_obj", "_source", "_theta", "_A", "_Z", "_Qc", "_lam", "_gram",
                    "_fmap", "_X_raw", "_hop", "_project", "_eta_values", "_gram_terms",
                    "_phi_constant"):
            state.pop(key, None)
        return state

    def __sklearn_privacy_claim__(self):
        from ...privacy._compose import StepClaim

        return [StepClaim("", type(self).__name__, "non_private", math.inf, 0.0,
                          self.epsilon_reason_)]

    # --------------------------------------------------------------- columns and rows
    def _columns(self, columns):
        d, q = self._d, self._q
        if columns is None:
            return np.arange(q)
        items = [columns] if isinstance(columns, (str, Integral)) else list(columns)
        if not items:
            raise ValueError("columns is empty; select at least one input or 'label'.")
        coords = list(self._coordinate_names)
        groups = self._feature_groups  # raw column name -> its coordinates
        out = []
        for item in items:
            if isinstance(item, str):
                if item == "label":
                    out.extend(range(d, q))
                elif item in groups:
                    out.extend(int(c) for c in groups[item])
                elif item in coords:
                    out.append(coords.index(item))
                else:
                    raise ValueError(
                        f"columns: unknown input {item!r}; use raw column names "
                        f"{list(groups)}, coordinate names (encoded levels), positions "
                        f"0..{d - 1} or 'label'.")
            elif isinstance(item, (Integral, np.integer)) and not isinstance(item, bool):
                if not 0 <= item <= d:
                    raise ValueError(f"columns: position {item} out of range 0..{d} "
                                     f"({d} is the label).")
                out.extend(range(d, q) if item == d else [int(item)])
            else:
                raise TypeError(f"columns must be names, positions or 'label'; got {item!r}.")
        cols = np.asarray(out, dtype=int)
        if np.unique(cols).size != cols.size:
            raise ValueError(f"columns: {items} select a value twice.")
        return cols

    def _rows(self, rows):
        n = self._state().n
        if rows is None:
            out = self.rows_ if self.hessian_ == "operator" else np.arange(n)
            return np.asarray(out)
        return _check_rows(rows, n)

    # --------------------------------------------------------------- Jacobians
    def _phi(self, rows):
        """``d phi / d u`` at the rows ``(m, n_features, n_coordinates)``, or None."""
        fmap = self.__dict__.get("_fmap")
        if fmap is None:
            return None
        obj = self._state()
        if fmap.constant:
            Phi = self._phi_constant
            return np.broadcast_to(Phi, (len(rows),) + Phi.shape)
        _, blocks = fmap.jacobian_blocks(_take_rows(self._X_raw, np.asarray(rows)))
        return blocks_to_dense(blocks, len(rows), obj.d, fmap.n_coordinates)

    def _to_raw(self, T, rows):
        """Chain rule on the feature columns of ``T`` ``(m, q_features, k)``."""
        Phi = self._phi(rows)
        if Phi is None:
            return T
        d = self._state().d
        raw = np.matmul(np.swapaxes(Phi, 1, 2), T[:, :d])
        return np.concatenate([raw, T[:, d:]], axis=1)

    def _rotated_chunks(self, rows):
        """``(positions, T)``: ``T[j]`` (q x p') satisfies ``T[j]^T T[j] = J_i^T J_i``."""
        obj = self._state()
        for sl, G in obj.mixed_chunks(self._theta, rows):
            m = G.shape[0]
            if self.hessian_ == "dense":
                T = (G.reshape(m * obj.q, obj.p) @ self._A.T).reshape(m, obj.q, -1)
            else:
                sol = _block_cg(self._hop, G.reshape(m * obj.q, obj.p).T, self._project)
                T = sol.T.reshape(m, obj.q, obj.p)
            yield sl, self._to_raw(T, rows[sl])

    def jacobian(self, row):
        """Exact Jacobian ``J_i`` of the minimiser w.r.t. row ``i``'s values, ``(p, q)``.

        Column ``u < d`` is ``d theta* / d u`` for the raw coordinate ``u`` (through the
        pipeline's preprocessing), the last columns the label directions. Parameters in
        scikit-learn's packing.
        """
        obj = self._state()
        r = self._rows([row])
        G = obj.mixed(self._theta, r)
        if self.hessian_ == "dense":
            J = -(self._Z @ (self._Qc @ ((self._Qc.T @ (self._Z.T @ G[0].T))
                                         / self._lam[:, None])))
        else:
            J = -_block_cg(self._hop, G[0].T, self._project)
        return self._to_raw(J.T[None], r)[0].T

    def _grams(self, rows):
        cached = self.__dict__.get("_gram")
        if cached is not None:
            return cached[rows]
        if self.hessian_ == "dense":
            return self._structured_grams(rows)
        out = np.empty((rows.size, self._q, self._q))
        for sl, T in self._rotated_chunks(rows):
            out[sl] = np.einsum("mqa,mra->mqr", T, T)
        return out

    def _structured_grams(self, rows):
        """``J_i^T J_i`` of the rows from the layer factors (dense route).

        ``J_i^T J_i = G_i H^{-2} G_i^T``: the mixed derivative ``G_i`` is a sum of
        Kronecker products of per-layer vectors, so every entry is a bilinear form of
        those vectors with blocks of ``H^{-2}``, evaluated for all rows by GEMMs of about
        ``2 p^2`` flops per row (the direct product ``G_i H^{-1}`` costs ``q p^2``).
        """
        obj = self._state()
        terms = self.__dict__.get("_gram_terms")
        if terms is None:
            terms = obj.gram_operator(self._A.T @ self._A)
            self._gram_terms = terms
        Phi_all = self.__dict__.get("_fmap") is not None
        out = np.empty((rows.size, self._q, self._q))
        step = 4096
        for start in range(0, rows.size, step):
            r = rows[start:start + step]
            gram = obj.row_grams(self._theta, r, terms)
            if Phi_all:
                Phi = self._phi(r)  # (m, d, d_raw)
                d = obj.d
                top = np.matmul(np.swapaxes(Phi, 1, 2), gram[:, :d])  # (m, d_raw, q)
                left = np.matmul(top[:, :, :d], Phi)
                right = top[:, :, d:]
                gram = np.concatenate(
                    [np.concatenate([left, right], axis=2),
                     np.concatenate([np.swapaxes(right, 1, 2), gram[:, d:, d:]], axis=2)],
                    axis=1)
            out[start:start + r.size] = gram
        return out

    def eta(self, rows=None, columns=None, *, per_example: bool = False):
        """Fisher information loss of a set of training values.

        Parameters
        ----------
        rows : None, int, array-like of int or boolean mask, default=None
            Training rows (``None``: every row on the dense route, ``rows_`` on the
            operator route; other rows are computed on request there too).
        columns : None, name, position or list of them, default=None
            Raw input columns by name (a categorical column selects all its encoded
            levels), raw coordinates by name (``coordinate_names_``, e.g. an encoded
            level ``"race_White"``) or position ``0..d-1``, and ``"label"`` (position
            ``d``: every label value); ``None``: all.
        per_example : bool, default=False
            One eta per row (``||J_i[:, C]||_2 / sigma``) instead of the eta of the whole
            set (``||J_S||_2 / sigma``, ``J_S`` the selected columns of the rows side by
            side).

        Returns
        -------
        eta : float or ndarray of shape (n_rows,)
        """
        per_example = check_flag(per_example, "per_example")
        with _one_blas_thread():  # the same numbers as the audit's own eta_
            return self._eta(rows, columns, per_example)

    def _eta(self, rows, columns, per_example):
        r = self._rows(rows)
        cols = self._columns(columns)
        published = np.isin(r, self.__dict__.get("published_rows_", np.zeros(0, int)))
        if per_example:
            grams = self._grams(r)[:, cols][:, :, cols]
            out = np.sqrt(np.maximum(np.linalg.eigvalsh(grams)[:, -1], 0.0)) / self.sigma
            out[published & np.any(cols < self._d)] = np.inf
            return out
        if published.any() and np.any(cols < self._d):
            return np.inf
        total = None
        for _, T in self._rotated_chunks(r):
            T = T[:, cols].reshape(-1, T.shape[-1])
            part = T.T @ T
            total = part if total is None else total + part
        return float(np.sqrt(max(linalg.eigvalsh(total)[-1], 0.0)) / self.sigma)

    def fisher_information(self, rows=None, columns=None):
        """Fisher information matrix ``J_S^T J_S / sigma^2`` of a set of training values.

        Values ordered row-major (rows, then the selected columns); at most 2,048 values.
        """
        r = self._rows(rows)
        cols = self._columns(columns)
        if r.size * cols.size > 2048:
            raise ValueError(f"fisher_information: {r.size * cols.size} values exceed the "
                             "dense limit 2048; select fewer rows or columns.")
        parts = [T[:, cols].reshape(-1, T.shape[-1]) for _, T in self._rotated_chunks(r)]
        T = np.concatenate(parts)
        return (T @ T.T) / self.sigma ** 2

    def sigma_for_eta(self, target_eta: float, *, aggregate: str = "max", columns=None):
        """Noise scale at which the per-example eta statistic of ``rows_`` equals a target."""
        if not (isinstance(target_eta, Real) and np.isfinite(target_eta) and target_eta > 0):
            raise ValueError(f"target_eta must be a positive finite number; got "
                             f"{target_eta!r}.")
        if aggregate not in ("max", "mean"):
            raise ValueError(f"aggregate must be 'max' or 'mean'; got {aggregate!r}.")
        e = self.eta(columns=columns, per_example=True) * self.sigma
        stat = e.max() if aggregate == "max" else e.mean()
        return float(stat / target_eta)

    # --------------------------------------------------------------- release
    def release(self, random_state=None, *, sigma: float | None = None):
        """A copy of the user's MLP (or pipeline) with ``theta* + N(0, sigma^2 I)``.

        Every weight and bias of the polished local minimiser gets independent Gaussian
        noise -- the mechanism whose FIL this audit reports. Data-dependent fitted state
        other than the parameters (``loss_``, ``loss_curve_``, ``best_loss_``,
        ``n_iter_``, ``t_``, validation scores, the optimiser's moment estimates) is
        removed; ``classes_`` and the input names are kept.

        Parameters
        ----------
        random_state : int, RandomState instance, Generator or None, default=None
            ``None`` draws from fresh OS entropy (required for a private release).
        sigma : float or None, default=None
            Noise scale (``None``: the audit's).

        Returns
        -------
        model : MLPClassifier, MLPRegressor or Pipeline
        """
        source = self.__dict__.get("_source")
        if source is None:
            self._state()
            raise AttributeError("release is only available on the result of fil.audit.")
        sigma = self.sigma if sigma is None else float(sigma)
        rng = noise_generator(random_state)
        pipe, model = source
        theta = self._theta + sigma * rng.standard_normal(self._theta.size)
        Ws, bs = self._state().unpack(theta)
        out = copy.deepcopy(model)
        for key in list(vars(out)):
            if key.endswith("_") and key not in _RELEASE_KEEP:
                delattr(out, key)
        for key in ("_optimizer", "_best_coefs", "_best_intercepts",
                    "_no_improvement_count"):
            out.__dict__.pop(key, None)
        out.coefs_ = [W.copy() for W in Ws]
        out.intercepts_ = [b.copy() for b in bs]
        if pipe is None:
            return out
        out_pipe = copy.deepcopy(pipe)
        out_pipe.steps[-1] = (out_pipe.steps[-1][0], out)
        return out_pipe


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


# ------------------------------------------------------------------ the audit
def _objective_alpha(model, n):
    """``(alpha of the objective, minibatches per epoch)`` of the model's solver.

    ``lbfgs`` minimises ``(sum s_i l_i + alpha / 2 ||W||^2) / sum s_i``. ``adam`` and
    ``sgd`` add the penalty to every minibatch loss, each divided by that minibatch's
    size: per epoch, at fixed parameters, scikit-learn's ``loss_curve_`` entry is the
    mean loss plus ``B alpha / (2 n) ||W||^2`` with ``B = ceil(n / batch_size)``
    minibatches, and the expected update is the gradient of that objective. Their
    objective is therefore the same with ``alpha`` replaced by ``B alpha``. (With sample
    weights scikit-learn divides each minibatch penalty by that minibatch's weight, which
    depends on the shuffle; ``B alpha / sum s_i`` is its average.)
    """
    if model.solver == "lbfgs":
        return float(model.alpha), 1
    if model.batch_size == "auto":
        size = min(200, n)
    else:
        size = int(np.clip(model.batch_size, 1, n))
    batches = int(math.ceil(n / size))
    return float(model.alpha) * batches, batches


def _check_rows(rows, n):
    """``rows`` (indices or a boolean mask) as distinct indices into ``n`` training rows."""
    r = np.asarray(positional_rows(rows))
    if r.dtype == bool:
        if r.shape != (n,):
            raise ValueError(f"rows: a boolean mask must have length {n}.")
        r = np.flatnonzero(r)
    r = np.atleast_1d(r)
    if r.size == 0 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError("rows must be non-empty training row indices or a mask.")
    if r.min() < 0 or r.max() >= n:
        raise ValueError(f"rows: indices must lie in 0..{n - 1}.")
    if np.unique(r).size != r.size:
        raise ValueError("rows: duplicate indices.")
    return r


def audit_mlp(pipe, model, X, y, *, sigma, sample_weight=None, rows=None, hessian="auto"):
    """Audit of a fitted MLP (see :func:`sklearn_privacy.fil.audit`)."""
    check_is_fitted(model)
    name = type(model).__name__
    if model.activation not in ACTIVATIONS:
        raise ValueError(
            f"audit: {name}(activation={model.activation!r}) is not twice differentiable "
            "(relu has a kink at 0: its Hessian misses the curvature concentrated at the "
            "kinks and the implicit-function-theorem Jacobian is not defined where a unit "
            f"sits at 0). Refit with activation in {list(ACTIVATIONS)}."
        )
    if not model.alpha > 0:
        raise ValueError(
            f"audit: {name}(alpha=0) has no penalty; eta needs a strict local minimum, "
            "which the L2 penalty on the weights provides. Refit with alpha > 0.")
    # sigma and hessian are validated by fil.audit, the only caller
    # ---- preprocessing: the chain rule to the raw inputs through its derivative
    fmap = None
    if pipe is not None and len(pipe.steps) > 1:
        fmap = feature_map(pipe)
        if fmap.refusals:
            raise ValueError(
                "audit of an MLP pipeline: the raw-input Jacobian cannot be computed: "
                + "; ".join(fmap.refusals) + ". To audit the MLP on the features it "
                "receives instead, call audit(pipe[-1], pipe[:-1].transform(X), y, ...).")
        with errors_name("X"):  # e.g. an array for a pipeline fitted on a frame
            Xt = pipe[:-1].transform(X)
    else:
        Xt = X
    if hasattr(Xt, "toarray"):
        Xt = Xt.toarray()
    Xt = np.asarray(Xt, dtype=np.float64)
    if Xt.ndim != 2 or Xt.shape[1] != model.n_features_in_:
        raise ValueError(f"X: the model was fitted on {model.n_features_in_} features; "
                         f"X gives {Xt.shape[1] if Xt.ndim == 2 else Xt.shape}.")
    if not np.all(np.isfinite(Xt)):
        raise ValueError("X contains NaN or infinite values.")
    try:
        check_consistent_length(Xt, y)
    except ValueError as exc:
        raise ValueError(f"X and y: {exc}; pass the training rows and their "
                         "targets.") from exc
    n = Xt.shape[0]
    if rows is not None:
        rows = _check_rows(rows, n)
    # ---- targets exactly as scikit-learn builds them
    if isinstance(model, MLPClassifier):
        lb = model._label_binarizer
        if lb.y_type_ == "multilabel-indicator":
            raise ValueError("audit: a multilabel MLPClassifier is not supported; audit one "
                             "label at a time.")
        labels = np.unique(np.asarray(y))
        if not np.array_equal(labels, model.classes_):
            raise ValueError(f"y: its classes {labels.tolist()} differ from the model's "
                             f"classes_ {model.classes_.tolist()}; pass the training labels.")
        Y = lb.transform(y).astype(np.float64)
    else:
        Y = np.asarray(y, dtype=np.float64)
        if Y.ndim == 2 and Y.shape[1] != 1:
            raise ValueError(
                f"audit: {name} was fitted on {Y.shape[1]} targets; its reported loss and "
                "its gradient disagree by the factor n_targets there, so audit one target "
                "at a time.")
        Y = Y.reshape(-1, 1)
        if not np.all(np.isfinite(Y)):
            raise ValueError("y contains NaN or infinite values.")
    if model.n_outputs_ != Y.shape[1]:
        raise ValueError("y does not match the model's outputs.")
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (n,) or not np.all(np.isfinite(sample_weight)) \
                or np.any(sample_weight < 0) or not sample_weight.sum() > 0:
            raise ValueError("sample_weight must be finite, non-negative, of shape "
                             "(n_samples,) and not all zero (the model's fit weights).")
    units = [model.n_features_in_, *[W.shape[1] for W in model.coefs_]]
    alpha_obj, n_batches = _objective_alpha(model, n)
    obj = MLPObjective(units, model.activation, model.out_activation_, alpha_obj, Xt, Y,
                       sample_weight)
    theta_user = np.concatenate([np.ravel(W) for W in model.coefs_]
                                + [np.ravel(b) for b in model.intercepts_]).astype(float)
    U = _gauge(obj)
    theta0 = theta_user - U @ (U.T @ theta_user)  # centred softmax output biases
    route = hessian if hessian != "auto" else (
        "dense" if obj.p <= MLP_DENSE_MAX else "operator")
    if route == "operator" and rows is None:
        why = ("hessian='operator' was asked for" if hessian == "operator" else
               f"this network has {obj.p} parameters (more than {MLP_DENSE_MAX})")
        raise ValueError(
            f"audit: {why}, so per-example etas are computed by Hessian-vector products "
            "and conjugate gradients for named rows only; pass rows=[...] (the rows to "
            "audit).")

    def project(V):
        return V - U @ (U.T @ V) if U.shape[1] else V

    out = AuditedMLP.__new__(AuditedMLP)
    if route == "dense":
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
        out._Z, out._Qc, out._lam = Z, Qc, lam
    else:
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
        out._hop = hop
        out._project = project
    if not lmin > MLP_EIG_RTOL * lmax:
        raise UncertifiedMinimumError(
            f"audit of {name}: the exact Hessian at the polished point (gradient norm "
            f"{gnorm:.3g}) has smallest eigenvalue {lmin:.6g} (largest {lmax:.6g}); it is "
            "not positive definite, so this is a saddle point or a flat valley, not a "
            "strict local minimum, and the implicit-function-theorem Jacobians behind eta "
            "do not exist. Typical causes: a hidden unit whose outgoing weights are all "
            "zero (its unpenalised bias is then free), stacked identity activations with "
            "more than one unit (a rotation symmetry), or a solver stopped near a saddle. "
            "Refit (another random_state, a larger alpha) and audit again.",
            smallest_eigenvalue=lmin)
    out._obj = obj
    out._theta = theta
    published = []
    if fmap is not None:
        out._fmap, out._X_raw = fmap, X
        if fmap.constant:
            _, blocks = fmap.jacobian_blocks(_take_rows(X, np.arange(1)))
            out._phi_constant = blocks_to_dense(blocks, 1, obj.d, fmap.n_coordinates)[0]
        if fmap.published:
            for _ in fmap.iter_blocks(X, published_rows=published):
                pass
        out._d = fmap.n_coordinates
        out._coordinate_names = list(fmap.coordinate_names)
        out._feature_groups = {name: fmap.feature_coordinates[r]
                               for r, name in enumerate(fmap.feature_names_in)
                               if fmap.feature_coordinates[r].size}
        names = fmap.feature_names_in
    else:
        out._d = obj.d
        names = getattr(model, "feature_names_in_", None)
        out._coordinate_names = ([str(c) for c in names] if names is not None
                                 else [f"x{j}" for j in range(obj.d)])
        out._feature_groups = {c: np.array([j]) for j, c in
                               enumerate(out._coordinate_names)}
    out._q = out._d + (obj.q - obj.d)
    out.published_rows_ = np.unique(np.asarray(published, dtype=int))
    out.sigma = float(sigma)
    out.hessian_ = route
    out.hessian_min_eigenvalue_ = lmin
    out.hessian_max_eigenvalue_ = lmax
    out.gradient_norm_ = gnorm
    out.n_newton_steps_ = int(steps)
    out.n_parameters_ = int(obj.p)
    out.objective_alpha_ = float(alpha_obj)
    out.n_minibatches_ = int(n_batches)
    out.n_label_columns_ = int(obj.q - obj.d)
    dist = float(np.linalg.norm(theta - theta0))
    out.polish_distance_ = dist
    out.polish_relative_ = dist / max(1.0, float(np.linalg.norm(theta)))
    holder = pipe if fmap is not None else model
    if getattr(holder, "feature_names_in_", None) is not None:
        out.feature_names_in_ = np.asarray(names, dtype=object)
    out.coordinate_names_ = np.asarray(out._coordinate_names, dtype=object)
    if route == "dense":
        with _one_blas_thread():
            out._A = (Qc / lam).T @ Z.T
            out.rows_ = np.arange(n)
            if n * obj.q * obj.q <= 25_000_000:
                out._gram = None
                out._gram = out._grams(out.rows_)
            out._eta_values = out.eta(out.rows_, per_example=True)
    else:
        out.rows_ = np.arange(n)  # for _rows validation
        out.rows_ = out._rows(rows)
        out._eta_values = out.eta(out.rows_, per_example=True)
    if out.published_rows_.size:
        out._eta_values[np.isin(out.rows_, out.published_rows_)] = np.inf
    out.epsilon_ = math.inf
    out.delta_ = 0.0
    out.epsilon_reason_ = (
        "no differential-privacy guarantee is derived for a neural network: its "
        "sensitivity is unbounded and the Fisher information describes one local "
        "minimum; eta is a local reconstruction bound, not a privacy guarantee")
    steps_note = "" if pipe is None else (
        " The preprocessing steps were fitted on the private rows without a guarantee and "
        "are released as they are.")
    stop_note = "" if not getattr(model, "early_stopping", False) else (
        " The model used early stopping (a validation split of the rows chose its "
        "parameters); the audit describes the polished minimiser on all the rows given.")
    out.release_claim_ = (
        f"Gaussian output perturbation (sigma={out.sigma!r}) of every weight and bias of "
        f"the polished local minimiser of the {name} objective (alpha={model.alpha!r}, "
        f"objective alpha {alpha_obj!r}); eta describes the release locally, at that "
        "minimum." + steps_note + stop_note)
    if out.polish_relative_ > 0.1:
        warn_user(
            f"audit: the {name}'s parameters are {dist:.3g} (L2) from the polished local "
            "minimiser (more than 10% of its norm); the audit describes the polished "
            "minimiser. Refit with a tighter tol / more max_iter, or check that X, y and "
            "sample_weight are the training data.", UserWarning, stacklevel=3)
    out._source = (copy.deepcopy(pipe) if pipe is not None else None, copy.deepcopy(model))
    return out


def is_mlp(model):
    return isinstance(model, (MLPClassifier, MLPRegressor))


def split_mlp_pipeline(estimator):
    """``(pipe, model)`` when ``estimator`` is an MLP or a Pipeline ending in one."""
    if isinstance(estimator, Pipeline):
        last = estimator.steps[-1][1]
        return (estimator, last) if is_mlp(last) else (None, None)
    return (None, estimator) if is_mlp(estimator) else (None, None)
