"""The calibration inputs of the multicalibrator: shapes, the groups' columns, the
held-out split and input perturbation of the features."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import train_test_split
from sklearn.utils import check_array

from ..utils._groups import as_2d_data


def _check_2d(X):
    ndim = getattr(X, "ndim", None)
    if ndim is None and not hasattr(X, "shape"):
        ndim = np.ndim(X) if isinstance(X, (list, tuple)) else 2
    if ndim is not None and ndim != 2:
        raise ValueError(
            f"Expected a 2-dimensional X (n_samples, n_features), got {ndim} dimension(s). "
            "Reshape your data with X.reshape(-1, 1) for a single feature or "
            "X.reshape(1, -1) for a single sample."
        )


def group_data(est, X, sensitive_features, n, *, fitting):
    """Data on which the groups are evaluated: sensitive_features if given, else X."""
    if sensitive_features is None:
        if not fitting and getattr(est, "sensitive_features_in_", None) is not None:
            raise ValueError(
                "This PrivateMulticalibrator was fitted with sensitive_features (its "
                "groups are evaluated on them): pass sensitive_features= with the same "
                "columns for these rows too."
            )
        return as_2d_data(X, "X")
    S = as_2d_data(sensitive_features, "sensitive_features", allow_1d=True)
    if S.shape[0] != n:
        raise ValueError(f"sensitive_features has {S.shape[0]} rows but X has {n}; they "
                         "must be aligned row by row.")
    names = [str(c) for c in S.columns] if hasattr(S, "columns") else None
    info = {"n_columns": int(S.shape[1]), "names": names}
    if fitting:
        est.sensitive_features_in_ = info
    else:
        fitted = getattr(est, "sensitive_features_in_", None)
        if fitted is None:
            raise ValueError(
                "sensitive_features were given but this PrivateMulticalibrator was "
                "fitted without them (its groups are evaluated on X); drop the argument "
                "or refit with sensitive_features."
            )
        if fitted != info:
            raise ValueError(
                f"sensitive_features: these rows give {_describe_columns(info)} but the "
                f"fit used {_describe_columns(fitted)}; pass the same columns (a "
                "DataFrame with the fitted names when the fit had names)."
            )
    return S


def input_perturbation(est, X, n, rng):
    """Noisy copy of the features (same container type) and the noise std."""
    if sp.issparse(X):
        raise ValueError("mechanism='input_perturbation' adds dense Gaussian noise to "
                         "every feature; pass dense numeric X (not a sparse matrix).")
    try:
        Xf = check_array(X, dtype=np.float64, ensure_min_samples=2, input_name="X")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"mechanism='input_perturbation' needs numeric, finite features: {exc} "
            "(encode categorical columns first, or use groups on sensitive_features)."
        ) from None
    # Kang et al.: sigma^2 = c G^2 T log(1/delta) / (n (n - 1) eps^2), c = 8, G = 1,
    # T = 1500 (the paper's settings); divided in float64 so that extreme epsilon
    # gives inf (refused below) rather than ZeroDivisionError / OverflowError
    unit = math.sqrt(8.0 * 1500 * -math.log(est.delta) / (n * (n - 1)))
    with np.errstate(over="ignore", divide="ignore"):
        std = float(np.float64(unit) / np.float64(est._epsilon_number()))
    if not math.isfinite(std):
        raise ValueError(
            f"epsilon={est._epsilon_number()!r} is too small for input perturbation: "
            "the feature noise standard deviation overflows float64. Use a larger "
            "epsilon."
        )
    noise = rng.normal(0.0, std, size=Xf.shape) if std > 0 else np.zeros(Xf.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        Xn = Xf + noise
    if not np.all(np.isfinite(Xn)):
        raise ValueError(
            f"epsilon={est._epsilon_number()!r} is too small for input perturbation: "
            "features plus "
            f"noise (std {std:.3g}) overflow float64. Use a larger epsilon."
        )
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        import pandas as pd

        Xn = pd.DataFrame(Xn, columns=X.columns, index=X.index)
    return Xn, std


def validation_split(est, y01, rng):
    """(fit rows, held-out rows), stratified by label; refused under a mechanism."""
    if est.mechanism is not None:
        raise ValueError(
            "validation_fraction holds out calibration rows to choose among the "
            "updates by their exact error, which reads those rows outside any privacy "
            f"budget: it is only available with mechanism=None (got "
            f"mechanism={est.mechanism!r}). Check a private fit on rows that are not "
            "private instead."
        )
    n = y01.size
    n_val = math.ceil(est.validation_fraction * n)
    if n_val < 2 or n - n_val < 2 or np.bincount(y01, minlength=2).min() < 2:
        raise ValueError(
            f"validation_fraction={est.validation_fraction!r} of {n} rows leaves too "
            "few rows on one side (each side needs at least 2 rows and both classes); "
            "use more calibration rows or validation_fraction=None."
        )
    draw = getattr(rng, "integers", None) or rng.randint
    seed = int(draw(2**32 - 1))
    fit_rows, val_rows = train_test_split(np.arange(n), test_size=n_val, stratify=y01,
                                          random_state=seed)
    return np.sort(fit_rows), np.sort(val_rows)


def _describe_columns(info):
    """``{"n_columns": k, "names": [...] or None}`` in words."""
    k, names = info["n_columns"], info["names"]
    where = f"named {names}" if names is not None else "without names (an array)"
    return f"{k} column{'s' if k != 1 else ''} {where}"
