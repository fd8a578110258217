"""Fisher information loss of output-perturbed generalised linear models."""

from ._audit import eta, fisher_information
from ._classification import FILLogisticRegression
from ._display import EtaDisplay
from ._dp import analytic_gaussian_delta, analytic_gaussian_epsilon, analytic_gaussian_sigma
from ._irfil import IRFILLinearRegression, IRFILLogisticRegression
from ._regression import FILLinearRegression

__all__ = ["EtaDisplay", "FILLinearRegression",
           "FILLogisticRegression", "IRFILLinearRegression", "IRFILLogisticRegression",
           "analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma",
           "eta", "fisher_information"]
