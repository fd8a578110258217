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
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ...exceptions import AuditStateUnavailableError, UncertifiedMinimumError
from ...utils import noise_generator
from ...utils._progress import run_tasks
from ...utils._validation import check_flag, errors_name, positional_rows
from ...utils._warnings import warn_user
from .._raw._feature_maps import _take_rows, blocks_to_dense, feature_map
from ._math import ACTIVATIONS, MLPObjective
from ._polish import _block_cg, _gauge, _one_blas_thread, polish_dense, polish_operator

__all__ = ["AuditedMLP", "audit_mlp"]

#: The exact Hessian is certified positive definite when lambda_min > MLP_EIG_RTOL *
#: lambda_max.
MLP_EIG_RTOL = 1e-9
#: Dense exact Hessian up to this many parameters; Hessian-vector products beyond.
MLP_DENSE_MAX = 1500
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


def _check_model(model, name):
    """Refuse what the audit cannot certify: a kinked activation, no penalty."""
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


def _network_inputs(pipe, model, X, y):
    """``(fmap, Xt)``: the preprocessing's feature map (for the chain rule to the raw
    inputs; ``None`` without preprocessing) and the rows the network receives."""
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
    return fmap, Xt


def _network_targets(model, y, sample_weight, n, name):
    """``(Y, sample_weight)``: the targets exactly as scikit-learn builds them, and the
    fit weights validated."""
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
    return Y, sample_weight


def _certify_minimum(name, gnorm, lmin, lmax):
    """Refuse a point whose exact Hessian is not positive definite on the complement of
    the gauge: the Jacobians behind eta exist only at a strict local minimum."""
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


def _describe_coordinates(out, fmap, X, obj, model):
    """The coordinates eta is taken in (the raw inputs through ``fmap``, else the
    network's inputs), their names and feature groups, and the rows whose values the
    preprocessing publishes; return the input feature names."""
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
    return names


#: Rows per task of the per-example etas (fixed, so that the etas do not depend on n_jobs).
_ETA_BLOCK = 512


def _block_grams(out, rows):
    return out._structured_grams(rows)


def _block_etas(out, rows):
    return out._eta(rows, None, True)


def _per_example_etas(out, route, rows, n, obj, n_jobs=None, verbose=0):
    """``rows_`` and their etas (every row on the dense route, the named rows on the
    operator route); rows whose values the preprocessing publishes have eta inf.

    The rows are split in blocks of ``_ETA_BLOCK``, computed by threads (``n_jobs``) under
    one BLAS thread each; a block's numbers do not depend on the other blocks.
    """
    out.rows_ = np.arange(n)  # for _rows validation
    if route != "dense":
        out.rows_ = out._rows(rows)
    blocks = [out.rows_[k:k + _ETA_BLOCK] for k in range(0, out.rows_.size, _ETA_BLOCK)]
    kw = dict(n_jobs=n_jobs, verbose=verbose, who="audit", require="sharedmem",
              unit="row blocks of per-example etas")
    with _one_blas_thread():
        if route == "dense":
            out._A = (out._Qc / out._lam).T @ out._Z.T
            out._gram = None
            out._gram_terms = obj.gram_operator(out._A.T @ out._A)
        if route == "dense" and n * obj.q * obj.q <= 25_000_000:
            grams = run_tasks(_block_grams, [(out, b) for b in blocks], **kw)
            out._gram = np.concatenate(grams) if grams else None
            out._eta_values = out._eta(out.rows_, None, True)
        else:
            etas = run_tasks(_block_etas, [(out, b) for b in blocks], **kw)
            out._eta_values = np.concatenate(etas) if etas else np.zeros(0)
    if out.published_rows_.size:
        out._eta_values[np.isin(out.rows_, out.published_rows_)] = np.inf


def _release_claim(out, pipe, model, name, alpha_obj):
    """The (non-)claim of the audited release: no DP guarantee, what eta describes."""
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


def audit_mlp(pipe, model, X, y, *, sigma, sample_weight=None, rows=None, hessian="auto",
              n_jobs=None, verbose=0):
    """Audit of a fitted MLP (see :func:`sklearn_privacy.fil.audit`)."""
    check_is_fitted(model)
    name = type(model).__name__
    _check_model(model, name)
    # sigma and hessian are validated by fil.audit, the only caller
    # ---- preprocessing: the chain rule to the raw inputs through its derivative
    fmap, Xt = _network_inputs(pipe, model, X, y)
    n = Xt.shape[0]
    if rows is not None:
        rows = _check_rows(rows, n)
    Y, sample_weight = _network_targets(model, y, sample_weight, n, name)
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
    polish = polish_dense if route == "dense" else polish_operator
    if verbose:
        print(f"[audit] {name}: polishing the minimiser ({obj.p} parameters, {n} rows, "
              f"{route} Hessian)", flush=True)
    theta, gnorm, steps, lmin, lmax, state = polish(obj, theta0, project, U, name)
    if verbose:
        print(f"[audit] {name}: {steps} Newton steps, gradient norm {gnorm:.3g}, Hessian "
              f"eigenvalues in [{lmin:.3g}, {lmax:.3g}]", flush=True)
    for key, value in state.items():
        setattr(out, key, value)
    _certify_minimum(name, gnorm, lmin, lmax)
    out._obj = obj
    out._theta = theta
    names = _describe_coordinates(out, fmap, X, obj, model)
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
    _per_example_etas(out, route, rows, n, obj, n_jobs, verbose)
    _release_claim(out, pipe, model, name, alpha_obj)
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
