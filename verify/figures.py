"""The one rule for every figure a judge relies on: present figures are finite and physically plausible.

Each check declares FIGURES: (path, Figure) pairs, where a path walks the facts (`perf[].bf16_TFLOPs`: the
field of every element of the list `perf`). `problems()` lists every figure that is present but is not a
number, is NaN or infinite, lies outside its range, or is fractional where a count is meant; and every
container of the wrong shape. Null (or an absent key) means "not measured / not in the source": judges
handle it as unjudged, never as good. `verify.judging` applies this before any judge runs, so no judge
compares a NaN (`nan > 0.1` is False: that is how a broken GPU once passed).
"""
from __future__ import annotations

import math
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
        if not math.isfinite(value):
            return f"is {value}, not a finite number"
        if self.integer and value != int(value):
            return f"is {value}, not a whole number"
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


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# Figures, each with the range a real machine can produce (ceilings above any shipping hardware).
COUNT = Figure("", 0, 2 ** 63, integer=True)
MASK = Figure("", 0, 2 ** 64 - 1, integer=True)
INDEX = Figure("", 0, 4095, integer=True)
BYTES = Figure("B", 0, 2 ** 60, integer=True)
PCIE_GEN = Figure("", 1, 8, integer=True)
PCIE_WIDTH = Figure("lanes", 1, 32, integer=True)
CELSIUS = Figure("C", -60, 250)
WATTS = Figure("W", 0, 10_000)
MEMORY_GBPS = Figure("GB/s", 0, 40_000, lo_open=True)        # bytes read + written by a device-local copy
HOST_GBPS = Figure("GB/s", 0, 2_000, lo_open=True)           # host <-> device (PCIe Gen6 x16: 128 GB/s; C2C 450)
TFLOPS = Figure("TFLOP/s", 0, 20_000, lo_open=True)          # a dense bf16 matmul (B300: about 2.5 PFLOP/s)
ABS_ERROR = Figure("", 0, 1e300)
NET_GBPS = Figure("GB/s", 0, 10_000)                          # collective algbw/busbw (NVLink5: 900 GB/s per GPU)
MICROSECONDS = Figure("us", 0, 1e12, lo_open=True)
RANKS = Figure("ranks", 1, 1 << 24, integer=True)
NODES = Figure("nodes", 1, 1 << 20, integer=True)
LIST, OBJECT = Shape(list), Shape(dict)

Spec = tuple[tuple[str, "Figure | Shape"], ...]


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
        for where, value in _walk(facts, path.split("."), ""):
            why = rule.problem(value)
            if why:
                found.append(f"{where} {why}")
    return found
