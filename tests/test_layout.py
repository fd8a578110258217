"""The package's layout, read from the source with ``ast`` (nothing is imported).

Four rules, each checked on the package and, to show the checks can fail, on a small
synthetic tree:

* no import cycle between modules;
* no upward import: every module belongs to a layer (``LAYERS``) and imports only from
  its own layer or the ones below it; the package root ``sklearn_privacy/__init__.py``
  is above everything, so no module imports it;
* no module longer than ``MAX_MODULE_LINES`` lines;
* no function or method with more than ``MAX_FUNCTION_LINES`` lines of code: from its
  ``def`` line to its last line, without its docstring (documentation is not what has to
  fit on a screen to follow the code) and its decorators.

Every import counts, at module level or inside a function, absolute or relative. An
``from package import name`` imports the module ``package.name`` when that is a module of
the tree, else the module ``package`` (its ``__init__``). The implicit import of a
module's parent packages is not an edge (it would put every module in a cycle with its
package's ``__init__``); a package's ``__init__`` may re-export from any layer inside its
own package, since it is the package's public face.

The ``ALLOWED_*`` dictionaries name the offenders that remain, each with its measure; a new
offender fails the test, and so does an entry that no longer offends (remove it).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import textwrap
from pathlib import Path

import pytest

PACKAGE = "sklearn_privacy"
# the package under test (the checkout's sources, or the installed wheel when the suite runs
# from an unpacked sdist), found without importing it
ROOT = Path(importlib.util.find_spec(PACKAGE).origin).resolve().parent

MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 120

#: The layers, lowest first. A module may import from its own layer and the layers below.
LAYER_ORDER = (
    "core",         # numerical layer, utilities, exceptions, bundled data
    "mechanisms",   # noise, sensitivities and calibration of every DP mechanism
    "accounting",   # the claim of a published object and its composition
    "glm",          # the GLM core: losses, exact minimisers, row bounds
    "engine",       # the eta engine of the FIL estimators
    "estimators",   # every estimator and transformer, their displays' data
    "audits",       # attacks, audits of fitted models, figures of audits
    "report",       # the privacy report
    "applications",  # the papers' experiments and the demo
    "root",         # sklearn_privacy/__init__.py: the public API only
)

#: Module-name prefix -> layer; the longest matching prefix wins.
LAYERS = {
    f"{PACKAGE}._version": "core",
    f"{PACKAGE}.exceptions": "core",
    f"{PACKAGE}.utils": "core",
    f"{PACKAGE}._linalg": "core",
    f"{PACKAGE}.datasets": "core",
    f"{PACKAGE}.mechanisms": "mechanisms",
    f"{PACKAGE}.privacy": "accounting",
    f"{PACKAGE}._glm": "glm",
    f"{PACKAGE}.fil._eta": "engine",
    f"{PACKAGE}.fil": "estimators",
    f"{PACKAGE}.fil._raw": "estimators",
    f"{PACKAGE}.fil._dask": "estimators",
    f"{PACKAGE}.linear_model": "estimators",
    f"{PACKAGE}.additive": "estimators",
    f"{PACKAGE}.dummy": "estimators",
    f"{PACKAGE}.werm": "estimators",
    f"{PACKAGE}.multicalibration": "estimators",
    f"{PACKAGE}.preprocessing": "estimators",
    f"{PACKAGE}.metrics": "estimators",
    f"{PACKAGE}.model_selection": "estimators",
    f"{PACKAGE}.fil._audits": "audits",
    f"{PACKAGE}.fil._sklearn_audit": "audits",
    f"{PACKAGE}.fil._mlp": "audits",
    f"{PACKAGE}.fil._display": "audits",
    f"{PACKAGE}.attacks": "audits",
    f"{PACKAGE}.report": "report",
    f"{PACKAGE}._experiments": "applications",
    f"{PACKAGE}.demo": "applications",
}
#: The package root, above every layer.
ROOT_LAYER = "root"

#: Import cycles that remain: the modules of each strongly connected component.
ALLOWED_CYCLES: list[frozenset[str]] = []

#: Upward imports that remain: (importer, imported) -> (importer's layer, imported's).
ALLOWED_UPWARD: dict[tuple[str, str], tuple[str, str]] = {}

#: Modules over MAX_MODULE_LINES that remain -> their length.
ALLOWED_LONG_MODULES: dict[str, int] = {}

#: Functions over MAX_FUNCTION_LINES lines of code that remain ("module:qualname") -> them.
ALLOWED_LONG_FUNCTIONS: dict[str, int] = {}


# -- reading the tree ---------------------------------------------------------------------


def module_name(path: Path, root: Path) -> str:
    """``<root>/fil/_base.py`` -> ``sklearn_privacy.fil._base``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_tree(root: Path = ROOT) -> dict[str, tuple[Path, ast.Module, str]]:
    """``{module name: (path, syntax tree, source)}`` of every module under ``root``."""
    if root == ROOT:
        return _package_tree()
    return _read_tree(root)


@functools.cache
def _package_tree():
    return _read_tree(ROOT)


def _read_tree(root: Path) -> dict[str, tuple[Path, ast.Module, str]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        out[module_name(path, root)] = (path, ast.parse(source, str(path)), source)
    return out


def imports_of(name: str, path: Path, tree: ast.Module, modules) -> set[str]:
    """The modules of the tree that module ``name`` (at ``path``) imports."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()

    def add(target):
        # the longest prefix of ``target`` that is a module of the tree
        parts = target.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        if parts:
            found.add(".".join(parts))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                add(f"{base}.{alias.name}")
    found.discard(name)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: {modules of the package it imports}}``."""
    if root == ROOT:
        return _package_graph()
    return _import_graph(root)


@functools.cache
def _package_graph():
    return _import_graph(ROOT)


def _import_graph(root: Path) -> dict[str, set[str]]:
    modules = read_tree(root)
    return {name: {m for m in imports_of(name, path, tree, modules) if m.startswith(PACKAGE)}
            for name, (path, tree, _) in modules.items()}


def layer_of(module: str) -> str:
    if module == PACKAGE:
        return ROOT_LAYER
    best = max((prefix for prefix in LAYERS
                if module == prefix or module.startswith(prefix + ".")), key=len, default=None)
    if best is None:
        raise KeyError(f"{module} is in no layer: add its prefix to LAYERS")
    return LAYERS[best]


# -- the four checks (each returns its offenders) -----------------------------------------


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(v):
        # iterative depth-first search: (node, iterator over its successors)
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        components.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def upward_imports(graph: dict[str, set[str]]) -> dict[tuple[str, str], tuple[str, str]]:
    """``{(importer, imported): (its layer, imported's layer)}`` for every upward import."""
    rank = {layer: i for i, layer in enumerate(LAYER_ORDER)}
    out = {}
    for module, targets in graph.items():
        for target in targets:
            if module != PACKAGE and (target + ".").startswith(module + ".") \
                    and module in _packages(graph):
                continue   # a package's __init__ re-exporting from inside the package
            a, b = layer_of(module), layer_of(target)
            if rank[b] > rank[a]:
                out[(module, target)] = (a, b)
    return out


def _packages(graph):
    return {m.rsplit(".", 1)[0] for m in graph if "." in m}


def long_modules(root: Path = ROOT) -> dict[str, int]:
    return {name: len(source.splitlines())
            for name, (_, _, source) in read_tree(root).items()
            if len(source.splitlines()) > MAX_MODULE_LINES}


def code_lines(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from ``def`` to the function's last line, its docstring left out."""
    length = func.end_lineno - func.lineno + 1
    first = func.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        length -= first.end_lineno - first.lineno + 1
    return length


def long_functions(root: Path = ROOT) -> dict[str, int]:
    """``{"module:qualname": lines}`` of every function or method over the limit."""
    out = {}

    def visit(module, node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    length = code_lines(child)
                    if length > MAX_FUNCTION_LINES:
                        out[f"{module}:{qualname}"] = length
                visit(module, child, qualname + ".")
            else:
                visit(module, child, prefix)

    for name, (_, tree, _) in read_tree(root).items():
        visit(name, tree, "")
    return out


def unexpected(found: dict | list, allowed: dict | list) -> tuple[list, list]:
    """``(new offenders, allowlist entries that no longer offend)``."""
    return (sorted(k for k in found if k not in allowed),
            sorted(k for k in allowed if k not in found))


# -- the package --------------------------------------------------------------------------


def _report(rule, new, stale):
    lines = []
    if new:
        lines.append(f"new {rule}: " + "; ".join(map(str, new)))
    if stale:
        lines.append(f"no longer {rule} (remove from the allowlist): "
                     + "; ".join(map(str, stale)))
    return "\n".join(lines)


def test_every_module_has_a_layer():
    for module in import_graph():
        assert layer_of(module) in LAYER_ORDER


def test_no_import_cycles():
    new, stale = unexpected(import_cycles(import_graph()), ALLOWED_CYCLES)
    assert not new and not stale, _report("import cycles", new, stale)


def test_no_upward_imports():
    new, stale = unexpected(upward_imports(import_graph()), ALLOWED_UPWARD)
    assert not new and not stale, _report("upward imports", new, stale)


def test_no_long_modules():
    new, stale = unexpected(long_modules(), ALLOWED_LONG_MODULES)
    assert not new and not stale, _report(f"modules over {MAX_MODULE_LINES} lines",
                                          new, stale)


def test_no_long_functions():
    new, stale = unexpected(long_functions(), ALLOWED_LONG_FUNCTIONS)
    assert not new and not stale, _report(f"functions over {MAX_FUNCTION_LINES} lines",
                                          new, stale)


def test_the_checks_see_the_package():
    """The reader finds the package's modules and the edges everybody knows are there."""
    graph = import_graph()
    assert len(graph) > 100
    assert f"{PACKAGE}.fil._base" in graph[f"{PACKAGE}.fil._classification"]
    assert f"{PACKAGE}._glm._core" in graph[f"{PACKAGE}.fil._base"]
    assert f"{PACKAGE}.utils.fixes" in graph[f"{PACKAGE}.fil._base"]
    # lazy imports (inside a function) count
    assert f"{PACKAGE}.privacy" in graph[f"{PACKAGE}.fil._base"]


# -- the checks on a synthetic tree -------------------------------------------------------


def _write(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def tree(tmp_path):
    """A clean synthetic ``sklearn_privacy`` with a few layers."""
    root = tmp_path / PACKAGE
    _write(root, {
        "__init__.py": "from .fil import Est\n",
        "utils/__init__.py": "",
        "utils/_a.py": "import numpy\n",
        "mechanisms/__init__.py": "from ._noise import draw\n",
        "mechanisms/_noise.py": "from ..utils._a import numpy\n\ndef draw():\n    pass\n",
        "fil/__init__.py": "from ._est import Est\nfrom ._audits._x import audit\n",
        "fil/_est.py": "from ..mechanisms import draw\n\nclass Est:\n    def fit(self):\n"
                       "        from sklearn_privacy.utils import _a\n",
        "fil/_audits/__init__.py": "",
        "fil/_audits/_x.py": "from .._est import Est\n\ndef audit():\n    pass\n",
        "report/__init__.py": "",
        "report/_r.py": "from ..fil import audit\n",
    })
    return root


def test_synthetic_clean_tree_passes(tree):
    graph = import_graph(tree)
    assert graph[f"{PACKAGE}.fil._est"] == {f"{PACKAGE}.mechanisms", f"{PACKAGE}.utils._a"}
    assert graph[f"{PACKAGE}.mechanisms"] == {f"{PACKAGE}.mechanisms._noise"}
    assert import_cycles(graph) == []
    assert upward_imports(graph) == {}      # fil/__init__ re-exports its own audits
    assert long_modules(tree) == {} and long_functions(tree) == {}


def test_synthetic_cycle_is_found(tree):
    _write(tree, {"utils/_b.py": "from ._a import x\n",
                  "utils/_a.py": "def f():\n    from sklearn_privacy.utils import _b\n"})
    assert import_cycles(import_graph(tree)) == [
        frozenset({f"{PACKAGE}.utils._a", f"{PACKAGE}.utils._b"})]


def test_synthetic_upward_imports_are_found(tree):
    _write(tree, {
        # a mechanism reaching into an estimator (lazily)
        "mechanisms/_noise.py": "def draw():\n    from ..fil._est import Est\n",
        # the package root from inside a subpackage
        "report/_r.py": "from .. import __version__\n",
        # the engine above ... importing an audit
        "fil/_eta/__init__.py": "", "fil/_eta/_e.py": "from .._audits._x import audit\n",
    })
    found = upward_imports(import_graph(tree))
    assert found == {
        (f"{PACKAGE}.mechanisms._noise", f"{PACKAGE}.fil._est"): ("mechanisms", "estimators"),
        (f"{PACKAGE}.report._r", PACKAGE): ("report", "root"),
        (f"{PACKAGE}.fil._eta._e", f"{PACKAGE}.fil._audits._x"): ("engine", "audits"),
    }


def test_synthetic_long_module_and_function_are_found(tree):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    _write(tree, {
        "utils/_long.py": "\n" * MAX_MODULE_LINES + "y = 1\n",
        # exactly at the limit (def line + limit - 1 body lines) under a long docstring
        "utils/_ok.py": "def f():\n    '''doc\n" + "    more doc\n" * MAX_FUNCTION_LINES
                        + "    '''\n"
                        + "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 1))
                        + "\n",
        "fil/_est.py": "class Est:\n    def fit(self):\n" + body + "\n",
    })
    assert long_modules(tree) == {f"{PACKAGE}.utils._long": MAX_MODULE_LINES + 1}
    assert long_functions(tree) == {f"{PACKAGE}.fil._est:Est.fit": MAX_FUNCTION_LINES + 1}


def test_allowlists_fail_on_new_and_stale_offenders(tree):
    """An allowlist covers only its named offenders; a cured offender must be removed."""
    _write(tree, {"utils/_long.py": "\n" * MAX_MODULE_LINES + "y = 1\n"})
    found = long_modules(tree)
    assert unexpected(found, {f"{PACKAGE}.utils._long": 901}) == ([], [])
    # a second offender appears: it is reported though the first one is allowed
    _write(tree, {"fil/_big.py": "\n" * MAX_MODULE_LINES + "y = 1\n"})
    found = long_modules(tree)
    assert unexpected(found, {f"{PACKAGE}.utils._long": 901}) == ([f"{PACKAGE}.fil._big"], [])
    # both cured: the allowlist entry is stale
    _write(tree, {"utils/_long.py": "", "fil/_big.py": ""})
    assert unexpected(long_modules(tree), {f"{PACKAGE}.utils._long": 901}) == (
        [], [f"{PACKAGE}.utils._long"])


def test_module_outside_every_layer_is_refused(tree):
    _write(tree, {"newpkg/__init__.py": ""})
    graph = import_graph(tree)
    with pytest.raises(KeyError, match="newpkg is in no layer"):
        for module in graph:
            layer_of(module)


# -- pickles written before the moves -----------------------------------------------------

#: Classes that reach a pickle and whose module moved: old module -> (new module, names).
MOVED_PICKLED_CLASSES = {
    f"{PACKAGE}.fil._sklearn_audit": (f"{PACKAGE}.fil._audits._audited", (
        "AuditedLinearRegression", "AuditedLogisticRegression",
        "AuditedOneVsRestClassifier", "AuditedPoissonRegressor")),
    f"{PACKAGE}.fil._mlp": (f"{PACKAGE}.fil._mlp._audit", ("AuditedMLP",)),
}


def _as_old_pickle(obj, new_module, old_module):
    """``obj`` pickled as an earlier version wrote it: its class under ``old_module``
    (protocol 2 names classes as text, so the module can be replaced in the bytes)."""
    import pickle

    data = pickle.dumps(obj, protocol=2)
    new = f"c{new_module}\n".encode()
    assert new in data
    return data.replace(new, f"c{old_module}\n".encode())


def test_pickles_naming_the_old_modules_load():
    """An audited scikit-learn model and an audited MLP pickled under the modules their
    classes had before the moves load as the same classes.

    Failed before ``fil/_sklearn_audit.py`` and the re-export in ``fil/_mlp/__init__.py``
    were added (``ModuleNotFoundError: No module named 'sklearn_privacy.fil._sklearn_audit'``
    and ``AttributeError: ... has no attribute 'AuditedMLP'``).
    """
    import importlib
    import pickle
    import warnings

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    from sklearn_privacy.fil import audit

    for old, (new, names) in MOVED_PICKLED_CLASSES.items():
        moved = importlib.import_module(new)
        for name in names:
            assert getattr(importlib.import_module(old), name) is getattr(moved, name)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPClassifier((2,), activation="tanh", alpha=1e-2, max_iter=3000,
                            random_state=0).fit(X, y)
        audited = [audit(LogisticRegression().fit(X, y), X, y, sigma=1.0),
                   audit(mlp, X, y, sigma=1.0)]
    for obj in audited:
        new = type(obj).__module__
        old = next(o for o, (n, names) in MOVED_PICKLED_CLASSES.items()
                   if n == new and type(obj).__name__ in names)
        loaded = pickle.loads(_as_old_pickle(obj, new, old))
        assert type(loaded) is type(obj)
        assert pickle.dumps(loaded) == pickle.dumps(obj)
