"""White-box attribute inversion of a FIL estimator (the FIL paper's threat model).

The black-box attacks are in ``_blackbox_inversion``, the numeric attack in
``_numeric_inversion``, what the attacks share in ``_attribute`` and ``_map_rule``; their
public names stay importable from here (pickles of the results name this module).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp

from .._glm._core import augment, fit_minimiser
from .._glm._multinomial import fit_multinomial, one_hot
from ..fil._audits._pipeline import final_fil_estimator
from ..utils import noise_generator, resolve_columns
from ..utils._pipeline import feature_columns
from ..utils._progress import run_tasks
from ..utils._validation import errors_name
from ..utils.fixes import HasMethods, NumberInterval, StrOptions, validate_params
from ._attribute import (
    AttributeInversionResult,
    _check_candidates,
    _encoded_setup,
    _is_scalar_column,
    _match,
    _prior,
    _set_feature,
)
from ._blackbox_inversion import fredrikson_inversion, prior_baseline
from ._map_rule import _map_predictions
from ._mlp_inversion import (
    audited_candidate_minimisers,
    audited_whitebox_inversion,
    check_mlp_target,
)
from ._numeric_inversion import NumericInversionResult, regression_inversion
from ._validation import check_target, n_rows, resolve_rows, take_rows

__all__ = [
    "AttributeInversionResult",
    "NumericInversionResult",
    "candidate_minimisers",
    "fredrikson_inversion",
    "prior_baseline",
    "regression_inversion",
    "whitebox_inversion",
]


def _check_fil_estimator(estimator):
    """``(preprocessing steps, final FIL estimator, audit engine)``."""
    steps, final = final_fil_estimator(estimator, "The white-box attack",
                                       " (it replays the training objective)")
    if final._penalised_intercept():
        raise ValueError(
            "The white-box attack does not support a FIL model fitted with "
            "intercept_scaling (its training objective has a constant column); attack a "
            "model with intercept_scaling=None, or fit_intercept=False and the constant "
            "column in X.")
    return steps, final, final._audit_engine()


def _transform(steps, X):
    for step in steps:
        X = step.transform(X)
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def _push_levels(steps, X, feature, levels, cols):
    """Encoded candidates: each level pushed through the preprocessing ``steps``.

    Transforms reference rows of ``X`` with the feature set to every level; the derived
    columns must not depend on the other features of the row, and the other columns must
    not depend on the level.
    """
    if X is None:
        raise ValueError(
            "candidates given as levels of the original feature need X: raw rows in the "
            "pipeline's input (e.g. the training frame) through which the levels are pushed."
        )
    n = n_rows(X)
    if n == 0:
        raise ValueError("X is empty; pass raw rows of the pipeline's input.")
    ref = take_rows(X, np.arange(min(n, 8)))
    blocks, rests = [], []
    for level in levels:
        try:
            T = _transform(steps, _set_feature(ref, feature, level))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(
                f"candidates: the level {level!r} of feature {feature!r} cannot be pushed "
                f"through the pipeline ({exc})."
            ) from exc
        block = T[:, cols]
        if not np.allclose(block, block[:1], rtol=1e-9, atol=1e-12):
            raise ValueError(
                f"The columns derived from feature {feature!r} depend on other features of "
                "the row (their transformed value differs between rows with the same level); "
                "the attribute cannot be inverted column-wise through this pipeline."
            )
        blocks.append(block[0])
        rests.append(np.delete(T, cols, axis=1))
    for rest in rests[1:]:
        if not np.allclose(rest, rests[0], rtol=1e-9, atol=1e-12, equal_nan=True):
            raise ValueError(
                f"Changing feature {feature!r} changes columns outside the ones traced to it; "
                "the attribute cannot be inverted through this pipeline."
            )
    return np.vstack(blocks)


def _whitebox_attribute(estimator, sensitive_features, candidates, X):
    """``(steps, final, engine, cols, candidates, truth_all, levels)`` for the white box."""
    steps, final, engine = _check_fil_estimator(estimator)
    levels = None
    if steps and _is_scalar_column(sensitive_features):
        feature = sensitive_features
        with errors_name("sensitive_features"):
            cols = feature_columns(estimator, feature)
        values = engine.dense_columns(cols)
        if candidates is None:
            cand, truth = _encoded_setup(values, None, cols, require_onehot=False)
        else:
            levels = np.asarray(candidates, dtype=object).ravel()
            if len(levels) < 2:
                raise ValueError("An attribute needs at least two candidate values; pass "
                                 "candidates= with every possible level.")
            cand = _check_candidates(_push_levels(steps, X, feature, levels, cols), cols.size)
            truth = _match(values, cand)
        return steps, final, engine, cols, cand, truth, levels
    cols = resolve_columns(sensitive_features, engine.d,
                           getattr(final, "feature_names_in_", None),
                           param="sensitive_features")
    cand, truth = _encoded_setup(engine.dense_columns(cols), candidates, cols)
    return steps, final, engine, cols, cand, truth, levels


def _check_raw_rows(X, y):
    """``X, y`` of the white-box functions: optional raw rows, ``y`` only with ``X``."""
    if y is None:
        return
    if X is None:
        raise ValueError("y is given without X; pass X, the raw rows y labels, or neither.")
    check_target(y, n_rows(X))


def _check_glm_method(method):
    if method == "first_order":
        raise ValueError(
            "method='first_order' is the one-step approximation of an MLP audit's "
            "candidate minimisers; for a FIL estimator use method='woodbury' (one Newton "
            "step with a Woodbury update, exact for least squares) or 'refit'.")


@validate_params(
    {
        "X": ["array-like", "sparse matrix", None],
        "y": ["array-like", None],
        "sensitive_features": [Integral, str, "array-like"],
        "candidates": ["array-like", None],
        "rows": [Integral, "array-like", None],
        "method": [StrOptions({"auto", "woodbury", "refit", "first_order"})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def candidate_minimisers(estimator, X=None, y=None, *, sensitive_features, candidates=None,
                         rows=None, method="auto", n_jobs=None, verbose=0):
    """Minimiser of the training objective with row ``i``'s attribute set to each candidate.

    Parameters
    ----------
    estimator : fitted FIL estimator, a Pipeline ending in one, or an MLP audit
        The fitted model that is attacked or audited (audit state available). An MLP
        audit (:func:`~sklearn_privacy.fil.audit` of an ``MLPClassifier`` /
        ``MLPRegressor`` or a pipeline ending in one) gives certified Newton refits
        warm-started at the audited minimum (``method="auto"`` or ``"refit"``) or their
        first-order approximation (``method="first_order"``, one Newton step from it);
        the attribute is then a raw input column (its candidates raw levels, or a numeric
        grid holding every training value) and the candidates returned are those levels.
    X : array-like or DataFrame of shape (n_samples, n_features), default=None
        Raw rows in the pipeline's input (any rows with valid values, e.g. the training
        frame): needed only when ``candidates`` are levels of an original feature. Each
        level is set in a few of these rows and transformed; the derived columns must not
        depend on the rest of the row (checked). The attacked rows themselves are the
        estimator's training rows (its audit state), selected by ``rows``.
    y : array-like of shape (n_samples,), default=None
        Labels of ``X``. Not used by the attack: the audit state holds the training
        labels. Accepted (and checked against ``X``) so that every attack function reads
        ``(estimator, X, y)``.
    sensitive_features : int, str or array-like of int / str
        The attribute. Integer indices or names (``feature_names_in_``) of the columns the
        FIL estimator sees: a binary column or a one-hot block. Through a
        :class:`~sklearn.pipeline.Pipeline` a single name (or position) is an
        **original input feature** (e.g. ``"race"`` of the raw frame): its derived columns
        are found with :func:`sklearn_privacy.utils.feature_columns`; pass a list to
        address the final step's columns instead.
    candidates : array-like, default=None
        Possible values of the attribute. For encoded columns: shape
        (n_candidates, len(columns)); default the distinct values in the data (which must
        be 0/1 one-hot). For an original feature through a pipeline: its levels in the
        original space (e.g. ``["Black", "White"]``), pushed through the preprocessing
        steps with ``X``; default the distinct values its derived columns take in the
        training data (at most 64).
    rows : int, array-like of int or array-like of bool of shape (n_samples,), default=None
        Attacked training rows: integer positions (negative ones count from the end),
        kept in the order given (duplicates kept), or a mask over the training rows.
        ``None`` attacks every training row.
    method : {"auto", "woodbury", "refit", "first_order"}, default="auto"
        ``"woodbury"``: one Newton step from the exact minimiser, with the candidate's
        Hessian obtained by a rank-2 Woodbury update of ``H^-1`` -- no refit, O(p^2) per
        row and candidate after one GEMM. For least squares the objective is quadratic and
        the step is the exact candidate minimiser. For logistic regression the step is
        Newton's first iterate from a point whose gradient is the change of one example's
        gradient; its error is second order in the parameter shift: 6e-4 of the shift on
        IWPC (3,855 rows), 4% on a 150-row toy problem, with identical attack predictions
        in both (tested).
        ``"refit"``: refit the exact minimiser for every (row, candidate), warm-started
        (slow; the reference). ``"auto"``: ``"woodbury"``, except for a multinomial
        model (more than two classes), whose candidates are always exact refits
        (``"woodbury"`` is refused for it).
        ``"first_order"``: an MLP audit only (one Newton step from the audited minimum;
        an approximation, flagged as such).
    n_jobs : int or None, default=None
        Exact refits of a FIL estimator (``method="refit"``, or a multinomial model) run
        through :class:`joblib.Parallel`, one task per (row, candidate); the result does
        not depend on ``n_jobs``.
    verbose : int, default=0
        ``1``: ``[candidate_minimisers] done k of N exact refits`` about ten times; ``2``:
        after every refit.

    Returns
    -------
    thetas : ndarray of shape (n_rows, n_candidates, p)
        ``thetas[k, c]``: the minimiser of the training objective with the attribute of
        the ``k``-th attacked row set to candidate ``c`` (the coefficients, then the
        intercept if the model fits one). The entry of the row's true candidate is the
        fitted minimiser itself.
    truth : ndarray of shape (n_rows,)
        Index of each row's true candidate.
    candidates : ndarray of shape (n_candidates, n_attribute_columns)
        Encoded candidates (values of the final step's attribute columns).

    Raises
    ------
    TypeError
        The final estimator is not a FIL estimator.
    ValueError
        Unknown ``sensitive_features``, candidates that miss a level present in the data,
        rows out of range, a pipeline step whose derivation cannot be traced.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import candidate_minimisers
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(50, 2)), rng.randint(0, 2, size=50)])
    >>> y = X @ [1.0, -1.0, 2.0] + 0.1 * rng.normal(size=50)
    >>> reg = FILLinearRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y)
    >>> fast, truth, cand = candidate_minimisers(reg, sensitive_features=[2], rows=[0, 1])
    >>> slow, _, _ = candidate_minimisers(reg, sensitive_features=[2], rows=[0, 1],
    ...                                   method="refit")
    >>> fast.shape, bool(np.allclose(fast, slow, rtol=1e-10, atol=1e-12))
    ((2, 2, 4), True)
    """
    _check_raw_rows(X, y)
    audited = check_mlp_target(estimator, "candidate_minimisers")
    if audited is not None:
        return audited_candidate_minimisers(audited, sensitive_features, candidates,
                                            rows=rows, method=method, X=X)
    _check_glm_method(method)
    _, _, engine, cols, candidates, truth_all, _ = _whitebox_attribute(
        estimator, sensitive_features, candidates, X)
    return _candidate_minimisers(engine, cols, candidates, truth_all, rows, method, n_jobs,
                                 verbose)


def _refit_candidate(X, i, cols, candidate, fit):
    """The exact minimiser with row ``i``'s attribute columns set to ``candidate``."""
    Xc = X.copy()
    Xc[i, cols] = candidate
    kw = dict(alpha=fit["alpha"], fit_intercept=fit["fit_intercept"],
              sample_weight=fit["sample_weight"], theta_init=fit["theta_init"], tol=1e-14)
    if fit["K"] is not None:
        return fit_multinomial(Xc, one_hot(fit["y"].astype(np.intp), fit["K"]), **kw)[0]
    return fit_minimiser(Xc, fit["y"], loss=fit["loss"], **kw)[0]


def _candidate_minimisers(engine, cols, candidates, truth_all, rows, method, n_jobs=None,
                          verbose=0):
    y, theta = engine.y, engine.theta
    idx = resolve_rows(rows, engine.n)
    truth = truth_all[idx]
    n_c, p = len(candidates), engine.p
    out = np.empty((idx.size, n_c, p))
    multinomial = getattr(engine, "K", 2) > 2
    if multinomial and method == "woodbury":
        raise ValueError(
            "method='woodbury' covers the binary and least-squares models; a multinomial "
            "(more than two classes) model's candidates are exact refits: use "
            "method='refit' or 'auto'."
        )
    if method == "refit" or multinomial:
        X = engine.dense_rows(np.arange(engine.n))
        pairs = [(k, c) for k in range(idx.size) for c in range(n_c) if c != truth[k]]
        fit = dict(y=y, alpha=engine.alpha, fit_intercept=engine.fit_intercept,
                   sample_weight=engine.omega, theta_init=theta,
                   K=engine.K if multinomial else None, loss=getattr(engine, "loss", None))
        thetas = run_tasks(_refit_candidate,
                           [(X, int(idx[k]), cols, candidates[c], fit) for k, c in pairs],
                           n_jobs=n_jobs, verbose=verbose, who="candidate_minimisers",
                           unit="exact refits")
        out[np.arange(idx.size), truth] = theta
        for (k, c), theta_c in zip(pairs, thetas, strict=True):
            out[k, c] = theta_c
        return out, truth, candidates
    loss, H_inv, om = engine.loss, engine.H_inv, engine.omega[idx]
    X_idx = engine.dense_rows(idx)
    Xi = augment(X_idx, engine.fit_intercept)
    A = Xi @ H_inv                       # a_i = H^-1 x_i
    B = H_inv[:, cols]                   # H^-1 E_A
    zi = Xi @ theta
    l1_i, l2_i, _ = loss.derivatives(zi, y[idx])
    xa = np.einsum("ij,ij->i", Xi, A)
    for c in range(n_c):
        delta = candidates[c][None, :] - X_idx[:, cols]      # (m, k)
        Xc = Xi.copy()
        Xc[:, cols] = candidates[c][None, :]
        U = A + delta @ B.T                                  # H^-1 x_c
        zc = Xc @ theta
        l1_c, l2_c, _ = loss.derivatives(zc, y[idx])
        # H^-1 g with g = omega (l'_c x_c - l'_i x_i) the gradient at theta of the new objective
        Hg = om[:, None] * (l1_c[:, None] * U - l1_i[:, None] * A)
        g11 = np.einsum("ij,ij->i", Xc, U)                   # x_c' H^-1 x_c
        g12 = np.einsum("ij,ij->i", Xc, A)                   # x_c' H^-1 x_i
        g22 = xa                                             # x_i' H^-1 x_i
        c1, c2 = om * l2_c, -om * l2_i                       # C = diag(c1, c2)
        t1 = np.einsum("ij,ij->i", Xc, Hg)
        t2 = np.einsum("ij,ij->i", Xi, Hg)
        # (I + C G) s = C t, G = [[g11, g12], [g12, g22]]
        m11, m12 = 1 + c1 * g11, c1 * g12
        m21, m22 = c2 * g12, 1 + c2 * g22
        r1, r2 = c1 * t1, c2 * t2
        det = m11 * m22 - m12 * m21
        s1 = (r1 * m22 - m12 * r2) / det
        s2 = (m11 * r2 - m21 * r1) / det
        step = Hg - s1[:, None] * U - s2[:, None] * A       # H_c^-1 g
        out[:, c] = theta[None, :] - step
        out[truth == c, c] = theta
    return out, truth, candidates


@validate_params(
    {
        "X": ["array-like", "sparse matrix", None],
        "y": ["array-like", None],
        "sensitive_features": [Integral, str, "array-like"],
        "candidates": ["array-like", None],
        "rows": [Integral, "array-like", None],
        "method": [StrOptions({"auto", "woodbury", "refit", "first_order"})],
        "prior": [StrOptions({"empirical"}), "array-like", None],
        "calibrate": ["boolean"],
        "n_draws": [NumberInterval(Integral, 1, None, closed="left"), None],
        "released": ["array-like", HasMethods(["predict"]), None],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def whitebox_inversion(estimator, X=None, y=None, *, sensitive_features, candidates=None,
                       rows=None, prior=None, calibrate=True, n_draws=None, released=None,
                       method="auto", n_jobs=None, verbose=0,
                       random_state=None) -> AttributeInversionResult:
    """White-box attribute inversion under the FIL threat model (FIL paper, eq. 30).

    The adversary knows every training value except the attribute of row ``i``, the
    training procedure and ``sigma``, and observes the released parameters
    :math:`w' = \\theta^* + \\mathcal N(0, \\sigma^2 I)`. It predicts the candidate ``c``
    maximising :math:`\\log p(c) - \\lVert w' - \\theta^*(D_c)\\rVert^2 / (2\\sigma^2)`:
    with ``prior=None`` (uniform) this is the paper's maximum-likelihood attack
    :math:`\\arg\\min_c \\lVert w' - \\theta^*(D_c)\\rVert`; with a prior it is the
    maximum a posteriori (MAP) attack.

    This is an audit tool: it uses the estimator's in-memory audit state (training data,
    exact minimiser, Hessian) to play the adversary. Through a pipeline, the adversary
    knows the fitted preprocessing (it is part of the released model) and attacks the
    FIL estimator's release; the attribute is an original input feature.

    Parameters
    ----------
    estimator : fitted FIL estimator, a Pipeline ending in one, or an MLP audit
        The fitted model that is attacked or audited. An MLP audit
        (:func:`~sklearn_privacy.fil.audit` of an ``MLPClassifier`` / ``MLPRegressor`` or a
        pipeline ending in one) is attacked under the audit's threat model: its certified
        minimum released with Gaussian noise of the audit's ``sigma``; the attribute is a
        raw input column, the candidate minimisers are those of
        :func:`candidate_minimisers`, and ``released`` (the model from
        ``audit.release()`` or its parameters) or ``n_draws`` is required.
    X : array-like or DataFrame of shape (n_samples, n_features), default=None
        Raw rows in the pipeline's input, needed only when ``candidates`` are levels of an
        original feature. See :func:`candidate_minimisers`.
    y : array-like of shape (n_samples,), default=None
        Labels of ``X``; not used (the audit state holds the training labels). See
        :func:`candidate_minimisers`.
    sensitive_features : int, str or array-like of int / str
        The attribute: a binary column or a one-hot block of the columns the FIL estimator
        sees (indices or names), or, through a pipeline, a single original input feature.
        See :func:`candidate_minimisers`.
    candidates : array-like, default=None
        Possible values of the attribute: encoded rows of shape
        (n_candidates, n_attribute_columns), or the levels of an original feature through a
        pipeline. ``None`` uses the distinct values in the training data. See
        :func:`candidate_minimisers`.
    rows : int, array-like of int or array-like of bool of shape (n_samples,), default=None
        Attacked training rows, in the order given (duplicates kept), or a mask over the
        training rows; ``None`` attacks every training row.
    prior : None, "empirical" or array-like of shape (n_candidates,), default=None
        Prior of the adversary; "empirical" = level frequencies in the training data
        (all rows, not only the attacked ones). ``None`` is uniform (maximum likelihood).
    calibrate : bool, default=True
        With a prior: scale the log-likelihood by a factor in [0, 1] chosen by
        cross-fitting on the other attacked rows (whose attributes this adversary knows),
        with 0 -- guessing the prior's mode -- among the choices (and kept unless another factor
        gives at least 0.5% more correct guesses on the other rows). The plain MAP rule is
        Bayes-optimal only if the prior is right for each row; attributes correlate with
        the other features, and on IWPC at sigma = 1e-2 the plain rule scores 0.357 against
        a prior baseline of 0.365. Calibrated, it stays at or above the baseline.
    n_draws : int or None, default=None
        ``None``: attack the actual release (``coef_``, ``intercept_``). An int >= 1:
        simulate that many independent releases :math:`\\theta^* + \\sigma z` (how the
        paper averages over noise); with ``sigma`` tiny this approaches the noiseless
        attack.
    released : array-like of shape (p,) or fitted model, default=None
        Attack these released parameters instead (coefficients then intercept). For an
        MLP audit, also the released model (``audit.release()`` or a pipeline ending in
        it).
    method : {"auto", "woodbury", "refit", "first_order"}, default="auto"
        How the candidate minimisers are computed: a Newton step with a Woodbury update
        (``"woodbury"``, also ``"auto"``; exact for least squares) or an exact refit per
        row and candidate (``"refit"``; ``"auto"`` for a multinomial model);
        ``"first_order"`` for an MLP audit only. See :func:`candidate_minimisers`.
    n_jobs, verbose : int or None, default=None and 0
        Parallel exact refits and their progress lines, as in
        :func:`candidate_minimisers` (a FIL estimator's refits only).
    random_state : int, RandomState, Generator or None, default=None
        Noise of the simulated releases and of the MAP calibration; ``None`` draws from
        fresh OS entropy (never numpy's global state).

    Returns
    -------
    result : :class:`AttributeInversionResult`
        Predicted attribute values of the attacked rows (per simulated release when the
        attack draws releases), with the true values and the accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import whitebox_inversion
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(200, 3)), rng.randint(0, 2, size=200)])
    >>> y = X @ [1.0, -1.0, 0.5, 2.0] + 0.1 * rng.normal(size=200)
    >>> reg = FILLinearRegression(sigma=1e-6, alpha=1e-2, random_state=0).fit(X, y)
    >>> whitebox_inversion(reg, sensitive_features=[3], n_draws=10, random_state=0).accuracy
    1.0
    """
    _check_raw_rows(X, y)
    audited = check_mlp_target(estimator, "The white-box attack")
    if audited is not None:
        return audited_whitebox_inversion(
            audited, sensitive_features, candidates, rows=rows, prior=prior,
            calibrate=calibrate, n_draws=n_draws, released=released, method=method, X=X,
            random_state=random_state)
    _check_glm_method(method)
    _check_released_parameters(released)
    rng = noise_generator(random_state)
    _, final, engine, cols, candidates, truth_all, levels = _whitebox_attribute(
        estimator, sensitive_features, candidates, X)
    if rows is not None and resolve_rows(rows, engine.n).size == 0:
        raise ValueError("rows selects no training row; pass at least one row to attack.")
    thetas, truth, candidates = _candidate_minimisers(engine, cols, candidates, truth_all,
                                                      rows, method, n_jobs, verbose)
    # prior from the whole training set, not only the attacked rows
    p = _prior(prior, truth_all, len(candidates))
    sigma = _gaussian_sigma(final)
    theta = engine.theta
    # one stream: the calibration's simulated releases follow (never repeat) the attacked ones
    Z = _standardised_releases(final, theta, sigma, released, n_draws, rng)
    preds = _map_predictions(theta, thetas, truth, p, sigma, Z,
                             calibrate=prior is not None and calibrate, rng=rng)
    return AttributeInversionResult.from_predictions(preds, truth, candidates, levels)


def _check_released_parameters(released):
    """``released`` of the GLM attack: parameters (checked later), never a model."""
    if released is not None and hasattr(released, "predict"):
        raise TypeError(
            "released must be the released parameters of the FIL estimator (coefficients, "
            "then the intercept), not a model; pass np.r_[model.coef_.ravel(), "
            "model.intercept_] (a released model is accepted for an MLP audit only).")


def _gaussian_sigma(final):
    """Noise scale of ``final``'s release, whose noise must be Gaussian (the likelihood)."""
    if final.__dict__.get("noise_", "gaussian") != "gaussian":
        raise ValueError(
            f"{type(final).__name__} released {final.noise_} noise; the white-box attack's "
            "likelihood is Gaussian. Attack a release with Gaussian noise (delta > 0).")
    return final._audit_sigma()


def _standardised_releases(final, theta, sigma, released, n_draws, rng):
    """``(w' - theta) / sigma`` of each attacked release, shape (n_releases, p).

    The given ``released`` parameters, else the estimator's own release when ``n_draws``
    is None, else ``n_draws`` simulated releases drawn from ``rng``.
    """
    if released is None and n_draws is not None:
        return rng.standard_normal((n_draws, theta.size))
    if released is None:
        released = final._released_theta()
    try:
        released = np.asarray(released, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("released must be an array of numbers.") from None
    if released.shape != theta.shape:
        raise ValueError(f"released must have shape {theta.shape}; got {released.shape}.")
    if not np.all(np.isfinite(released)):
        raise ValueError("released contains NaN or infinity; pass finite parameters.")
    return ((released - theta) / sigma)[None, :]
