"""Walk a fitted object, classify every step, and compose the DP steps into one claim.

Composition rules (all for the replace-one-row neighbouring relation, every step seeing
the same rows or a row-wise function of them):

* **basic** (Dwork & Roth, Theorem 3.16, adaptive form): the steps' epsilons add, and so
  do their deltas. Always valid, whatever the mechanisms.
* **gaussian**: a Gaussian mechanism with L2 sensitivity ``Delta`` and noise ``sigma`` is
  exactly ``mu``-Gaussian-DP with ``mu = Delta / sigma``, and the adaptive composition of
  ``mu_i``-GDP mechanisms is exactly ``sqrt(sum mu_i ** 2)``-GDP (Dong, Roth & Su 2022,
  Corollary 3.3). ``mu``-GDP is (epsilon, delta)-DP exactly when the Gaussian mechanism
  with ``Delta / sigma = mu`` is, i.e. on the analytic Gaussian curve (Balle & Wang 2018,
  Theorem 8). The Gaussian steps are therefore converted once, at the sum of their
  deltas, and the remaining steps are added by basic composition, so both rules state
  the claim at the same total delta and the smaller epsilon is reported.

:func:`tradeoff_curve` reads the composed claim of a published object as an f-DP
trade-off curve (the curves themselves are in ``_tradeoff``, which imports nothing of the
claim, so the claim and its curve do not import each other in a circle).
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import replace
from numbers import Real

from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._provenance import provenance_problem
from ..utils.fixes import NumberInterval, validate_params
from ._attributes import attribute_findings
from ._claim import PrivacyClaim, StepClaim
from ._tradeoff import TradeoffCurve, claim_curve

__all__ = ["compose", "privacy_claim", "step_claims", "tradeoff_curve"]

#: privacy_claim(..., allow_seeded=True) for the duration of one walk
_ALLOW_SEEDED: ContextVar[bool] = ContextVar("allow_seeded", default=False)

SCHEMA_NOTE = ("n_features_in_ / feature_names_in_ are the schema, public by the threat "
               "model")


#: fitted state of common scikit-learn transformers that is computed from the rows
_LEARNED = {
    "StandardScaler": "mean_ and var_ are",
    "MinMaxScaler": "data_min_ and data_max_ are",
    "MaxAbsScaler": "max_abs_ is",
    "RobustScaler": "center_ and scale_ (median and quantiles) are",
    "QuantileTransformer": "quantiles_ are",
    "PowerTransformer": "lambdas_ (and a standardisation) are",
    "KBinsDiscretizer": "bin_edges_ are",
    "PCA": "components_ and mean_ are",
    "TruncatedSVD": "components_ are",
    "TargetEncoder": "encodings_ (per-category target means) are",
    "KNNImputer": "the training rows (_fit_X) are",
    "IterativeImputer": "imputation models are",
    "MissingIndicator": "features_ (the columns with missing values) are",
    "VarianceThreshold": "variances_ are",
    "SelectKBest": "scores_ are",
    "LabelEncoder": "classes_ are",
}


def _data_independent(name, est, reason):
    return StepClaim(name, type(est).__name__ if not isinstance(est, str) else est,
                     "data_independent", 0.0, 0.0, reason)


def _non_private(name, est, reason):
    return StepClaim(name, type(est).__name__, "non_private", math.inf, 0.0, reason)


def _is_seeded(est) -> bool:
    """Seeded now, or seeded at fit (``fit_provenance_`` survives stripping)."""
    prov = getattr(est, "__dict__", {}).get("fit_provenance_")
    if getattr(prov, "is_seeded", False):
        return True
    params = est.get_params(deep=False) if isinstance(est, BaseEstimator) else {}
    return params.get("random_state", None) is not None


def _seeded_claim(claim: StepClaim) -> StepClaim:
    return StepClaim(
        claim.name, claim.estimator, "non_private", math.inf, 0.0,
        "random_state is set (not None): the noise is reproducible from the seed and "
        "shared by every clone, so the release is not private (pass random_state=None "
        "for fresh OS entropy); the step's own claim would have been "
        f"({claim.epsilon:.6g}, {claim.delta:.3g}).")


def _unless_seeded(claim: StepClaim, est) -> StepClaim:
    """``claim``, or a non-private one when the step's provenance cannot vouch for it
    (missing, replaced, foreign: fails closed) or its noise was seeded."""
    if claim.kind != "dp":
        return claim
    problem = provenance_problem(est)
    if problem is not None:
        return StepClaim(claim.name, claim.estimator, "non_private", math.inf, 0.0,
                         f"{problem}; the step's own claim would have been "
                         f"({claim.epsilon:.6g}, {claim.delta:.3g})")
    if not _ALLOW_SEEDED.get() and _is_seeded(est):
        return _seeded_claim(claim)
    return claim


def _own_claims(est, path):
    """Claims from ``__sklearn_privacy_claim__``, named under ``path``."""
    got = est.__sklearn_privacy_claim__()
    items = [got] if isinstance(got, StepClaim) else list(got)
    out = []
    for c in items:
        if not isinstance(c, StepClaim):
            raise TypeError(f"{type(est).__name__}.__sklearn_privacy_claim__ must return "
                            f"StepClaim or a list of them; got {type(c).__name__}.")
        name = path if not c.name else (c.name if c.name.startswith(path)
                                        else f"{path}.{c.name}")
        out.append(replace(c, name=name))
    return out


def _self_reported(est, path):
    """A claim read from ``epsilon_``/``epsilon_spent_`` and ``delta_``/``delta_spent_``."""
    eps = None
    for attr in ("epsilon_", "epsilon_spent_"):
        v = getattr(est, attr, None)
        if isinstance(v, Real) and not isinstance(v, bool):
            eps = float(v)
            break
    if eps is None:
        return None
    delta = 0.0
    for attr in ("delta_", "delta_spent_", "delta"):
        v = getattr(est, attr, None)
        if isinstance(v, Real) and not isinstance(v, bool):
            delta = float(v)
            break
    reason = getattr(est, "epsilon_reason_", None) or (
        f"self-reported through {type(est).__name__}'s epsilon_ attribute (not derived by "
        "sklearn_privacy)")
    if not math.isfinite(eps):
        return _non_private(path, est, str(reason))
    return StepClaim(path, type(est).__name__, "dp", eps, min(max(delta, 0.0), 1.0),
                     str(reason))


# ------------------------------------------------------------- data-independent steps
def _sklearn_step(est, path):
    """Claim of a scikit-learn transformer or wrapper recognised by its class, or None."""
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.frozen import FrozenEstimator
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import (
        Binarizer,
        FunctionTransformer,
        Normalizer,
        OneHotEncoder,
        OrdinalEncoder,
        PolynomialFeatures,
        SplineTransformer,
    )

    name = type(est).__name__
    if isinstance(est, FrozenEstimator):
        return [_data_independent(path, est, (
            "FrozenEstimator: its fit does nothing, so it holds no information about these "
            "rows -- provided the wrapped model was fitted on other data (if it was fitted "
            "on these rows, the claim is false)"))]
    if isinstance(est, Pipeline):
        root = path
        return [c for i, (step_name, step) in enumerate(est.steps)
                for c in step_claims(step, f"{root}[{i}] {step_name}")]
    if isinstance(est, ColumnTransformer):
        transformers = getattr(est, "transformers_", est.transformers)
        return [c for i, (t_name, t, _) in enumerate(transformers)
                for c in step_claims(t, f"{path}[{i}] {t_name}")]
    if isinstance(est, FeatureUnion):
        return [c for i, (t_name, t) in enumerate(est.transformer_list)
                for c in step_claims(t, f"{path}[{i}] {t_name}")]
    if isinstance(est, TransformedTargetRegressor):
        return (step_claims(est.regressor_, f"{path}.regressor_")
                + step_claims(est.transformer_, f"{path}.transformer_ (of y)"))
    if isinstance(est, (Normalizer, Binarizer, PolynomialFeatures)):
        return [_data_independent(path, est, (
            f"stateless row-wise transformer ({SCHEMA_NOTE})"))]
    if isinstance(est, FunctionTransformer):
        return [_data_independent(path, est, (
            "stateless: holds no statistic of the rows; the claim assumes func maps each "
            "row on its own (a func that mixes rows, such as centring, voids it) "
            f"({SCHEMA_NOTE})"))]
    if isinstance(est, SplineTransformer):
        if isinstance(est.knots, str):
            return [_non_private(path, est, (
                f"knots={est.knots!r} places the knots from the rows' range or quantiles; "
                "pass knots as an array of public values"))]
        return [_data_independent(path, est, f"knots given as parameters ({SCHEMA_NOTE})")]
    if isinstance(est, (OneHotEncoder, OrdinalEncoder)):
        return [_encoder_claim(est, path)]
    if isinstance(est, SimpleImputer):
        if est.strategy == "constant" and not est.add_indicator:
            return [_data_independent(path, est, (
                f"strategy='constant': fills with a given value ({SCHEMA_NOTE})"))]
        why = (f"strategy={est.strategy!r} learns statistics_ from the rows"
               if est.strategy != "constant" else
               "add_indicator=True: which columns get an indicator depends on the rows")
        return [_non_private(path, est, f"{why}; use strategy='constant' without an "
                                        "indicator, or impute before the private data")]
    if name in ("OneVsRestClassifier", "MultiOutputClassifier", "MultiOutputRegressor",
                "VotingClassifier", "VotingRegressor"):
        return _meta_claims(est, path)
    return None


def _encoder_claim(est, path):
    name = type(est).__name__
    if isinstance(est.categories, str):
        return _non_private(path, est, (
            "categories='auto': the categories (categories_) are learned from the rows, so "
            "a category held by one row is published; pass categories=[[...], ...]"))
    if est.min_frequency is not None or est.max_categories is not None:
        return _non_private(path, est, (
            "min_frequency / max_categories group categories by their counts in the rows; "
            "leave both None"))
    ok = {"OneHotEncoder": ("ignore",), "OrdinalEncoder": ("use_encoded_value",)}[name]
    if est.handle_unknown not in ok:
        return _non_private(path, est, (
            f"handle_unknown={est.handle_unknown!r}: fit fails on a row whose category is "
            "not listed, so whether the object exists at all depends on one row; use "
            f"handle_unknown={ok[0]!r}"))
    return _data_independent(path, est, (
        f"categories given as parameters, unknown categories {ok[0]!r} ({SCHEMA_NOTE})"))


def _meta_claims(est, path):
    """Meta-estimators whose children all see the same rows (or a row-wise map of them)."""
    children = getattr(est, "estimators_", None)
    if children is None:
        return [_non_private(path, est, "not fitted")]
    out = [_data_independent(path, est, (
        "wrapper: its own state is the label set (classes_ / label encoder), declared "
        "public by the threat model; its fitted children compose below"))]
    for i, child in enumerate(children):
        out += step_claims(child, f"{path}.estimators_[{i}]")
    return out


def _search_claim(est, path):
    return [_non_private(path, est, (
        f"{type(est).__name__} selected its best_estimator_ / best_params_ by scores "
        "computed on the private rows, without a guarantee; tune on public data or use a "
        "private selection"))]


def step_claims(est, path: str) -> list[StepClaim]:
    """The claims of ``est`` and of everything fitted inside it, named under ``path``.

    For objects whose ``__sklearn_privacy_claim__`` includes the claims of fitted
    children (e.g. a base model fitted on the same rows). A DP step with a
    ``random_state`` is made non-private unless the enclosing :func:`privacy_claim` call
    has ``allow_seeded=True``.
    """
    if est is None or (isinstance(est, str) and est in ("passthrough", "drop")):
        return [StepClaim(path, str(est), "data_independent", 0.0, 0.0,
                          "passthrough / drop: no state")]
    if hasattr(type(est), "__sklearn_privacy_claim__"):
        # claims of nested estimators were checked for seeds where they were made
        return [_unless_seeded(c, est) if c.name == path else c
                for c in _own_claims(est, path)]
    if hasattr(est, "cv_results_"):   # a fitted search (GridSearchCV, Halving..., ...)
        return _search_claim(est, path)
    got = _sklearn_step(est, path)
    if got is not None:
        return got
    own = _self_reported(est, path)
    if own is not None:
        return [_unless_seeded(own, est)]
    learned = _LEARNED.get(type(est).__name__)
    if learned is not None:
        return [_non_private(path, est, (
            f"{learned} learned from the private rows without a guarantee (they are "
            "published with the object, and every transformed row depends on the other "
            "rows); use a data-independent or DP step instead (e.g. "
            "sklearn_privacy.preprocessing.BoundedScaler or DPStandardScaler)"))]
    return [_non_private(path, est, (
        f"no claim is known for {type(est).__name__}: its fitted state is treated as "
        "learned from the rows without a guarantee"))]


# ------------------------------------------------------------------------ composition
def compose(steps: list[StepClaim]) -> PrivacyClaim:
    """Compose step claims into the claim of the whole object (see the module docstring).

    Parameters
    ----------
    steps : list of StepClaim
        The claims of every step.

    Returns
    -------
    claim : PrivacyClaim
        ``inf`` if one step is non-private; otherwise the smaller of the basic and the
        Gaussian composition at the sum of the deltas.

    Examples
    --------
    >>> from sklearn_privacy.privacy import StepClaim
    >>> from sklearn_privacy.privacy._compose import compose
    >>> a = StepClaim("a", "G", "dp", 1.0, 5e-6, "", gaussian_mu=0.2)
    >>> b = StepClaim("b", "G", "dp", 1.0, 5e-6, "", gaussian_mu=0.2)
    >>> c = compose([a, b])
    >>> c.composition, round(c.epsilon, 3), c.delta   # sqrt(2) * 0.2-GDP at delta 1e-5
    ('gaussian', 1.061, 1e-05)
    """
    steps = list(steps)
    dp = [s for s in steps if s.kind == "dp"]
    delta = float(min(1.0, sum(s.delta for s in dp)))
    if any(s.kind == "non_private" for s in steps):
        return PrivacyClaim(math.inf, delta, steps, "not private")
    if not dp:
        return PrivacyClaim(0.0, 0.0, steps, "none")
    basic = float(sum(s.epsilon for s in dp))
    gauss = [s for s in dp if s.gaussian_mu is not None]
    best, rule = basic, "basic"
    if len(gauss) >= 2:
        from ..mechanisms._gaussian import analytic_gaussian_epsilon
        mu = math.sqrt(sum(s.gaussian_mu ** 2 for s in gauss))
        delta_g = sum(s.delta for s in gauss)
        if mu == 0:
            eps_g = 0.0
        elif 0 < delta_g < 1:
            eps_g = analytic_gaussian_epsilon(delta=delta_g, sigma=1.0, sensitivity=mu)
        else:
            eps_g = math.inf
        total = eps_g + sum(s.epsilon for s in dp if s.gaussian_mu is None)
        if total < best:
            best, rule = float(total), "gaussian"
    return PrivacyClaim(best, delta, steps, rule)


@validate_params(
    {"model": [BaseEstimator], "allow_seeded": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def privacy_claim(model, *, allow_seeded: bool = False) -> PrivacyClaim:
    """The (epsilon, delta) of a fitted object as published, with a reason per step.

    Walks the fitted object -- a single estimator, :class:`~sklearn.pipeline.Pipeline`,
    :class:`~sklearn.compose.ColumnTransformer` (including ``remainder``),
    :class:`~sklearn.pipeline.FeatureUnion`,
    :class:`~sklearn.compose.TransformedTargetRegressor`, one-vs-rest / multi-output /
    voting wrappers, search objects -- and classifies every fitted step:

    * **data-independent**: nothing it holds depends on the rows (stateless row-wise
      transformers, encoders with ``categories`` given, ``SimpleImputer(strategy=
      "constant")``, :class:`~sklearn_privacy.preprocessing.BoundedScaler`, a
      ``FrozenEstimator`` of a model fitted on *other* data, passthrough / drop);
    * **dp**: the step's own ``(epsilon, delta)`` guarantee for the rows it receives
      (the FIL estimators' DP view, ``PrivateMulticalibrator`` with NumericSparse,
      :class:`~sklearn_privacy.preprocessing.DPStandardScaler`, any object with a
      ``__sklearn_privacy_claim__`` method);
    * **non-private**: fitted on the rows without a guarantee (a ``StandardScaler``, an
      encoder that learned its categories, an imputer's statistics, a ``GridSearchCV``
      that selected on the rows, a seeded noise source, or any estimator for which no
      claim is known).

    Then it checks **every attribute of every object** in the published state (what a
    pickle holds): each must be declared schema, a public fact matching its
    declaration (``classes_`` equal to ``classes=``, ``categories_`` equal to the
    declared categories with the declared dtype), a constant of the code and the
    parameters, the output of an accounted DP mechanism, or the fit provenance
    (``fit_provenance_``: fresh noise, no selection on the rows outside an accounted
    private selection, certificate passed). Anything else -- including any class without
    a declaration -- is a non-private step named ``"<path>.<attribute>"`` with the fix
    (``ColumnTransformer.sparse_output_ depends on the rows: ... set
    sparse_threshold=0``). See ``sklearn_privacy.privacy._attributes``.

    The object's claim is ``inf`` as soon as one step is non-private; otherwise the DP
    steps are composed (basic composition, or exact composition of the Gaussian steps
    through Gaussian DP when that is smaller; ``composition`` says which).

    Threat model: the adversary sees the whole published object (every fitted attribute
    of every step), knows every other row, and tries to tell apart two data sets that
    differ in the values of one row; the number of rows, the schema (``n_features_in_``,
    ``feature_names_in_``, declared dtypes, categories and bounds), the label set when
    declared (``classes=``) and every hyperparameter (chosen without the private rows)
    are public. Every step must receive the same rows or a row-wise function of them
    (true in pipelines and column transformers); all noise must come from fresh entropy.
    A finite claim prints these assumptions (``PrivacyClaim.assumptions``).

    Parameters
    ----------
    model : fitted estimator
        The object to publish.
    allow_seeded : bool, default=False
        False: a DP step with a ``random_state`` that is not ``None`` is non-private (its
        noise is reproducible from the seed, and clones share it). True: ignore seeds --
        for audits that choose the seeds themselves and never publish them.

    Returns
    -------
    claim : PrivacyClaim
        ``epsilon``, ``delta``, the step claims, the composition rule, and the reasons
        when ``epsilon`` is infinite.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        When ``model`` is not fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_privacy import FILLogisticRegression, privacy_claim
    >>> from sklearn_privacy.preprocessing import BoundedScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(200, 2)); y = (X[:, 0] > 5).astype(int)
    >>> model = FILLogisticRegression(sigma=0.5, alpha=0.1, data_norm=np.sqrt(3),
    ...                               intercept_scaling=1.0,   # rows [x1, x2, 1] in [-1, 1]^3
    ...                               classes=[0, 1])          # the public label set
    >>> claim = privacy_claim(make_pipeline(BoundedScaler((0, 10)), model).fit(X, y))
    >>> claim.is_private, round(claim.epsilon, 2)
    (True, 1.32)
    >>> privacy_claim(make_pipeline(StandardScaler(), model).fit(X, y)).reasons[0][:54]
    'pipeline[0] standardscaler: mean_ and var_ are learned'
    >>> undeclared = make_pipeline(BoundedScaler((0, 10)), model.set_params(classes=None))
    >>> print(privacy_claim(undeclared.fit(X, y)).reasons[0][:81])
    pipeline.steps[1][1].classes_: FILLogisticRegression.classes_ depends on the rows
    """
    check_is_fitted(model)
    token = _ALLOW_SEEDED.set(bool(allow_seeded))
    root = type(model).__name__.lower()
    try:
        steps = step_claims(model, root)
    finally:
        _ALLOW_SEEDED.reset(token)
    steps += attribute_findings(model, root, allow_seeded=bool(allow_seeded))
    return compose(steps)


@validate_params(
    {"obj": "no_validation", "max_error": [NumberInterval(Real, 0, 1, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def tradeoff_curve(obj, *, max_error: float = 1e-3) -> TradeoffCurve:
    """The f-DP trade-off curve of a published object, a claim, or a risk's (epsilon, delta).

    Parameters
    ----------
    obj : fitted estimator, PrivacyClaim, StepClaim or TradeoffCurve
        What to read the curve from: a fitted object goes through
        :func:`~sklearn_privacy.privacy_claim` (so a pipeline composes all of its steps).
    max_error : float in (0, 1), default=1e-3
        Largest certified numerical error of a numerical composition (absolute TPR).

    Returns
    -------
    curve : TradeoffCurve

    Examples
    --------
    >>> from sklearn_privacy.privacy import StepClaim, tradeoff_curve
    >>> step = StepClaim("model", "FILLogisticRegression", "dp", 1.0, 1e-5, "",
    ...                  gaussian_mu=0.2680)
    >>> round(float(tradeoff_curve(step).max_tpr(0.01)), 4)
    0.0199
    """
    if isinstance(obj, TradeoffCurve):
        return obj
    if isinstance(obj, StepClaim):
        obj = compose([obj])
    if not isinstance(obj, PrivacyClaim):
        obj = privacy_claim(obj)
    return claim_curve(obj, max_error=max_error)
