"""One privacy report per model: claimed, per-example and empirical privacy side by side."""

from ._report import PrivacyReport, ReportSection

__all__ = ["PrivacyReport", "ReportSection"]
