"""Reference (shadow) models shared by the likelihood-ratio attacks (LiRA, RMIA)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ..utils import child_seeds
from ..utils._progress import run_tasks
from ..utils._random import seeded_clone
from ._validation import take_rows

#: largest |logit| float64 probabilities resolve near 1: p = 1 - 2**-53
LOGIT_CAP = float(np.log1p(-2.0**-53) - np.log(2.0**-53))


def log_proba(estimator, X):
    """``(log_p, exact)``: log-probabilities of every class, without saturation if possible.

    Many classifiers (scikit-learn's ``LogisticRegression`` among them) compute
    ``predict_log_proba`` as ``log(predict_proba)``: a row whose probability of a class
    rounds to 1.0 gets ``log 0 = -inf`` for the other classes, so confident rows of one
    class saturate while the other class stays exact. When ``decision_function`` is the
    logit behind ``predict_proba`` (checked on the rows themselves: ``expit(d)`` for two
    classes, ``softmax(d)`` for more, equal to ``predict_proba``), the log-probabilities
    are computed from it in closed form, exact in both tails (``exact=True``). Otherwise
    the logarithm of the probabilities is returned (``exact=False``) and the callers
    clamp both tails symmetrically at the resolution of float64 near 1.
    """
    proba = np.asarray(estimator.predict_proba(X), dtype=float)
    if hasattr(estimator, "decision_function"):
        try:
            d = np.asarray(estimator.decision_function(X), dtype=float)
        except (AttributeError, NotImplementedError, ValueError, TypeError):
            d = None
        if d is not None:
            if d.ndim == 1 and proba.shape[1] == 2:
                lp = np.column_stack([-np.logaddexp(0.0, d), -np.logaddexp(0.0, -d)])
            elif d.ndim == 2 and d.shape == proba.shape:
                lp = d - logsumexp(d, axis=1, keepdims=True)
            else:
                lp = None
            if lp is not None and np.all(np.isfinite(lp)) and np.allclose(
                    np.exp(lp), proba, rtol=1e-7, atol=1e-10):
                return lp, True
    with np.errstate(divide="ignore"):
        return np.log(proba), False


def per_row_params(fit_params, n):
    """Names of the ``fit_params`` entries with one value per row (``sample_weight``, ...).

    The rule of scikit-learn's ``cross_validate``: an array-like (not a string) of length
    ``n``.
    """
    return [k for k, v in fit_params.items()
            if not isinstance(v, (str, bytes)) and np.ndim(v) >= 1 and len(v) == n]


def _fit_reference(estimator, X, y, in_mask, seed, fit_params, outputs):
    """Fit ``clone(estimator)`` on the rows of ``in_mask``; ``outputs`` on every row."""
    est = seeded_clone(estimator, seed)
    idx = np.flatnonzero(in_mask)
    rows = set(per_row_params(fit_params, len(y)))
    params = {k: take_rows(v, idx) if k in rows else v for k, v in fit_params.items()}
    try:
        est.fit(take_rows(X, idx), y[idx], **params)
    except ValueError as exc:
        hint = (" (each row is in half of the models: a class needs rows in every half)"
                if "class" in str(exc) else "")
        raise ValueError(f"Fitting a reference model on its random half of the {len(y)} rows "
                         f"of X failed{hint}: {exc}") from exc
    return np.asarray(outputs(est, X, y), dtype=float)


def fit_reference_models(estimator, X, y, n_models, *, outputs, rng, fit_params=None,
                         n_jobs=None, verbose=0, who="reference models"):
    """Train ``n_models`` reference models on random halves of the population.

    Balanced design (Carlini et al., 2022): every row is in the training set of exactly
    ``n_models // 2`` models. The draws come from ``rng`` in a fixed order (the design
    first, then one integer seed per model through :func:`~sklearn_privacy.utils.child_seeds`),
    and every model is fitted by a separate task of :class:`joblib.Parallel`, so the
    result depends on ``rng`` only: any joblib backend (``loky``, threads, or ``dask``
    under ``joblib.parallel_config(backend="dask")``) and any ``n_jobs`` give the same
    models, in the same order.

    Parameters
    ----------
    estimator : estimator
        Cloned (hyper-parameters only) for every model; every ``random_state``
        parameter (also of Pipeline steps and inner estimators) is set to the model's own
        seed.
    X, y : population (``X`` is indexed by position and passed to the models untouched)
    n_models : int
    outputs : callable ``outputs(fitted_model, X, y) -> ndarray of shape (n_population,)``
        Per-row output recorded for every model (a module-level function, so that process
        and cluster backends can pickle it).
    rng : RandomState or Generator
    fit_params : dict or None
        Passed to every ``fit``; entries with one value per row of ``X`` (such as
        ``sample_weight``) are restricted to the model's training rows.
    n_jobs, verbose : int
        Passed to ``run_tasks`` (verbose 1: ``[who]
        done k of N reference models fitted`` about ten times).
    who : str
        The caller's name in the progress lines.

    Returns
    -------
    in_mask : ndarray of bool, shape (n_models, n_population)
        Whether each row is in each model's training set.
    values : ndarray of shape (n_models, n_population)
        ``outputs`` of every model on every row.
    """
    n = len(y)
    order = rng.uniform(size=(n_models, n)).argsort(axis=0)
    in_mask = order < n_models // 2
    seeds = child_seeds(rng, n_models)
    values = np.vstack(run_tasks(
        _fit_reference, [(estimator, X, y, in_mask[k], int(seeds[k]), fit_params or {},
                          outputs) for k in range(n_models)],
        n_jobs=n_jobs, verbose=verbose, who=who, unit="reference models fitted"))
    return in_mask, values
