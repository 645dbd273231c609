"""The import graph the layout promises: host side and in-container side never import each other, and the
host side's modules import each other without a cycle (module-level imports; function-level ones are lazy)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.unit


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, everywhere: bool) -> set[str]:
    """Absolute names of what `path` imports: at module level only, or anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree) if everywhere else iter(tree.body)
    package = _module(path).split(".") if path.name == "__init__.py" else _module(path).split(".")[:-1]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


def _graph(top: str, everywhere: bool) -> dict[str, set[str]]:
    return {_module(p): _imports(p, everywhere) for p in sorted((ROOT / top).rglob("*.py"))}


@pytest.mark.parametrize("top,other", [("verify", "scripts"), ("scripts", "verify")])
def test_host_and_container_sides_never_import_each_other(top, other):
    crossing = {mod: sorted(n for n in deps if n == other or n.startswith(other + "."))
                for mod, deps in _graph(top, everywhere=True).items()}
    assert not {m: d for m, d in crossing.items() if d}


def test_the_host_side_has_no_import_cycle():
    graph = {mod: {d for d in deps if d.startswith("scripts")} for mod, deps in _graph("scripts", everywhere=False).items()}
    done: set[str] = set()

    def visit(mod: str, path: list[str]) -> None:
        if mod in path:
            pytest.fail("import cycle: " + " -> ".join(path[path.index(mod):] + [mod]))
        if mod in done:
            return
        for dep in graph.get(mod, ()):
            visit(dep, path + [mod])
        done.add(mod)

    for mod in graph:
        visit(mod, [])



def test_tests_import_no_test_module():
    """Shared helpers live in tests/helpers.py (and verify_handmade, slurm); a test module or a conftest.py is
    pytest's to load, never another module's to import."""
    def is_test_module(name: str) -> bool:
        return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith(("test_", "conftest"))

    offenders = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        if found := sorted(filter(is_test_module, names)):
            offenders[_module(path)] = found
    assert not offenders
