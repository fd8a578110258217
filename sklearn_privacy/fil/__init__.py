"""Fisher information loss of output-perturbed generalised linear models."""

from ._audit import eta, fisher_information, sigma_for_eta
from ._classification import FILLogisticRegression
from ._display import EtaDisplay
from ._dp import analytic_gaussian_delta, analytic_gaussian_epsilon, analytic_gaussian_sigma
from ._irfil import IRFILLinearRegression, IRFILLogisticRegression
from ._poisson import FILPoissonRegressor, IRFILPoissonRegressor
from ._regression import FILLinearRegression
from ._sklearn_audit import audit

__all__ = ["EtaDisplay", "FILLinearRegression",
           "FILLogisticRegression", "FILPoissonRegressor", "IRFILLinearRegression",
           "IRFILLogisticRegression", "IRFILPoissonRegressor",
           "analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma",
           "audit", "eta", "fisher_information", "sigma_for_eta"]
