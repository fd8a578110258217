"""Fisher information loss (FIL): how precisely a release reveals each training value.

- Estimators: :class:`~sklearn_privacy.FILLinearRegression`,
  :class:`~sklearn_privacy.FILLogisticRegression` (binary or multinomial) and
  :class:`~sklearn_privacy.FILPoissonRegressor` release their parameters with Gaussian
  output perturbation and report the eta of every training value; their IRFIL variants
  reweight the rows so that every example (or attribute) leaks the same eta.
- Audits: :func:`eta`, :func:`fisher_information` and :func:`sigma_for_eta` of a pipeline
  ending in a FIL estimator (with respect to its raw inputs through the preprocessing's
  derivative), and :func:`audit` of a linear model, a one-vs-rest composition or a
  multi-layer perceptron already trained with scikit-learn.
- The (epsilon, delta) view: the analytic Gaussian mechanism's
  :func:`analytic_gaussian_epsilon`, :func:`analytic_gaussian_sigma` and
  :func:`analytic_gaussian_delta` (defined in :mod:`sklearn_privacy.mechanisms`).
- Figures: :class:`EtaDisplay`.
"""

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
