"""Audit functions that accept a pipeline ending in a FIL estimator."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ..utils._columns import resolve_columns
from ..utils._pipeline import feature_columns, split_pipeline
from ..utils._validation import errors_name
from ._base import BaseFILEstimator
from ._ovr import OneVsRestAudit, is_fil_ovr

__all__ = ["eta", "fisher_information", "sigma_for_eta"]


def _final_input_names(steps, final):
    """Column names of the final step's input, or None when they cannot be known."""
    names = getattr(final, "feature_names_in_", None)
    if names is None and steps:
        try:
            names = steps[-1].get_feature_names_out()
        except (AttributeError, ValueError, TypeError):
            return None
    if names is None or len(names) != final.n_features_in_:
        return None
    return [str(n) for n in names]


def final_fil_estimator(estimator, who, why=""):
    """``(preprocessing steps, final FIL estimator)`` of an estimator or Pipeline.

    Raises a TypeError naming ``who`` (the caller, e.g. ``"EtaDisplay"``) when the last
    step is not one of this package's FIL estimators; ``why`` is appended to the message.
    """
    steps, final = split_pipeline(estimator)
    if not isinstance(final, BaseFILEstimator):
        hint = ""
        if is_fil_ovr(final):
            hint = (" FILLogisticRegression fits more than two classes natively "
                    "(multinomial): use it instead of OneVsRestClassifier (fil.eta and "
                    "fil.fisher_information also accept the one-vs-rest composition).")
        raise TypeError(
            f"{who} needs a fitted FIL estimator (FILLinearRegression, "
            "FILLogisticRegression, FILPoissonRegressor or the IRFIL variants), possibly as "
            f"the last step of a Pipeline{why}; got {type(final).__name__}.{hint} For a "
            "linear model trained with scikit-learn, sklearn_privacy.fil.audit(model, X, y, "
            "sigma=...) returns one."
        )
    return steps, final


def _final_and_columns(estimator, columns):
    """The final FIL estimator and ``columns`` as indices into its input (+ label)."""
    steps, final = split_pipeline(estimator)
    if is_fil_ovr(final):  # K binary releases audited together
        final = OneVsRestAudit(final)
    else:
        steps, final = final_fil_estimator(estimator, "eta / fisher_information")
    final._audit_engine()  # fitted, audit state available
    if columns is None:
        return final, None
    d = final.n_features_in_
    if not steps:
        return final, resolve_columns(columns, d, getattr(final, "feature_names_in_", None),
                                      label=True)
    if isinstance(columns, (str, Integral)) and not isinstance(columns, (bool, np.bool_)):
        items = [columns]
    elif isinstance(columns, (bool, np.bool_, float, np.floating)) or not np.iterable(columns):
        raise TypeError(
            "columns must be an original feature name or position, or a list of them; got "
            f"{columns!r}."
        )
    else:
        items = list(columns)
    if not items:
        raise ValueError("columns is empty; select at least one feature.")
    out = []
    for item in items:
        if isinstance(item, str) and item == "label":
            out.append(np.array([d]))
        else:
            try:
                with errors_name("columns"):
                    out.append(feature_columns(estimator, item))
            except ValueError:
                # not an original input feature: a name of the final step's input (the
                # preprocessing's output, e.g. "cat__race_White"), even when that input
                # was a sparse matrix or an array without column names
                names = _final_input_names(steps, final)
                if not isinstance(item, str) or names is None or item not in names:
                    raise
                out.append(np.array([names.index(item)]))
    cols = np.concatenate(out)
    if np.unique(cols).size != cols.size:
        raise ValueError(
            f"columns: {items} select some final-step columns twice (a feature listed twice, "
            "or two features sharing derived columns)."
        )
    return final, cols


def eta(estimator, rows=None, columns=None, *, per_example: bool = False,
        constrained: bool = False):
    """Fisher information loss of training values of a FIL estimator or pipeline.

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one
        The model whose training values are audited. Its audit state must be available
        (not removed by :func:`~sklearn_privacy.utils.strip_for_release`). A fitted
        :class:`~sklearn.multiclass.OneVsRestClassifier` of FIL classifiers (or a
        pipeline ending in one) is audited as its ``K`` releases together: independent
        noise, so their Fisher information adds and ``eta = sqrt(lambda_max(sum_k
        FIM_k))``; the label is then the one-hot vector, ``K - 1`` values in the
        Helmert basis of the sum-zero changes (as for the multinomial model).
    rows : None, int, array-like of int or array-like of bool, default=None
        Training rows (see :meth:`~sklearn_privacy.FILLinearRegression.eta`).
    columns : None, or one or several features, default=None
        For a FIL estimator: indices or names of its ``feature_names_in_`` (index
        ``n_features_in_`` or ``"label"`` for the label). For a pipeline: **original input
        features** of the pipeline (names of the raw frame, or positions), each expanded
        to every column of the final step derived from it (e.g. all one-hot columns of
        ``"race"``, see :func:`sklearn_privacy.utils.feature_columns`), names of the
        final step's input columns (the preprocessing's ``get_feature_names_out()``, e.g.
        ``"cat__race_White"``, also when that input is sparse), and ``"label"``.
        ``None``: every feature and the label.
    per_example, constrained : bool, default=False
        As in :meth:`~sklearn_privacy.FILLinearRegression.eta`; ``constrained`` applies to a one-hot
        attribute (e.g. an original categorical feature encoded without a dropped level).

    Returns
    -------
    eta : float or ndarray of shape (n_rows,)
        The eta of the set of values, or one eta per row with ``per_example=True``.

    Raises
    ------
    TypeError
        The (final) estimator is not a FIL estimator.
    ValueError
        Unknown feature, or a pipeline step whose derivation cannot be traced.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.fil import eta
    >>> rng = np.random.RandomState(0)
    >>> df = pd.DataFrame({"age": rng.normal(40, 10, 60),
    ...                    "race": rng.choice(["a", "b", "c"], 60)})
    >>> pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
    ...                                              (OneHotEncoder(), ["race"])),
    ...                      FILLinearRegression(sigma=1.0, random_state=0))
    >>> pipe = pipe.fit(df, rng.normal(size=60))
    >>> direct = pipe[-1].eta(columns=[1, 2, 3], per_example=True)
    >>> bool(np.allclose(eta(pipe, columns="race", per_example=True), direct))
    True
    """
    final, cols = _final_and_columns(estimator, columns)
    return final.eta(rows, cols, per_example=per_example, constrained=constrained)


def fisher_information(estimator, rows=None, columns=None, *, dense=None):
    """Fisher information matrix of training values of a FIL estimator or pipeline.

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one
        The model whose training values are audited.
    rows : None, int, array-like of int or array-like of bool, default=None
        Training rows, as in :func:`eta` (duplicates refused).
    columns : None, or one or several features, default=None
        Features, as in :func:`eta` (original features through a pipeline).
    dense : bool or None, default=None
        As in :meth:`~sklearn_privacy.FILLinearRegression.fisher_information`.

    Returns
    -------
    fim : ndarray or LinearOperator of shape (n_values, n_values)
        Data values ordered row-major over the final step's columns (ascending).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.fil import eta, fisher_information
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(50, 3)); y = X @ [1.0, -1.0, 0.5] + rng.normal(size=50)
    >>> model = FILLinearRegression(sigma=1.0, random_state=0).fit(X, y)
    >>> fim = fisher_information(model, rows=[0], columns=[0, 1])
    >>> fim.shape
    (2, 2)
    >>> eta_0 = eta(model, rows=[0], columns=[0, 1])
    >>> bool(np.isclose(np.sqrt(np.linalg.eigvalsh(fim).max()), eta_0))
    True
    """
    final, cols = _final_and_columns(estimator, columns)
    return final.fisher_information(rows, cols, dense=dense)


def sigma_for_eta(estimator, target_eta: float, *, aggregate: str = "max", columns=None,
                  constrained: bool = False) -> float:
    """Noise scale at which the per-example eta of a FIL estimator or pipeline hits a target.

    The pipeline-level form of :meth:`FILLogisticRegression.sigma_for_eta
    <sklearn_privacy.FILLogisticRegression.sigma_for_eta>`: ``columns`` may name an
    *original* input feature of the pipeline (``"sex"``), which maps to every column the
    preprocessing derives from it, as in :func:`eta`. Refit with
    ``pipe.set_params(<last step>__sigma=sigma)`` to release a model whose per-example eta
    aggregate equals ``target_eta``.

    eta is not unit-free: it measures how precisely an unbiased adversary can recover a
    training *value* (standard deviation at least ``1 / eta`` in the units of that
    value), so rescaling a feature or the target rescales eta and the sigma returned
    here (standardise the columns, or read eta in the units the adversary cares about).
    For a one-hot attribute, ``constrained=True`` counts only moves between its levels
    (the unconstrained eta also counts impossible moves such as "half female"; see the
    FIL user guide).

    Parameters
    ----------
    estimator : fitted FIL estimator, or a Pipeline ending in one
        The model whose training values are audited.
    target_eta : float > 0
        The per-example eta the refitted model must reach.
    aggregate : {"max", "mean"}, default="max"
        Which aggregate of the per-example eta must equal ``target_eta``.
    columns : None, or one or several features, default=None
        Features, as in :func:`eta` (original features through a pipeline).
    constrained : bool, default=False
        As in :func:`eta`, for a one-hot attribute.

    Returns
    -------
    sigma : float
        The output-perturbation noise scale.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sklearn_privacy import FILLogisticRegression
    >>> from sklearn_privacy.fil import eta, sigma_for_eta
    >>> rng = np.random.RandomState(0)
    >>> X = pd.DataFrame({"age": rng.normal(40, 10, 300),
    ...                   "sex": rng.choice(["Female", "Male"], 300)})
    >>> y = (X["age"] + 5 * (X["sex"] == "Male") > 42).astype(int)
    >>> pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
    ...                                              (OneHotEncoder(), ["sex"])),
    ...                      FILLogisticRegression(sigma=1.0, random_state=0)).fit(X, y)
    >>> sigma = sigma_for_eta(pipe, 0.5, columns="sex")
    >>> refit = pipe.set_params(fillogisticregression__sigma=sigma).fit(X, y)
    >>> round(float(eta(refit, columns="sex", per_example=True).max()), 6)
    0.5
    """
    final, cols = _final_and_columns(estimator, columns)
    return final.sigma_for_eta(target_eta, aggregate=aggregate, columns=cols,
                               constrained=constrained)
