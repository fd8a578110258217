"""Fisher information loss of output-perturbed generalised linear models."""

from ._audit import eta, fisher_information
from ._base import BaseFILEstimator
from ._classification import FILLogisticRegression
from ._display import EtaDisplay
from ._engine import FILEngine
from ._irfil import IRFILLinearRegression, IRFILLogisticRegression
from ._regression import FILLinearRegression

__all__ = ["BaseFILEstimator", "FILEngine", "FILLinearRegression", "FILLogisticRegression",
           "IRFILLinearRegression", "IRFILLogisticRegression", "eta", "fisher_information",
           "EtaDisplay"]
