"""Exceptions raised by sklearn_privacy."""


class AuditStateUnavailableError(AttributeError, RuntimeError):
    """Audit state (training data, unperturbed minimiser, Hessian) is not available.

    Raised by the auditing methods of a privacy-aware estimator (``eta_``,
    ``fisher_information``, ...) when it was loaded from a pickle/joblib dump: the dump
    holds only what is safe to release (the perturbed parameters), never the training
    rows or the exact minimiser. Refit the estimator on the training data, in the
    session that owns the data, to audit it.
    """


class PrivacyWarning(UserWarning):
    """A setting voids (part of) the privacy guarantee the caller may expect.

    Emitted when a call runs but cannot deliver what its parameters suggest: for
    example a differentially private mechanism whose base model was fitted on the
    protected rows (``epsilon_spent_`` becomes infinite), or rows scaled to a norm
    bound. Turn it into an error with ``warnings.simplefilter("error", PrivacyWarning)``.
    """


class NumericalPrecisionWarning(UserWarning):
    """A reported figure may be inaccurate because of floating-point limits.

    For example an ill-conditioned Hessian: the relative error of eta is about
    ``cond(H) * machine epsilon``.
    """
