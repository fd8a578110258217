"""One public vocabulary: one name per concept, one meaning per name, one default.

The table in ``CONTRIBUTING.md`` ("Public vocabulary") is the reference; this module
inspects every public signature (the top-level ``__all__`` and every subpackage's
``__all__``: functions, classes' ``__init__``, public methods, class and static
methods, and the ``Attributes`` section of class docstrings) and fails on

* a banned synonym (the names the table replaced),
* a default that disagrees with the table (``random_state``, ``delta``, ``tol``,
  ``eta_tol``, ``thresholds``) unless the table documents the exception,
* ``alpha`` without its per-sample convention and the scikit-learn mapping,
* sibling functions that take ``X`` at different positions.

Written first and seen failing on the signatures of 0.2.0 (``n_shadow``,
``sample_group``, ``estimator_name``, ``epsilon_spent_``, ``random_state=0`` in the
scorers, ``delta=1e-3``/``1e-6``, ``X`` in three positions across the inversion
functions, ...).
"""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import sklearn_privacy

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"

# old name -> the name the table uses instead
BANNED = {
    "n_shadow": "n_reference_models",
    "n_reference": "n_reference_models (models) or n_reference_samples (rows)",
    "n_references": "n_reference_models",
    "n_shadow_models": "n_reference_models",
    "sample_group": "sensitive_features",
    "sensitive_columns": "sensitive_features",
    "sensitive_attributes": "sensitive_features",
    "attributes": "sensitive_features",
    "by": "sensitive_features",
    "epsilon_spent_": "epsilon_",
    "delta_spent_": "delta_",
    "estimator_name": "name",
    "s_in": "members, scores (the (y_true, y_score) order of roc_curve)",
    "s_out": "members, scores",
    "y_in": "y",
    "y_out": "y",
    "labels": "members (membership truth) or y (class labels)",
    "X_members": "X, y, members",
    "y_members": "X, y, members",
    "X_nonmembers": "X, y, members",
    "y_nonmembers": "X, y, members",
    "included": "members",
    "statistic": "attack (scoring rule) or aggregate (over examples)",
    "score": "attack",
    "newton_tol": "tol",
    "cv_tol": "eta_tol",
    "n_iter": "eta_max_iter",
    "max_rounds": "max_iter",
    "prefit": "(an unfitted or fitted estimator is detected)",
}

# Renames of the table not made yet, as (qualified name, parameter), or (family, "X") for
# the argument order of SIBLINGS. Listed so that the test fails on any *new* offender;
# CONTRIBUTING.md marks the same rows "Status: pending". Empty: every row of the table is
# in force.
PENDING = set()

# name -> default the table fixes (for every public signature that has the name)
DEFAULTS = {
    "random_state": None,
    "delta": 1e-5,
    "tol": 1e-12,
    "eta_tol": None,
    "thresholds": "auto",
}

# (qualified name, parameter) -> reason, each also in CONTRIBUTING.md's table
DEFAULT_EXCEPTIONS = {
    ("sklearn_privacy.attacks.epsilon_lower_bound", "delta"):
        "a lower bound is stated at the delta the caller gives; 0 states a pure-DP bound",
    ("sklearn_privacy.attacks.one_run_audit_scores", "delta"): "as epsilon_lower_bound",
    ("sklearn_privacy.attacks.one_run_epsilon_bound", "delta"): "as epsilon_lower_bound",
    ("sklearn_privacy.attacks.one_run_p_value", "delta"): "as epsilon_lower_bound",
    ("sklearn_privacy.attacks.OneRunAuditResult.__init__", "delta"): "a record of the above",
    ("sklearn_privacy.attacks.canary_audit", "delta"): "None: the audited claim's delta",
    ("sklearn_privacy.attacks.one_run_audit", "delta"): "None: the audited claim's delta",
    ("sigma_for_epsilon", "delta"): "None: the estimator's own delta",
}

# families of sibling functions: X must sit at one position in each
SIBLINGS = {
    "inversion": ["whitebox_inversion", "fredrikson_inversion", "candidate_minimisers",
                  "prior_baseline", "regression_inversion"],
    "membership": ["membership_inference", "lira", "rmia"],
}

# the membership truth first, then the scores, as roc_curve(y_true, y_score)
MEMBERS_THEN_SCORES = ["evaluate_scores", "epsilon_lower_bound", "one_run_audit_scores"]


def _modules():
    yield sklearn_privacy
    for info in pkgutil.iter_modules(sklearn_privacy.__path__):
        if not info.name.startswith("_") and info.name != "demo":
            yield importlib.import_module(f"sklearn_privacy.{info.name}")


def _public_objects():
    seen = {}
    for module in _modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and id(obj) not in seen:
                seen[id(obj)] = (f"{module.__name__}.{name}", obj)
    return list(seen.values())


def _own_methods(cls):
    """Public methods defined by the package (not inherited from scikit-learn)."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("sklearn_privacy"):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_") or (attr.startswith("set_") and attr.endswith("_request")):
                continue
            func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
            if inspect.isfunction(func):
                yield attr, func


def _signatures():
    """(qualified name, inspect.Signature) for every public callable."""
    out = []
    for qualname, obj in _public_objects():
        if inspect.isclass(obj):
            out.append((f"{qualname}.__init__", inspect.signature(obj.__init__)))
            done = set()
            for attr, func in _own_methods(obj):
                if attr not in done:
                    done.add(attr)
                    out.append((f"{qualname}.{attr}", inspect.signature(func)))
        else:
            out.append((qualname, inspect.signature(obj)))
    return out


SIGNATURES = _signatures()


def _attribute_names(cls):
    """Names listed in the ``Attributes`` section of a numpydoc class docstring."""
    doc = inspect.getdoc(cls) or ""
    match = re.search(r"^Attributes\n-{3,}\n(.*?)(?:^\w[\w ]*\n-{3,}\n|\Z)", doc,
                      flags=re.S | re.M)
    if not match:
        return []
    return re.findall(r"^(\w+)\s*:", match.group(1), flags=re.M)


def test_walk_finds_the_public_api():
    """The walk is not vacuous: it reaches estimators, attacks, the report, displays."""
    # an object re-exported at several levels is walked once, under one of its names
    names = {q.replace("sklearn_privacy.attacks.", "sklearn_privacy.") for q, _ in SIGNATURES}
    for expected in ("sklearn_privacy.lira", "sklearn_privacy.rmia",
                     "sklearn_privacy.PrivacyReport.from_estimator",
                     "sklearn_privacy.PrivateMulticalibrator.__init__",
                     "sklearn_privacy.datasets.load_mnist01",
                     "sklearn_privacy.MembershipROCDisplay.from_predictions"):
        assert expected in names
    assert len(SIGNATURES) > 150


def test_no_banned_parameter_names():
    offenders = [f"{q}({p}) -> {BANNED[p]}" for q, sig in SIGNATURES
                 for p in sig.parameters if p in BANNED and (q, p) not in PENDING]
    assert not offenders, "banned synonyms:\n" + "\n".join(offenders)


def test_no_banned_fitted_attributes():
    offenders = []
    for qualname, obj in _public_objects():
        if inspect.isclass(obj):
            offenders += [f"{qualname}.{a}" for a in _attribute_names(obj) if a in BANNED]
    assert not offenders, "banned fitted attributes:\n" + "\n".join(offenders)


def test_every_claim_has_epsilon_delta_and_reason():
    """Each public class with a claim documents ``epsilon_``, ``delta_``, ``epsilon_reason_``."""
    missing = []
    for qualname, obj in _public_objects():
        if inspect.isclass(obj) and hasattr(obj, "__sklearn_privacy_claim__"):
            attrs = set(_attribute_names(obj))
            for needed in ("epsilon_", "delta_", "epsilon_reason_"):
                if needed not in attrs:
                    missing.append(f"{qualname}.{needed}")
    assert not missing, "claims without their attributes:\n" + "\n".join(missing)


def _is_exception(qualname, param):
    return any((key == qualname or qualname.endswith("." + key)) and p == param
               for key, p in DEFAULT_EXCEPTIONS)


def test_defaults_agree():
    offenders = []
    for qualname, sig in SIGNATURES:
        for name, param in sig.parameters.items():
            if name not in DEFAULTS or param.default is inspect.Parameter.empty:
                continue
            if _is_exception(qualname, name) or (qualname, name) in PENDING:
                continue
            if param.default != DEFAULTS[name] or type(param.default) is not type(
                    DEFAULTS[name]):
                offenders.append(f"{qualname}({name}={param.default!r}), "
                                 f"table: {DEFAULTS[name]!r}")
    assert not offenders, "defaults that disagree:\n" + "\n".join(offenders)


def test_pending_renames_are_still_pending():
    """An entry of PENDING that no longer matches a signature must be removed."""
    params = {(q, p) for q, sig in SIGNATURES for p in sig.parameters}
    stale = [key for key in PENDING if key[0] not in SIBLINGS and key not in params]
    assert not stale, stale
    # the table marks a row pending exactly when the test lists one
    assert ("Status: pending" in CONTRIBUTING.read_text()) == bool(PENDING)


def test_exceptions_are_in_the_table():
    text = CONTRIBUTING.read_text()
    assert "## Public vocabulary" in text
    for key, _ in DEFAULT_EXCEPTIONS:
        assert f"`{key.rsplit('.', 1)[-1]}`" in text or key.split(".")[-1] in text, key
    for old, new in BANNED.items():
        assert f"`{old}`" in text, f"{old} (-> {new}) missing from the vocabulary table"


def test_alpha_documents_the_per_sample_convention():
    """Each estimator with ``alpha`` maps it to Ridge, LogisticRegression(C), PoissonRegressor."""
    checked = 0
    for qualname, obj in _public_objects():
        if inspect.isclass(obj) and "alpha" in inspect.signature(obj.__init__).parameters:
            doc = inspect.getdoc(obj)
            for mapping in ("Ridge(alpha=n_samples * a)",
                            "LogisticRegression(C=1 / (n_samples * a))",
                            "PoissonRegressor(alpha=a)", "per-sample"):
                assert mapping in doc, f"{qualname}: alpha docs lack {mapping!r}"
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("family", sorted(SIBLINGS))
def test_sibling_functions_take_X_at_one_position(family):
    """X directly after the estimator, or first when there is no estimator."""
    from sklearn_privacy import attacks

    if (family, "X") in PENDING:
        pytest.xfail(f"{family}: the argument-order rename is pending (see PENDING)")
    for name in SIBLINGS[family]:
        params = list(inspect.signature(getattr(attacks, name)).parameters)
        expected = 1 if params[0] == "estimator" else 0
        assert "X" in params, name
        assert params.index("X") == expected, f"{name}{params}"


@pytest.mark.parametrize("name", MEMBERS_THEN_SCORES)
def test_membership_truth_comes_before_the_scores(name):
    from sklearn_privacy import attacks

    params = list(inspect.signature(getattr(attacks, name)).parameters)
    assert "members" in params and "scores" in params, f"{name}{params}"
    assert params.index("members") + 1 == params.index("scores"), f"{name}{params}"


def test_membership_attacks_take_estimator_X_y_members():
    from sklearn_privacy import attacks

    for name in SIBLINGS["membership"]:
        params = list(inspect.signature(getattr(attacks, name)).parameters)
        assert params[:4] == ["estimator", "X", "y", "members"], f"{name}{params}"


@pytest.mark.parametrize("name", SIBLINGS["inversion"] + ["make_attribute_inversion_scorer"])
def test_inversion_functions_name_the_attribute_sensitive_features(name):
    """One name for the attacked attribute; keyword-only after (estimator, X, y)."""
    from sklearn_privacy import attacks

    params = inspect.signature(getattr(attacks, name)).parameters
    assert "columns" not in params and "column" not in params
    kind = params["sensitive_features"].kind
    if name == "make_attribute_inversion_scorer":   # a factory: the attribute is all it needs
        assert list(params)[0] == "sensitive_features"
    else:
        assert kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params["sensitive_features"].default is inspect.Parameter.empty, name


REMOVED = [
    ("IRFILLinearRegression", {"n_iter": 5}), ("IRFILLinearRegression", {"cv_tol": 1e-3}),
    ("IRFILLinearRegression", {"tol": 1e-3}),
    ("IRFILLogisticRegression", {"n_iter": 5}), ("IRFILLogisticRegression", {"cv_tol": 1e-3}),
    ("IRFILLogisticRegression", {"newton_tol": 1e-3}),
    ("PrivateMulticalibrator", {"alpha": 0.1}), ("PrivateMulticalibrator", {"max_rounds": 2}),
    ("PrivateMulticalibrator", {"prefit": True}), ("WERMClassifier", {"max_iter": 2}),
    ("EtaDisplay", {"estimator_name": "m"}),
]


@pytest.mark.parametrize("cls,kwargs", REMOVED, ids=lambda v: str(v))
def test_removed_spellings_are_refused(cls, kwargs):
    """The 0.2 deprecation shims are gone: an old keyword is a TypeError, not a warning."""
    with pytest.raises(TypeError, match=next(iter(kwargs))):
        getattr(sklearn_privacy, cls)(**kwargs)


def test_removed_positional_and_alias_forms_are_refused():
    from sklearn_privacy.attacks import epsilon_lower_bound
    from sklearn_privacy.fil import analytic_gaussian_epsilon

    with pytest.raises(TypeError, match="positional"):
        analytic_gaussian_epsilon(1.0, 1.0, 1e-5)
    assert analytic_gaussian_epsilon(delta=1e-5, sigma=1.0, sensitivity=1.0) > 0
    import numpy as np
    bound = epsilon_lower_bound(members=np.arange(40) < 20,
                                scores=np.r_[np.ones(20), np.zeros(20)], random_state=0)
    assert not hasattr(bound, "epsilon") and bound.epsilon_lower_bound >= 0


# Renamed in 0.3, the old spelling accepted with a FutureWarning until 0.4:
# (qualified name, old parameter) -> new parameter. CONTRIBUTING.md lists each in its table.
RENAMED = {
    ("sklearn_privacy.WERMClassifier.fit", "sensitive_features"): "data_source",
    ("sklearn_privacy.attacks.make_werm_membership_scorer", "sensitive_features"):
        "data_source",
    ("sklearn_privacy.EtaDisplay.__init__", "groups"): "group_codes",
}

# what the description of a (non-deprecated) ``sensitive_features`` must not say: it names
# the sensitive attribute (its column(s) or its per-row values), never WERM's data set of a
# row or the class label
OTHER_MEANINGS = re.compile(r'"class"|0 = training|reference rows|training or reference',
                            flags=re.I)


def _documented_callables():
    """(qualified name, the object whose docstring documents it, the callable)."""
    for qualname, obj in _public_objects():
        if inspect.isclass(obj):
            yield f"{qualname}.__init__", obj, obj.__init__
            for attr, func in _own_methods(obj):
                yield f"{qualname}.{attr}", func, func
        else:
            yield qualname, obj, obj


def _parameter_doc(doc, name):
    match = re.search(rf"^{name}\s*:.*?(?=^\**\w+\s*:|^\w[\w ]*\n-{{3,}}|\Z)", doc,
                      flags=re.S | re.M)
    return match.group(0) if match else ""


def test_sensitive_features_has_one_meaning():
    """``sensitive_features`` is the sensitive attribute only (as in fairlearn)."""
    seen, offenders = 0, []
    for qualname, documented, func in _documented_callables():
        param = inspect.signature(func).parameters.get("sensitive_features")
        if param is None or param.default == "deprecated":
            continue
        seen += 1
        text = _parameter_doc(inspect.getdoc(documented) or "", "sensitive_features")
        if OTHER_MEANINGS.search(text):
            offenders.append(f"{qualname}: {OTHER_MEANINGS.search(text).group(0)!r}")
    assert seen >= 10
    assert not offenders, "sensitive_features used for another concept:\n" + "\n".join(
        offenders)


def test_renamed_parameters_are_deprecated_keywords():
    """Each old spelling stays as a keyword defaulting to ``"deprecated"``, next to the new
    name; no other public parameter defaults to ``"deprecated"``."""
    found = {}
    for qualname, sig in SIGNATURES:
        for name, param in sig.parameters.items():
            if isinstance(param.default, str) and param.default == "deprecated":
                found[(qualname.replace("sklearn_privacy.fil.", "sklearn_privacy."), name)] = sig
    assert set(found) == set(RENAMED), sorted(found)
    text = CONTRIBUTING.read_text()
    for (qualname, old), new in RENAMED.items():
        assert new in found[(qualname, old)].parameters, (qualname, new)
        assert found[(qualname, old)].parameters[old].kind is inspect.Parameter.KEYWORD_ONLY
        assert f"`{new}`" in text, f"{new} missing from the vocabulary table"


def test_werm_data_source_and_its_old_name():
    import warnings

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from sklearn_privacy import WERMClassifier
    from sklearn_privacy.attacks import make_werm_membership_scorer

    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    g = np.repeat([0, 1], [40, 80])
    new = WERMClassifier(LogisticRegression(), w=0.5).fit(X, y, data_source=g)
    with pytest.warns(FutureWarning, match="sensitive_features= was renamed data_source="):
        old = WERMClassifier(LogisticRegression(), w=0.5).fit(X, y, sensitive_features=g)
    np.testing.assert_array_equal(old.sample_weight_, new.sample_weight_)
    assert new.sample_weight_[0] == pytest.approx(0.5 / 40 * 120)  # the groups were used
    with pytest.raises(TypeError, match="both data_source= and its old name"):
        WERMClassifier(w=0.5).fit(X, y, data_source=g, sensitive_features=g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name warns about nothing
        make_werm_membership_scorer(X, y, g, group=1, random_state=0)
        make_werm_membership_scorer(X, y, data_source=g, group=1, random_state=0)
    with pytest.warns(FutureWarning, match="make_werm_membership_scorer"):
        make_werm_membership_scorer(X, y, sensitive_features=g, group=1, random_state=0)
    with pytest.raises(TypeError, match="needs data_source"):
        make_werm_membership_scorer(X, y)


def test_eta_display_group_codes_by_class_and_old_spellings():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from sklearn_privacy import EtaDisplay, FILLogisticRegression

    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = FILLogisticRegression(random_state=0).fit(X, y)
    by_class = EtaDisplay.from_estimator(clf, by_class=True, top_k=0)
    assert {k: int(v.sum()) for k, v in by_class.counts_.items()} == {
        "0": int((y == 0).sum()), "1": int((y == 1).sum())}
    np.testing.assert_array_equal(by_class.group_codes, y)
    with pytest.warns(FutureWarning, match='sensitive_features="class" was replaced by '
                                           "by_class=True"):
        old = EtaDisplay.from_estimator(clf, sensitive_features="class", top_k=0)
    np.testing.assert_array_equal(old.group_codes, by_class.group_codes)
    with pytest.raises(ValueError, match="cannot be combined with sensitive_features"):
        EtaDisplay.from_estimator(clf, by_class=True, sensitive_features=y == 1)
    with pytest.raises(TypeError, match="by_class must be True or False"):
        EtaDisplay.from_estimator(clf, by_class="class")
    codes = np.arange(60) % 2
    with pytest.warns(FutureWarning, match="groups= was renamed group_codes="):
        disp = EtaDisplay(clf.eta_, groups=codes)
    np.testing.assert_array_equal(disp.group_codes, codes)
    with pytest.warns(FutureWarning, match="EtaDisplay.groups was renamed"):
        np.testing.assert_array_equal(disp.groups, codes)
    plt.close("all")
