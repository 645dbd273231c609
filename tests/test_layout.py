"""The shape the layout promises (issues 20 and 37), checked on the source itself: the host side and the in-container
side never import each other; neither has an import circle (lazy imports included) or an import that climbs a floor;
no function is longer than a screen and no module in verify/ longer than MAX_MODULE_LINES; checks are found in their
declared table, never by a name string; no list hides in a comma string; no decision is keyed on a problem message's
prose; and no test imports a test module.

verify/ (issue 37): its top level is the runtime every check shares (RUNTIME) and nothing else; each check has a room,
verify/checks/<name>/, holding its probe, its judge and their helpers; rooms never import one another, and no runtime
module imports a room but the registry (verify/checks/__init__.py, the table of checks) and the two commands built on
the rooms' knowledge (verify explain decodes a log with the room's own reader; verify/tools runs the data path's
measurements). What two or more rooms need lives in verify/shared/, below every room: the Xid catalog is there, not in
the gpu room, because the Slurm prolog (a runtime command that runs on the bare host before any check, and must not
load the table of checks) judges the kernel log with the very catalog the gpu check judges NVML's Xids with; the
host's RDMA adapters (fabric, nccl), NVLink state (gpu, nccl), the process group (nccl, train), /dev/shm (shm,
dataloader, train) and the DataLoader sweep (dataloader, train) likewise. The per-SKU baselines (verify/baselines.py,
read by the gpu, nccl and train judges, checked by the CLI's --baselines and the replay) and the ranked findings
(verify/findings.py: gpu, nccl, fabric, the CLI's ordering, the prolog's verdict) are runtime.
"""
from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.unit

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500

# verify/'s top level: the runtime every check shares (modules and sub-packages); anything else belongs in a room
RUNTIME = frozenset({
    "__init__", "__main__", "atomic", "baselines", "budget", "child", "cli", "codes", "contract", "environment",
    "facts", "factschema", "figures", "findings", "judging", "options", "replay", "report", "result", "runner",
    "scheduler", "strictjson",
    "checks", "shared", "prolog", "explain", "tools",
})
ROOM_READERS = ("verify.checks", "verify.explain", "verify.tools")      # the registry, and the commands on the rooms

ROOMS = sorted(p.name for p in (ROOT / "verify" / "checks").iterdir() if (p / "__init__.py").is_file())

# Each side's floors as (level, name): a module imports its own layer or any layer on a lower level, never a higher
# one, nor another layer on its own level. The longest matching prefix places a module.
FLOORS: dict[str, dict[str, tuple[int, str]]] = {
    "scripts": {
        "scripts": (0, "shared"), "scripts.errors": (0, "shared"), "scripts.fsutil": (0, "shared"),
        "scripts.versions": (0, "shared"), "scripts.dockerfile": (0, "shared"), "scripts.durations": (0, "shared"),
        "scripts.oci": (0, "shared"),
        "scripts.plan": (1, "plan"),                  # matrix + compat -> ImageSpec, Target
        "scripts.settings": (2, "settings"),          # the knobs, read once and checked
        "scripts.render": (3, "render"), "scripts.lint": (3, "lint"),
        "scripts.builder": (4, "builder"),            # engine, bases, emulation, locks, BuildKit builds
        "scripts.run_verify": (5, "run_verify"),      # verify in a container
        "scripts.publish": (6, "publish"),            # release: push, registry, referrers, attest, signing, SBOM, report
        "scripts.fleet": (6, "fleet"),                # clusters: Slurm, Kubernetes, fleet report, gate, isolation
        "scripts.tables": (7, "front"), "scripts.cli": (7, "front"), "scripts.__main__": (7, "front"),
        "scripts.commands": (7, "front"),             # the handlers, one module per stage: a command spans stages
    },
    "verify": {
        "verify": (0, "runtime"),                     # what every check shares: contract, facts, figures, codes, result...
        "verify.shared": (1, "shared"),               # what two or more rooms share, so that no room reaches into another
        **{f"verify.checks.{room}": (2, room) for room in ROOMS},   # one room per check: same level, never each other
        "verify.checks": (3, "registry"),             # the table of checks: the one runtime module that lists the rooms
        "verify.tools": (4, "tools"),                 # the advisor and bench commands, built on the data path's rooms
        **{f"verify.{m}": (5, "front") for m in ("cli", "runner", "child", "replay", "prolog", "explain", "__main__")},
    },
}


def _sources(*tops: str) -> Iterator[Path]:
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path, everywhere: bool) -> set[str]:
    """Absolute names of what `path` imports, at module level only or anywhere in it; `from a import b` counts as
    importing a.b where b is a module, else a (its __init__, which a submodule of a finds already run)."""
    tree = _tree(path)
    package = _module(path).split(".") if path.name == "__init__.py" else _module(path).split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree) if everywhere else iter(tree.body):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            modules = {f"{base}.{alias.name}" for alias in node.names} if node.level or base.startswith(("verify", "scripts")) else set()
            modules = {m for m in modules if _is_module(m)}
            found |= modules | ({base} if len(modules) < len(node.names) else set())
    return found


def _graph(top: str, everywhere: bool) -> dict[str, set[str]]:
    return {_module(p): _imports(p, everywhere) for p in _sources(top)}


def _internal(top: str) -> dict[str, set[str]]:
    graph = _graph(top, everywhere=True)
    return {mod: {d for d in deps if d in graph and d != mod} for mod, deps in graph.items()}


@pytest.mark.parametrize("top,other", [("verify", "scripts"), ("scripts", "verify")])
def test_host_and_container_sides_never_import_each_other(top, other):
    crossing = {mod: sorted(n for n in deps if n == other or n.startswith(other + "."))
                for mod, deps in _graph(top, everywhere=True).items()}
    assert not {m: d for m, d in crossing.items() if d}


@pytest.mark.parametrize("top", ["scripts", "verify"])
def test_no_import_circle(top):
    graph, done = _internal(top), set()

    def visit(mod: str, path: list[str]) -> None:
        if mod in path:
            pytest.fail("import circle: " + " -> ".join([*path[path.index(mod):], mod]))
        if mod not in done:
            for dep in sorted(graph[mod]):
                visit(dep, [*path, mod])
            done.add(mod)

    for mod in sorted(graph):
        visit(mod, [])


def _floor(top: str, mod: str) -> tuple[int, str]:
    prefixes = [p for p in FLOORS[top] if mod == p or mod.startswith(p + ".")]
    assert prefixes, f"{mod} sits on no floor: add it to FLOORS"
    return FLOORS[top][max(prefixes, key=len)]


@pytest.mark.parametrize("top", ["scripts", "verify"])
def test_no_import_climbs_a_floor(top):
    def climbs(mod: str, dep: str) -> bool:
        (level, layer), (dep_level, dep_layer) = _floor(top, mod), _floor(top, dep)
        return dep_level > level or (dep_level == level and dep_layer != layer)

    climbing = sorted(f"{mod} {_floor(top, mod)} imports {dep} {_floor(top, dep)}"
                      for mod, deps in _internal(top).items() for dep in deps if climbs(mod, dep))
    assert climbing == []


def test_no_function_is_longer_than_a_screen():
    long = [f"{p.relative_to(ROOT)}:{n.lineno} {n.name} ({(n.end_lineno or 0) - n.lineno + 1} lines)"
            for p in _sources("scripts", "verify") for n in ast.walk(_tree(p))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and (n.end_lineno or 0) - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def _method_calls(name: str, *tops: str) -> Iterator[tuple[Path, ast.Call, ast.Attribute]]:
    for p in _sources(*tops):
        for node in ast.walk(_tree(p)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
                yield p, node, node.func


def test_checks_are_found_in_the_declared_table_not_by_a_name_string():
    dynamic = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in _sources("scripts", "verify") for n in ast.walk(_tree(p))
               if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute | ast.Name)
               and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in ("import_module", "__import__")]
    assert dynamic == []
    from verify.checks import TABLE
    assert TABLE and all(callable(row.probe) and callable(row.judge) for row in TABLE)


def test_no_list_hides_in_a_comma_string():
    hidden = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in _sources("scripts", "verify") for n in ast.walk(_tree(p))
              if isinstance(n, ast.Compare) and isinstance(n.left, ast.Constant) and n.left.value == ","
              and any(isinstance(op, ast.In) for op in n.ops)]
    assert hidden == []


_PROSE = re.compile(r"(problem|message|msg|error|err|reason|why|exc|stderr|output)s?$", re.IGNORECASE)


def _receiver(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return _receiver(node.args[0])
    return ""


def test_no_decision_is_keyed_on_a_problem_message():
    keyed = [f"{p.relative_to(ROOT)}:{c.lineno}" for name in ("startswith", "endswith")
             for p, c, f in _method_calls(name, "scripts", "verify") if _PROSE.search(_receiver(f.value))]
    assert keyed == []


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


def test_verify_s_top_level_is_the_runtime_alone():
    top = {p.stem for p in (ROOT / "verify").glob("*.py")} | {p.name for p in (ROOT / "verify").iterdir()
                                                              if (p / "__init__.py").is_file()}
    assert top == RUNTIME, f"not runtime: {sorted(top - RUNTIME)}; gone: {sorted(RUNTIME - top)}"


def test_one_room_per_check_and_nothing_else_in_checks():
    from verify.checks import TABLE
    assert sorted(row.name for row in TABLE) == ROOMS
    assert [p.name for p in (ROOT / "verify" / "checks").glob("*.py")] == ["__init__.py"]
    for row in TABLE:       # the table's probe and judge are the room's own, not borrowed from another room
        assert row.probe.__module__.startswith(f"verify.checks.{row.name}.")
        assert row.judge.__module__.startswith(f"verify.checks.{row.name}.")


def _room(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["verify", "checks"] else None


def test_no_room_imports_another_room():
    crossing = sorted(f"{mod} imports {dep}" for mod, deps in _internal("verify").items() if _room(mod)
                      for dep in deps if _room(dep) and _room(dep) != _room(mod))
    assert crossing == []


def test_nothing_outside_the_rooms_imports_a_room_but_the_registry_and_its_readers():
    reaching = sorted(f"{mod} imports {dep}" for mod, deps in _internal("verify").items() if not _room(mod)
                      and not any(mod == r or mod.startswith(r + ".") for r in ROOM_READERS)
                      for dep in deps if _room(dep))
    assert reaching == []


def test_no_module_is_longer_than_max_module_lines():
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in [*_sources("verify"), ROOT / "scripts" / "cli.py"]
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert long == []
