"""Exceptions and warnings of sklearn_privacy.

Every warning the package emits is a :class:`SklearnPrivacyWarning` (a ``UserWarning``)
and is reported at the caller's line: the first frame outside the package, scikit-learn,
joblib and the standard library (``utils._warnings.warn_user``).
"""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning


class AuditStateUnavailableError(AttributeError, RuntimeError):
    """Audit state (training data, unperturbed minimiser, Hessian) is not available.

    Raised by the auditing methods of a privacy-aware estimator (``eta_``,
    ``fisher_information``, ...) when it was loaded from a pickle/joblib dump: the dump
    holds only what is safe to release (the perturbed parameters), never the training
    rows or the exact minimiser. ``sklearn_privacy.fil.audit(model, X, y)`` gives it back
    from the training rows (the estimator's own fit, run again), in the session that
    owns the data.

    Estimators fitted in the worker processes of joblib's default backend (loky: what
    ``cross_validate(..., n_jobs=2)`` and ``GridSearchCV(n_jobs=2)`` use) come back
    *with* their audit state: it travels in that process pool's own pickler, and in no
    other pickle (``pickle``, ``joblib.dump``, ``cloudpickle``) nor in the object
    :func:`~sklearn_privacy.utils.strip_for_release` publishes.

    See Also
    --------
    sklearn_privacy.utils.strip_for_release : Remove everything but the release from a
        fitted estimator.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.exceptions import AuditStateUnavailableError
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(20, 2)); y = X.sum(axis=1)
    >>> model = FILLinearRegression(random_state=0).fit(X, y)
    >>> loaded = pickle.loads(pickle.dumps(model))
    >>> try:
    ...     loaded.eta_
    ... except AuditStateUnavailableError:
    ...     print("audit it again from its rows")
    audit it again from its rows
    >>> from sklearn_privacy import fil
    >>> bool((fil.audit(loaded, X, y).eta_ == model.eta_).all())
    True
    """


class SklearnPrivacyWarning(UserWarning):
    """Base class of every warning emitted by sklearn_privacy.

    ``warnings.simplefilter("error", SklearnPrivacyWarning)`` turns all of them into
    errors; each is still a ``UserWarning``.

    See Also
    --------
    PrivacyWarning : A setting voids (part of) the privacy guarantee.
    StatisticalWarning : A result may not hold on new data.

    Examples
    --------
    >>> from sklearn_privacy.exceptions import PrivacyWarning, SklearnPrivacyWarning
    >>> issubclass(PrivacyWarning, SklearnPrivacyWarning)
    True
    """


class StatisticalWarning(SklearnPrivacyWarning):
    """A result may not hold on new data: too few rows for a correction or a comparison.

    For example multicalibration updates of cells too small to be told apart from noise,
    or an audited model whose coefficients are far from the exact minimiser.

    See Also
    --------
    NumericalPrecisionWarning : A figure may be inaccurate (floating point).

    Examples
    --------
    >>> from sklearn_privacy.exceptions import StatisticalWarning
    >>> issubclass(StatisticalWarning, UserWarning)
    True
    """


class ConvergenceWarning(SklearnPrivacyWarning, _SklearnConvergenceWarning):
    """A solver stopped before its tolerance (also scikit-learn's ``ConvergenceWarning``).

    The FIL estimators need the exact minimiser: their eta and their DP view describe it,
    so a Newton solve that stops early says so with this warning.

    See Also
    --------
    NumericalPrecisionWarning : A figure may be inaccurate (floating point).

    Examples
    --------
    >>> import sklearn.exceptions
    >>> from sklearn_privacy.exceptions import ConvergenceWarning
    >>> issubclass(ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
    True
    """


class PrivacyWarning(SklearnPrivacyWarning):
    """A setting voids (part of) the privacy guarantee the caller may expect.

    Emitted when a call runs but cannot deliver what its parameters suggest: for
    example a differentially private mechanism whose base model was fitted on the
    protected rows (``epsilon_`` becomes infinite), or a shared random generator as the
    noise source. It depends on the parameters only, never on the rows (whether a row
    exceeds a declared bound is not warned about: that would tell one row apart). Turn
    it into an error with ``warnings.simplefilter("error", PrivacyWarning)``.

    See Also
    --------
    NumericalPrecisionWarning : A figure may be inaccurate (not a privacy matter).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.exceptions import PrivacyWarning
    >>> X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 1.0]]); y = np.array([1.0, 0.0, 1.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", PrivacyWarning)
    ...     try:
    ...         FILLinearRegression(random_state=np.random.default_rng(0)).fit(X, y)
    ...     except PrivacyWarning:
    ...         print("a shared generator: clones draw the same noise")
    a shared generator: clones draw the same noise
    """


class NoiseDominatesWarning(PrivacyWarning):
    """The expected noise of a private release is larger than any signal it can carry.

    Emitted at fit by :class:`~sklearn_privacy.DPLogisticRegression` and
    :class:`~sklearn_privacy.DPLinearRegression` from public quantities only
    (``n``, the number of parameters, ``epsilon``, ``delta``, ``data_norm``, ``alpha``):
    the expected norm of the noise's effect on the coefficients exceeds the largest
    coefficient norm the penalty allows, so the release is likely no better than a
    constant prediction. Larger ``epsilon``, larger ``alpha`` or more rows help.

    See Also
    --------
    PrivacyWarning : Its parent: a setting voids (part of) the expected guarantee.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_privacy.exceptions import NoiseDominatesWarning
    >>> from sklearn_privacy.linear_model import DPLogisticRegression
    >>> X = np.random.default_rng(0).normal(size=(50, 5)); y = (X[:, 0] > 0).astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = DPLogisticRegression(epsilon=0.1, alpha=1e-4, data_norm=3.0).fit(X, y)
    >>> any(issubclass(w.category, NoiseDominatesWarning) for w in caught)
    True
    """


class NumericalPrecisionWarning(SklearnPrivacyWarning):
    """A reported figure may be inaccurate because of floating-point limits.

    For example an ill-conditioned Hessian: the relative error of eta is about
    ``cond(H) * machine epsilon``.

    See Also
    --------
    PrivacyWarning : A setting voids (part of) the privacy guarantee.

    Examples
    --------
    Two almost collinear features make the Hessian ill-conditioned:

    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.exceptions import NumericalPrecisionWarning
    >>> rng = np.random.RandomState(0)
    >>> x = rng.normal(size=50)
    >>> X = np.column_stack([x, x + 1e-5 * rng.normal(size=50)])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", NumericalPrecisionWarning)
    ...     _ = FILLinearRegression(alpha=0.0, random_state=0).fit(X, x)
    >>> any(w.category is NumericalPrecisionWarning for w in caught)
    True
    """


class UncertifiedMinimumError(ValueError):
    """The audited parameters are not a certified strict local minimum.

    Raised by :func:`sklearn_privacy.fil.audit` for a non-convex model (a scikit-learn
    ``MLPClassifier`` / ``MLPRegressor``) when, after the Newton polish, the gradient of
    the training objective did not reach the audit's threshold or the exact Hessian at the
    polished point is not positive definite (a saddle point, a flat direction such as a
    unit whose outgoing weights are all zero, or the rotation symmetry of stacked
    identity layers). The implicit-function-theorem Jacobians behind eta exist only at a
    strict local minimum, so no eta is reported. The message gives the reason and the
    smallest eigenvalue; ``smallest_eigenvalue`` holds it (``nan`` when the polish
    stopped first).

    Parameters
    ----------
    message : str
        Why the minimum is not certified (gradient threshold missed or Hessian not
        positive definite), with the smallest eigenvalue.
    smallest_eigenvalue : float, default=nan
        Smallest eigenvalue of the exact Hessian at the polished parameters; ``nan``
        when the polish stopped before the Hessian was formed.

    See Also
    --------
    NumericalPrecisionWarning : A reported figure may be inaccurate because of
        floating-point limits.

    Examples
    --------
    >>> from sklearn_privacy.exceptions import UncertifiedMinimumError
    >>> issubclass(UncertifiedMinimumError, ValueError)
    True
    """

    def __init__(self, message, smallest_eigenvalue=float("nan")):
        super().__init__(message)
        self.smallest_eigenvalue = smallest_eigenvalue
