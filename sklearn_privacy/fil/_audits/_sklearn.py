"""FIL audit of a linear model trained with scikit-learn itself.

:func:`audit` maps a fitted scikit-learn ``LinearRegression``, ``Ridge``, ``RidgeCV``,
``LogisticRegression`` (binary or multinomial) or ``PoissonRegressor`` (alone or as the
last step of a ``Pipeline``) to the FIL estimator with the same objective, fits that
estimator on the same data warm-started from the user's coefficients (Newton polishes
them to the exact minimiser the Jacobians assume), and returns it -- wrapped in the
user's preprocessing when a pipeline was given -- so that every audit tool of the
package applies unchanged. A ``OneVsRestClassifier`` of binary ``LogisticRegression`` is
audited as the composition of its ``K`` binary releases.

Penalty conventions (``W`` = total sample weight, ``n`` without weights; the FIL objective
is ``sum_i w_i l_i + W alpha / 2 ||coef||^2``, the intercept never penalised):

- ``LinearRegression``: ``sum w (y - z)^2`` -> ``alpha = 0``;
- ``Ridge(alpha=a)``: ``sum w (y - z)^2 + a ||coef||^2`` -> ``a / W`` (``RidgeCV``: its
  ``alpha_``);
- ``LogisticRegression(C=c)``, L2: ``c sum w l + ||coef||^2 / 2`` -> ``1 / (c W)``;
  ``C=inf``: ``0``. With ``K > 2`` classes ``l`` is the softmax loss and ``||coef||^2``
  the squared Frobenius norm of the ``K x d`` ``coef_`` (every class row penalised, the
  ``K`` intercepts not): the same map ``1 / (c W)``;
- ``PoissonRegressor(alpha=a)``: ``sum w D / (2 W) + a/2 ||coef||^2`` -> ``a``.

Multinomial parametrisation: the softmax loss is unchanged when one vector is added to
every class row of ``[coef_ | intercept_]``. The penalty makes the coefficient rows sum
to zero at the minimiser; the unpenalised intercepts are determined only up to a common
shift, and scikit-learn's solvers (lbfgs, newton-cg, newton-cholesky, sag, saga, checked
with 1.9) return the symmetric ones (summing to zero), as does
:class:`FILLogisticRegression`. The user's parameters are centred over the classes
before the polish (a shift changes no prediction), so ``polish_distance_`` measures only
what the solver left unconverged.
"""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    PoissonRegressor,
    Ridge,
    RidgeCV,
)
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ..._glm._core import SingularHessianError
from ...exceptions import StatisticalWarning
from ...utils._validation import errors_name
from ...utils._warnings import warn_user
from ...utils.fixes import (
    HasMethods,
    NumberInterval,
    StrOptions,
    _check_sample_weight,
    validate_params,
)
from .._base import BaseFILEstimator
from .._mlp._audit import audit_mlp, split_mlp_pipeline
from ._audited import (
    AuditedLinearRegression,
    AuditedLogisticRegression,
    AuditedOneVsRestClassifier,
    AuditedPoissonRegressor,
    _spawn,
)

__all__ = ["audit"]

#: Relative distance (to ``max(1, ||theta||)``) between the user's coefficients and the
#: exact minimiser above which the audit warns that it describes a different model.
POLISH_WARN = 0.1

# ---------------------------------------------------------------- model -> mapping
def _total_weight(sample_weight, n):
    return float(n if sample_weight is None else np.sum(sample_weight))


def _least_squares(model, W, y):
    if getattr(model, "positive", False):
        raise ValueError(
            f"audit: {type(model).__name__}(positive=True) constrains the coefficients, so "
            "its solution is not the stationary point the FIL Jacobians describe. Refit "
            "with positive=False."
        )
    if np.ndim(model.coef_) == 2 and np.shape(model.coef_)[0] != 1:
        raise ValueError(
            f"audit: {type(model).__name__} was fitted on {np.shape(model.coef_)[0]} "
            "targets; audit one target at a time (fit one model per column of y)."
        )
    note = ""
    if isinstance(model, LinearRegression):
        alpha = 0.0
    else:
        a = model.alpha_ if isinstance(model, RidgeCV) else model.alpha
        if np.size(a) != 1:
            raise ValueError(f"audit: {type(model).__name__} has one alpha per target; "
                             "audit a single-target model.")
        a = float(np.ravel(a)[0])
        alpha = a / W
        if isinstance(model, RidgeCV):
            note = (f" RidgeCV chose alpha_={a!r} by cross-validation on these same rows: "
                    "that choice is data-dependent and not covered by the noise (the etas "
                    "and epsilon_ treat it as fixed).")
    return AuditedLinearRegression, {"alpha": alpha}, note


def _logistic_penalty(model):
    """``"l2"`` or ``None`` for a LogisticRegression (any scikit-learn version)."""
    penalty = getattr(model, "penalty", "deprecated")
    l1_ratio = getattr(model, "l1_ratio", None)
    if penalty == "deprecated":
        if l1_ratio not in (None, 0, 0.0):
            penalty = "l1" if l1_ratio == 1 else "elasticnet"
        else:
            penalty = "l2"
    if penalty in ("l1", "elasticnet"):
        raise ValueError(
            f"audit: LogisticRegression with an {penalty} penalty (l1_ratio={l1_ratio!r}) "
            "is not differentiable at zero coefficients, so the FIL Jacobians do not "
            "apply. Refit with an L2 penalty (l1_ratio=0) or without a penalty."
        )
    if penalty is None or penalty == "none" or not np.isfinite(model.C):
        return None
    return "l2"


def _logistic(model, W, y):
    classes = model.classes_
    multiclass = classes.size > 2
    if multiclass:
        # scikit-learn < 1.7 (or 1.5 with a non-default setting) may still fit K binary
        # problems: the coefficients then minimise K separate objectives, not the softmax
        multi_class = getattr(model, "multi_class", "deprecated")
        ovr = multi_class == "ovr" or (multi_class == "auto" and model.solver == "liblinear")
        if ovr or np.shape(model.coef_)[0] != classes.size:
            raise ValueError(
                f"audit: this LogisticRegression fitted {classes.size} one-vs-rest binary "
                "models (multi_class='ovr' or solver='liblinear'), whose coefficients "
                "minimise K separate objectives, not the multinomial one. Refit with the "
                "multinomial formulation (the default of scikit-learn >= 1.5, another "
                "solver than 'liblinear'), or wrap a binary LogisticRegression in "
                "OneVsRestClassifier, which audit composes."
            )
    if getattr(model, "class_weight", None) is not None:
        raise ValueError(
            "audit: LogisticRegression(class_weight=...) is not supported; pass the class "
            "weights as sample_weight (to both the model's fit and audit) instead."
        )
    if not multiclass and getattr(model, "multi_class", "auto") == "multinomial":
        raise ValueError(
            "audit: a binary LogisticRegression fitted with multi_class='multinomial' uses "
            "the symmetric softmax parametrisation; refit with the default (binary) "
            "formulation."
        )
    if model.solver == "liblinear" and model.fit_intercept:
        raise ValueError(
            "audit: LogisticRegression(solver='liblinear', fit_intercept=True) penalises "
            "the intercept (through intercept_scaling), a different objective. Refit with "
            "another solver (e.g. 'lbfgs' or 'newton-cholesky') or fit_intercept=False."
        )
    alpha = 0.0 if _logistic_penalty(model) is None else 1.0 / (float(model.C) * W)
    return AuditedLogisticRegression, {"alpha": alpha}, ""


def _poisson(model, W, y):
    return AuditedPoissonRegressor, {"alpha": float(model.alpha)}, ""


#: Exact model type -> mapping ``(model, total weight, y) -> (class, params, claim note)``.
_HANDLERS = {
    LinearRegression: _least_squares,
    Ridge: _least_squares,
    RidgeCV: _least_squares,
    LogisticRegression: _logistic,
    PoissonRegressor: _poisson,
}


def _supported():
    return (", ".join(sorted(t.__name__ for t in _HANDLERS))
            + ", OneVsRestClassifier(LogisticRegression), MLPClassifier, MLPRegressor")


def _user_theta(model):
    """The model's parameters in the layout of the audit engine's ``theta``.

    Binary and regression models: ``[coef, intercept]``. Multinomial: the row-major
    ``K x (d + 1)`` matrix ``[coef_ | intercept_]`` (``K x d`` without intercept), with
    the mean over the classes removed -- adding one vector to every class changes no
    prediction, and the audit's minimiser is the symmetric one (scikit-learn's solvers
    return it too; see the module docstring).
    """
    coef = np.asarray(model.coef_, dtype=float)
    if coef.ndim == 2 and coef.shape[0] > 1 and is_classifier(model):
        Theta = (np.column_stack([coef, np.ravel(model.intercept_)])
                 if model.fit_intercept else coef.copy())
        return (Theta - Theta.mean(axis=0)).ravel()
    coef = np.ravel(coef)
    if not model.fit_intercept:
        return coef
    return np.r_[coef, float(np.ravel(model.intercept_)[0])]


def _audit_ovr(pipe, ovr, Xt, y, *, sigma, sample_weight, data_norm, random_state,
               classes=None):
    """Audit of a ``OneVsRestClassifier`` of binary ``LogisticRegression``: one binary
    audit per class on ``y == classes_[k]``, composed (the Fisher information adds)."""
    check_is_fitted(ovr)
    bad = [type(e).__name__ for e in ovr.estimators_ if type(e) is not LogisticRegression]
    if bad:
        raise ValueError(
            "audit: a OneVsRestClassifier is audited when every fitted estimator is a "
            f"binary LogisticRegression; got {sorted(set(bad))} (a class present in every "
            "or no row gives a constant predictor). For a multiclass model prefer the "
            "multinomial LogisticRegression (the scikit-learn default), which audit "
            "supports directly."
        )
    with errors_name("y"):
        labels = np.unique(np.asarray(y))
    classes = ovr.classes_
    if labels.size != classes.size or np.any(labels != classes):
        raise ValueError(
            f"y: its classes {labels.tolist()} differ from the model's classes_ "
            f"{classes.tolist()}; pass the labels the model was trained on.")
    Y = ovr.label_binarizer_.transform(y)
    if sp.issparse(Y):
        Y = Y.toarray()
    states = _spawn(random_state, Y.shape[1])
    audited = []
    for k, est in enumerate(ovr.estimators_):
        audited.append(audit(est, Xt, np.asarray(Y[:, k]).astype(int), sigma=sigma,
                             sample_weight=sample_weight, data_norm=data_norm,
                             random_state=states[k], classes=[0, 1]))
    if classes is not None and not np.array_equal(np.unique(np.asarray(classes)),
                                                  ovr.classes_):
        raise ValueError("classes: the declared label set must equal the "
                         "OneVsRestClassifier's classes_.")
    out = AuditedOneVsRestClassifier.__new__(AuditedOneVsRestClassifier)
    out.__dict__.update(copy.deepcopy(ovr).__dict__)
    out.declared_classes_ = None if classes is None else np.unique(np.asarray(classes))
    out.estimators_ = audited
    out.polish_distances_ = np.array([a.polish_distance_ for a in audited])
    out.release_claim_ = (
        f"{len(audited)} independent Gaussian output perturbations (sigma={float(sigma)!r}) "
        "of the exact minimisers of the one-vs-rest binary LogisticRegression objectives, "
        "all computed from the same rows; fil.eta reports them together (their Fisher "
        "information adds), and any (epsilon, delta) of one model does not cover the "
        "composition." + ("" if pipe is None else
                          " The preprocessing steps were fitted on the private rows "
                          "without a guarantee and are released as they are."))
    out._source = (copy.deepcopy(pipe) if pipe is not None else None, copy.deepcopy(ovr))
    if pipe is None:
        return out
    return Pipeline([(name, copy.deepcopy(step)) for name, step in pipe.steps[:-1]]
                    + [(pipe.steps[-1][0], out)])


#: p-value under which the released parameters of a restored FIL estimator are taken to
#: be a noise draw around another minimiser than that of the rows given to audit.
RELEASE_PVALUE = 1e-9


def _check_release_matches(model, ref):
    """Warn when ``model``'s released parameters are implausible as its noise around the
    exact minimiser of ``ref`` (the same estimator refitted on the rows given to audit).

    The released parameters are ``theta* + noise`` with Gaussian noise (``||noise||^2 /
    sigma^2`` is chi-squared with ``p`` degrees of freedom) or Laplace-norm noise
    (``||noise|| / scale`` is Gamma(``p``)); a p-value below :data:`RELEASE_PVALUE` means
    the rows are not the training rows (or not all of them). Rows that differ only
    slightly move the minimiser by less than the noise and cannot be detected.
    """
    from scipy import stats

    kind, scale = model.__dict__.get("noise_"), model.__dict__.get("noise_scale_")
    theta = np.ravel(ref._audit_engine().theta)
    released = np.ravel(model._released_theta())
    if kind not in ("gaussian", "laplace-norm") or not scale or released.shape != theta.shape:
        return
    r = float(np.linalg.norm(released - theta)) / float(scale)
    p = released.size
    pvalue = stats.chi2.sf(r * r, p) if kind == "gaussian" else stats.gamma.sf(r, p)
    if pvalue < RELEASE_PVALUE:
        warn_user(
            f"audit: the released parameters of this {type(model).__name__} are "
            f"{r:.3g} noise scales from the exact minimiser on the X, y given (p-value "
            f"{pvalue:.2g} for {p} {kind} noise coordinates): these are not the rows it "
            "was fitted on, and eta would describe another model. Pass its training data "
            "(and sample_weight).", StatisticalWarning, stacklevel=3)


def _audit_own(pipe, model, Xt, y, *, sigma, sample_weight, data_norm, target_bound):
    """The audit state of one of the package's FIL estimators, recomputed from its rows.

    Runs the estimator's own fit (the same ``_fit_exact`` and ``FILEngine`` that set the
    audit state of an estimator fitted in this process) on a clone with the released
    ``sigma``, checks that the rows reproduce what was published, and returns a copy of
    ``model`` -- its released parameters untouched -- holding that audit state.
    """
    from sklearn.base import clone

    check_is_fitted(model)
    if data_norm is not None or target_bound is not None:
        raise ValueError("audit: data_norm and target_bound are parameters of the package's "
                         "own estimators; they are read from the model.")
    released_sigma = float(model._audit_sigma())
    if sigma is not None and float(sigma) != released_sigma:
        raise ValueError(f"audit: sigma={sigma!r} differs from the sigma the model was "
                         f"released with ({released_sigma!r}); pass sigma=None.")
    ref = clone(model)
    if getattr(model, "epsilon", None) is None:  # an epsilon-release plans its own noise
        ref.set_params(sigma=released_sigma)
    with errors_name("X"):
        ref.fit(Xt, y, sample_weight=sample_weight)
    w_ref = np.ravel(getattr(ref, "sample_weight_", 0.0))
    w_model = np.ravel(getattr(model, "sample_weight_", 0.0))
    same = (ref.n_features_in_ == model.n_features_in_
            and np.array_equal(getattr(ref, "classes_", 0), getattr(model, "classes_", 0))
            and w_ref.shape == w_model.shape
            and np.allclose(w_ref, w_model, rtol=1e-9, atol=0.0))
    if not same:
        raise ValueError("audit: X, y (and sample_weight) are not the rows this model was "
                         "fitted on (its schema, classes or IRFIL weights differ); pass its "
                         "training data.")
    _check_release_matches(model, ref)
    out = type(model).__new__(type(model))
    out.__dict__.update(model.__dict__)
    out.__dict__.pop("_audit_stripped", None)
    out.__dict__.pop("_eta_cache", None)
    for key in ("_audit", "n_iter_"):
        if key in ref.__dict__:
            out.__dict__[key] = ref.__dict__[key]
    if pipe is None:
        return out
    return Pipeline([(name, copy.deepcopy(step)) for name, step in pipe.steps[:-1]]
                    + [(pipe.steps[-1][0], out)])


_POSITIVE_OR_NONE = [NumberInterval(Real, 0, None, closed="neither"), None]


def _check_mlp_arguments(sigma, data_norm, target_bound, random_state, classes):
    """Refuse the arguments that do not apply to the audit of a neural network."""
    if data_norm is not None or target_bound is not None:
        raise ValueError("audit: data_norm/target_bound do not apply to a neural "
                         "network (no DP guarantee is derived for it).")
    if random_state is not None:
        raise ValueError("audit of an MLP: random_state is not used here; pass it to "
                         "the result's release(random_state=...).")
    if sigma is None:
        raise ValueError("audit: pass sigma, the noise scale of the release to audit "
                         "(only the package's own estimators carry theirs).")
    if classes is not None:
        raise ValueError("audit of an MLP: classes applies to the linear models (an "
                         "MLP audit makes no DP claim).")


def _final_step(estimator, X):
    """``(pipe, model, Xt)``: the pipeline (or None), its final model and the rows the
    model receives."""
    if isinstance(estimator, Pipeline):
        pipe = estimator
        model = pipe.steps[-1][1]
        if isinstance(model, Pipeline):
            raise ValueError("audit: flatten the pipeline (its last step is itself a "
                             "Pipeline) before auditing it.")
        check_is_fitted(pipe)
        Xt = pipe[:-1].transform(X) if len(pipe.steps) > 1 else X
    else:
        pipe, model, Xt = None, estimator, X
    return pipe, model, Xt


def _check_training_data(model, Xt, y, sample_weight):
    """The model is fitted and ``(Xt, y, sample_weight)`` can be its training data (the
    number of features, the lengths, the weights, a classifier's labels); return the
    validated weights."""
    check_is_fitted(model)
    n_in = getattr(model, "n_features_in_", None)
    if n_in is not None and Xt.shape[1] != n_in:
        raise ValueError(
            f"X: the model was fitted on {n_in} features but X gives {Xt.shape[1]} (after "
            "the pipeline's preprocessing); pass the training data of the model."
        )
    with errors_name("X"):
        check_consistent_length(Xt, y)
    n = Xt.shape[0]
    if sample_weight is not None:
        with errors_name("sample_weight"):
            sample_weight = _check_sample_weight(sample_weight, np.empty((n, 0)),
                                                 dtype=np.float64)
        if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
            raise ValueError("sample_weight must be finite and non-negative (the weights "
                             "the model was fitted with).")
        if not np.sum(sample_weight) > 0:
            raise ValueError("sample_weight: all weights are zero; at least one must be > 0.")
    return sample_weight


def _fil_parameters(model, cls, params, y, *, sigma, random_state, classes, data_norm,
                    target_bound):
    """The parameters of the FIL estimator ``cls`` that fits the mapped objective
    ``params`` of ``model``, with the declared label set and the DP view's bounds."""
    if is_classifier(model):
        with errors_name("y"):
            labels = np.unique(np.asarray(y))
        if not np.array_equal(labels, model.classes_):
            raise ValueError(
                f"y: its classes {labels.tolist()} differ from the model's classes_ "
                f"{model.classes_.tolist()}; pass the labels the model was trained on."
            )
    kwargs = dict(sigma=sigma, fit_intercept=bool(model.fit_intercept),
                  random_state=random_state, **params)
    if classes is not None:
        if not is_classifier(model) or not np.array_equal(
                np.unique(np.asarray(classes)), model.classes_):
            raise ValueError("classes: the declared label set must equal the classifier's "
                             "classes_ (and applies to classifiers only).")
        kwargs["classes"] = classes
    if cls is AuditedPoissonRegressor:
        if data_norm is not None or target_bound is not None:
            raise ValueError("audit: data_norm/target_bound do not apply to Poisson "
                             "regression (no DP guarantee is derivable for it).")
    else:
        kwargs["data_norm"] = data_norm
        if cls is AuditedLinearRegression:
            kwargs["target_bound"] = target_bound
        elif target_bound is not None:
            raise ValueError("audit: target_bound applies to least squares only.")
    return kwargs


def _refit_from(model, fil, theta_user, Xt, y, sample_weight, params):
    """``fil`` fitted on the training rows from the model's coefficients (Newton polishes
    them to the exact minimiser); refused when the rows do not meet the declared bounds.
    The fit's warnings are re-issued once the bounds are checked."""
    fil._theta_init = theta_user
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fil.fit(Xt, y, sample_weight=sample_weight)
        except SingularHessianError as exc:
            raise SingularHessianError(
                f"audit of {type(model).__name__}: the mapped objective (alpha="
                f"{params['alpha']!r}) has no unique minimiser on these data: {exc}"
            ) from exc
    # the audit runs in the data owner's session: it reads the private channel of the
    # bounding counts (never pickled) to refuse bounds the training rows do not meet
    counts = fil.__dict__.get("_bounding_counts", {})
    if counts.get("rows_scaled", 0) or counts.get("targets_clipped", 0):
        raise ValueError(
            "audit: some rows of X exceed data_norm (or targets exceed target_bound); "
            "the model was trained on the unbounded data, so the DP view cannot "
            "apply. Pass bounds that hold for the training data, or None."
        )
    for w in caught:
        warn_user(w.message, w.category)
    return fil


def _describe_release(fil, model, pipe, theta_user, params, note):
    """The audit's own attributes: the polish distance (with a warning when the model's
    solver stopped far from the minimiser), the mapped penalty, the release claim, the
    selection by cross-validation and the source model."""
    theta = fil._audit_engine().theta
    distance = float(np.linalg.norm(theta - theta_user))
    fil.polish_distance_ = distance
    fil.polish_relative_ = distance / max(1.0, float(np.linalg.norm(theta)))
    fil.source_alpha_ = float(params["alpha"])
    if fil.polish_relative_ > POLISH_WARN:
        warn_user(
            f"audit: the {type(model).__name__}'s coefficients are {distance:.3g} (L2) from "
            "the exact minimiser of the mapped objective (more than 10% of its norm); the "
            "audit describes the exact "
            "minimiser. Refit the model with a tighter tol or more max_iter, or check "
            "that X, y and sample_weight are its training data.", StatisticalWarning,
            stacklevel=2)
    steps = "" if pipe is None else (
        " The preprocessing steps were fitted on the private rows without a guarantee "
        "and are released as they are.")
    fil.release_claim_ = (
        f"Gaussian output perturbation (sigma={fil.sigma!r}) of the exact minimiser of "
        f"the {type(model).__name__} objective (FIL alpha={params['alpha']!r}). "
        f"{fil.epsilon_reason_}{note}{steps}")
    if type(model).__name__.endswith("CV"):
        # the penalty was chosen by cross-validation on these rows: record the selection
        # where privacy_claim reads it (and strip_for_release keeps it)
        from dataclasses import replace
        fil.fit_provenance_ = replace(
            fil.fit_provenance_,
            selected_by=f"{type(model).__name__} (its alpha_ chosen by cross-validation)")
    fil._source = (copy.deepcopy(pipe) if pipe is not None else None, copy.deepcopy(model))
    fil.__dict__.pop("_theta_init", None)


# The rules that tie parameters together (what applies to an MLP, to a linear model) are
# checked in the body, with the reason in the message.
@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "sigma": _POSITIVE_OR_NONE,
        "sample_weight": ["array-like", Real, None],
        "data_norm": _POSITIVE_OR_NONE,
        "target_bound": _POSITIVE_OR_NONE,
        "random_state": ["random_state", np.random.Generator],
        "classes": ["array-like", None],
        "rows": ["array-like", None],
        "hessian": [StrOptions({"auto", "dense", "operator"})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=False,
)
def audit(estimator, X, y, *, sigma: float | None = None, sample_weight=None,
          data_norm: float | None = None, target_bound: float | None = None,
          random_state=None, classes=None, rows=None, hessian: str = "auto",
          n_jobs: int | None = None, verbose: int = 0):
    """FIL audit of a linear model or neural network already trained with scikit-learn.

    Maps the fitted model's penalty to the FIL objective exactly (table in the user
    guide "Auditing a model you already trained"), refits the matching FIL estimator on
    ``(X, y)`` **starting from the model's coefficients** (Newton polishes them to the
    exact minimiser when the model's solver stopped early; the distance moved is
    ``polish_distance_``) and returns it, inside a copy of the model's preprocessing when
    ``estimator`` is a pipeline. Everything that works on the package's own estimators
    works on the result: ``eta_``, ``eta``, ``fisher_information``, ``sigma_for_eta``,
    ``sigma_for_epsilon`` (where a guarantee is derivable), :func:`eta` with original
    column names, :class:`EtaDisplay`, :func:`~sklearn_privacy.attacks.whitebox_inversion`.
    ``result.release()`` (``result[-1].release()`` for a pipeline) returns a copy of the
    user's own model with noisy coefficients at ``sigma``.

    Parameters
    ----------
    estimator : fitted LinearRegression, Ridge, RidgeCV, LogisticRegression \
            (binary or multinomial, L2 or no penalty), PoissonRegressor, \
            OneVsRestClassifier(LogisticRegression) or a FIL estimator of this \
            package, or a Pipeline ending in one
        A FIL estimator of this package without its audit state (loaded from a pickle,
        or returned by a process pool other than joblib's default) gets it back: its own
        fit is run again on ``(X, y)`` -- the computation that set the audit state of the
        original -- and a copy of it, with the released parameters unchanged and
        ``eta_`` available, is returned (``X, y`` must be its training rows; IRFIL's
        weights are checked against ``sample_weight_``, and a
        :class:`~sklearn_privacy.exceptions.StatisticalWarning` says when the released
        parameters are implausible as its noise around the minimiser on ``X, y``: a
        p-value below 1e-9; rows that move the minimiser by less than the noise cannot
        be told apart).
        The model to audit, exactly as trained (it is not modified). A multinomial
        ``LogisticRegression`` (scikit-learn's default for more than two classes) maps to
        the multinomial :class:`~sklearn_privacy.FILLogisticRegression`: ``coef_``
        ``(K, d)`` and ``K`` intercepts, the label a one-hot vector (column ``"label"``). A
        ``OneVsRestClassifier`` of binary ``LogisticRegression`` is audited model by
        model (on ``y == classes_[k]``) and returned as a ``OneVsRestClassifier`` of the
        audited models: :func:`eta` and :func:`fisher_information` report the ``K``
        independent releases together (their Fisher information adds).
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        The training data the model was fitted on (the raw input of a pipeline).
    y : array-like of shape (n_samples,)
        The training targets.
    sigma : float > 0 or None, default=None
        Noise scale of the output perturbation the etas are computed for. Required for a
        scikit-learn model; for one of the package's FIL estimators it is the model's own
        (None, or the same number).
    sample_weight : array-like of shape (n_samples,), default=None
        The sample weights the model was fitted with (``None``: unit weights).
    data_norm, target_bound : float or None, default=None
        Bounds for the (epsilon, delta)-DP view, as in
        :class:`~sklearn_privacy.FILLogisticRegression` and
        :class:`~sklearn_privacy.FILLinearRegression` (``target_bound`` least squares
        only). Every row of the final step's input must already satisfy ``data_norm``
        (and every target ``target_bound``): an audit cannot rescale the data the model
        was trained on.
    random_state : int, RandomState instance or None, default=None
        Noise of the released coefficients of the returned estimator (``None``: fresh
        OS entropy).
    classes : array-like or None, default=None
        Classifiers: the public label set, declared (it must equal the model's
        ``classes_``). ``None``: the labels were found in ``y``, and
        :func:`~sklearn_privacy.privacy_claim` of the result is ``inf``.
    rows : array-like of int or None, default=None
        MLP only: the training rows whose per-example eta is computed when the network
        is audited through Hessian-vector products (required beyond 1,500 parameters;
        optional with ``hessian="operator"``).
    hessian : {"auto", "dense", "operator"}, default="auto"
        MLP only: the exact dense Hessian (up to 1,500 parameters under ``"auto"``) or
        Hessian-vector products with block conjugate gradients (the certificate from
        Lanczos).
        Both are the exact Hessian of the objective; no approximation is used.
    n_jobs : int or None, default=None
        MLP only: threads computing the per-example etas, in blocks of 512 rows (the
        etas do not depend on ``n_jobs``). A linear model's audit is one polish of one
        fit and takes none.
    verbose : int, default=0
        MLP only: ``1`` prints the phases (the polish, its certificate) and ``done k of
        N`` lines for the blocks of per-example etas, ``2`` one line per block.

    Returns
    -------
    audited : FIL estimator, OneVsRestClassifier or Pipeline
        A fitted :class:`~sklearn_privacy.FILLinearRegression`,
        :class:`~sklearn_privacy.FILLogisticRegression` or
        :class:`~sklearn_privacy.FILPoissonRegressor` (subclasses adding ``release()``), a
        ``OneVsRestClassifier`` of audited binary models (with ``release``,
        ``polish_distances_`` and ``release_claim_``), or a Pipeline of copies of the
        model's preprocessing steps ending in one. Extra attributes of the FIL step:
        ``polish_distance_`` (L2 distance between the model's coefficients -- all ``K (d +
        1)`` of a multinomial model, centred over the classes -- and the exact
        minimiser), ``polish_relative_`` (the same divided by ``max(1, ||theta||)``),
        ``source_alpha_`` (the mapped penalty) and ``release_claim_`` (what the release
        covers). For a pipeline the FIL step also keeps a copy of ``X`` in memory (never
        pickled, like the rest of the audit state), so that
        :func:`~sklearn_privacy.fil.eta` reports leakage about the raw inputs through the
        preprocessing's derivative without ``X=`` (user guide: "Raw inputs through
        feature maps").

        For an ``MLPClassifier`` / ``MLPRegressor`` (alone or ending a pipeline): an
        MLP audit object with ``eta_`` (per row, with respect to the raw inputs through
        the pipeline's differentiable preprocessing, and the label), ``eta``,
        ``fisher_information``, ``sigma_for_eta``, ``jacobian``, ``release``,
        ``hessian_min_eigenvalue_`` (the certificate), ``gradient_norm_``,
        ``polish_distance_`` and ``epsilon_ = inf``; see the user guide "Auditing a
        neural network" for what eta means at a local minimum of a non-convex objective.

    Raises
    ------
    ValueError
        An unsupported model (the message lists the supported ones) or setting
        (``l1``/``elasticnet`` penalties, ``class_weight``, ``positive=True``, several
        targets, liblinear's penalised intercept, a ``LogisticRegression`` fitted
        one-vs-rest through ``multi_class="ovr"``), an unfitted
        model, data that do not match it, an MLP with ``activation="relu"`` or
        ``alpha=0``, a preprocessing step whose derivative is not traced, or a
        singular Hessian (for example
        ``LinearRegression`` on collinear columns).
    ~sklearn_privacy.exceptions.UncertifiedMinimumError
        (a ``ValueError``) An MLP whose polished parameters are not a certified strict
        local minimum (gradient above ``1e-10`` or a Hessian that is not positive
        definite: a saddle point, a dead hidden unit).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy import fil
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = LogisticRegression(C=0.5).fit(X, y)
    >>> audited = fil.audit(model, X, y, sigma=0.1, random_state=0)
    >>> audited.alpha == 1 / (0.5 * 300)             # LogisticRegression(C) -> 1 / (n C)
    True
    >>> bool(audited.polish_distance_ < 1e-3)          # lbfgs stopped close to the minimiser
    True
    >>> audited.eta_.shape
    (300,)
    >>> public = audited.release(random_state=0)       # the user's own model type, noisy
    >>> type(public).__name__, public.coef_.shape
    ('LogisticRegression', (1, 3))
    >>> y3 = np.digitize(X[:, 0] + 0.5 * rng.normal(size=300), [-0.5, 0.5])  # 3 classes
    >>> multi = fil.audit(LogisticRegression(C=0.5).fit(X, y3), X, y3, sigma=0.1)
    >>> multi.coef_.shape, multi.eta(rows=[0], columns="label", per_example=True).shape
    ((3, 3), (1,))
    >>> public3 = multi.release()                      # noisy K x d coef_ and K intercepts
    >>> public3.coef_.shape, public3.intercept_.shape
    ((3, 3), (3,))

    A neural network (``tanh`` units, ``alpha > 0``), audited at its local minimum:

    >>> from sklearn.neural_network import MLPClassifier
    >>> net = MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
    ...                     max_iter=2000, random_state=0).fit(X, y)
    >>> audited_net = fil.audit(net, X, y, sigma=0.1)
    >>> audited_net.hessian_, audited_net.eta_.shape
    ('dense', (300,))
    >>> bool(audited_net.hessian_min_eigenvalue_ > 0), audited_net.epsilon_
    (True, inf)
    >>> type(audited_net.release()).__name__
    'MLPClassifier'
    """
    mlp_pipe, mlp = split_mlp_pipeline(estimator)
    if mlp is not None:
        _check_mlp_arguments(sigma, data_norm, target_bound, random_state, classes)
        if mlp_pipe is not None:
            check_is_fitted(mlp_pipe)
        return audit_mlp(mlp_pipe, mlp, X, y, sigma=sigma, sample_weight=sample_weight,
                         rows=rows, hessian=hessian, n_jobs=n_jobs, verbose=verbose)
    if rows is not None or hessian != "auto":
        raise ValueError("audit: rows and hessian apply to MLPClassifier / MLPRegressor "
                         "only (a linear model's audit covers every row exactly).")
    pipe, model, Xt = _final_step(estimator, X)
    if isinstance(model, BaseFILEstimator):
        return _audit_own(pipe, model, Xt, y, sigma=sigma, sample_weight=sample_weight,
                          data_norm=data_norm, target_bound=target_bound)
    if sigma is None:
        raise ValueError("audit: pass sigma, the noise scale of the release to audit "
                         "(only the package's own estimators carry theirs).")
    if isinstance(model, OneVsRestClassifier):
        if target_bound is not None:
            raise ValueError("audit: target_bound applies to least squares only.")
        with errors_name("X"):
            check_consistent_length(Xt, y)
        return _audit_ovr(pipe, model, Xt, y, sigma=sigma, sample_weight=sample_weight,
                          data_norm=data_norm, random_state=random_state, classes=classes)
    handler = _HANDLERS.get(type(model))
    if handler is None:
        raise ValueError(
            f"audit supports fitted scikit-learn {_supported()} models (or a Pipeline "
            f"ending in one), or the package's FIL estimators; got "
            f"{type(model).__name__}."
        )
    sample_weight = _check_training_data(model, Xt, y, sample_weight)
    cls, params, note = handler(model, _total_weight(sample_weight, Xt.shape[0]), y)
    kwargs = _fil_parameters(model, cls, params, y, sigma=sigma, random_state=random_state,
                             classes=classes, data_norm=data_norm, target_bound=target_bound)
    theta_user = _user_theta(model)
    fil = _refit_from(model, cls(**kwargs), theta_user, Xt, y, sample_weight, params)
    _describe_release(fil, model, pipe, theta_user, params, note)
    if pipe is None:
        return fil
    # the raw rows, in memory only (never pickled): fil.eta's raw-input view reads them
    fil._raw_input = X.copy() if hasattr(X, "copy") else copy.deepcopy(X)
    return Pipeline([(name, copy.deepcopy(step)) for name, step in pipe.steps[:-1]]
                    + [(pipe.steps[-1][0], fil)])
