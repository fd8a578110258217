"""Fisher information loss of output-perturbed generalised linear models."""

from ..mechanisms._gaussian import (
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
)
from ._audits._pipeline import eta, fisher_information, sigma_for_eta
from ._audits._sklearn import audit
from ._classification import FILLogisticRegression
from ._display import EtaDisplay
from ._irfil import IRFILLinearRegression, IRFILLogisticRegression
from ._poisson import FILPoissonRegressor, IRFILPoissonRegressor
from ._regression import FILLinearRegression

__all__ = ["EtaDisplay", "FILLinearRegression",
           "FILLogisticRegression", "FILPoissonRegressor", "IRFILLinearRegression",
           "IRFILLogisticRegression", "IRFILPoissonRegressor",
           "analytic_gaussian_delta", "analytic_gaussian_epsilon", "analytic_gaussian_sigma",
           "audit", "eta", "fisher_information", "sigma_for_eta"]
