"""Every public function declares its parameters with scikit-learn's ``validate_params``.

Estimators declare theirs in ``_parameter_constraints`` (checked by scikit-learn's common
tests, ``tests/test_common.py``); functions use the decorator (through
``sklearn_privacy.utils.fixes``), so that a bad value raises
``InvalidParameterError`` -- a ``ValueError`` and a ``TypeError`` -- whose message names
the parameter, the function and what is accepted. This module

* inspects every function in the top-level ``__all__`` and in each public subpackage's
  ``__all__`` and fails on one that is not wrapped, or whose constraints name a parameter
  it does not have (``validate_params`` silently ignores such a key: the parameter would
  go unchecked);
* calls each function with one bad value per declared parameter and checks the message;
* calls each with values that worked before the constraints were declared (numpy
  scalars, pandas objects, floats where counts are thresholds) and checks the result.
"""

import importlib
import inspect
import pkgutil
from numbers import Integral

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

import sklearn_privacy
from sklearn_privacy import (
    attacks,
    datasets,
    fil,
    linear_model,
    metrics,
    model_selection,
    utils,
    werm,
)
from sklearn_privacy import multicalibration as mc
from sklearn_privacy import privacy as priv

#: Modules whose functions are exempt, with the reason. Keep it short.
EXEMPT_MODULES: dict[str, str] = {}


def _public_functions():
    names = ["sklearn_privacy"] + [
        m.name for m in pkgutil.iter_modules(sklearn_privacy.__path__, "sklearn_privacy.")
        if not m.name.rsplit(".", 1)[-1].startswith("_")
    ]
    found = {}
    for name in names:
        if name in EXEMPT_MODULES:
            continue
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if inspect.isfunction(obj) and not obj.__module__.startswith(
                    tuple(EXEMPT_MODULES)):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(found.items())


PUBLIC_FUNCTIONS = _public_functions()


def test_the_inventory_is_not_empty():
    # the discovery itself: the functions converted here must all be found
    names = {name.rsplit(".", 1)[-1] for name, _ in PUBLIC_FUNCTIONS}
    assert {"eta", "audit", "analytic_gaussian_sigma", "random_stopping_epsilon",
            "multicalibration_error", "privacy_claim", "noise_generator",
            "conjunction_groups", "make_count_data", "auto_alpha",
            "epsilon_ratio", "canary_audit", "lira", "rmia", "one_run_p_value",
            "worst_case_neighbours", "refit_under_leakage_bound"} <= names
    assert len(PUBLIC_FUNCTIONS) >= 50


@pytest.mark.parametrize("name, func", PUBLIC_FUNCTIONS, ids=[n for n, _ in PUBLIC_FUNCTIONS])
def test_public_function_is_wrapped_by_validate_params(name, func):
    constraints = getattr(func, "_skl_parameter_constraints", None)
    assert hasattr(func, "__wrapped__") and constraints is not None, (
        f"{name} validates its parameters by hand; declare them with "
        "sklearn_privacy.utils.fixes.validate_params")
    params = set(inspect.signature(func).parameters)
    assert set(constraints) <= params, (
        f"{name}: constraints for {sorted(set(constraints) - params)}, which it does not take")
    assert constraints, f"{name}: no parameter is constrained"


def test_an_undeclared_function_is_found():
    # the check above fails on a hand-validated function and on a misspelt key
    from sklearn_privacy.utils.fixes import validate_params

    def hand(x):
        if x < 0:
            raise ValueError("x must be >= 0")

    with pytest.raises(AssertionError, match="by hand"):
        test_public_function_is_wrapped_by_validate_params("hand", hand)
    typo = validate_params({"y": [Integral]}, prefer_skip_nested_validation=True)(hand)
    with pytest.raises(AssertionError, match=r"\['y'\]"):
        test_public_function_is_wrapped_by_validate_params("typo", typo)


_RNG = np.random.default_rng(0)
_EST = LinearRegression()

# (function, valid arguments, parameter, bad value): the bad value is refused before the
# function does anything, with an error naming the parameter.
BAD = [
    (fil.eta, {"estimator": _EST}, "per_example", "yes"),
    (fil.eta, {"estimator": _EST}, "constrained", 1),
    (fil.eta, {"estimator": _EST}, "wrt", "both"),
    (fil.eta, {"estimator": _EST}, "rows", 1.5),
    (fil.eta, {"estimator": _EST}, "columns", 1.5),
    (fil.eta, {"estimator": _EST}, "X", 3),
    (fil.fisher_information, {"estimator": _EST}, "dense", "yes"),
    (fil.fisher_information, {"estimator": _EST}, "wrt", "inputs"),
    (fil.sigma_for_eta, {"estimator": _EST, "target_eta": 1.0}, "target_eta", 0.0),
    (fil.sigma_for_eta, {"estimator": _EST, "target_eta": 1.0}, "target_eta", np.inf),
    (fil.sigma_for_eta, {"estimator": _EST, "target_eta": 1.0}, "target_eta", True),
    (fil.sigma_for_eta, {"estimator": _EST, "target_eta": 1.0}, "aggregate", "median"),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "sigma", -1.0),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "data_norm", 0.0),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "target_bound", -1.0),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "hessian", "full"),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "n_jobs", 1.5),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "verbose", -1),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "random_state", "a"),
    (fil.audit, {"estimator": _EST, "X": [[0.0]], "y": [0.0]}, "estimator", 3),
    (fil.analytic_gaussian_delta, {"epsilon": 1.0, "sigma": 1.0, "sensitivity": 1.0},
     "epsilon", -1.0),
    (fil.analytic_gaussian_delta, {"epsilon": 1.0, "sigma": 1.0, "sensitivity": 1.0},
     "epsilon", np.nan),
    (fil.analytic_gaussian_delta, {"epsilon": 1.0, "sigma": 1.0, "sensitivity": 1.0},
     "sigma", 0.0),
    (fil.analytic_gaussian_delta, {"epsilon": 1.0, "sigma": 1.0, "sensitivity": 1.0},
     "sensitivity", np.inf),
    (fil.analytic_gaussian_epsilon, {"delta": 1e-5, "sigma": 1.0, "sensitivity": 1.0},
     "delta", 1.0),
    (fil.analytic_gaussian_epsilon, {"delta": 1e-5, "sigma": 1.0, "sensitivity": 1.0},
     "sigma", True),
    (fil.analytic_gaussian_epsilon, {"delta": 1e-5, "sigma": 1.0, "sensitivity": 1.0},
     "sensitivity", -1.0),
    (fil.analytic_gaussian_sigma, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
     "epsilon", 0.0),
    (fil.analytic_gaussian_sigma, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
     "delta", "1e-5"),
    (fil.analytic_gaussian_sigma, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
     "sensitivity", 0.0),
    (model_selection.gaussian_rdp, {"orders": [2.0], "mu": 1.0}, "mu", -1.0),
    (model_selection.gaussian_rdp, {"orders": [2.0], "mu": 1.0}, "orders", None),
    (model_selection.laplace_rdp, {"orders": [2.0], "epsilon": 1.0}, "orders", 0.5),
    (model_selection.laplace_rdp, {"orders": [2.0], "epsilon": 1.0}, "epsilon", -0.1),
    (model_selection.pure_dp_rdp, {"orders": [2.0], "epsilon": 1.0}, "epsilon", np.nan),
    (model_selection.pure_dp_rdp, {"orders": [2.0], "epsilon": 1.0}, "orders", "2"),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "mean_runs", 0.5),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "score_epsilon", -1.0),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "gaussian_mu", np.inf),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "pure_epsilon", True),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "delta", 0.0),
    (model_selection.random_stopping_epsilon, {"mean_runs": 10, "score_epsilon": 0.1},
     "distribution", "poisson"),
    (werm.effective_sample_size, {"group_sizes": [1, 1], "group_weights": [0.5, 0.5]},
     "group_sizes", 3),
    (werm.epsilon_ratio, {"w": 0.5, "n_train": 10, "n_reference_samples": 10}, "w", 1.5),
    (werm.epsilon_ratio, {"w": 0.5, "n_train": 10, "n_reference_samples": 10},
     "n_train", 0),
    (werm.epsilon_ratio, {"w": 0.5, "n_train": 10, "n_reference_samples": 10},
     "n_reference_samples", np.inf),
    (werm.generalization_bound, {"vc_dim": 10, "delta": 0.05, "group_sizes": [10, 10],
                                 "group_weights": [0.5, 0.5]}, "vc_dim", 0),
    (werm.generalization_bound, {"vc_dim": 10, "delta": 0.05, "group_sizes": [10, 10],
                                 "group_weights": [0.5, 0.5]}, "delta", 1.0),
    (werm.weight_for_setting, {"setting": "equal_privacy", "n_train": 1,
                               "n_reference_samples": 1}, "setting", "equal"),
    (werm.weight_for_setting, {"setting": "equal_privacy", "n_train": 1,
                               "n_reference_samples": 1}, "n_reference_samples", np.inf),
    (metrics.multicalibration_error, {"y_true": [0, 1], "y_prob": [0.2, 0.8]}, "n_bins", 0),
    (metrics.multicalibration_error, {"y_true": [0, 1], "y_prob": [0.2, 0.8]},
     "min_size", 0),
    (metrics.multicalibration_error, {"y_true": [0, 1], "y_prob": [0.2, 0.8]},
     "weighting", "mean"),
    (metrics.multicalibration_error, {"y_true": [0, 1], "y_prob": [0.2, 0.8]}, "groups", 3),
    (metrics.multicalibration_error, {"y_true": [0, 1], "y_prob": [0.2, 0.8]},
     "y_true", None),
    (metrics.make_multicalibration_scorer, {}, "n_bins", 1.5),
    (metrics.make_multicalibration_scorer, {}, "min_size", True),
    (metrics.make_multicalibration_scorer, {}, "weighting", "median"),
    (priv.privacy_claim, {"model": _EST}, "model", 3),
    (priv.privacy_claim, {"model": _EST}, "allow_seeded", 1),
    (priv.tradeoff_curve, {"obj": None}, "max_error", 0.0),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "estimator", 3),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "fit_params", [1]),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "random_state", -1),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "rows", 5),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "page", 3),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]},
     "fit_params_from_rows", [1]),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]},
     "common_random_numbers", -1),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "n_jobs", "two"),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "verbose", "yes"),
    (priv.neighbour_invariance, {"estimator": _EST, "X": [[0.0]]}, "page_noise", "yes"),
    (utils.resolve_columns, {"columns": [0], "n_features": 3}, "n_features", -1),
    (utils.resolve_columns, {"columns": [0], "n_features": 3}, "label", "yes"),
    (utils.resolve_columns, {"columns": [0], "n_features": 3}, "param", 3),
    (utils.resolve_columns, {"columns": [0], "n_features": 3}, "allow_duplicates", None),
    (utils.feature_columns, {"estimator": _EST, "feature": 0}, "feature", [0, 1]),
    (utils.feature_columns, {"estimator": _EST, "feature": 0}, "feature", 1.5),
    (utils.feature_columns, {"estimator": _EST, "feature": 0}, "estimator", 3),
    (utils.noise_generator, {"random_state": None}, "random_state", -1),
    (utils.noise_generator, {"random_state": None}, "random_state", 2**32),
    (utils.noise_generator, {"random_state": None}, "random_state", 1.5),
    (utils.noise_generator, {"random_state": None}, "random_state", True),
    (utils.child_seeds, {"rng": _RNG, "size": 2}, "size", -1),
    (utils.child_seeds, {"rng": _RNG, "size": 2}, "size", 1.5),
    (utils.child_seeds, {"rng": _RNG, "size": 2}, "rng", 0),
    (utils.strip_for_release, {"estimator": _EST}, "estimator", 3),
    (utils.strip_for_release, {"estimator": _EST}, "inplace", "no"),
    (utils.strip_for_release, {"estimator": _EST}, "allow_training_rows", 1),
    (utils.public_weights, {"sample_weight": np.ones(3)}, "sample_weight", "heavy"),
    (mc.membership_matrix, {"groups": [0], "X": np.zeros((2, 2))}, "groups", None),
    (mc.membership_matrix, {"groups": [0], "X": np.zeros((2, 2))}, "groups", "a"),
    (mc.membership_matrix, {"groups": [0], "X": np.zeros((2, 2))}, "groups", mc.Group(0)),
    (mc.membership_matrix, {"groups": [0], "X": np.zeros((2, 2))}, "X", None),
    (mc.conjunction_groups, {"columns": [[0, 1]]}, "columns", "a"),
    (mc.conjunction_groups, {"columns": [[0, 1]]}, "max_order", 0),
    (mc.conjunction_groups, {"columns": [[0, 1]]}, "min_size", 0),
    (mc.conjunction_groups, {"columns": [[0, 1]]}, "names", 3),
    (mc.conjunction_groups, {"columns": [[0, 1]]}, "X", 3),
    (datasets.make_count_data, {}, "n_samples", 0),
    (datasets.make_count_data, {}, "n_samples", True),
    (datasets.make_count_data, {}, "overdispersion", -1.0),
    (datasets.make_count_data, {}, "as_frame", "yes"),
    (datasets.make_count_data, {}, "return_X_y", "yes"),
    (datasets.make_count_data, {}, "random_state", "a"),
]
_AUTO = {"loss": "logistic", "epsilon": 1.0, "delta": 0.0, "n": 100, "n_params": 3,
         "data_norm": 1.0}
BAD += [
    (linear_model.auto_alpha, _AUTO, "loss", "hinge"),
    (linear_model.auto_alpha, _AUTO, "epsilon", 0.0),
    (linear_model.auto_alpha, _AUTO, "delta", 1.0),
    (linear_model.auto_alpha, _AUTO, "n", 0),
    (linear_model.auto_alpha, _AUTO, "n_params", 1.5),
    (linear_model.auto_alpha, _AUTO, "data_norm", 0.0),
    (linear_model.auto_alpha, _AUTO, "n_classes", 1),
    (linear_model.auto_alpha, _AUTO, "target_bound", 0.0),
]
_PIPE = {"pipeline": __import__("sklearn.pipeline").pipeline.make_pipeline(
    linear_model.DPLogisticRegression())}
BAD += [
    (linear_model.with_declared_bounds, _PIPE, "pipeline", "not a pipeline"),
    (linear_model.with_declared_bounds, _PIPE, "intercept_share", 0.0),
]

# the attacks: valid placeholders for the required arguments (a bad value is refused before
# any of them is used), then the bad values, shared where several functions take a parameter
_DATA = {"estimator": _EST, "X": [[0.0]], "y": [0.0]}
_TRUTH = {"members": [True, False], "scores": [1.0, 0.0]}
_COMMON = [("random_state", "a"), ("random_state", -1)]
_FITTING = [("estimator", 3), ("X", 3), ("y", 3), ("fit_params", [1]), ("n_jobs", 1.5),
            ("verbose", -1), ("verbose", "loud")] + _COMMON
_FRACTION = [("known_fraction", 0.0), ("known_fraction", 1.0), ("known_fraction", True)]
_CONFIDENCE = [("confidence", 1.0), ("confidence", 0.0), ("confidence", np.nan)]
_INVERSION = [("sensitive_features", 1.5), ("candidates", 3)]
_SCORER = [("X_population", 3), ("y_population", 3), ("attack", "shadow"),
           ("thresholds", "none"), ("metric", "accuracy"), ("confidence", 1.0)] + \
    _FRACTION + _COMMON
ATTACK_BAD = {
    attacks.canary_audit: (
        {**_DATA, "index": 0, "x_replacement": [1.0], "y_replacement": 0.0},
        _FITTING + _FRACTION + _CONFIDENCE + [
            ("index", 1.5), ("index", True), ("x_replacement", 3), ("attack", "mean_"),
            ("n_releases", 3), ("n_releases", 100.0), ("delta", 1.0), ("delta", -0.1),
            ("refit", "no"), ("refit", 0)]),
    attacks.epsilon_lower_bound: (
        {}, _FRACTION + _CONFIDENCE + _COMMON + [
            ("result", {"auc": 1.0}), ("members", 3), ("scores", 3), ("delta", 1.0)]),
    attacks.one_run_audit: (
        _DATA, _FITTING + _CONFIDENCE + [
            ("n_canaries", 0), ("n_canaries", True), ("canaries", "random"),
            ("X_canaries", 3), ("y_canaries", 3), ("attack", "confidence"),
            ("n_reference_models", -1), ("k_plus", -1), ("k_minus", 1.5),
            ("delta", 1.0)]),
    attacks.one_run_audit_scores: (
        _TRUTH, _CONFIDENCE + _COMMON + [
            ("members", 3), ("scores", 3), ("k_plus", -1), ("k_minus", 2.5),
            ("delta", 1.0), ("attack", 3), ("claimed_epsilon", -1.0),
            ("claimed_delta", 1.5), ("claim_source", 3)]),
    attacks.one_run_epsilon_bound: (
        {"n_guesses": 10, "n_correct": 5}, _CONFIDENCE + [
            ("n_guesses", -1), ("n_guesses", 10.0), ("n_correct", True),
            ("n_canaries", 0), ("delta", 1.0), ("n_tests", 0)]),
    attacks.one_run_p_value: (
        {"n_guesses": 10, "n_correct": 5, "epsilon": 1.0}, [
            ("n_guesses", 2.5), ("n_correct", -1), ("epsilon", -1.0), ("epsilon", np.nan),
            ("delta", 1.5), ("n_canaries", 0)]),
    attacks.lira: (
        {**_DATA, "members": [True]}, _FITTING + _FRACTION + [
            ("members", 3), ("n_reference_models", 1), ("n_reference_models", 8.0),
            ("online", "yes"), ("global_variance", 1)]),
    attacks.rmia: (
        {**_DATA, "members": [True]}, _FITTING + _FRACTION + [
            ("members", 3), ("n_reference_models", 1), ("online", None),
            ("offline_a", 1.5), ("offline_a", True), ("gamma", 0.0), ("gamma", np.inf),
            ("n_population", 0)]),
    attacks.worst_case_neighbours: (
        _DATA, _COMMON + [
            ("estimator", 3), ("X", 3), ("y", 3), ("n_starts", 0), ("n_steps", 1.5),
            ("n_refits", True), ("n_jobs", 1.5), ("verbose", -1), ("verbose", "loud")]),
    attacks.candidate_minimisers: (
        {"estimator": _EST, "sensitive_features": 0}, _INVERSION + [
            ("X", 3), ("y", 3), ("rows", 1.5), ("method", "newton"), ("n_jobs", 1.5),
            ("verbose", -1)]),
    attacks.whitebox_inversion: (
        {"estimator": _EST, "sensitive_features": 0}, _INVERSION + _COMMON + [
            ("X", 3), ("y", 3), ("rows", 1.5), ("method", "newton"), ("prior", "uniform"),
            ("calibrate", "yes"), ("n_draws", 0), ("released", 3), ("n_jobs", 1.5),
            ("verbose", -1)]),
    attacks.fredrikson_inversion: (
        {**_DATA, "sensitive_features": 0}, _INVERSION + [
            ("estimator", 3), ("X", 3), ("y", 3), ("prior", "uniform"),
            ("residual_std", 0.0), ("X_prior", 3)]),
    attacks.prior_baseline: (
        {"X": [[0.0]], "sensitive_features": 0}, _INVERSION + [("X", 3), ("X_prior", 3)]),
    attacks.regression_inversion: (
        {**_DATA, "sensitive_features": 0, "X_population": [[0.0]], "y_population": [0.0]},
        _CONFIDENCE + _COMMON + [
            ("estimator", 3), ("X", 3), ("y", 3), ("sensitive_features", 1.5),
            ("X_population", 3), ("y_population", 3), ("n_grid", 1)]),
    attacks.evaluate_scores: (
        _TRUTH, _FRACTION + _COMMON + [
            ("members", 3), ("scores", 3), ("y", 3), ("thresholds", "none"),
            ("attack", 3)]),
    attacks.membership_inference: (
        {**_DATA, "members": [True]}, _FRACTION + _COMMON + [
            ("estimator", 3), ("X", 3), ("y", 3), ("members", 3), ("attack", "shadow"),
            ("thresholds", "none")]),
    attacks.membership_scores: (
        _DATA, [("estimator", 3), ("X", 3), ("y", 3), ("attack", "shadow")]),
    attacks.make_membership_scorer: ({"X_population": [[0.0]], "y_population": [0.0]},
                                     _SCORER),
    attacks.make_werm_membership_scorer: (
        {"X_population": [[0.0]], "y_population": [0.0], "data_source": [0]},
        _SCORER + [("data_source", 3), ("sensitive_features", 3)]),
    attacks.make_attribute_inversion_scorer: (
        {"sensitive_features": 0}, _INVERSION + _COMMON + [
            ("attack", "shadow"), ("n_draws", 0)]),
    attacks.refit_under_leakage_bound: (
        {"utility": "acc", "leakage": "mia", "bound": 0.05}, [
            ("utility", 3), ("leakage", None), ("bound", np.inf), ("bound", np.nan),
            ("bound", True), ("on_infeasible", "ignore")]),
}
BAD += [(func, kwargs, param, bad)
        for func, (kwargs, cases) in ATTACK_BAD.items() for param, bad in cases]


@pytest.mark.parametrize(
    "func, kwargs, param, bad", BAD,
    ids=[f"{f.__name__}-{p}={b!r}" for f, _, p, b in BAD])
def test_bad_value_names_the_parameter(func, kwargs, param, bad):
    with pytest.raises(ValueError, match=f"'{param}' parameter of {func.__name__} must be") \
            as info:
        func(**{**kwargs, param: bad})
    assert isinstance(info.value, TypeError)  # the type errors are TypeErrors too
    assert f"Got {bad!r}"[:20] in str(info.value)


def test_every_converted_parameter_has_a_bad_value_case():
    # a declared parameter left out of BAD would be a constraint nobody saw refuse
    tested = {(f.__name__, p) for f, _, p, _ in BAD}
    exempt = {  # constrained, but every value of a valid type is a valid value
        ("eta", "estimator"), ("fisher_information", "estimator"), ("sigma_for_eta", "X"),
        ("audit", "X"), ("audit", "y"), ("audit", "sample_weight"), ("audit", "classes"),
        ("audit", "rows"), ("eta", "X"), ("fisher_information", "rows"),
        ("fisher_information", "columns"), ("fisher_information", "X"),
        ("sigma_for_eta", "columns"), ("sigma_for_eta", "wrt"),
        ("sigma_for_eta", "constrained"), ("effective_sample_size", "group_weights"),
        ("generalization_bound", "group_sizes"), ("generalization_bound", "group_weights"),
        ("weight_for_setting", "n_train"), ("multicalibration_error", "y_prob"),
        ("neighbour_invariance", "X"), ("neighbour_invariance", "y"),
        ("neighbour_invariance", "kinds"), ("resolve_columns", "feature_names"),
        ("tradeoff_curve", "obj"),
    }
    missing = []
    for _, func in PUBLIC_FUNCTIONS:
        if func.__module__.startswith("sklearn_privacy.datasets._") and \
                func.__name__ != "make_count_data":
            continue  # the loaders have their own tests
        for param in func._skl_parameter_constraints:
            if (func.__name__, param) not in tested | exempt:
                missing.append(f"{func.__name__}({param})")
    assert not missing, missing


def test_values_that_worked_before_still_work():
    # numpy scalars where floats and ints are documented
    assert fil.analytic_gaussian_sigma(np.float64(1.0), np.float64(1e-5),
                                       sensitivity=np.int64(1)) == \
        fil.analytic_gaussian_sigma(1.0, 1e-5, sensitivity=1.0)
    assert werm.epsilon_ratio(np.float64(0.75), np.int64(100), 300) == pytest.approx(1.0)
    assert utils.child_seeds(utils.noise_generator(np.uint32(3)), np.int64(2)).shape == (2,)
    assert utils.noise_generator(np.int64(3)).randint(10**6) == \
        np.random.RandomState(3).randint(10**6)
    # one Renyi order as a scalar
    assert model_selection.gaussian_rdp(2.0, 0.5) == pytest.approx(0.25)
    # pandas objects where array-likes are documented
    y = pd.Series([0, 1, 1, 0])
    p = pd.Series([0.1, 0.9, 0.6, 0.4])
    groups = pd.DataFrame({"a": [True, True, False, False]})
    assert metrics.multicalibration_error(y, p, groups) == \
        metrics.multicalibration_error(y.to_numpy(), p.to_numpy(), groups.to_numpy())
    assert utils.resolve_columns("b", 2, pd.Index(["a", "b"])).tolist() == [1]
    # a float threshold on group sizes counts whole members
    X = np.array([[1, 0, 1], [1, 0, 0], [0, 1, 1]])
    names = [g.name for g in mc.conjunction_groups([[0, 1], [2]], X=X, min_size=2)]
    assert names == [g.name for g in mc.conjunction_groups([[0, 1], [2]], X=X,
                                                           min_size=2.0)]
    assert names == [g.name for g in mc.conjunction_groups([[0, 1], [2]], X=X,
                                                           min_size=1.5)]
    # a tuple of groups
    assert mc.membership_matrix((0, 1), X).shape == (3, 2)
    # a frame for X of an audit function
    df = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    model = fil.audit(LinearRegression().fit(df, [0.0, 1.0, 2.0, 2.5]), df,
                      [0.0, 1.0, 2.0, 2.5], sigma=1.0)
    assert fil.eta(model, rows=np.int64(0), columns="a", X=df) == \
        pytest.approx(fil.eta(model, rows=[0], columns=[0]))


def test_skipping_validation_is_scikit_learns_switch():
    # the checks follow scikit-learn's global switch, like its own functions
    import sklearn

    with pytest.raises(ValueError, match="'w' parameter"):
        werm.epsilon_ratio(2.0, 10, 10)
    with sklearn.config_context(skip_parameter_validation=True):
        assert werm.epsilon_ratio(0.5, 10, 10) == pytest.approx(1.0)


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, np.nan, np.inf])
def test_a_noise_scale_is_never_zero_when_validation_is_skipped(sensitivity):
    # estimators fit with nested validation skipped: the calibrated sigma still refuses
    # a sensitivity that would release without noise
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True), \
            pytest.raises(ValueError, match="sensitivity"):
        fil.analytic_gaussian_sigma(1.0, 1e-5, sensitivity)


@pytest.mark.parametrize("random_state", [1.5, "0", True])
def test_noise_generator_makes_no_seed_of_a_non_integer_when_validation_is_skipped(
        random_state):
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True), \
            pytest.raises(TypeError, match="random_state"):
        utils.noise_generator(random_state)


@pytest.mark.parametrize("func, args", [(fil.eta, ()), (fil.fisher_information, ()),
                                        (fil.sigma_for_eta, (0.5,))])
def test_warnings_point_at_the_call_through_the_decorator(func, args):
    # validate_params adds a frame between the user and the function: a fixed stacklevel
    # would report scikit-learn's wrapper, warn_user reports this file
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    from sklearn_privacy import FILLinearRegression
    from sklearn_privacy.exceptions import PrivacyWarning

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    pipe = make_pipeline(PCA(2), FILLinearRegression(sigma=1.0, random_state=0)).fit(X, y)
    with pytest.warns(PrivacyWarning, match="features entering the final step") as record:
        func(pipe, *args)
    assert {w.filename for w in record if issubclass(w.category, PrivacyWarning)} == {__file__}


@pytest.mark.parametrize("refit", [True, False])
def test_attack_warnings_point_at_the_call_through_the_decorator(refit):
    # canary_audit fits the user's estimator through validate_params and joblib: the fit's
    # warning (the noise swamps the model at this epsilon) names this file, not
    # scikit-learn's wrapper
    from sklearn_privacy import FILLinearRegression
    from sklearn_privacy.exceptions import PrivacyWarning

    rng = np.random.RandomState(0)
    X, y = 3.0 * rng.normal(size=(40, 3)), rng.normal(size=40)
    shared = FILLinearRegression(epsilon=0.01, data_norm=1.0, target_bound=1.0,
                                 fit_intercept=False)
    with pytest.warns(PrivacyWarning, match="no better than a constant") as record:
        attacks.canary_audit(shared, X, y, 0, X[1], 0.0,
                             n_releases=4, refit=refit, random_state=0)
    assert {w.filename for w in record if issubclass(w.category, PrivacyWarning)} == {__file__}


def test_attack_values_that_worked_before_still_work():
    from sklearn.tree import DecisionTreeClassifier

    # numpy scalars for counts, budgets and switches
    assert attacks.one_run_epsilon_bound(np.int64(1000), np.int64(900),
                                         n_canaries=np.int64(1000), delta=np.float64(0.0),
                                         confidence=np.float64(0.95), n_tests=np.int64(1)) \
        == attacks.one_run_epsilon_bound(1000, 900, n_canaries=1000)
    assert attacks.one_run_p_value(np.uint16(100), np.int64(60), np.float64(0.0)) == \
        attacks.one_run_p_value(100, 60, 0)
    cv = {"params": [{}, {}], "mean_test_acc": [0.9, 0.8], "mean_test_mia": [-0.2, 0.0]}
    assert attacks.refit_under_leakage_bound("acc", "mia", np.float64(0.05))(cv) == \
        attacks.refit_under_leakage_bound("acc", "mia", 0)(cv) == 1
    # frames, series and integer row positions for the population and the members
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    members = np.arange(80) < 40
    tree = DecisionTreeClassifier(min_samples_leaf=3, random_state=0).fit(X[:40], y[:40])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    tree_df = DecisionTreeClassifier(min_samples_leaf=3, random_state=0).fit(df[:40], y[:40])
    plain = attacks.lira(tree, X, y, members, n_reference_models=4, random_state=0)
    again = attacks.lira(tree_df, df, pd.Series(y), np.flatnonzero(members),
                         n_reference_models=np.int64(4), online=np.bool_(True),
                         known_fraction=np.float64(0.5), random_state=np.int64(0))
    np.testing.assert_array_equal(plain.target_statistics, again.target_statistics)
    assert plain.auc == again.auc
    plain = attacks.rmia(tree, X, y, members, n_reference_models=4, n_population=50,
                         gamma=2, random_state=0)
    again = attacks.rmia(tree, X, list(y), pd.Series(members), n_reference_models=4,
                         n_population=np.int32(50), gamma=np.float64(2.0),
                         offline_a=np.float32(0.33), random_state=0)
    np.testing.assert_array_equal(plain.log_ratio, again.log_ratio)
    np.testing.assert_array_equal(attacks.membership_scores(tree, X, y),
                                  attacks.membership_scores(tree_df, df, pd.Series(y)))
    # canary audit: numpy index and counts, a frame, a boolean numpy switch
    from sklearn_privacy import FILLinearRegression

    t = y.astype(float)
    est = FILLinearRegression(sigma=1.0)
    plain = attacks.canary_audit(est, X, t, 0, X[1], 1.0, n_releases=8, random_state=0)
    again = attacks.canary_audit(est, df, pd.Series(t), np.int64(0), df.iloc[[1]],
                                 np.float64(1.0), n_releases=np.int64(8),
                                 confidence=np.float64(0.95), refit=np.bool_(True),
                                 delta=np.float64(0.0), random_state=0)
    np.testing.assert_allclose(plain.statistics_replaced, again.statistics_replaced)


@pytest.mark.parametrize("on_infeasible", ["ignore", None, True])
def test_refit_rule_keeps_the_bound_when_validation_is_skipped(on_infeasible):
    # only on_infeasible="warn" falls back to the least leaky candidate; an unchecked
    # misspelling fails closed instead of selecting a model above the leakage bound
    import sklearn

    cv = {"params": [{}, {}], "mean_test_acc": [0.9, 0.8], "mean_test_mia": [-0.2, -0.1]}
    with sklearn.config_context(skip_parameter_validation=True):
        rule = attacks.refit_under_leakage_bound("acc", "mia", 0.05,
                                                 on_infeasible=on_infeasible)
    with pytest.raises(ValueError, match="No candidate has a mean 'mia' leakage"):
        rule(cv)
    with pytest.warns(match="least leaky candidate"):
        assert attacks.refit_under_leakage_bound("acc", "mia", 0.05,
                                                 on_infeasible="warn")(cv) == 1
