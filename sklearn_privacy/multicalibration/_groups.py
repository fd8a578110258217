"""Group definitions (re-exported from :mod:`sklearn_privacy.utils._groups`).

The implementation lives in ``sklearn_privacy.utils`` so that both
``sklearn_privacy.metrics`` and ``sklearn_privacy.multicalibration`` can use it without
importing each other.
"""

from ..utils._groups import (
    ColumnPredicate,
    Group,
    as_2d_data,
    as_groups,
    conjunction_groups,
    membership_matrix,
)

__all__ = ["ColumnPredicate", "Group", "as_2d_data", "as_groups", "conjunction_groups",
           "membership_matrix"]
