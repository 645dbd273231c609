"""The one rule for every figure a judge relies on: present figures are finite and physically plausible.

Each check declares FIGURES: (path, Figure) pairs, where a path walks the facts (`perf[].bf16_TFLOPs`: the
field of every element of the list `perf`). `problems()` lists every figure that is present but is not a
number, is NaN or infinite, lies outside its range, or is fractional where a count is meant; and every
container of the wrong shape. Null (or an absent key) means "not measured / not in the source": judges
handle it as unjudged, never as good. `verify.judging` applies this before any judge runs, so no judge
compares a NaN (`nan > 0.1` is False: that is how a broken GPU once passed).
"""
from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    unit: str
    lo: float
    hi: float
    integer: bool = False
    lo_open: bool = False          # the value must be strictly above lo (a measured rate of 0 is no measurement)

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"is {type(value).__name__} {_show(value)}, not a number"
        if isinstance(value, int) and value.bit_length() > 1023:
            # beyond a float's range (math.isfinite and `:g` raise on it): a reader's runaway digits, no measurement
            return f"is an integer of {len(str(abs(value))) if value.bit_length() < 14000 else 'thousands of'} digits, " \
                "beyond any measurement"
        if not math.isfinite(value):
            return f"is {value}, not a finite number"
        if self.integer and not isinstance(value, int):
            return f"is {value!r}, not a whole number (write {int(value)} without a fraction)" if value == int(value) \
                else f"is {value}, not a whole number"
        if value < self.lo or (self.lo_open and value == self.lo) or value > self.hi:
            low = f"{'>' if self.lo_open else '>='} {self.lo:g}"
            return f"is {value:g} {self.unit}, outside the plausible range ({low}, <= {self.hi:g})"
        return None


@dataclass(frozen=True)
class Shape:
    """A container the judge walks: a list or an object."""
    kind: type

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, self.kind):
            return f"is {type(value).__name__} {_show(value)}, not a {'list' if self.kind is list else 'object'}"
        return None


@dataclass(frozen=True)
class Kind:
    """A value of a given type (bool, str), optionally one of a closed set or matching a pattern."""
    kind: type
    choices: tuple[str, ...] = ()
    pattern: str = ""

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            return f"is {type(value).__name__} {_show(value)}, not a {self.kind.__name__}"
        if self.choices and value not in self.choices:
            return f"is {_show(value)}, not one of {', '.join(self.choices)}"
        if self.pattern and not re.fullmatch(self.pattern, str(value)):
            return f"is {_show(value)}, not of the form {self.pattern}"
        return None


@dataclass(frozen=True)
class Each:
    """A list whose every element is of a Kind (e.g. NVLink states: bools); a null element is "not said". `most`:
    the longest list the source can give (NVML reads at most NVML_NVLINK_MAX_LINKS links of a device)."""
    item: Kind
    most: int | None = None

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return f"is {type(value).__name__} {_show(value)}, not a list"
        if self.most is not None and len(value) > self.most:
            return f"holds {len(value)} entries, more than the {self.most} its source can give"
        for i, v in enumerate(value):
            why = None if v is None else self.item.problem(v)
            if why:
                return f"[{i}] {why}"
        return None


@dataclass(frozen=True)
class Unique:
    """A list of objects whose `key` values are distinct (one result per device)."""
    key: str

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return None
        seen = [v.get(self.key) for v in value if isinstance(v, dict) and v.get(self.key) is not None]
        dup = next((k for k in seen if seen.count(k) > 1), None)
        return None if dup is None else f"holds {self.key} {_show(dup)} more than once"


@dataclass(frozen=True)
class Required:
    """An object that must carry these keys (a row without its figures is no measurement)."""
    keys: tuple[str, ...]

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, dict):
            return f"is {type(value).__name__} {_show(value)}, not an object"
        missing = [k for k in self.keys if value.get(k) is None]
        return f"lacks {', '.join(missing)}" if missing else None


@dataclass(frozen=True)
class Either:
    """A value one of two rules accepts (a count, or an explicit word such as "unlimited")."""
    first: Figure | Kind
    second: Figure | Kind

    def problem(self, value: Any) -> str | None:
        why = self.first.problem(value)
        return None if why is None or self.second.problem(value) is None else f"{why}, nor {self.second.problem(value)}"


@dataclass(frozen=True)
class Unless:
    """A rule that does not apply where a top-level fact has a given value: algbw is no rate at world size 1, where
    the all-reduce moves nothing and its time is a kernel launch's."""
    key: str
    equals: Any
    rule: Figure

    def problem(self, value: Any) -> str | None:
        return self.rule.problem(value)


@dataclass(frozen=True)
class Holds:
    """A value that must satisfy a rule reading it as a whole (`rule` returns why not, or None): a loss that is a
    number or an explicit word, or, at the root path "", a rate checked against what the recorded device can do."""
    rule: Callable[[Any], str | None]

    def problem(self, value: Any) -> str | None:
        return self.rule(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# Figures, each with the range a real machine can produce (ceilings above any shipping hardware).
COUNT = Figure("", 0, 2 ** 63, integer=True)
MASK = Figure("", 0, 2 ** 64 - 1, integer=True)
INDEX = Figure("", 0, 4095, integer=True)
BYTES = Figure("B", 0, 2 ** 60, integer=True)
MEMORY = Figure("B", 0, 2 ** 50, integer=True, lo_open=True)
PCIE_GEN = Figure("", 1, 8, integer=True)
PCIE_WIDTH = Figure("lanes", 1, 32, integer=True)
CELSIUS = Figure("C", -60, 250)
WATTS = Figure("W", 0, 10_000)
LIMIT_WATTS = Figure("W", 0, 10_000, lo_open=True)          # a power limit of 0 W would disable the rule that reads it
MEMORY_GBPS = Figure("GB/s", 0, 40_000, lo_open=True)        # bytes read + written by a device-local copy
HOST_GBPS = Figure("GB/s", 0, 2_000, lo_open=True)           # host <-> device (PCIe Gen6 x16: 128 GB/s; C2C 450)
TFLOPS = Figure("TFLOP/s", 0, 20_000, lo_open=True)          # a dense bf16 matmul (B300: about 2.5 PFLOP/s)
ABS_ERROR = Figure("", 0, 1e300)
NET_GBPS = Figure("GB/s", 0, 10_000)                          # collective algbw/busbw (NVLink5: 900 GB/s per GPU)
MICROSECONDS = Figure("us", 0, 1e12, lo_open=True)
RANKS = Figure("ranks", 1, 1 << 24, integer=True)
NODES = Figure("nodes", 1, 1 << 20, integer=True)
LIST, OBJECT = Shape(list), Shape(dict)
BOOL, STR = Kind(bool), Kind(str)
BOOLS, STRS = Each(BOOL), Each(STR)
NVLINKS = Each(BOOL, most=18)        # NVML_NVLINK_MAX_LINKS (nvml.h; verify/shared/nvlink.py reads no more)

Rule = Figure | Shape | Kind | Each | Unique | Required | Either | Unless | Holds
Spec = tuple[tuple[str, Rule], ...]


def _walk(value: Any, steps: list[str], where: str) -> list[tuple[str, Any]]:
    """(path, value) of every value the steps reach; absent keys and nulls reach nothing."""
    if not steps:
        return [(where, value)]
    step, rest = steps[0], steps[1:]
    if step.endswith("[]"):
        key = step[:-2]
        items = value.get(key) if isinstance(value, dict) else None
        if not isinstance(items, list):
            return []
        out: list[tuple[str, Any]] = []
        for i, item in enumerate(items):
            if item is not None:
                out += _walk(item, rest, f"{where}{'.' if where else ''}{key}[{i}]")
        return out
    if not isinstance(value, dict) or value.get(step) is None:
        return []
    return _walk(value[step], rest, f"{where}{'.' if where else ''}{step}")


def problems(facts: Any, spec: Spec) -> list[str]:
    """'<path> <why>' for every present value that breaks its declaration (empty: all plausible)."""
    if not isinstance(facts, dict):
        return [f"facts {Shape(dict).problem(facts)}"]
    found = []
    for path, rule in spec:
        if isinstance(rule, Unless) and facts.get(rule.key) == rule.equals:
            continue
        for where, value in (_walk(facts, path.split("."), "") if path else [("facts", facts)]):
            why = rule.problem(value)
            if why:
                found.append(f"{where} {why}")
    return found


# rules on one value that "unknown" (null) may stand in for; the others read a whole container or record
NULLABLE = (Figure, Kind, Each, Either, Unless)


def within(spec: Spec, path: str, value: Any) -> Any:
    """The value where the spec's one-value rules for `path` take it, else None: a parser reads a figure only in the
    range the contract holds (unknown, never a number the judge would refuse as verify's own bug)."""
    rules = [rule for p, rule in spec if p == path and isinstance(rule, NULLABLE)]
    return None if value is None or any(rule.problem(value) for rule in rules) else value


def without_implausible(facts: dict[str, Any], spec: Spec) -> tuple[dict[str, Any], list[str]]:
    """A copy of the facts with every implausible value a NULLABLE rule refuses set to null (unknown, FACTS.md's one
    meaning of null), and the paths it set. Judged again, the rest can still show a fault the evidence holds."""
    rest = copy.deepcopy(facts)
    nulled: list[str] = []
    for path, rule in spec:
        if not path or not isinstance(rule, NULLABLE) or (isinstance(rule, Unless) and rest.get(rule.key) == rule.equals):
            continue
        _null(rest, path.split("."), rule, "", nulled)
    return rest, nulled


def _null(value: Any, steps: list[str], rule: Rule, where: str, nulled: list[str]) -> None:
    step, rest = steps[0], steps[1:]
    key = step[:-2] if step.endswith("[]") else step
    child = value.get(key) if isinstance(value, dict) else None
    here = f"{where}{'.' if where else ''}{key}"
    if child is None:
        return
    if step.endswith("[]"):
        if not isinstance(child, list):
            return
        for i, item in enumerate(child):
            if item is None:
                continue
            if rest:
                _null(item, rest, rule, f"{here}[{i}]", nulled)
            elif rule.problem(item):
                child[i] = None
                nulled.append(f"{here}[{i}]")
    elif rest:
        _null(child, rest, rule, here, nulled)
    elif rule.problem(child):
        value[key] = None
        nulled.append(here)
