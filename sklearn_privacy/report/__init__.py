"""One privacy report per model: claimed, per-example and empirical privacy side by side."""

from ._record import ReleasePolicy
from ._report import PrivacyReport, ReportSection

__all__ = ["PrivacyReport", "ReleasePolicy", "ReportSection"]
