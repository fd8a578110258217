"""Worst-case neighbouring data sets for the DP view of the FIL estimators.

An audit of an output-perturbed release is only as strong as the neighbouring pair it
uses: the released centre moves by ``||theta*(D') - theta*(D)||``, and the Gaussian noise
hides a move of at most ``sensitivity_``. This module searches for the replacement of one
row that moves the exact minimiser the most, and gives the likelihood-ratio statistic of
the release for that pair (the projection on the move), so that
:func:`~sklearn_privacy.attacks.canary_audit` can approach the claimed epsilon.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier

from ..utils import child_seeds, noise_generator
from ..utils._progress import run_tasks
from ..utils.fixes import HasMethods, NumberInterval, validate_params

_POSITIVE_INT = NumberInterval(Integral, 1, None, closed="left")


@dataclass
class WorstCasePair:
    """A neighbouring pair ``D, D'`` (row ``index`` replaced) and how far it moves the fit.

    Returned by :func:`worst_case_neighbours`; ``statistic()`` gives the optimal test of a
    release for this pair, for :func:`canary_audit`.

    Parameters
    ----------
    index : int
        Row of ``D`` replaced in ``D'``.
    x_replacement : ndarray of shape (n_features,)
        The replacing row (on the ``data_norm`` sphere).
    y_replacement : scalar
        Its label / target.
    movement : float
        ``||theta*(D') - theta*(D)||`` of the exact minimisers (exact refits).
    sensitivity : float
        The estimator's ``sensitivity_`` (the largest move its DP view allows).
    theta_original, theta_replaced : ndarray
        The exact minimisers on ``D`` and ``D'``.
    n_refits : int
        Exact refits the search made.

    See Also
    --------
    worst_case_neighbours : Search such a pair.
    canary_audit : Audit a release on it.

    Examples
    --------
    See :func:`worst_case_neighbours`.
    """

    index: int
    x_replacement: np.ndarray = field(repr=False)
    y_replacement: object = None
    movement: float = 0.0
    sensitivity: float = float("inf")
    theta_original: np.ndarray = field(default=None, repr=False)
    theta_replaced: np.ndarray = field(default=None, repr=False)
    n_refits: int = 0

    @property
    def ratio(self) -> float:
        """``movement / sensitivity``: at most 1 when the DP view's bound holds."""
        return self.movement / self.sensitivity

    def statistic(self):
        """The likelihood-ratio statistic of a release for this pair.

        For ``theta + N(0, sigma^2 I)`` the optimal test between ``D`` and ``D'`` thresholds
        the projection of the released parameters on ``theta*(D') - theta*(D)``. The
        returned callable (picklable) maps a fitted release to that projection, for
        ``canary_audit(..., attack=pair.statistic())``.

        Returns
        -------
        statistic : callable
            ``statistic(fitted_release) -> float``.
        """
        d = self.theta_replaced - self.theta_original
        return functools.partial(_projection, origin=self.theta_original,
                                 direction=d / np.linalg.norm(d))


def _projection(release, origin, direction):
    return float((release._released_theta() - origin) @ direction)


def _exact_theta(estimator, X, y):
    # the exact minimiser does not depend on the noise (set by sigma, or by epsilon)
    noise = {} if getattr(estimator, "epsilon", None) is not None else {"sigma": 1.0}
    est = clone(estimator).set_params(random_state=0, **noise)
    est.fit(X, y)
    return est, est._audit_engine().theta.copy()


def _grad_rows(loss, theta, Xa, y):
    l1, l2, _ = loss.derivatives(Xa @ theta, y)
    return l1, l2


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "n_starts": [_POSITIVE_INT],
        "n_steps": [_POSITIVE_INT],
        "n_refits": [_POSITIVE_INT],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=False,  # refits the user's estimator
)
def worst_case_neighbours(estimator, X, y, *, n_starts: int = 16, n_steps: int = 60,
                          n_refits: int = 12, n_jobs: int | None = None, verbose: int = 0,
                          random_state=None) -> WorstCasePair:
    """Search the replace-one neighbour that moves a FIL estimator's exact minimiser most.

    The DP view of :class:`~sklearn_privacy.FILLinearRegression` and
    :class:`~sklearn_privacy.FILLogisticRegression` bounds the move of the exact minimiser
    by ``sensitivity_`` over every replacement of one row by any row of norm at most
    ``data_norm`` (and target in ``[-target_bound, target_bound]``). This search looks
    for a pair that attains it: to first order the move is ``H^-1 (g' - g_i)`` (``H`` the
    objective's Hessian, ``g_i`` the removed row's loss gradient, ``g'`` the
    replacement's), which is maximised by projected gradient ascent over replacements on
    the ``data_norm`` sphere (``n_starts`` starts: the directions of least curvature, the
    parameter direction and random ones; both labels or both target signs) jointly with
    the removed row; the best ``n_refits`` candidates are then refitted exactly and the
    largest exact move is returned. The ascents from different starts are independent
    and so are the refits: both run through :class:`joblib.Parallel`, and the pair found
    depends on ``random_state`` only, not on ``n_jobs`` or the backend.

    Parameters
    ----------
    estimator : FILLinearRegression or FILLogisticRegression
        Unfitted template in its DP view (``data_norm`` set; ``target_bound`` for least
        squares).
    X : ndarray of shape (n_samples, n_features)
        Dense numeric rows (already within ``data_norm``, or scaled by the estimator).
    y : array-like of shape (n_samples,)
        Labels / targets.
    n_starts, n_steps : int
        Starting replacements per label and ascent steps.
    n_refits : int
        Candidates refitted exactly.
    n_jobs : int or None, default=None
        Ascents (one per start and label) and exact refits run in parallel through
        :class:`joblib.Parallel` (``None``: one at a time, or the number a
        ``joblib.parallel_config`` context sets).
    verbose : int, default=0
        ``1`` prints ``done k of N`` lines for the ascents and the refits (about ten
        each), ``2`` one line per ascent and per refit.
    random_state : int, RandomState, Generator or None
        Random starting directions.

    Returns
    -------
    pair : WorstCasePair
        The pair with the largest exact move found, and both minimisers.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import worst_case_neighbours
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.clip(X @ [1.0, -1.0, 0.5, 0.0], -1, 1)
    >>> est = FILLinearRegression(fit_intercept=False, data_norm=1.0, target_bound=1.0,
    ...                           alpha=10.0)
    >>> pair = worst_case_neighbours(est, X, y, random_state=0)
    >>> bool(0.85 < pair.ratio <= 1.0)    # the exact move is close to sensitivity_
    True
    """
    X, y = _check_inputs(estimator, X, y)
    fitted, theta = _exact_theta(estimator, X, y)
    geo = _Geometry(fitted, theta)
    rng = np.random.default_rng(int(child_seeds(noise_generator(random_state), 1)[0]))
    S = _starts(geo, n_starts, rng)
    view = geo.for_tasks()
    tasks = [(view, S[k:k + 1], y_enc, n_steps) for y_enc, _ in geo.labels()
             for k in range(S.shape[0])]
    ends = run_tasks(_ascend_one, tasks, n_jobs=n_jobs, verbose=verbose,
                     who="worst_case_neighbours", unit="ascents")
    raws = [y_raw for _, y_raw in geo.labels() for _ in range(S.shape[0])]
    cands = [(value, idx, x, y_raw) for (value, idx, x), y_raw in zip(ends, raws, strict=True)]
    cands.sort(key=lambda c: -c[0])
    return _refit_best(estimator, fitted, theta, X, y, cands, n_refits, n_jobs, verbose)


def _ascend_one(geo, start, y_enc, n_steps):
    """``(value, removed row, replacement)`` reached by the ascent from one start."""
    x = _ascend(geo, start, y_enc, n_steps)
    value, idx = geo.removal(x, y_enc)
    return float(value[0]), int(idx[0]), x[0].copy()


def _check_inputs(estimator, X, y):
    """``(X, y)`` of a binary or least-squares FIL estimator with ``data_norm`` set."""
    from ..fil._base import BaseFILEstimator

    if not isinstance(estimator, BaseFILEstimator):
        raise TypeError("worst_case_neighbours searches the DP view of FILLinearRegression "
                        f"or FILLogisticRegression; got {type(estimator).__name__}.")
    if getattr(estimator, "data_norm", None) is None:
        raise ValueError("worst_case_neighbours needs data_norm set: without it no "
                         "replacement is bounded and the DP view claims nothing.")
    if len(getattr(estimator, "classes_", ())) > 2 or (
            hasattr(estimator, "predict_proba") and np.unique(np.asarray(y)).size > 2):
        raise ValueError("worst_case_neighbours supports the binary and least-squares FIL "
                         "models; the multinomial model's search is not implemented (its "
                         "DP view is audited in tests/test_fil_multinomial.py).")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError("X must be a dense 2-D numeric array.")
    return X, np.asarray(y)


class _Geometry:
    """The search space of the replacement row and the fitted rows it is compared with.

    ``x`` (the user's ``d`` columns) lives on the sphere of radius ``R``; a replacement
    ``(x, y')`` of row ``i`` moves the minimiser by about ``||H^-1 (g' - g_i)||``, with
    ``A`` holding the rows ``H^-1 g_i`` of the fitted rows.
    """

    def __init__(self, fitted, theta):
        R = float(fitted.data_norm)
        eng = fitted._audit_engine()
        self.fitted, self.theta, self.eng = fitted, theta, eng
        self.loss, self.fi = eng.loss, eng.fit_intercept
        Xs = np.asarray(eng.X)                  # the rows as fitted (scaled to data_norm)
        self.ys = eng.y                         # encoded labels / clipped targets
        # a penalised intercept is a constant column s of the fitted rows: the replacement
        # keeps it, so only the user's d columns are searched, on the sphere of radius
        # sqrt(R^2 - s^2) (the augmented row then has norm R)
        const = (float(fitted.intercept_scaling) if fitted._penalised_intercept() else None)
        self.d = Xs.shape[1] - (const is not None)
        if const is not None:
            if const >= R:
                raise ValueError(f"intercept_scaling = {const:g} is not below data_norm = "
                                 f"{R:g}: no replacement row fits in the data_norm ball; "
                                 "lower intercept_scaling or raise data_norm.")
            R = float(np.sqrt(R**2 - const**2))
        self.R, self.const = R, const
        self.Xa = np.hstack([Xs, np.ones((Xs.shape[0], 1))]) if self.fi else Xs
        self.l1, _ = _grad_rows(self.loss, theta, self.Xa, self.ys)
        self.Hinv = eng.H_inv
        self.A = (self.Xa * self.l1[:, None]) @ self.Hinv     # rows: H^-1 g_i

    def for_tasks(self):
        """A copy without the fitted estimator and its engine: what an ascent needs, sent
        to joblib's workers."""
        view = copy.copy(self)
        view.fitted = view.eng = None
        return view

    def augment(self, x):
        """The replacement rows as the fit sees them (intercept or constant column)."""
        if self.fi:
            return np.hstack([x, np.ones((x.shape[0], 1))])
        if self.const is not None:
            return np.hstack([x, np.full((x.shape[0], 1), self.const)])
        return x

    def labels(self):
        """``(encoded, raw)`` labels of the replacement: both classes, or +-the bound."""
        if is_classifier(self.fitted):
            return [(0.0, self.fitted.classes_[0]), (1.0, self.fitted.classes_[1])]
        tb = getattr(self.fitted, "target_bound", None)
        b = float(tb) if tb is not None else float(np.max(np.abs(self.ys)))
        return [(-b, -b), (b, b)]

    def distances(self, a_new):
        """``||H^-1 g' - H^-1 g_i||^2`` for every replacement (rows) and removed row."""
        A = self.A
        return (np.sum(a_new**2, axis=1)[:, None] - 2 * a_new @ A.T
                + np.sum(A**2, axis=1)[None, :])

    def removal(self, x, y_enc):
        """``(value, removed row)`` of each replacement: the row whose removal moves most."""
        xa = self.augment(x)
        g1, _, _ = self.loss.derivatives(xa @ self.theta, np.full(x.shape[0], y_enc))
        a_new = (xa * g1[:, None]) @ self.Hinv
        dist = self.distances(a_new)
        idx = np.argmax(dist, axis=1)
        return dist[np.arange(x.shape[0]), idx], idx


def _starts(geo, n_starts, rng):
    """Starting rows: least-curvature directions of H (restricted to the features),
    theta's direction, random ones; both signs of each, on the sphere of radius R."""
    d, theta = geo.d, geo.theta
    w, V = np.linalg.eigh(geo.eng.H[:d, :d])
    starts = [V[:, k] for k in range(min(d, n_starts // 2))]
    if np.linalg.norm(theta[:d]) > 0:
        starts.append(theta[:d] / np.linalg.norm(theta[:d]))
    while len(starts) < n_starts:
        starts.append(rng.standard_normal(d))
    S = np.array([s / np.linalg.norm(s) for s in starts])
    return geo.R * np.vstack([S, -S])


def _ascend(geo, S, y_enc, n_steps):
    """Projected gradient ascent of ``||H^-1 (g' - g_i)||^2`` over the sphere from ``S``,
    ``i`` the removed row that maximises it at every step."""
    d, R, theta, Xa, l1 = geo.d, geo.R, geo.theta, geo.Xa, geo.l1
    M = geo.Hinv @ geo.Hinv
    x = S.copy()
    for _ in range(n_steps):
        xa = geo.augment(x)
        z = xa @ theta
        g1, g2, _ = geo.loss.derivatives(z, np.full(z.shape, y_enc))
        a_new = (xa * g1[:, None]) @ geo.Hinv   # H^-1 g'
        # the removed row maximising ||H^-1 (g' - g_i)|| for each candidate
        idx = np.argmax(geo.distances(a_new), axis=1)
        v = (xa * g1[:, None]) - (Xa[idx] * l1[idx, None])      # g' - g_i
        Mv = v @ M
        # d/dx of v^T M v: 2 (g1 (Mv)_x + g2 theta_x (x~ . Mv))
        grad = 2 * (g1[:, None] * Mv[:, :d]
                    + g2[:, None] * theta[None, :d] * np.sum(xa * Mv, axis=1)[:, None])
        step = R * grad / np.maximum(np.linalg.norm(grad, axis=1, keepdims=True), 1e-300)
        x_new = x + 0.3 * step
        x = R * x_new / np.linalg.norm(x_new, axis=1, keepdims=True)
    return x


def _refit_theta(estimator, X, y, i, xr, yr):
    """``(fitted, theta)``: the exact fit and minimiser with row ``i`` replaced by
    ``(xr, yr)``, or None when the replaced data cannot be fitted (e.g. the replacement
    removed the last row of a class)."""
    Xp, yp = X.copy(), y.copy()
    Xp[i] = xr
    yp[i] = yr
    try:
        return _exact_theta(estimator, Xp, yp)
    except ValueError:
        return None


def _refit_best(estimator, fitted, theta, X, y, cands, n_refits, n_jobs=None, verbose=0):
    """The pair of largest exact movement among the best candidates (``n_refits`` refits).

    The distinct candidates are refitted in order, in rounds of as many as refits are
    still missing (in parallel), until ``n_refits`` refits succeeded: the same refits, in
    the same order, as one at a time.
    """
    unique, seen = [], set()
    for _, i, xr, yr in cands:
        key = (i, tuple(np.round(xr, 6)), yr)
        if key not in seen:
            seen.add(key)
            unique.append((i, xr, yr))
    best, refits, pos = None, 0, 0
    while refits < n_refits and pos < len(unique):
        batch = unique[pos:pos + n_refits - refits]
        pos += len(batch)
        fits = run_tasks(_refit_theta, [(estimator, X, y, *c) for c in batch],
                         n_jobs=n_jobs, verbose=verbose, who="worst_case_neighbours",
                         unit="exact refits")
        for (i, xr, yr), fit in zip(batch, fits, strict=True):
            if fit is None:
                continue
            fitted_p, theta_p = fit
            refits += 1
            move = float(np.linalg.norm(theta_p - theta))
            if best is None or move > best.movement:
                best = WorstCasePair(index=i, x_replacement=xr, y_replacement=yr,
                                     movement=move, sensitivity=float(fitted.sensitivity_),
                                     theta_original=theta, theta_replaced=theta_p)
                best_fit = fitted_p
    if best is None:
        raise ValueError("worst_case_neighbours: no candidate replacement could be refitted "
                         "(every refit raised a ValueError); check that y has at least two "
                         "rows of each class.")
    best.n_refits = refits
    if getattr(estimator, "epsilon", None) is not None:
        # the exact fits of D and D' with the estimator's own noise parameters: a caller
        # that redraws their noise (canary_audit's refit=False) need not fit them again
        best._fits = (fitted, best_fit)
    return best
