"""The module the audited scikit-learn models had before ``fil/_audits/``.

Kept so that pickles written by earlier versions load: a pickle names its class's module.
"""

from ._audits._audited import (  # noqa: F401
    AuditedLinearRegression,
    AuditedLogisticRegression,
    AuditedOneVsRestClassifier,
    AuditedPoissonRegressor,
)
