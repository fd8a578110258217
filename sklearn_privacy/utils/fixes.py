"""The one place where private scikit-learn API is imported.

Everything here is re-exported under the same name, so a change of scikit-learn's
internals is fixed in this module only.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight

__all__ = ["Hidden", "Interval", "StrOptions", "_check_sample_weight", "_fit_context"]
