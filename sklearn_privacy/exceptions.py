"""Exceptions raised by sklearn_privacy."""


class AuditStateUnavailableError(AttributeError, RuntimeError):
    """Audit state (training data, unperturbed minimiser, Hessian) is not available.

    Raised by the auditing methods of a privacy-aware estimator (``eta_``,
    ``fisher_information``, ...) when it was loaded from a pickle/joblib dump: the dump
    holds only what is safe to release (the perturbed parameters), never the training
    rows or the exact minimiser. Refit the estimator on the training data, in the
    session that owns the data, to audit it.

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
    ...     print("refit to audit")
    refit to audit
    """


class PrivacyWarning(UserWarning):
    """A setting voids (part of) the privacy guarantee the caller may expect.

    Emitted when a call runs but cannot deliver what its parameters suggest: for
    example a differentially private mechanism whose base model was fitted on the
    protected rows (``epsilon_spent_`` becomes infinite), or rows scaled to a norm
    bound. Turn it into an error with ``warnings.simplefilter("error", PrivacyWarning)``.

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
    ...         FILLinearRegression(data_norm=1.0, random_state=0).fit(X, y)
    ...     except PrivacyWarning:
    ...         print("a row was scaled to the norm bound")
    a row was scaled to the norm bound
    """


class NumericalPrecisionWarning(UserWarning):
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

    Examples
    --------
    >>> from sklearn_privacy.exceptions import UncertifiedMinimumError
    >>> issubclass(UncertifiedMinimumError, ValueError)
    True
    """

    def __init__(self, message, smallest_eigenvalue=float("nan")):
        super().__init__(message)
        self.smallest_eigenvalue = smallest_eigenvalue
