"""FIL audit of scikit-learn's multi-layer perceptrons and their exact derivatives (private)."""

# pickles written by earlier versions name ``sklearn_privacy.fil._mlp.AuditedMLP``
from ._audit import AuditedMLP  # noqa: F401
