"""Attribute inversion: white-box (FIL threat model), MAP, Fredrikson et al., prior baseline."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..fil._base import BaseFILEstimator
from ..fil._glm import augment, fit_minimiser


@dataclass
class AttributeInversionResult:
    """Predicted attribute level of every attacked row.

    ``predictions`` has shape (n_draws, n_rows) (one row per simulated release);
    ``accuracy`` is the mean over draws of the fraction of rows whose level is recovered;
    ``accuracy_per_row`` averages over draws.
    """

    predictions: np.ndarray = field(repr=False)
    truth: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)
    accuracy: float
    accuracy_per_row: np.ndarray = field(repr=False)

    @classmethod
    def from_predictions(cls, predictions, truth, candidates):
        """Score ``predictions`` (n_draws, n_rows) of candidate indices against ``truth``."""
        correct = predictions == truth[None, :]
        return cls(predictions=predictions, truth=truth, candidates=candidates,
                   accuracy=float(correct.mean()), accuracy_per_row=correct.mean(axis=0))


def _check_fil_estimator(estimator):
    if not isinstance(estimator, BaseFILEstimator):
        raise TypeError(
            "The white-box attack needs a fitted FIL estimator (FILLinearRegression, "
            "FILLogisticRegression or their IRFIL variants): it replays the training "
            f"objective. Got {type(estimator).__name__}."
        )
    return estimator._audit_engine()


def _reference_truth(X_prior, truth, columns, candidates):
    """Levels of the rows that define the prior: ``X_prior``, or the attacked rows."""
    if X_prior is None:
        return truth
    return _attribute_setup(np.asarray(X_prior, dtype=float), columns, candidates)[2]


def _attribute_setup(X, columns, candidates):
    cols = np.atleast_1d(np.asarray(columns))
    if cols.size == 0 or not np.issubdtype(cols.dtype, np.integer):
        raise ValueError(f"columns must be a non-empty list of integer indices; got {columns!r}.")
    if cols.min() < 0 or cols.max() >= X.shape[1]:
        raise ValueError(
            f"columns: index out of range for {X.shape[1]} features; got {cols.tolist()}."
        )
    values = X[:, cols]
    if candidates is None:
        if not (np.all((values == 0) | (values == 1)) and np.all(values.sum(axis=1) <= 1)):
            raise ValueError(
                f"columns {cols.tolist()} are not a binary column or a one-hot group (0/1 "
                "values, at most one 1 per row). Invert a binary or one-hot encoded "
                "attribute, or pass its possible values explicitly in candidates."
            )
        candidates = np.unique(values, axis=0)
    candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
    if candidates.shape[1] != cols.size:
        raise ValueError(
            f"candidates must have one column per attribute column ({cols.size}); got shape "
            f"{candidates.shape}."
        )
    if len(candidates) < 2:
        raise ValueError("An attribute needs at least two candidate values to be inverted.")
    match = np.all(values[:, None, :] == candidates[None, :, :], axis=2)
    if not np.all(match.any(axis=1)):
        bad = np.flatnonzero(~match.any(axis=1))[:5]
        raise ValueError(
            f"Rows {bad.tolist()} have attribute values that are not among the candidates; "
            "pass every possible level in candidates (for a one-hot block with a dropped "
            "level, include the all-zero row)."
        )
    return cols, candidates, match.argmax(axis=1)


def _prior(prior, truth, n_candidates):
    if prior is None:
        return np.full(n_candidates, 1.0 / n_candidates)
    if isinstance(prior, str):
        if prior != "empirical":
            raise ValueError(f"prior must be None, 'empirical' or an array; got {prior!r}.")
        counts = np.bincount(truth, minlength=n_candidates).astype(float)
        return counts / counts.sum()
    p = np.asarray(prior, dtype=float)
    if p.shape != (n_candidates,) or np.any(p < 0) or not np.isclose(p.sum(), 1):
        raise ValueError(
            f"prior must be {n_candidates} non-negative probabilities summing to 1; got {prior!r}."
        )
    return p


def candidate_minimisers(estimator, columns, candidates=None, *, rows=None, method="auto"):
    """Minimiser of the training objective with row ``i``'s attribute set to each candidate.

    Parameters
    ----------
    estimator : fitted FIL estimator (audit state available)
    columns : array-like of int
        The attribute's feature columns (a binary column or a one-hot block).
    candidates : array-like of shape (n_candidates, len(columns)), default=None
        Possible values of the attribute (default: the distinct values in the data).
    rows : array-like of int, default=None
        Attacked training rows (default: all).
    method : {"auto", "woodbury", "refit"}, default="auto"
        ``"woodbury"``: one Newton step from the exact minimiser, with the candidate's
        Hessian obtained by a rank-2 Woodbury update of ``H^-1`` -- no refit, O(p^2) per
        row and candidate after one GEMM. For least squares the objective is quadratic and
        the step is the exact candidate minimiser. For logistic regression the step is
        Newton's first iterate from a point whose gradient is the change of one example's
        gradient; its error is second order in the parameter shift: 6e-4 of the shift on
        IWPC (3,855 rows), 4% on a 150-row toy problem, with identical attack predictions
        in both (tested).
        ``"refit"``: refit the exact minimiser for every (row, candidate), warm-started
        (slow; the reference). ``"auto"``: ``"woodbury"``.

    Returns
    -------
    thetas : ndarray of shape (n_rows, n_candidates, p)
    truth : ndarray of shape (n_rows,)
        Index of each row's true candidate.
    candidates : ndarray of shape (n_candidates, len(columns))

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import candidate_minimisers
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(50, 2)), rng.randint(0, 2, size=50)])
    >>> y = X @ [1.0, -1.0, 2.0] + 0.1 * rng.normal(size=50)
    >>> reg = FILLinearRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y)
    >>> fast, truth, cand = candidate_minimisers(reg, [2], rows=[0, 1])
    >>> slow, _, _ = candidate_minimisers(reg, [2], rows=[0, 1], method="refit")
    >>> fast.shape, bool(np.allclose(fast, slow, rtol=1e-10, atol=1e-12))
    ((2, 2, 4), True)
    """
    engine = _check_fil_estimator(estimator)
    if method not in ("auto", "woodbury", "refit"):
        raise ValueError(f"method must be 'auto', 'woodbury' or 'refit'; got {method!r}.")
    X, y, theta = engine.X, engine.y, engine.theta
    cols, candidates, truth_all = _attribute_setup(X, columns, candidates)
    idx = engine._rows(rows)
    truth = truth_all[idx]
    n_c, p = len(candidates), engine.p
    out = np.empty((idx.size, n_c, p))
    if method == "refit":
        for k, i in enumerate(idx):
            for c in range(n_c):
                if c == truth[k]:
                    out[k, c] = theta
                    continue
                Xc = X.copy()
                Xc[i, cols] = candidates[c]
                out[k, c], _ = fit_minimiser(
                    Xc, y, loss=engine.loss, alpha=engine.alpha,
                    fit_intercept=engine.fit_intercept, sample_weight=engine.omega,
                    theta_init=theta, tol=1e-14,
                )
        return out, truth, candidates
    loss, H_inv, om = engine.loss, engine.H_inv, engine.omega[idx]
    Xi = augment(X[idx], engine.fit_intercept)
    A = Xi @ H_inv                       # a_i = H^-1 x_i
    B = H_inv[:, cols]                   # H^-1 E_A
    zi = Xi @ theta
    l1_i, l2_i, _ = loss.derivatives(zi, y[idx])
    xa = np.einsum("ij,ij->i", Xi, A)
    for c in range(n_c):
        delta = candidates[c][None, :] - X[idx][:, cols]    # (m, k)
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


def whitebox_inversion(estimator, columns, candidates=None, *, rows=None, prior=None,
                       calibrate=True, n_draws=None, released=None, method="auto",
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
    exact minimiser, Hessian) to play the adversary.

    Parameters
    ----------
    estimator : fitted FIL estimator
    columns, candidates, rows, method
        See :func:`candidate_minimisers`.
    prior : None, "empirical" or array-like of shape (n_candidates,)
        Prior of the adversary; "empirical" = level frequencies in the training data.
    calibrate : bool, default=True
        With a prior: scale the log-likelihood by a factor in [0, 1] chosen by
        cross-fitting on the other attacked rows (whose attributes this adversary knows),
        with 0 -- guessing the prior's mode -- among the choices (and kept unless another factor
        gives at least 0.5% more correct guesses on the other rows). The plain MAP rule is
        Bayes-optimal only if the prior is right for each row; attributes correlate with
        the other features, and on IWPC at sigma = 1e-2 the plain rule scores 0.357 against
        a prior baseline of 0.365. Calibrated, it stays at or above the baseline.
    n_draws : int or None, default=None
        ``None``: attack the actual release (``coef_``, ``intercept_``). An int: simulate
        that many independent releases :math:`\\theta^* + \\sigma z` (how the paper averages
        over noise); with ``sigma`` tiny this approaches the noiseless attack.
    released : array-like of shape (p,), default=None
        Attack these released parameters instead (coefficients then intercept).
    random_state : int, RandomState instance or None
        Noise of the simulated releases.

    Returns
    -------
    result : :class:`AttributeInversionResult`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import whitebox_inversion
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(200, 3)), rng.randint(0, 2, size=200)])
    >>> y = X @ [1.0, -1.0, 0.5, 2.0] + 0.1 * rng.normal(size=200)
    >>> reg = FILLinearRegression(sigma=1e-6, alpha=1e-2, random_state=0).fit(X, y)
    >>> whitebox_inversion(reg, [3], n_draws=10, random_state=0).accuracy
    1.0
    """
    engine = _check_fil_estimator(estimator)
    thetas, truth, candidates = candidate_minimisers(estimator, columns, candidates,
                                                     rows=rows, method=method)
    # prior from the whole training set, not only the attacked rows
    _, _, truth_all = _attribute_setup(engine.X, columns, candidates)
    p = _prior(prior, truth_all, len(candidates))
    sigma = estimator.sigma
    theta = engine.theta
    delta = theta[None, None, :] - thetas                      # (m, C, p)
    sq = np.einsum("mcp,mcp->mc", delta, delta)
    # one stream: the calibration's simulated releases follow (never repeat) the attacked ones
    rng = check_random_state(random_state)
    if released is not None or n_draws is None:
        if released is None:
            released = np.r_[estimator.coef_, [estimator.intercept_] if
                             engine.fit_intercept else []]
        released = np.asarray(released, dtype=float)
        if released.shape != theta.shape:
            raise ValueError(f"released must have shape {theta.shape}; got {released.shape}.")
        Z = ((released - theta) / sigma)[None, :]
    else:
        if int(n_draws) < 1:
            raise ValueError(f"n_draws must be a positive integer; got {n_draws!r}.")
        Z = rng.standard_normal((int(n_draws), theta.size))
    with np.errstate(divide="ignore"):
        logp = np.log(p)

    def distances(z):
        # ||w' - theta_c||^2 = ||delta_c||^2 + 2 sigma z.delta_c + const
        return sq + 2.0 * sigma * np.einsum("mcp,p->mc", delta, z)

    inv_temp = np.ones(len(truth))
    if prior is not None and calibrate:
        inv_temp = _calibrated_inverse_temperature(distances, logp, truth, sigma, theta.size,
                                                   rng)
    preds = np.empty((len(Z), len(truth)), dtype=int)
    for k, z in enumerate(Z):
        score = logp[None, :] - inv_temp[:, None] * distances(z) / (2.0 * sigma**2)
        preds[k] = np.argmax(score, axis=1)
    return AttributeInversionResult.from_predictions(preds, truth, candidates)


#: Inverse temperatures tried by the calibrated MAP attack (0 = the prior's mode alone).
_INV_TEMPS = np.array([1.0, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.0])


def _calibrated_inverse_temperature(distances, logp, truth, sigma, p, rng, n_sim=16):
    """Cross-fitted choice of how much the MAP attack trusts the likelihood.

    The adversary of the white-box model knows every other row, including their
    attributes, so it can measure on those rows how well each decision rule
    ``log p(c) - beta * dist / (2 sigma^2)`` does on simulated releases. Rows are split in
    two halves; ``beta`` is chosen on one half (over a grid that includes 0, i.e. the
    prior's mode) and used on the other. This guards against a prior that is wrong for
    individual rows (attributes correlate with the other features), which otherwise lets
    the plain MAP rule fall below the prior baseline at moderate noise.
    """
    m = truth.size
    fold = np.zeros(m, dtype=int)
    fold[rng.permutation(m)[: m // 2]] = 1
    Z = rng.standard_normal((n_sim, p))
    hits = np.zeros((len(_INV_TEMPS), m))
    for z in Z:
        dist = distances(z) / (2.0 * sigma**2)
        for t, beta in enumerate(_INV_TEMPS):
            hits[t] += np.argmax(logp[None, :] - beta * dist, axis=1) == truth
    beta = np.empty(m)
    for f in (0, 1):
        other = fold != f
        totals = hits[:, other].sum(axis=1)
        best = int(np.argmax(totals))
        # keep the prior's mode unless the likelihood helps clearly (0.5% more hits)
        if totals[best] <= 1.005 * totals[-1]:
            best = len(_INV_TEMPS) - 1
        beta[fold == f] = _INV_TEMPS[best]
    return beta


def fredrikson_inversion(estimator, X, y, columns, candidates=None, *, prior="empirical",
                         residual_std=None, X_prior=None) -> AttributeInversionResult:
    """Black-box attribute inversion of Fredrikson et al. (2014) (FIL paper, eq. 31).

    The adversary knows an example except its attribute, its label ``y``, the prior of the
    attribute and the model's predictions and performance statistics; it predicts
    :math:`\\arg\\max_c p(c)\\,\\pi(f(x_c), y)`. For regressors :math:`\\pi` is the Gaussian
    density of ``y`` around the prediction with variance the training mean squared error
    (``residual_std**2``; by default estimated on ``X, y``); for classifiers it is the
    model's confusion rate :math:`P(\\text{true} = y \\mid \\text{predicted} = f(x_c))`
    estimated on ``X, y``.

    Parameters
    ----------
    estimator : fitted regressor or classifier
    X, y : the attacked examples (their true attribute is in ``X[:, columns]``) and labels
    columns, candidates : see :func:`candidate_minimisers`
    prior : "empirical", None or array-like, default="empirical"
        Prior over candidates ("empirical": frequencies in ``X_prior``, default ``X``).
    residual_std : float, default=None
    X_prior : array-like, default=None

    Returns
    -------
    result : :class:`AttributeInversionResult`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_privacy.attacks import fredrikson_inversion
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(200, 2)), rng.randint(0, 2, size=200)])
    >>> y = X @ [1.0, -1.0, 3.0] + 0.1 * rng.normal(size=200)
    >>> reg = LinearRegression().fit(X, y)
    >>> fredrikson_inversion(reg, X, y, [2]).accuracy  # the attribute drives the label
    1.0
    """
    check_is_fitted(estimator)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    cols, candidates, truth = _attribute_setup(X, columns, candidates)
    prior_truth = _reference_truth(X_prior, truth, columns, candidates)
    p = _prior(prior, prior_truth, len(candidates))
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    scores = np.empty((len(y), len(candidates)))
    if is_classifier(estimator):
        classes = estimator.classes_
        pred = estimator.predict(X)
        conf = np.ones((len(classes), len(classes)))  # Laplace smoothing
        np.add.at(conf, (np.searchsorted(classes, y), np.searchsorted(classes, pred)), 1.0)
        conf /= conf.sum(axis=0, keepdims=True)         # P(true | predicted)
        yi = np.searchsorted(classes, y)
        for c in range(len(candidates)):
            Xc = X.copy()
            Xc[:, cols] = candidates[c]
            pc = np.searchsorted(classes, estimator.predict(Xc))
            scores[:, c] = logp[c] + np.log(conf[yi, pc])
    else:
        yf = y.astype(float)
        if residual_std is None:
            residual_std = float(np.sqrt(np.mean((estimator.predict(X) - yf) ** 2)))
        for c in range(len(candidates)):
            Xc = X.copy()
            Xc[:, cols] = candidates[c]
            scores[:, c] = logp[c] - (estimator.predict(Xc) - yf) ** 2 / (2 * residual_std**2)
    preds = np.argmax(scores, axis=1)[None, :]
    return AttributeInversionResult.from_predictions(preds, truth, candidates)


def prior_baseline(X, columns, candidates=None, *, X_prior=None) -> AttributeInversionResult:
    """Guess the most frequent level (in ``X_prior``, default ``X``) for every row.

    The accuracy of an adversary that knows only the attribute's distribution: an
    attack on a released model has learnt something from it only if it beats this.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Attacked rows; their true attribute is in ``X[:, columns]``.
    columns, candidates : see :func:`candidate_minimisers`
    X_prior : array-like, default=None
        Rows whose level frequencies define the mode (default: ``X``).

    Returns
    -------
    result : :class:`AttributeInversionResult`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.attacks import prior_baseline
    >>> X = np.array([[0.3, 1], [0.1, 1], [0.7, 0], [0.2, 1]])
    >>> prior_baseline(X, [1]).accuracy
    0.75
    """
    X = np.asarray(X, dtype=float)
    cols, candidates, truth = _attribute_setup(X, columns, candidates)
    ref = _reference_truth(X_prior, truth, columns, candidates)
    mode = int(np.argmax(np.bincount(ref, minlength=len(candidates))))
    preds = np.full((1, len(truth)), mode)
    return AttributeInversionResult.from_predictions(preds, truth, candidates)
