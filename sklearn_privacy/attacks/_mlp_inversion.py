"""White-box attribute inversion of an audited scikit-learn MLP (output perturbation).

Threat model (the one :func:`sklearn_privacy.fil.audit` states for a network): the weights
and biases of the audited local minimiser :math:`\\theta^*` are released with Gaussian
noise, :math:`w' = \\theta^* + \\mathcal N(0, \\sigma^2 I)`; the adversary knows the
training procedure, ``sigma``, every other training row, the target row's label and its
non-sensitive features, and *which local minimum training reached*. For each candidate
value ``c`` of the target's sensitive attribute it computes the minimiser
:math:`\\theta_c` of the training objective with the target's attribute set to ``c``, in
the basin of :math:`\\theta^*`, and scores :math:`\\log p(c) - \\lVert w' - \\theta_c
\\rVert^2 / (2 \\sigma^2)` -- the rule of the linear models' white-box attack, shared
with it (:func:`decide`).

The candidate minimisers are Newton refits warm-started at :math:`\\theta^*` with the
exact Hessian of scikit-learn's objective on the changed data, polished to the audit's
gradient threshold and certified like the audited minimum (the exact Hessian at each
candidate minimum is positive definite); or, flagged as an approximation, the first-order
(implicit function theorem) step :math:`\\theta^* - H^{-1} G_i^\\top \\Delta x`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator, eigsh

from ..exceptions import UncertifiedMinimumError
from ..fil._mlp._audit import MLP_EIG_RTOL, AuditedMLP, split_mlp_pipeline
from ..fil._mlp._math import ACTIVATIONS, MLPObjective
from ..fil._mlp._polish import MLP_GTOL, _block_cg, _gauge, _newton_dense, _newton_operator
from ..utils import noise_generator
from ._attribute import (
    _MAX_LEVELS,
    AttributeInversionResult,
    _check_candidates,
    _match,
    _prior,
    _set_feature,
)
from ._map_rule import _map_predictions
from ._validation import (
    check_bool,
    check_choice,
    check_positive_int,
    is_frame,
    resolve_rows,
    take_rows,
)

__all__ = ["MLPCandidates", "check_mlp_target", "decide", "mlp_candidate_minimisers",
           "mlp_whitebox_inversion", "row_gradients"]


@dataclass
class MLPCandidates:
    """Candidate minimisers of an audited MLP, with the certificate of each.

    ``thetas[k, c]`` is the minimiser with the attribute of attacked row ``rows[k]`` set to
    candidate ``c`` (scikit-learn's packing of ``coefs_`` then ``intercepts_``); the entry
    of the row's true candidate is the audited minimiser itself. With ``method="newton"``
    every other entry is a certified strict local minimum: ``gradient_norms`` at most the
    audit's threshold and ``min_eigenvalues`` (smallest eigenvalue of the exact Hessian
    there, on the complement of the softmax gauge) above ``1e-9`` times the largest. With
    ``method="first_order"`` they are the implicit-function-theorem approximation
    (``approximate`` is True) and the certificate arrays are NaN.
    """

    thetas: np.ndarray = field(repr=False)
    truth: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)
    levels: np.ndarray | None = field(repr=False)
    rows: np.ndarray = field(repr=False)
    truth_all: np.ndarray = field(repr=False)
    method: str
    approximate: bool
    gradient_norms: np.ndarray = field(repr=False)
    min_eigenvalues: np.ndarray = field(repr=False)
    n_newton_steps: np.ndarray = field(repr=False)


# ------------------------------------------------------------------ validation
def check_mlp_target(estimator, who="The white-box attack"):
    """The :class:`AuditedMLP` of ``estimator``, or a clear error for an MLP without one."""
    if isinstance(estimator, AuditedMLP):
        estimator._state()  # AuditStateUnavailableError for a loaded dump
        return estimator
    _, model = split_mlp_pipeline(estimator)
    if model is None:
        return None
    name = type(model).__name__
    act = getattr(model, "activation", None)
    if act not in ACTIVATIONS:
        raise ValueError(
            f"{who} on an MLP replays its training objective with exact second "
            f"derivatives; {name}(activation={act!r}) has none (relu has a kink at 0). "
            f"Refit with activation in {list(ACTIVATIONS)} and audit it with "
            "fil.audit(model, X, y, sigma=...).")
    raise ValueError(
        f"{who} on an MLP needs its audit: the noise scale sigma of the released weights, "
        "the training rows and the certified minimum. Pass "
        f"fil.audit(model, X, y, sigma=...) instead of the {name}.")


def _raw_frame(audited):
    """``(raw rows, preprocessing steps or None)`` the audit was run on."""
    pipe = audited._source[0] if audited.__dict__.get("_source") else None
    if audited.__dict__.get("_fmap") is not None:
        return audited._X_raw, pipe[:-1]
    return None, None


def _as_levels(values, levels):
    """Index of each value among ``levels`` (numbers compared to rounding), -1 if absent."""
    try:
        v = np.asarray(values, dtype=float)
        lv = np.asarray(levels, dtype=float)
    except (TypeError, ValueError):
        lookup = {}
        for k, lev in enumerate(np.asarray(levels, dtype=object).tolist()):
            lookup.setdefault(lev, k)
        return np.array([lookup.get(x, -1) for x in np.asarray(values, dtype=object).tolist()],
                        dtype=np.int64)
    tol = 1e-9 * (1.0 + np.abs(lv))
    match = np.abs(v[:, None] - lv[None, :]) <= tol[None, :]
    return np.where(match.any(axis=1), match.argmax(axis=1), -1)


def _resolve_raw(X_raw, feature):
    """Name (frame) or position (array) of the raw column ``feature``, or a clear error."""
    if isinstance(feature, (list, tuple, np.ndarray)):
        raise ValueError(
            "sensitive_features: through a pipeline the attribute is one raw input column "
            f"(a name or position of the audited table); got {feature!r}.")
    if is_frame(X_raw):
        cols = [str(c) for c in X_raw.columns]
        if isinstance(feature, str):
            if feature not in X_raw.columns:
                raise ValueError(
                    f"sensitive_features: {feature!r} is not a raw input column of the "
                    f"audited pipeline; its columns are {cols}.")
            return feature
        if isinstance(feature, (Integral, np.integer)) and not isinstance(feature, bool) \
                and 0 <= int(feature) < len(cols):
            return X_raw.columns[int(feature)]
        raise ValueError(f"sensitive_features: {feature!r} is not a raw input column of "
                         f"the audited pipeline; its columns are {cols}.")
    n_features = np.shape(X_raw)[1]
    if isinstance(feature, (Integral, np.integer)) and not isinstance(feature, bool) \
            and 0 <= int(feature) < n_features:
        return int(feature)
    raise ValueError(
        f"sensitive_features: {feature!r} is not a raw input column of the audited "
        f"pipeline, whose input has {n_features} unnamed columns; pass a position in "
        f"0..{n_features - 1} (or audit a DataFrame to use names).")


def _levels_of(values, candidates, where):
    """``(levels, truth of every row)`` of a raw column from its values."""
    if candidates is None:
        uniq = list(dict.fromkeys(values.tolist()))
        try:
            uniq = sorted(uniq)
        except TypeError:
            pass
        levels = np.asarray(uniq, dtype=object)
        if len(levels) > _MAX_LEVELS:
            raise ValueError(
                f"{where} takes {len(levels)} distinct values in the training rows: too "
                "many to be read as the levels of an attribute. Pass candidates (e.g. a "
                "grid containing every value).")
    else:
        levels = np.asarray(candidates, dtype=object).ravel()
        if np.unique(_as_levels(levels, levels)).size != len(levels):
            raise ValueError("candidates contains duplicate levels; pass each level once.")
    if len(levels) < 2:
        raise ValueError("An attribute needs at least two candidate values to be inverted; "
                         "when the attacked rows show fewer, pass candidates= with "
                         "every possible level.")
    truth = _as_levels(values, levels)
    if np.any(truth < 0):
        bad = np.flatnonzero(truth < 0)[:5]
        raise ValueError(
            f"Training rows {bad.tolist()} have values of {where} that are not among the "
            f"candidates ({values[bad].tolist()}); pass every value taken in the training "
            "rows in candidates.")
    return levels, truth


def _setup(audited, sensitive_features, candidates):
    """``(encode, candidates, levels, truth_all)``.

    ``encode(idx, c)`` gives the network's input rows of the training rows ``idx`` with
    the attribute set to candidate ``c`` (through the fitted preprocessing).
    """

    obj = audited._state()
    X_raw, steps = _raw_frame(audited)
    if steps is not None:
        feature = _resolve_raw(X_raw, sensitive_features)
        values = (X_raw[feature].to_numpy(dtype=object) if is_frame(X_raw)
                  else np.asarray(X_raw, dtype=object)[:, feature])
        if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values.tolist()):
            raise ValueError(f"The raw column {feature!r} has missing values; the "
                             "attacked attribute must be known for every training row.")
        levels, truth_all = _levels_of(values, candidates, f"the raw column {feature!r}")

        def encode(idx, c):
            rows = _set_feature(take_rows(X_raw, idx), feature, levels[c])
            try:
                T = steps.transform(rows)
            except (ValueError, TypeError, KeyError) as exc:
                raise ValueError(
                    f"candidates: the level {levels[c]!r} of {feature!r} cannot be pushed "
                    f"through the pipeline's preprocessing ({exc}).") from exc
            T = T.toarray() if hasattr(T, "toarray") else T
            return np.asarray(T, dtype=np.float64)

        return encode, levels, levels, truth_all
    # the network's own input columns (no preprocessing)
    names = list(audited._coordinate_names)
    items = ([sensitive_features] if isinstance(sensitive_features, (str, Integral))
             else list(sensitive_features))
    cols = []
    for item in items:
        if isinstance(item, str) and item in names:
            cols.append(names.index(item))
        elif isinstance(item, (Integral, np.integer)) and not isinstance(item, bool) \
                and 0 <= int(item) < obj.d:
            cols.append(int(item))
        else:
            raise ValueError(
                f"sensitive_features: {item!r} is not an input column of the audited "
                f"network; use names {names[:10]}{'...' if len(names) > 10 else ''} or "
                f"positions 0..{obj.d - 1}.")
    cols = np.asarray(cols, dtype=int)
    if not items or np.unique(cols).size != cols.size:
        raise ValueError("sensitive_features must name distinct input columns.")
    values = obj.X[:, cols]
    if candidates is None:
        cand = np.unique(values, axis=0)
        if len(cand) > _MAX_LEVELS:
            raise ValueError(
                f"columns {cols.tolist()} take {len(cand)} distinct values in the training "
                "rows: too many to be read as the levels of an attribute. Pass candidates.")
    else:
        cand = np.asarray(candidates, dtype=object)
        cand = cand[:, None] if cand.ndim == 1 and cols.size == 1 else cand
    cand = _check_candidates(cand, cols.size)
    truth_all = _match(values, cand)

    def encode(idx, c):
        T = obj.X[idx].copy()
        T[:, cols] = cand[c]
        return T

    return encode, cand, None, truth_all


# ------------------------------------------------------------------ candidate minimisers
def _replaced(obj, i, x):
    """The audited objective with row ``i``'s network input set to ``x``."""
    X = obj.X.copy()
    X[i] = x
    return MLPObjective(obj.units, obj.activation, obj.out, obj.alpha, X, obj.Y, obj.w)


def row_gradients(obj, theta, X, Y):
    """Gradient of each row's loss ``l(z_i, y_i)`` at ``theta``, shape (len(X), p).

    Back-propagation kept per row (no penalty, no weights): ``dl/dz = out(z) - y``, then
    ``dl/dW_l = h_l^T delta_l`` and ``dl/db_l = delta_l`` row by row.
    """
    Ws, bs = obj.unpack(theta)
    hs, ders, acts = obj._forward(Ws, bs, np.asarray(X, dtype=np.float64))
    delta = obj._output(acts[-1]) - Y
    m = delta.shape[0]
    gW, gb = [None] * obj.L, [None] * obj.L
    for layer in range(obj.L - 1, -1, -1):
        gW[layer] = (hs[layer][:, :, None] * delta[:, None, :]).reshape(m, -1)
        gb[layer] = delta
        if layer > 0:
            delta = (delta @ Ws[layer].T) * ders[layer][0]
    return np.concatenate(gW + gb, axis=1)


def _certify_dense(obj, theta, Z):
    lam = linalg.eigvalsh(Z.T @ obj.hessian(theta) @ Z)
    return float(lam[0]), float(lam[-1])


def _certify_operator(obj, theta, project, U):
    def hop(v):
        return project(obj.hvp(theta, project(np.ravel(v))))

    op = LinearOperator((obj.p, obj.p), dtype=float, matvec=hop)
    lmax = float(eigsh(op, k=1, which="LA", tol=1e-6, return_eigenvectors=False)[0])

    def flip(v):  # lmax I - H on the complement of the gauge, 0 on the gauge
        v = np.ravel(v)
        return lmax * project(v) - hop(v)

    top = float(eigsh(LinearOperator((obj.p, obj.p), dtype=float, matvec=flip), k=1,
                      which="LA", tol=1e-10, ncv=min(obj.p, 60), maxiter=20 * obj.p,
                      return_eigenvectors=False)[0])
    return lmax - top, lmax


def mlp_candidate_minimisers(audited, sensitive_features, candidates=None, *, rows=None,
                             method="newton"):
    """Candidate minimisers of an audited MLP (see :class:`MLPCandidates`).

    Parameters
    ----------
    audited : AuditedMLP
        The result of :func:`sklearn_privacy.fil.audit` on an MLP or a pipeline ending in
        one (audit state in memory).
    sensitive_features : str, int or list
        Through a pipeline: one raw input column (name or position), e.g. ``"race"`` of
        a raw frame; its candidates are raw levels, pushed through the fitted
        preprocessing row by row. Without preprocessing: the network's input column(s) by
        name or position (a one-hot block is a list), candidates being rows of values.
    candidates : array-like, default=None
        Possible values (default: the distinct values of the training rows, at most 64).
        Every training row's value must be among them (a numeric column: pass a grid
        holding every value taken).
    rows : None, int, array-like of int or boolean mask, default=None
        Attacked training rows (``None``: all).
    method : {"newton", "first_order"}, default="newton"
        ``"newton"``: warm-started Newton refit from the audited minimum with the exact
        Hessian, to gradient norm ``MLP_GTOL``, each candidate minimum certified (an
        uncertified one raises :class:`~sklearn_privacy.exceptions.UncertifiedMinimumError`).
        ``"first_order"``: the implicit-function-theorem step
        ``theta* - H^{-1} G_i^T (x_c - x_i)`` in the network's input features, an
        approximation (``approximate=True``), no refit.

    Returns
    -------
    result : MLPCandidates
    """
    if not isinstance(audited, AuditedMLP):
        raise TypeError(f"audited must be the result of fil.audit on an MLP; got "
                        f"{type(audited).__name__}.")
    check_choice(method, ("newton", "first_order"), "method")
    return _minimisers(audited, _setup(audited, sensitive_features, candidates), rows,
                       method)


def _minimisers(audited, setup, rows, method):
    obj = audited._state()
    theta = audited._theta
    encode, cand, levels, truth_all = setup
    idx = resolve_rows(rows, obj.n)
    if idx.size == 0:
        raise ValueError("rows selects no training row; pass at least one row to attack.")
    truth = truth_all[idx]
    n_c = len(cand)
    m = idx.size
    out = np.repeat(theta[None, None, :], m, axis=0).repeat(n_c, axis=1)
    gnorms = np.full((m, n_c), np.nan)
    lmins = np.full((m, n_c), np.nan)
    steps = np.zeros((m, n_c), dtype=int)
    X_true = obj.X[idx]
    inputs = [encode(idx, c) for c in range(n_c)]
    for c in range(n_c):
        own = truth == c
        if not np.allclose(inputs[c][own], X_true[own], rtol=1e-9, atol=1e-12):
            raise ValueError(
                "The preprocessing does not reproduce the audited network's inputs for "
                "rows with their own value of the attribute; the audit and the raw rows "
                "disagree.")
    U = _gauge(obj)

    def project(V):
        return V - U @ (U.T @ V) if U.shape[1] else V

    if method == "first_order":
        # the change of the row's share of the gradient at theta*, one Newton step
        scale = (obj.w[idx] / obj.wsum)[:, None]
        g_true = row_gradients(obj, theta, X_true, obj.Y[idx])
        V = np.stack([scale * (row_gradients(obj, theta, inputs[c], obj.Y[idx]) - g_true)
                      for c in range(n_c)], axis=1)           # (m, C, p)
        flat = V.reshape(-1, obj.p).T
        if audited.hessian_ == "dense":
            Z, Qc, lam = audited._Z, audited._Qc, audited._lam
            sol = Z @ (Qc @ ((Qc.T @ (Z.T @ flat)) / lam[:, None]))
        else:
            sol = _block_cg(audited._hop, flat, audited._project)
        out = theta[None, None, :] - sol.T.reshape(m, n_c, obj.p)
        out[np.arange(m), truth] = theta
        return MLPCandidates(out, truth, cand, levels, idx, truth_all, method, True,
                             gnorms, lmins, steps)
    dense = audited.hessian_ == "dense"
    Z = audited._Z if dense else None
    for k, i in enumerate(idx):
        for c in range(n_c):
            if c == truth[k]:
                continue
            obj_c = _replaced(obj, i, inputs[c][k])
            if dense:
                th, g, n_steps, _ = _newton_dense(obj_c, theta, U, Z)
            else:
                th, g, n_steps = _newton_operator(
                    obj_c, theta, lambda t, o=obj_c: (lambda V: o.hvp(t, V)), project)
            gn = float(np.linalg.norm(g))
            what = (f"row {int(i)} with the attribute set to "
                    f"{(levels[c] if levels is not None else cand[c].tolist())!r}")
            if gn > MLP_GTOL:
                raise UncertifiedMinimumError(
                    f"The candidate minimum of {what}: the Newton refit from the audited "
                    f"minimum stopped at gradient norm {gn:.3g} > {MLP_GTOL:g}; no "
                    "certified minimum in its basin.")
            lmin, lmax = (_certify_dense(obj_c, th, Z) if dense
                          else _certify_operator(obj_c, th, project, U))
            if not lmin > MLP_EIG_RTOL * lmax:
                raise UncertifiedMinimumError(
                    f"The candidate minimum of {what} is not a strict local minimum: the "
                    f"exact Hessian there has smallest eigenvalue {lmin:.6g} (largest "
                    f"{lmax:.6g}); the white-box likelihood of that candidate is "
                    "undefined.", smallest_eigenvalue=lmin)
            out[k, c] = th
            gnorms[k, c], lmins[k, c], steps[k, c] = gn, lmin, n_steps
    return MLPCandidates(out, truth, cand, levels, idx, truth_all, method, False,
                         gnorms, lmins, steps)


# ------------------------------------------------------------------ the decision rule
def decide(theta, thetas, truth, truth_all, sigma, *, prior, calibrate, n_draws, released,
           rng):
    """Predicted candidate of each attacked row: the rule of the linear models' attack.

    ``argmax_c log p(c) - beta_i ||w' - theta_c||^2 / (2 sigma^2)``, ``beta_i = 1`` unless
    a prior is calibrated (cross-fitted on the other attacked rows). ``released`` (p,) is
    one release; otherwise ``n_draws`` releases ``theta + sigma z`` are simulated (the
    draws first, then the calibration's, from ``rng``).

    Returns
    -------
    preds : ndarray of int of shape (n_releases, n_rows)
    """
    p = _prior(prior, truth_all, thetas.shape[1])
    if released is not None:
        Z = ((released - theta) / sigma)[None, :]
    else:
        Z = rng.standard_normal((n_draws, theta.size))
    return _map_predictions(theta, thetas, truth, p, sigma, Z,
                            calibrate=prior is not None and calibrate, rng=rng)


def _released_vector(released, audited):
    """Parameters of a release: a vector, or a released MLP / pipeline ending in one."""
    theta = audited._theta
    _, model = split_mlp_pipeline(released)
    if model is not None:
        if not hasattr(model, "coefs_"):
            raise ValueError("released: the MLP is not fitted.")
        vec = np.concatenate([np.ravel(W) for W in model.coefs_]
                             + [np.ravel(b) for b in model.intercepts_])
    else:
        try:
            vec = np.asarray(released, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("released must be a released MLP (audit.release()), a pipeline "
                            "ending in one, or its parameter vector.") from None
    if vec.shape != theta.shape:
        raise ValueError(f"released must have {theta.size} parameters (scikit-learn's "
                         f"packing of coefs_ then intercepts_); got shape {vec.shape}.")
    if not np.all(np.isfinite(vec)):
        raise ValueError("released contains NaN or infinity; pass finite parameters.")
    return vec.astype(float)


def mlp_whitebox_inversion(audited, sensitive_features, candidates=None, *, rows=None,
                           prior=None, calibrate=True, n_draws=None, released=None,
                           method="newton", random_state=None):
    """White-box attribute inversion of an audited MLP's noisy release.

    See the module docstring for the threat model. ``released`` (a released model from
    ``audited.release()``, a pipeline ending in one, or its parameter vector) is attacked
    when given; otherwise ``n_draws`` releases ``theta* + N(0, sigma^2 I)`` with the
    audit's ``sigma`` are simulated. The other parameters are those of
    :func:`mlp_candidate_minimisers` and of
    :func:`sklearn_privacy.attacks.whitebox_inversion`.

    Returns
    -------
    result : AttributeInversionResult
        ``candidates`` (and ``levels``) are the raw levels through a pipeline, encoded rows
        otherwise.
    """
    check_choice(method, ("newton", "first_order"), "method")
    calibrate = check_bool(calibrate, "calibrate")
    if n_draws is not None:
        n_draws = check_positive_int(n_draws, "n_draws")
    if released is None and n_draws is None:
        raise ValueError(
            "An MLP audit holds no release: pass released= (the model returned by "
            "audit.release(), or its parameter vector) or n_draws= to simulate releases "
            "with the audit's sigma.")
    rng = noise_generator(random_state)
    vec = None if released is None else _released_vector(released, audited)
    setup = _setup(audited, sensitive_features, candidates)
    _prior(prior, setup[3], len(setup[1]))  # a bad prior is refused before the refits
    res = _minimisers(audited, setup, rows, method)
    preds = decide(audited._theta, res.thetas, res.truth, res.truth_all,
                   float(audited.sigma), prior=prior, calibrate=calibrate,
                   n_draws=n_draws, released=vec, rng=rng)
    return AttributeInversionResult.from_predictions(preds, res.truth, res.candidates,
                                                     res.levels)


# ------------------------------------------------------------------ public entry points
_METHODS = {"auto": "newton", "refit": "newton", "newton": "newton",
            "first_order": "first_order"}


def _dispatch_method(method, X, audited):
    if method == "woodbury":
        raise ValueError(
            "method='woodbury' is the linear models' rank-2 Newton update; an MLP's "
            "candidates are certified Newton refits (method='auto' or 'refit') or the "
            "first-order approximation (method='first_order').")
    check_choice(method, tuple(_METHODS), "method")
    if X is not None and np.shape(X)[0] != audited._state().n:
        raise ValueError(
            f"X: the MLP audit holds its {audited._state().n} training rows (the raw rows "
            "through the pipeline included); X (not needed) has a different number of rows.")
    return _METHODS[method]


def audited_candidate_minimisers(audited, sensitive_features, candidates, *, rows, method,
                                 X):
    """``candidate_minimisers`` of an MLP audit: ``(thetas, truth, candidates)``."""
    res = mlp_candidate_minimisers(audited, sensitive_features, candidates, rows=rows,
                                   method=_dispatch_method(method, X, audited))
    return res.thetas, res.truth, res.candidates


def audited_whitebox_inversion(audited, sensitive_features, candidates, *, rows, prior,
                               calibrate, n_draws, released, method, X, random_state):
    """``whitebox_inversion`` of an MLP audit."""
    return mlp_whitebox_inversion(
        audited, sensitive_features, candidates, rows=rows, prior=prior,
        calibrate=calibrate, n_draws=n_draws, released=released,
        method=_dispatch_method(method, X, audited), random_state=random_state)
