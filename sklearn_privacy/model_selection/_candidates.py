"""The candidates of a private search: which trainings it can account for, and at what cost.

A candidate is a DP estimator (possibly at the end of a pipeline of data-independent
steps); its cost -- a Gaussian sensitivity/sigma, a pure epsilon or a Renyi-DP curve -- is
computed from public quantities only (hyperparameters, the number of training rows, the
label set and declared public weights), and the fitted candidate is checked against it.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from ..additive._boosting import _BaseDPBoosting
from ..dummy import DPDummyClassifier, DPDummyRegressor
from ..fil._base import BaseFILEstimator
from ..linear_model._estimators import _BaseObjectivePerturbation
from ..mechanisms._gaussian import analytic_gaussian_sigma
from ..mechanisms._objective_perturbation import gaussian_objective_rdp
from ..mechanisms._output_perturbation import minimiser_sensitivity
from ..multicalibration import PrivateMulticalibrator
from ..privacy._tradeoff import epsilon_value


class _RdpCurve:
    """The Renyi-DP curve of a Gaussian objective-perturbation candidate (cached: the
    accountant evaluates it on two fixed grids of orders)."""

    def __init__(self, epsilon, delta, dim):
        self.key = (float(epsilon), float(delta), int(dim))
        self._cache = {}

    def __call__(self, orders):
        orders = np.asarray(orders, dtype=np.float64)
        key = (orders.size, float(orders[0]), float(orders[-1]))
        if key not in self._cache:
            eps, delta, dim = self.key
            self._cache[key] = gaussian_objective_rdp(orders, epsilon=eps, delta=delta,
                                                      dim=dim)
        return self._cache[key]


def _final_step(estimator):
    """``(final estimator, path)`` of a Pipeline (recursively), else the estimator."""
    path = []
    while isinstance(estimator, Pipeline):
        name, estimator = estimator.steps[-1]
        path.append(name)
    return estimator, path


def _data_independent_reason(step, fitted=True) -> str | None:
    """``None`` when the preprocessing ``step`` holds nothing learnt from the rows, else
    why it may have learnt from them. Unfitted (``fitted=False``): decided from the
    parameters, steps that state their own claim are left to the fitted check."""
    if step is None or (isinstance(step, str) and step in ("drop", "passthrough")):
        return None
    claim = getattr(step, "__sklearn_privacy_claim__", None)
    if callable(claim):
        if not fitted:
            return None
        claims = claim()
        claims = claims if isinstance(claims, list) else [claims]
        bad = [c for c in claims if c.kind != "data_independent"]
        if not bad:
            return None
        return f"{type(step).__name__} is not data-independent: {bad[0].reason}"
    if isinstance(step, FrozenEstimator):
        return None  # fitted elsewhere (the caller's responsibility, as for any frozen model)
    if isinstance(step, FunctionTransformer):
        return None  # a fixed function of each row
    if isinstance(step, OneHotEncoder):
        if isinstance(step.categories, str):
            return ("OneHotEncoder(categories='auto') learns its categories from the rows; "
                    "pass categories=[...] (public lists)")
        return None
    if isinstance(step, Pipeline):
        for _, sub in step.steps:
            reason = _data_independent_reason(sub, fitted)
            if reason:
                return reason
        return None
    if isinstance(step, ColumnTransformer):
        subs = [t for _, t, _ in (step.transformers_ if fitted else step.transformers)]
        if not fitted and step.remainder not in ("drop", "passthrough"):
            subs.append(step.remainder)
        for sub in subs:
            reason = _data_independent_reason(sub, fitted)
            if reason:
                return reason
        return None
    if isinstance(step, FeatureUnion):
        for _, sub in step.transformer_list:
            reason = _data_independent_reason(sub, fitted)
            if reason:
                return reason
        return None
    return (f"{type(step).__name__} is fitted on the private rows and the search cannot "
            "tell that its state is data-independent")


def _check_candidate(candidate, n_train, n_classes=2, sample_weight=None):
    """``(gaussian_mu, pure_epsilon, rdp_curve)`` of the training mechanism of one
    candidate (``rdp_curve`` None, or a callable of Renyi orders).

    Computed from public quantities only (hyperparameters, the number of training rows,
    the label set, public by the threat model, and declared public weights), so that
    every setting of the grid is accounted for, drawn or not.
    """
    final, path = _final_step(candidate)
    where = "estimator" + "".join(f"[{p!r}]" for p in path)
    _check_preprocessing(candidate, fitted=False)
    if isinstance(final, (DPDummyClassifier, DPDummyRegressor)):
        return 0.0, float(final.epsilon), None
    if isinstance(final, _BaseDPBoosting):
        # pure epsilon-DP by basic composition, or exactly mu-GDP at delta > 0 (its plan
        # composes every query in Gaussian DP): read from the parameters only
        delta = float(final.delta)
        eps = epsilon_value(final.epsilon, delta)
        if delta == 0.0:
            return 0.0, eps, None
        return 1.0 / analytic_gaussian_sigma(eps, delta, 1.0), 0.0, None
    if isinstance(final, _BaseObjectivePerturbation):
        if float(final.delta) == 0.0:
            return 0.0, final._epsilon_value(), None
        multinomial = is_classifier(final) and n_classes > 2
        dim = 2 * (n_classes - 1) if multinomial else 2
        return 0.0, 0.0, _RdpCurve(final._epsilon_value(), final.delta, dim)
    if isinstance(final, BaseFILEstimator):
        if final._data_dependent_weights:
            raise ValueError(
                f"{where} is {type(final).__name__}: its weights are recomputed from the "
                "data, so it has no DP guarantee to select over. Use FILLogisticRegression "
                "or FILLinearRegression with data_norm set.")
        loss = final._loss.name
        if loss == "logistic" and n_classes > 2:
            loss = "multinomial"
        epsilon = getattr(final, "epsilon", None)
        if epsilon is not None:
            # the noise is set from epsilon by the fit's own plan: the ratio of the
            # sensitivity to the noise scale depends on (epsilon, delta) only, whatever
            # the number of parameters (which moves alpha="auto" and the noise together)
            sw = np.ones(n_train) if sample_weight is None else sample_weight
            try:
                plan = final._public_noise(epsilon, final.delta,
                                           n_eff=float(np.sum(sw) / np.max(sw)),
                                           n_params=1, loss=loss, n_classes=n_classes,
                                           sample_weight=sw)
            except ValueError as exc:
                raise ValueError(f"{where} ({type(final).__name__}): {exc} Every "
                                 "candidate must be trained with a DP mechanism.") from None
            if plan["kind"] == "laplace-norm":
                return 0.0, plan["sensitivity"] / plan["scale"], None
            return plan["sensitivity"] / plan["scale"], 0.0, None
        alpha = final._alpha_param() if hasattr(final, "_alpha_param") else final.alpha
        if isinstance(alpha, str):
            raise ValueError(f"{where}: alpha='auto' needs epsilon=...; pass epsilon or a "
                             "number for alpha.")
        sens, reason = minimiser_sensitivity(
            loss=loss, alpha=float(alpha), data_norm=final.data_norm,
            fit_intercept=final._solver_intercept(),
            sample_weight=np.ones(n_train) if sample_weight is None else sample_weight,
            target_bound=getattr(final, "target_bound", None))
        if not np.isfinite(sens):
            raise ValueError(f"{where} ({type(final).__name__}) has {reason} Every "
                             "candidate must be trained with a DP mechanism.")
        sigma = 1.0 if final.sigma is None else final.sigma
        if isinstance(sigma, bool) or not isinstance(sigma, Real) or not sigma > 0:
            raise ValueError(f"{where}: sigma must be a number > 0; got {sigma!r}.")
        return sens / float(sigma), 0.0, None
    if isinstance(final, PrivateMulticalibrator):
        if final.mechanism != "numeric_sparse":
            raise ValueError(
                f"{where} is PrivateMulticalibrator(mechanism={final.mechanism!r}), which "
                "claims no DP guarantee; use mechanism='numeric_sparse'.")
        if not isinstance(final.estimator, FrozenEstimator):
            raise ValueError(
                f"{where} is PrivateMulticalibrator with a base estimator fitted on the "
                "private rows (no guarantee); pass estimator=FrozenEstimator(model) of a "
                "model trained on other data.")
        return 0.0, float(final.epsilon), None
    raise TypeError(
        f"{where} is {type(final).__name__}: RandomStoppingSearch can account only for "
        "candidates whose training is a DP mechanism it knows: DPLogisticRegression or "
        "DPLinearRegression (objective perturbation), FILLogisticRegression or "
        "FILLinearRegression with data_norm set (output perturbation), "
        "DPBoostingClassifier or DPBoostingRegressor (private boosting), DPDummyClassifier "
        "or DPDummyRegressor (the constant), or "
        "PrivateMulticalibrator(mechanism='numeric_sparse') over a FrozenEstimator, "
        "possibly at the end of a Pipeline of data-independent transformers.")


def _check_preprocessing(candidate, fitted):
    """Every step before the final estimator must be data-independent."""
    steps, node = [], candidate
    while isinstance(node, Pipeline):
        steps.extend(s for _, s in node.steps[:-1])
        node = node.steps[-1][1]
    for step in steps:
        reason = _data_independent_reason(step, fitted)
        if reason:
            raise ValueError(
                "A preprocessing step of the candidate pipeline voids the candidate's "
                f"guarantee: {reason}. Use data-independent steps (declared bounds, "
                "categories given) or tune on a public split.")


def _verify_fitted(fitted, mu, pure_eps):
    """The fitted candidate's own claim must not exceed what the accounting assumed.

    Every check reads public quantities of the candidate (its parameters and the
    constants of its plan), never an outcome of its fit on the rows."""
    final, _ = _final_step(fitted)
    _check_preprocessing(fitted, fitted=True)
    if isinstance(final, (_BaseObjectivePerturbation, _BaseDPBoosting, DPDummyClassifier,
                          DPDummyRegressor)):
        delta = float(getattr(final, "delta", 0.0))
        stated = (final._epsilon_value() if isinstance(final, _BaseObjectivePerturbation)
                  else epsilon_value(final.epsilon, delta))
        if not (final.delta_ == delta and final.epsilon_ in (stated, np.inf)):
            raise RuntimeError(
                f"The fitted candidate reports (epsilon_, delta_) = ({final.epsilon_}, "
                f"{final.delta_}), not its parameters ({final.epsilon_reason_}).")
    elif isinstance(final, BaseFILEstimator) and final.__dict__.get("noise_") == "laplace-norm":
        if not final.epsilon_ <= pure_eps * (1 + 1e-9):
            raise RuntimeError(
                f"The fitted candidate reports epsilon_ {final.epsilon_:.6g} but the search "
                f"accounted for {pure_eps:.6g} ({final.epsilon_reason_}).")
    elif isinstance(final, BaseFILEstimator):
        got = final.sensitivity_ / final._audit_sigma()
        if got > mu * (1 + 1e-9):
            raise RuntimeError(
                f"The fitted candidate reports sensitivity/sigma {got:.6g} but the search "
                f"accounted for {mu:.6g} ({final.epsilon_reason_}).")
    else:
        if not final.epsilon_ <= pure_eps * (1 + 1e-12):
            raise ValueError(
                "The fitted PrivateMulticalibrator reports epsilon_ = "
                f"{final.epsilon_} above its epsilon = {pure_eps}: its guarantee "
                "does not hold for these rows.")


def _with_budget(candidate, budget):
    """``candidate`` with the ``epsilon`` of its final estimator set to ``budget`` (a
    number; ``None`` leaves it)."""
    if budget is None:
        return candidate
    final, path = _final_step(candidate)
    params = final.get_params(deep=False)
    if "epsilon" not in params or params.get("sigma") is not None:
        raise ValueError(
            f"risk sets every candidate's epsilon, but {type(final).__name__} has no "
            "epsilon parameter or sets its noise by sigma=...; leave sigma=None (the "
            "search sets epsilon) or leave risk=None.")
    return candidate.set_params(**{"__".join([*path, "epsilon"]): float(budget)})
