"""Every owner and status verify gives each code, read from its source (not from its tests): the proof behind the
prolog's and the fleet report's refusal of a report that gives a code another owner or status than verify ever does.

A site is a call that names a code beside an owner or a status (`result.verdict(FAIL, code, ..., owner)`,
`found.add(WARN, code, ..., owner)`, `CheckResult(..., code=, owner=)`, `Decoded(code, owner, ...)`) or a tuple that
holds a code beside an owner (`("SHM_TOO_SMALL", "job")`). A code written as an expression is resolved: a literal, an
if-expression of literals, a name assigned in the same function, or an object's `.code` from the catalogs in
RESOLVED. An owner written as `x.owner` is the one x was built with (its own site); one unpacked beside its code
from one tuple is that tuple's. Anything else the walker cannot resolve fails the proof by name: a person decides.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from verify.checks.gpu.perf import PERF_FIGURES
from verify.codes import CODES, OWNERS
from verify.shared import cuda_errors, xidcatalog

ROOT = Path(__file__).resolve().parent.parent
# (call name) -> (position of the status, of the code, of the owner); None: keyword only
BUILDERS: dict[str, tuple[int | None, int | None, int | None]] = {
    "verdict": (0, 1, 4), "add": (0, 1, 4), "Decoded": (None, 0, 1), "CheckResult": (1, None, None),
    "_result": (0, 2, None)}     # the vision check's own (its owner: ASSIGNED)
STATUS_NAMES = {"FAIL": "fail", "WARN": "warn", "SKIP": "skip", "PASS": "pass"}
UNKNOWN = "?"
ORIGIN = "origin"              # an object's own owner (x.owner): see _owner
# modules that carry a code they were handed (findings.Findings, the result's own defaults), no site of their own
PASS_THROUGH = {"verify/findings.py", "verify/result.py", "verify/codes.py"}


def _decoded() -> set[str]:
    """Every code cuda_errors' catalog can decode to (its Decoded objects, at module level and in its rules)."""
    found = {v.code for v in vars(cuda_errors).values() if isinstance(v, cuda_errors.Decoded)}
    return found | {d.code for _, _, d in cuda_errors._RULES} | {cuda_errors.forward_compat("1", True).code,
                                                                 cuda_errors.forward_compat("1", False).code}


def _judged(keep: Callable[[xidcatalog.Judged], bool]) -> set[str]:
    """The codes xidcatalog.classify gives some Xid line that `keep` admits (every Xid, every message form)."""
    said = ("", "fatal", "non-fatal", "recovery action changed from 0x0 (None) to 0x1 (Reset)",
            "recovery action changed from 0x0 (None) to 0x5 (IMEX)", "recovery action changed from 0x1 (R) to 0x0 (N)")
    judged = [xidcatalog.classify(x, m) for x in range(0, 400) for m in said]
    judged += [xidcatalog.classify(xidcatalog.TEARDOWN, f"caused by previous Xid {x}") for x in range(0, 400)]
    judged += [xidcatalog.after_application(j, True) for j in judged]
    return {j.code for j in judged if keep(j)}


GPU = "verify/checks/gpu/"
# (module, code expression, status expression) -> the codes it can hold there, by the catalog it comes from. The gpu
# check's Xid findings go by branch (gpuhealth.py: a lost GPU first, then DRAIN, RETIREMENT_PENDING, APP, the rest).
RESOLVED: dict[tuple[str, str, str], Callable[[], set[str]]] = {
    (GPU + "gpuhealth.py", "j.code", "FAIL"): lambda: _judged(
        lambda j: j.xid != xidcatalog.LOST and (j.action == xidcatalog.DRAIN or j.code == "RETIREMENT_PENDING")),
    (GPU + "gpuhealth.py", "j.code", "WARN"): lambda: _judged(
        lambda j: j.xid != xidcatalog.LOST and j.action not in (xidcatalog.DRAIN, xidcatalog.APP)),
    (GPU + "driverlog.py", "code", "FAIL"): lambda: {code for _, code, _ in xidcatalog.RM_STATUS.values()},
    (GPU + "perf.py", "code", "FAIL"): lambda: {f[4] for f in PERF_FIGURES},
    (GPU + "perf.py", "code", "FAIL if verdict == FAIL else WARN"): lambda: {f[4] for f in PERF_FIGURES},
    (GPU + "programerrors.py", "decoded.code", "FAIL if _fails(decoded) else WARN"): _decoded,
    (GPU + "verdict.py", "decoded.code", "FAIL"): _decoded,
    # why_no_gpu's code is a fault the facts prove (node.py: DRIVER_ERROR), else none
    (GPU + "verdict.py", "shown or 'GPU_NOT_VISIBLE'", "status"): lambda: {"DRIVER_ERROR", "GPU_NOT_VISIBLE"},
    ("verify/checks/nccl/verdict.py", "code", "FAIL"): lambda: _decoded() | {"NCCL_TIMEOUT", "NCCL_FAILED"},
    # a CUDA error that is the gpu check's finding fails the run under its own code (mendf), any other its own
    ("verify/checks/train/verdict.py", "'TRAIN_FAILED' if cuda.gpu_finding else cuda.code", "FAIL"):
        lambda: _decoded() | {"TRAIN_FAILED"},
}

VISION = "verify/checks/vision/check.py"
# (module, an assignment to a result's code/owner/status the walker cannot read alone) -> (codes, owners): the vision
# check gives every code of its own (its _result calls, its problems) to the image
ASSIGNED: dict[tuple[str, str], Callable[[], tuple[set[str], set[str | None]]]] = {
    (VISION, "result.code, result.owner = (code, 'image' if code else None)"): lambda: (_module_codes(VISION), {"image"}),
    (VISION, "result.owner = 'image'"): lambda: (_module_codes(VISION), {"image"}),
    (VISION, "result.status, result.code, result.summary, result.remedy = (worst[0], worst[1], worst[2], worst[3])"):
        lambda: (_module_codes(VISION), set()),
}


def _module_codes(rel: str) -> set[str]:
    return _literals(ast.parse((ROOT / rel).read_text(encoding="utf-8")))


@dataclass
class Given:
    owners: dict[str, set[str | None]] = field(default_factory=lambda: defaultdict(set))
    statuses: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    unresolved: list[str] = field(default_factory=list)


def _literals(e: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(e) if isinstance(n, ast.Constant) and n.value in CODES}


def _status(e: ast.AST | None, assigned: dict[str, list[ast.AST]]) -> set[str]:
    if e is None:
        return {UNKNOWN}
    if isinstance(e, ast.Name) and e.id in STATUS_NAMES:
        return {STATUS_NAMES[e.id]}
    if isinstance(e, ast.Constant) and e.value in STATUS_NAMES.values():
        return {str(e.value)}
    if isinstance(e, ast.IfExp):
        return _status(e.body, assigned) | _status(e.orelse, assigned)
    if isinstance(e, ast.Name) and e.id in assigned:
        return set().union(*(_status(v, {}) for v in assigned[e.id]))
    return {UNKNOWN}


def _owner(e: ast.AST | None, assigned: dict[str, list[ast.AST]], paired: set[str]) -> set[str | None]:
    """The owners an expression can give: None (the code's own, by verify/result.py), a literal, UNKNOWN, or ORIGIN:
    an object's `.owner`, the one it was built with (its own site), which holds only for the code that object
    carries (the walk gives a literal code beside it UNKNOWN). A name unpacked from one tuple beside the code's own
    name (`code, owner = ...`: `paired`) gives nothing new: that tuple is a site."""
    if e is None or (isinstance(e, ast.Constant) and e.value is None):
        return {None}
    if isinstance(e, ast.Constant) and e.value in OWNERS:
        return {e.value}
    if isinstance(e, ast.IfExp):
        return _owner(e.body, assigned, paired) | _owner(e.orelse, assigned, paired)
    if isinstance(e, ast.Attribute) and e.attr == "owner":
        return {ORIGIN}
    if isinstance(e, ast.Name) and e.id in paired:
        return set()
    if isinstance(e, ast.Name) and e.id in assigned and all(isinstance(v, (ast.Constant, ast.IfExp))
                                                             for v in assigned[e.id]):
        return set().union(*(_owner(v, {}, set()) for v in assigned[e.id]))
    return {UNKNOWN}


def _written(e: ast.AST, assigned: dict[str, list[ast.AST]]) -> set[str]:
    """The codes written as literals in a code expression (or in what its name was assigned): an object's `.owner`
    beside them is not theirs."""
    found = _literals(e)
    if isinstance(e, ast.Name):
        found |= set().union(*(_literals(v) for v in assigned.get(e.id, [])))
    return found


def _branches(code: ast.AST, owner: ast.AST | None) -> list[tuple[ast.AST, ast.AST | None]]:
    """`a.code if x else "K"` beside `a.owner if x else "host"`: each branch's code with its own owner."""
    if isinstance(code, ast.IfExp) and isinstance(owner, ast.IfExp) and \
            ast.unparse(code.test) == ast.unparse(owner.test):
        return _branches(code.body, owner.body) + _branches(code.orelse, owner.orelse)
    return [(code, owner)]


def _codes(e: ast.AST, assigned: dict[str, list[ast.AST]]) -> set[str] | None:
    """The codes an expression can hold, or None where the walker cannot tell."""
    if isinstance(e, ast.Constant):
        return {e.value} if e.value in CODES else set()
    if isinstance(e, (ast.IfExp, ast.BoolOp)):
        parts = [e.body, e.orelse] if isinstance(e, ast.IfExp) else list(e.values)
        got = [_codes(p, assigned) for p in parts]
        return None if any(g is None for g in got) else set().union(*got)  # type: ignore[arg-type]
    if isinstance(e, ast.Name) and e.id in assigned:
        got = [_codes(v, {}) for v in assigned[e.id]]
        return None if any(g is None for g in got) else set().union(*got)  # type: ignore[arg-type]
    return None


def _partners(code: ast.AST, paired: dict[str, set[str]]) -> set[str]:
    """The names unpacked from one tuple beside a code written as a name; none for any other code expression."""
    return paired.get(code.id, set()) if isinstance(code, ast.Name) else set()


def _functions(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one function (or the module's top level), not of the functions inside it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


def _assignments(scope: ast.AST) -> tuple[dict[str, list[ast.AST]], dict[str, set[str]]]:
    """Each name's assigned values in one scope, and the names unpacked together from tuples (code, owner = ...)."""
    assigned: dict[str, list[ast.AST]] = defaultdict(list)
    paired: dict[str, set[str]] = defaultdict(set)
    for n in _own_nodes(scope):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    assigned[t.id].append(n.value)
                elif isinstance(t, ast.Tuple):
                    names = [x.id for x in t.elts if isinstance(x, ast.Name)]
                    for one in names:
                        paired[one] |= set(names) - {one}
                    for v in (n.value.body, n.value.orelse) if isinstance(n.value, ast.IfExp) else (n.value,):
                        if isinstance(v, ast.Tuple) and len(v.elts) == len(t.elts):
                            for x, y in zip(t.elts, v.elts, strict=True):
                                if isinstance(x, ast.Name):
                                    assigned[x.id].append(y)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
            assigned[n.target.id].append(n.value)
    return assigned, paired


def _assignment(n: ast.Assign, rel: str, assigned: dict[str, list[ast.AST]], paired: dict[str, set[str]],
                given: Given) -> None:
    """An assignment to a result's code, owner or status (`result.status, result.code = FAIL, "X"`) is a site too."""
    for t in n.targets:
        targets = t.elts if isinstance(t, ast.Tuple) else [t]
        attrs = [x.attr if isinstance(x, ast.Attribute) else None for x in targets]
        if not {"code", "owner", "status"} & set(attrs):
            continue
        values = n.value.elts if isinstance(n.value, ast.Tuple) and len(n.value.elts) == len(targets) else None
        by = dict(zip(attrs, values, strict=True)) if values is not None else {}
        if set(by) >= {"code"} and (codes := _codes(by["code"], assigned)) is not None:
            for c in codes:
                given.owners[c] |= _owner(by.get("owner"), assigned, _partners(by["code"], paired)) \
                    if "owner" in by else set()
                given.statuses[c] |= _status(by["status"], assigned) if "status" in by else set()
            continue
        if attrs == ["owner"] and isinstance(n.value, ast.Constant) and n.value.value is None:
            continue                  # no owner: never another's
        key = (rel, ast.unparse(n))
        if key not in ASSIGNED:
            given.unresolved.append(f"{rel}:{n.lineno}: {key}")
            continue
        codes, owners = ASSIGNED[key]()
        for c in codes:
            given.owners[c] |= owners


def _call(n: ast.Call, rel: str, assigned: dict[str, list[ast.AST]], paired: dict[str, set[str]],
          given: Given) -> None:
    """A builder's call (verdict, add, Decoded, CheckResult, the vision check's _result) as a site."""
    name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
    if name not in BUILDERS or (name == "_result" and rel != VISION):
        return
    si, ci, oi = BUILDERS[name]
    kw = {k.arg: k.value for k in n.keywords}
    code = kw.get("code", n.args[ci] if ci is not None and len(n.args) > ci else None)
    if code is None:
        return
    status = kw.get("status", n.args[si] if si is not None and len(n.args) > si else None)
    owner = kw.get("owner", n.args[oi] if oi is not None and len(n.args) > oi else None)
    statuses = set() if name == "Decoded" else _status(status, assigned)
    whole = (rel, ast.unparse(code), ast.unparse(status) if status is not None else "")
    for part, whose in [(code, owner)] if whole in RESOLVED else _branches(code, owner):
        key = (rel, ast.unparse(part), whole[2])
        codes = RESOLVED[key]() if key in RESOLVED else _codes(part, assigned)
        if codes is None:
            given.unresolved.append(f"{rel}:{n.lineno}: {key}")
            continue
        owners = _owner(whose, assigned, _partners(part, paired))
        written = _written(part, assigned)
        for c in codes:
            given.owners[c] |= {UNKNOWN if o == ORIGIN and c in written else o for o in owners
                                if o != ORIGIN or c in written}
            given.statuses[c] |= statuses


def walk(root: Path = ROOT) -> Given:
    given = Given()
    for path in sorted((root / "verify").rglob("*.py")):
        rel = str(path.relative_to(root))
        if "/prolog/" in rel or rel in PASS_THROUGH:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for scope in _functions(tree):
            assigned, paired = _assignments(scope)
            for n in _own_nodes(scope):
                if isinstance(n, ast.Tuple):
                    beside = {e.value for e in n.elts if isinstance(e, ast.Constant) and e.value in OWNERS}
                    for c in (e.value for e in n.elts if isinstance(e, ast.Constant) and e.value in CODES):
                        given.owners[c] |= beside
                    first = n.elts[0] if n.elts else None
                    if first is not None and _status(first, {}) != {UNKNOWN}:
                        for c in (e.value for e in n.elts if isinstance(e, ast.Constant) and e.value in CODES):
                            given.statuses[c] |= _status(first, {})
                if isinstance(n, ast.Assign):
                    _assignment(n, rel, assigned, paired, given)
                if not isinstance(n, ast.Call):
                    continue
                _call(n, rel, assigned, paired, given)
    return given


def catalog_owned(given: Given) -> frozenset[str]:
    """The codes verify only ever gives their catalog's owner (verify/codes.py), or none (an unowned skip)."""
    return frozenset(c for c in CODES if given.owners[c] and given.owners[c] <= {None, CODES[c].owner})


def failures_only(given: Given) -> frozenset[str]:
    """The codes verify only ever writes on a failed check."""
    return frozenset(c for c in CODES if given.statuses[c] == {"fail"})
