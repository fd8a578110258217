"""Differentially private constant models: the baseline a private model must beat."""

from ._dummy import DPDummyClassifier, DPDummyRegressor

__all__ = ["DPDummyClassifier", "DPDummyRegressor"]
