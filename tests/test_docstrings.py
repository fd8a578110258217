"""numpydoc validation of every public object of sklearn_privacy.

The public objects are everything listed in ``__all__`` of the package and of its public
subpackages (for :mod:`sklearn_privacy.exceptions`, which has no ``__all__``, its public
classes), plus the public methods and properties those classes define themselves or inherit
from another class of this package. Methods inherited from scikit-learn or builtins are
scikit-learn's business and are not checked here.

:mod:`sklearn_privacy._experiments` is left out on purpose: its module docstring declares it
importable but not part of the stable API (experiment setups for the demo, the examples, the
benchmarks and the tests), so its functions are documented as experiments, not as API.

Each object is one test id (its import path), so a failure names the object and lists the
numpydoc codes and messages it violates.

Mutation check: deleting the description under ``random_state`` in the Parameters section of
:func:`sklearn_privacy.utils.noise_generator` (leaving ``random_state : ...`` alone) makes
``test_docstring[sklearn_privacy.utils.noise_generator]`` fail with PR07 ("Parameter
"random_state" has no description"); removing its Examples section fails it with EX01.
``test_mutation_is_detected`` repeats this on a copy of that docstring.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

PUBLIC_MODULES = [
    "sklearn_privacy",
    "sklearn_privacy.fil",
    "sklearn_privacy.attacks",
    "sklearn_privacy.werm",
    "sklearn_privacy.multicalibration",
    "sklearn_privacy.metrics",
    "sklearn_privacy.model_selection",
    "sklearn_privacy.mechanisms",
    "sklearn_privacy.datasets",
    "sklearn_privacy.utils",
    "sklearn_privacy.exceptions",
    "sklearn_privacy.report",
]

# Checks that are not enforced, following scikit-learn's own sklearn/tests/test_docstrings.py.
#
# Everywhere:
# - GL01, GL02: placement of the opening and closing quotes is a formatting matter left to
#   the linter, not a content matter.
# - RT02: numpydoc wants the first line of Returns to be the bare type; like scikit-learn we
#   write ``name : type`` so that the prose (and the Examples) can refer to the returned value
#   by name.
IGNORED_EVERYWHERE = {"GL01", "GL02", "RT02"}
# Methods and properties: an extended summary (ES01), a See Also section (SA01) and an
# Examples section (EX01) are required of the class docstring, which shows the method in
# use; repeating them on every ``fit``/``predict``/property adds length, not information.
IGNORED_FOR_METHODS = {"ES01", "SA01", "EX01"}
# Functions: the one-line summary plus the Parameters/Returns sections are the contract and
# See Also is optional (scikit-learn's practice). An Examples section (EX01) IS required of
# every public function and class: it is the runnable check (doctest) that the documented
# call works.
IGNORED_FOR_FUNCTIONS = {"ES01", "SA01"}
# Properties have no parameters to document and are described in a single paragraph;
# numpydoc cannot read a signature from them (PR02, GL08 as in scikit-learn).
IGNORED_FOR_PROPERTIES = IGNORED_FOR_METHODS | {"PR02", "GL08"}

def _own_members(klass):
    """Yield ``(name, kind, function)`` for the public methods and properties to check.

    Members defined by a class of this package anywhere in the MRO are included; members
    that come from scikit-learn or builtins are not.
    """
    seen = set()
    for base in klass.__mro__:
        if not base.__module__.startswith("sklearn_privacy"):
            continue
        for name, member in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            if isinstance(member, staticmethod | classmethod):
                member = member.__func__
            if isinstance(member, property):
                seen.add(name)
                yield name, "property", member.fget
            elif inspect.isfunction(member):
                seen.add(name)
                yield name, "method", member
            elif inspect.isfunction(getattr(member, "fn", None)):
                # scikit-learn's ``available_if`` descriptor around a method of ours
                seen.add(name)
                yield name, "method", member.fn


def _public_objects():
    """Return ``{import path: kind}`` for every public object, each listed once."""
    found = {}
    by_identity = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [
                name
                for name, obj in vars(module).items()
                if not name.startswith("_")
                and inspect.isclass(obj)
                and obj.__module__ == module_name
            ]
        for name in names:
            obj = getattr(module, name)
            if not callable(obj) or id(obj) in by_identity:
                continue
            by_identity.add(id(obj))
            path = f"{module_name}.{name}"
            if inspect.isclass(obj):
                found[path] = "class"
                for member_name, kind, func in _own_members(obj):
                    if id(func) in by_identity:
                        continue
                    by_identity.add(id(func))
                    found[f"{path}.{member_name}"] = kind
            else:
                found[path] = "function"
    return found


PUBLIC_OBJECTS = _public_objects()


def _ignored(kind):
    if kind == "class":
        return IGNORED_EVERYWHERE
    if kind == "function":
        return IGNORED_EVERYWHERE | IGNORED_FOR_FUNCTIONS
    if kind == "property":
        return IGNORED_EVERYWHERE | IGNORED_FOR_PROPERTIES
    return IGNORED_EVERYWHERE | IGNORED_FOR_METHODS


def _errors(result, kind):
    return [(code, msg) for code, msg in result["errors"] if code not in _ignored(kind)]


def _params():
    for path, kind in sorted(PUBLIC_OBJECTS.items()):
        yield pytest.param(path, kind, id=path)


def test_collection_is_complete():
    """The collection finds the classes, functions and methods it is meant to check."""
    assert PUBLIC_OBJECTS["sklearn_privacy.FILLogisticRegression"] == "class"
    assert PUBLIC_OBJECTS["sklearn_privacy.FILLogisticRegression.predict_proba"] == "method"
    # inherited from BaseFILEstimator (a class of this package) -> checked once
    assert "sklearn_privacy.FILLinearRegression.fit" in PUBLIC_OBJECTS
    assert PUBLIC_OBJECTS["sklearn_privacy.FILLinearRegression.eta_"] == "property"
    # a method behind ``available_if`` is collected too
    assert PUBLIC_OBJECTS["sklearn_privacy.WERMClassifier.predict_proba"] == "method"
    assert PUBLIC_OBJECTS["sklearn_privacy.utils.noise_generator"] == "function"
    assert PUBLIC_OBJECTS["sklearn_privacy.exceptions.PrivacyWarning"] == "class"
    # scikit-learn's own methods are not collected
    assert "sklearn_privacy.FILLinearRegression.get_params" not in PUBLIC_OBJECTS
    assert not any(p.startswith("sklearn_privacy._experiments") for p in PUBLIC_OBJECTS)
    assert len(PUBLIC_OBJECTS) > 90


@pytest.mark.parametrize("path, kind", list(_params()))
def test_docstring(path, kind):
    """Validate one public object's docstring with numpydoc."""
    errors = _errors(numpydoc_validate.validate(path), kind)
    if errors:
        listing = "\n".join(f"  {code}: {msg}" for code, msg in errors)
        pytest.fail(f"{path} ({kind}) docstring errors:\n{listing}", pytrace=False)


def test_mutation_is_detected(monkeypatch):
    """Deleting one parameter description (or the Examples) is reported by the check."""
    from sklearn_privacy.utils import _random

    path = "sklearn_privacy.utils.noise_generator"
    func = _random.noise_generator
    doc = func.__doc__
    assert _errors(numpydoc_validate.validate(path), "function") == []

    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("random_state :"))
    end = start + 1
    while lines[end].strip():
        end += 1
    broken = "\n".join(lines[: start + 1] + lines[end:])
    monkeypatch.setattr(func, "__doc__", broken)
    codes = [code for code, _ in _errors(numpydoc_validate.validate(path), "function")]
    assert codes == ["PR07"]

    no_examples = doc.split("Examples\n")[0]
    monkeypatch.setattr(func, "__doc__", no_examples)
    codes = [code for code, _ in _errors(numpydoc_validate.validate(path), "function")]
    assert "EX01" in codes
