"""Hyperparameter selection on private rows that is itself differentially private."""

from ._accounting import gaussian_rdp, laplace_rdp, pure_dp_rdp, random_stopping_epsilon
from ._search import RandomStoppingSearch

__all__ = ["RandomStoppingSearch", "gaussian_rdp", "laplace_rdp", "pure_dp_rdp",
           "random_stopping_epsilon"]
