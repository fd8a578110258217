"""Reference (shadow) models shared by the likelihood-ratio attacks (LiRA, RMIA)."""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from ..utils import child_seeds
from ..utils._random import seeded_clone
from ._validation import take_rows


def _fit_reference(estimator, X, y, in_mask, seed, fit_params, outputs):
    """Fit ``clone(estimator)`` on the rows of ``in_mask``; ``outputs`` on every row."""
    est = seeded_clone(estimator, seed)
    idx = np.flatnonzero(in_mask)
    est.fit(take_rows(X, idx), y[idx], **fit_params)
    return np.asarray(outputs(est, X, y), dtype=float)


def fit_reference_models(estimator, X, y, n_models, *, outputs, rng, fit_params=None,
                         n_jobs=None, verbose=0):
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
    n_jobs, verbose : passed to :class:`joblib.Parallel`.

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
    values = np.vstack(Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_fit_reference)(estimator, X, y, in_mask[k], int(seeds[k]),
                                fit_params or {}, outputs)
        for k in range(n_models)
    ))
    return in_mask, values
