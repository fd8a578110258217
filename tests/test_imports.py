"""Layering: the imports between the package's subpackages form no cycle.

The graph is built from the source text (``ast``), not by importing: every ``import`` and
``from ... import`` of every module under ``sklearn_privacy/`` (absolute or relative, at
module level or inside a function) is resolved to the subpackage it lands in, and an edge
``a -> b`` is recorded when a module of subpackage ``a`` imports from subpackage ``b``.
Top-level modules (``sklearn_privacy/exceptions.py``) count as subpackages of their own;
the package root ``sklearn_privacy/__init__.py`` re-exports everything and is left out.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGE = "sklearn_privacy"
# the package under test (the checkout's sources, or the installed wheel when the suite runs
# from an unpacked sdist), found without importing it
ROOT = Path(importlib.util.find_spec(PACKAGE).origin).resolve().parent


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _subpackage(module: str) -> str | None:
    """``sklearn_privacy.fil._base`` -> ``fil``; ``None`` for the package root."""
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) < 2:
        return None
    return parts[1]


def _imported_modules(path: Path, tree: ast.AST, root: Path = ROOT) -> list[str]:
    """Absolute names of the modules (or module members) imported by ``path``."""
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    # the package a relative import is resolved against
    base = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:
                # ``from . import x``: x may be a subpackage
                out.extend(f"{target}.{alias.name}" for alias in node.names)
            else:
                out.append(target)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Edges ``subpackage -> {subpackages it imports}`` (self-loops dropped)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        src = _subpackage(_module_name(path, root))
        if src is None:
            continue
        graph.setdefault(src, set())
        for name in _imported_modules(path, ast.parse(path.read_text(), str(path)), root):
            dst = _subpackage(name)
            if dst is not None and dst != src:
                graph[src].add(dst)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` (depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_subpackage_import_graph_is_acyclic():
    """No import cycle between subpackages.

    Mutation check: on the tree where ``metrics`` imported ``multicalibration._groups``
    and ``multicalibration`` imported ``metrics._multicalibration``, this test failed with
    ``metrics -> multicalibration -> metrics``.
    """
    graph = import_graph()
    assert {"fil", "attacks", "werm", "multicalibration", "utils"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle between subpackages: " + " -> ".join(cycle)


def test_graph_resolves_relative_and_nested_imports(tmp_path):
    """The walker itself: relative imports at every level and imports inside functions."""
    pkg = tmp_path / PACKAGE
    for sub in ("a", "b", "c"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a" / "_m.py").write_text("from ..b._n import y\n")
    (pkg / "b" / "_n.py").write_text("def f():\n    from sklearn_privacy.c import z\n")
    (pkg / "c" / "__init__.py").write_text("from .. import a\n")
    graph = import_graph(pkg)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    (pkg / "c" / "__init__.py").write_text("import numpy\n")
    assert find_cycle(import_graph(pkg)) is None


def test_release_audit_attributes_name_public_classes():
    """``utils`` names the estimators whose audit state it strips instead of importing them;
    every name must stay a public estimator class of the package with those attributes."""
    import sklearn_privacy
    from sklearn_privacy.utils._release import AUDIT_ATTRIBUTES

    for name in AUDIT_ATTRIBUTES:
        assert isinstance(getattr(sklearn_privacy, name, None), type), name


def test_private_scikit_learn_api_only_in_fixes():
    """``sklearn.*._private`` modules and names are imported in ``utils/fixes.py`` only."""
    import re

    package = ROOT   # the package under test
    pattern = re.compile(r"sklearn\.(?:\w+\.)*_\w+|_param_validation|\._validate_params\(|"
                         r"_routing_enabled")
    offenders = [f"{p.relative_to(package)}:{i}: {line.strip()}"
                 for p in package.rglob("*.py") if p.name != "fixes.py"
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.search(line)]
    assert not offenders, "\n".join(offenders)
    assert pattern.search((package / "utils" / "fixes.py").read_text(encoding="utf-8"))


def test_dask_backend_does_not_import_the_estimator_module():
    """``fil/_base.py`` calls the dask backend through ``_dask.BACKEND``; the backend takes
    its helpers from ``_glm/_bounds.py`` and never imports ``_base`` back (no circle)."""
    import ast

    fil_dir = ROOT / "fil"

    def imported(name):
        tree = ast.parse((fil_dir / name).read_text(encoding="utf-8"))
        return {(node.module or "") for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level == 1}

    assert "_base" not in imported("_dask.py")
    bounds = ast.parse((ROOT / "_glm" / "_bounds.py").read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(bounds)
                if isinstance(node, (ast.Import, ast.ImportFrom))
                and "fil" in ((getattr(node, "module", None) or "")
                              + "".join(a.name for a in node.names))]
    assert "_dask" in imported("_base.py")
    from sklearn_privacy.fil import _dask
    assert callable(_dask.BACKEND.fit_exact) and callable(_dask.BACKEND.is_dask_collection)
