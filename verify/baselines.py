"""Per-SKU baselines (verify/baselines.json), the SKU a device name belongs to, and the ratio rule.

JSON, so that the file loads with the standard library in any image. It is validated at load: every value a
positive finite number, `fail_below < warn_below <= 1`, world sizes whole numbers, SKU patterns valid regular
expressions, no duplicate keys, no NaN. An invalid file is one error naming the line (BaselinesError), never a
crash in the middle of a check and never a silent skip.
"""
from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import strictjson

PATH = Path(__file__).with_name("baselines.json")
FIGURE_KEYS = ("d2d_copy_GBps", "bf16_matmul_TFLOPs", "h2d_pinned_GBps", "d2h_pinned_GBps", "bf16_peak_TFLOPs",
               "train_mfu_floor")
NCCL_KEY = "nccl_allreduce_busbw_GBps"
INTERNODE_KEY = "nccl_internode_busbw_GBps"
ALGOS = ("ring", "nvls")
# Published per-model constants that stand in where NVML's own reading is missing (NVIDIA/DCGM keeps such a table
# per SKU for its diagnostics, nvvs/diag-skus.yaml.in, keyed by PCI device id; ours is keyed by NVML name).
CONSTANT_KEYS = ("sm_clock_max_mhz", "memory_clock_max_mhz", "pcie_gen", "pcie_width", "nvlink_links")


class BaselinesError(ValueError):
    """The baselines file is not valid: the message names the file, the line and the field."""


@dataclass(frozen=True)
class Rule:
    warn_below: float
    fail_below: float
    peer_below: float
    source: str


@dataclass(frozen=True)
class Model:
    sku: str
    patterns: tuple[re.Pattern[str], ...]
    nvlink: bool
    figures: dict[str, dict[str, Any]]                       # key -> {value, basis, source}
    busbw: dict[int, dict[str, dict[str, Any]]]              # world size -> algo -> {value, basis, source}
    internode: dict[str, Any] | None = None                  # all-reduce busbw floor across nodes
    constants: dict[str, dict[str, Any]] | None = None       # key -> {value, basis, source} (CONSTANT_KEYS)

    def constant(self, key: str) -> int | None:
        """A published constant of this model (CONSTANT_KEYS), or None when the table does not hold it."""
        raw = (self.constants or {}).get(key)
        return int(raw["value"]) if raw else None


@dataclass(frozen=True)
class Baselines:
    rule: Rule
    models: tuple[Model, ...]

    def model(self, name: str | None) -> Model | None:
        """The SKU an NVML/torch device name belongs to (MIG suffixes ignored); None when unknown."""
        if not name:
            return None
        base = re.sub(r"\s+MIG\s+\S+$", "", str(name).strip())
        return next((m for m in self.models if any(p.search(base) for p in m.patterns)), None)


def _line_of(text: str, path: list[str]) -> int:
    """The line of `path` (keys from the root), found by walking the quoted keys in order."""
    pos = 0
    for key in path:
        found = text.find(json.dumps(key), pos)
        if found < 0:
            break
        pos = found
    return text.count("\n", 0, pos) + 1


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _figure(raw: Any, where: list[str], fail: Any) -> dict[str, Any]:
    if not isinstance(raw, dict) or set(raw) - {"value", "basis", "source"}:
        fail(where, "must be an object with value, basis and source (and nothing else)")
    if not _positive(raw.get("value")):
        fail(where + ["value"], f"must be a positive finite number, not {raw.get('value')!r}")
    for field in ("basis", "source"):
        if not isinstance(raw.get(field), str) or not raw[field].strip():
            fail(where + [field], "must be a non-empty string (say what the figure is and where it comes from)")
    return raw


def _busbw(raw: Any, where: list[str], fail: Any) -> dict[int, dict[str, dict[str, Any]]]:
    if not isinstance(raw, dict):
        fail(where, "must map world sizes to {ring, nvls}")
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for world, algos in raw.items():
        if not (str(world).isascii() and str(world).isdecimal() and len(str(world)) <= 7 and str(world)[0] != "0"
                and 1 < int(world) < 1 << 20):
            fail(where + [world], f"world size {world!r} must be a whole number of ranks above 1")
        if not isinstance(algos, dict) or not algos or set(algos) - set(ALGOS):
            fail(where + [world], f"must map one or more of {', '.join(ALGOS)} to a figure")
        out[int(world)] = {a: _figure(v, where + [world, a], fail) for a, v in algos.items()}
    return out


def _model(sku: str, raw: Any, fail: Any) -> Model:
    where = ["models", sku]
    if not sku.strip():
        fail(where, "an SKU needs a name")
    if not isinstance(raw, dict):
        fail(where, "must be an object")
    names = raw.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        fail(where + ["names"], "must be a non-empty list of name patterns")
    patterns = []
    for n in names:
        try:
            patterns.append(re.compile(n, re.IGNORECASE))
        except re.error as exc:
            fail(where + ["names"], f"{n!r} is not a regular expression ({exc})")
    if not isinstance(raw.get("nvlink"), bool):
        fail(where + ["nvlink"], "must be true or false (does this SKU have NVLink to its peers)")
    figures = raw.get("figures")
    if not isinstance(figures, dict) or set(figures) - set(FIGURE_KEYS):
        fail(where + ["figures"], f"must be an object with keys among {', '.join(FIGURE_KEYS)}")
    unknown = set(raw) - {"names", "nvlink", "figures", "constants", NCCL_KEY, INTERNODE_KEY}
    if unknown:
        fail(where + [sorted(unknown)[0]], f"unknown key (known: names, nvlink, figures, constants, {NCCL_KEY}, "
             f"{INTERNODE_KEY})")
    constants = raw.get("constants", {})
    if not isinstance(constants, dict) or set(constants) - set(CONSTANT_KEYS):
        fail(where + ["constants"], f"must be an object with keys among {', '.join(CONSTANT_KEYS)}")
    for key, value in constants.items():
        if not isinstance(value, dict) or type(value.get("value")) is not int or not 0 <= value["value"] < 100_000:
            fail(where + ["constants", key], "value must be a whole number from 0 (a count of none) up")
    return Model(sku, tuple(patterns), raw["nvlink"],
                 {k: _figure(v, where + ["figures", k], fail) for k, v in figures.items()},
                 _busbw(raw[NCCL_KEY], where + [NCCL_KEY], fail) if NCCL_KEY in raw else {},
                 _figure(raw[INTERNODE_KEY], where + [INTERNODE_KEY], fail) if INTERNODE_KEY in raw else None,
                 {k: _figure({**v, "value": v["value"] or 1}, where + ["constants", k], fail) and v
                  for k, v in constants.items()})


def parse(text: str, source: str = "verify/baselines.json") -> Baselines:
    """Parse and validate; BaselinesError with the line on anything invalid."""
    def fail(path: list[str], why: str) -> Any:
        raise BaselinesError(f"{source} line {_line_of(text, path)}: {'.'.join(map(str, path))} {why}")

    try:
        raw = strictjson.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselinesError(f"{source} line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:
        raise BaselinesError(f"{source}: {exc}") from None
    except RecursionError:
        raise BaselinesError(f"{source}: nested too deeply to be a baselines file") from None
    if not isinstance(raw, dict) or type(raw.get("schema")) is not int or raw.get("schema") != 1:
        fail(["schema"], "must be 1 (this verify reads baselines schema 1)")
    unknown = set(raw) - {"schema", "about", "rule", "models"}
    if unknown:
        fail([sorted(unknown)[0]], "unknown key (known: schema, about, rule, models)")
    rule = raw.get("rule")
    if not isinstance(rule, dict):
        fail(["rule"], "must be an object with warn_below, fail_below and peer_below")
    if set(rule) - {"warn_below", "fail_below", "peer_below", "source"}:
        fail(["rule", sorted(set(rule) - {"warn_below", "fail_below", "peer_below", "source"})[0]],
             "unknown key (known: warn_below, fail_below, peer_below, source)")
    for key in ("warn_below", "fail_below", "peer_below"):
        if not _positive(rule.get(key)) or rule[key] > 1:
            fail(["rule", key], f"must be a number in (0, 1], not {rule.get(key)!r}")
    if not rule["fail_below"] < rule["warn_below"]:
        fail(["rule", "fail_below"], f"({rule['fail_below']}) must be below warn_below ({rule['warn_below']})")
    models = raw.get("models")
    if not isinstance(models, dict) or not models:
        fail(["models"], "must be a non-empty object of SKUs")
    return Baselines(Rule(float(rule["warn_below"]), float(rule["fail_below"]), float(rule["peer_below"]),
                          str(rule.get("source") or "")),
                     tuple(_model(sku, m, fail) for sku, m in models.items()))


@functools.lru_cache(maxsize=1)
def load() -> Baselines:
    try:
        text = PATH.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselinesError(f"{PATH}: cannot read it ({exc})") from None
    return parse(text, str(PATH))


def judge_ratio(measured: float, baseline: float, rule: Rule | None = None) -> tuple[str, float]:
    """('pass'|'warn'|'fail', ratio) by the rule: warn below warn_below x, fail below fail_below x."""
    r = rule or load().rule
    ratio = measured / baseline
    return ("fail" if ratio < r.fail_below else "warn" if ratio < r.warn_below else "pass"), ratio
