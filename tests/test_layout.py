"""The import graph the layout promises: host side and in-container side never import each other, and the
host side's modules import each other without a cycle (module-level imports; function-level ones are lazy)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

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


# verify/'s floors: the runtime runs checks, the checks and tools use the libraries; nothing reaches up a floor
VERIFY_RUNTIME = {"verify.cli", "verify.runner", "verify.child", "verify.replay", "verify.__main__", "verify.prolog"}


def _floor(mod: str) -> str:
    if mod in VERIFY_RUNTIME:
        return "runtime"
    if mod == "verify.checks" or mod.startswith("verify.checks."):
        return "checks"
    if mod == "verify.tools" or mod.startswith("verify.tools."):
        return "tools"
    return "library"


def test_verify_s_imports_never_climb_a_floor():
    """Libraries import no check, tool or runtime module; checks and tools import no runtime module and not each
    other; the runtime reaches the tools only to dispatch `verify bench` (anywhere in a file, lazy imports too)."""
    allowed = {"library": {"library"}, "checks": {"checks", "library"}, "tools": {"tools", "library"},
               "runtime": {"runtime", "checks", "library", "tools"}}
    climbing = {mod: sorted(d for d in deps if d.startswith("verify.") and _floor(d) not in allowed[_floor(mod)])
                for mod, deps in _graph("verify", everywhere=True).items()}
    assert not {m: d for m, d in climbing.items() if d}


def test_verify_has_no_import_cycle():
    graph = {mod: {d for d in deps if d.startswith("verify") and d != mod}     # `from . import x` in a package
             for mod, deps in _graph("verify", everywhere=False).items()}
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
