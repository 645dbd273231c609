"""Facts schema 3 at the door: keys the types do not declare are refused, and older records are read as schema 3.

The one rule for schema-1 and -2 records (verify/FACTS.md, "Older records"): in those schemas a null meant a
value of its own in a few fields; each such null becomes that value (UPGRADE), and every other null stays null,
which schema 3 reads as unknown. Nothing else changes: schema 2 only added fields to schema 1.
"""
from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

from .facts import NONE, UNLIMITED, UNSET

SCHEMA = 3
KNOWN = (1, 2, 3)
ALL_REASONS = 0x1FF          # the nine clock-event reasons of nvml.h this verify reads (gpuhealth.THROTTLE_BITS)

Where = Callable[[dict[str, Any]], bool]


def _always(_: dict[str, Any]) -> bool:
    return True


def _has(field: str) -> Where:
    return lambda owner: owner.get(field) is not None


def _cpu_build(owner: dict[str, Any]) -> bool:
    """torch is recorded and its version names no CUDA build (`+cu128`): the probe wrote null for a CPU build only."""
    return isinstance(owner.get("torch"), str) and "+cu" not in owner["torch"]


# check -> (field path, what its null meant before schema 3, where that applies); FACTS.md "Older records"
UPGRADE: dict[str, tuple[tuple[str, Any, Where], ...]] = {
    "gpu": (("torch_cuda", NONE, _cpu_build), ("nvml_error", NONE, _always), ("cuda_init_error", NONE, _always),
            ("cuda_visible_devices", UNSET, _always), ("devices[].nvlink", [], _always),
            ("devices[].throttle_reasons_read", ALL_REASONS, _has("throttle_reasons"))),
    "nccl": (("error", NONE, _always), ("nodes", 1, _has("mode")), ("memlock_bytes", UNLIMITED, _always)),
}


def upgrade(check: str, facts: dict[str, Any], schema: int) -> dict[str, Any]:
    """A schema-1/-2 record's facts read as schema 3 (a copy); a schema-3 record as it is."""
    if schema >= SCHEMA:
        return facts
    out = dict(facts)
    for path, value, applies in UPGRADE.get(check, ()):
        head, _, field = path.rpartition(".")
        owners = [out] if not head else _copied_items(out, head.removesuffix("[]"))
        for owner in owners:
            if owner.get(field) is None and applies(owner):
                owner[field] = list(value) if isinstance(value, list) else value
    return out


def _copied_items(facts: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = facts.get(key)
    if not isinstance(items, list):
        return []
    facts[key] = [dict(i) if isinstance(i, dict) else i for i in items]
    return [i for i in facts[key] if isinstance(i, dict)]


def _declared(kind: Any) -> tuple[Any, bool]:
    """(the TypedDict a value of this annotation must be, whether it is a list of them); (None, False) otherwise."""
    for arm in get_args(kind) if get_origin(kind) in (typing.Union, types.UnionType) else (kind,):
        if is_typeddict(arm):
            return arm, False
        if get_origin(arm) is list and get_args(arm) and is_typeddict(get_args(arm)[0]):
            return get_args(arm)[0], True
    return None, False


# The schema's TypedDicts are fixed at import: their resolved hints are read once, not per record and nesting
# (`verify explain` checks every parser's facts; resolving the annotations was a tenth of a large paste's time).
_hints = functools.cache(get_type_hints)


def unknown_keys(facts: Any, kind: Any, where: str = "") -> list[str]:
    """'<path> is not a field of facts schema 3' for every key the TypedDict `kind` (and those it nests) lacks."""
    if not isinstance(facts, dict):
        return []
    hints = _hints(kind)
    found = []
    for key, value in facts.items():
        path = f"{where}{'.' if where else ''}{key}"
        if key not in hints:
            found.append(f"{path} is not a field of facts schema 3 (verify/FACTS.md): misspelt, or from another tool")
            continue
        inner, many = _declared(hints[key])
        if inner is None:
            continue
        for i, item in enumerate(value if many and isinstance(value, list) else [value]):
            found += unknown_keys(item, inner, f"{path}[{i}]" if many else path)
    return found
