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
class Ceiling:
    """An older GPU's fastest half-precision rate (`tensor_ceilings`): a T4 is no 2,500 TFLOP/s GPU, though the
    models table, which holds BF16 peaks, does not name it (Turing and older have no BF16 units at all)."""
    label: str
    patterns: tuple[re.Pattern[str], ...]
    tflops: float
    source: str


def _base_name(name: object) -> str | None:
    """A device name without its MIG suffix; None for no name."""
    if not name or not isinstance(name, str):
        return None
    return re.sub(r"\s+MIG\s+\S+$", "", name.strip())


@dataclass(frozen=True)
class Baselines:
    rule: Rule
    models: tuple[Model, ...]
    ceilings: tuple[Ceiling, ...] = ()

    def model(self, name: str | None) -> Model | None:
        """The SKU an NVML/torch device name belongs to (MIG suffixes ignored); None when unknown."""
        base = _base_name(name)
        return next((m for m in self.models if any(p.search(base) for p in m.patterns)), None) if base else None

    def max_bf16_peak(self) -> float:
        """The highest dense BF16 peak the models hold: no GPU known here does more."""
        return max((float(m.figures["bf16_peak_TFLOPs"]["value"]) for m in self.models
                    if "bf16_peak_TFLOPs" in m.figures), default=20_000.0)

    def tensor_ceiling(self, name: object) -> tuple[float, str]:
        """(TFLOP/s, what it is) that no matmul or model FLOP rate on this GPU can pass: its SKU's dense BF16 peak,
        else an older GPU's fastest half-precision rate, else (no name, or one not known here) the fastest BF16
        peak of any model: an unknown GPU is held to that, never to a ceiling of no GPU at all."""
        model = self.model(name) if isinstance(name, str) else None
        if model is not None and "bf16_peak_TFLOPs" in model.figures:
            return float(model.figures["bf16_peak_TFLOPs"]["value"]), f"the {model.sku}'s dense BF16 peak"
        base = _base_name(name)
        older = next((c for c in self.ceilings if any(p.search(base) for p in c.patterns)), None) if base else None
        if older is not None:
            return older.tflops, f"the fastest tensor rate of {name} ({older.source})"
        return self.max_bf16_peak(), "the fastest dense BF16 peak verify/baselines.json knows"


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


def _patterns(names: Any, where: list[str], fail: Any) -> tuple[re.Pattern[str], ...]:
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        fail(where, "must be a non-empty list of name patterns")
    patterns = []
    for n in names:
        try:
            patterns.append(re.compile(n, re.IGNORECASE))
        except re.error as exc:
            fail(where, f"{n!r} is not a regular expression ({exc})")
    return tuple(patterns)


def _ceiling(label: str, raw: Any, fail: Any) -> Ceiling:
    where = ["tensor_ceilings", label]
    if not isinstance(raw, dict) or set(raw) - {"names", "value", "basis", "source"}:
        fail(where, "must be an object with names, value, basis and source (and nothing else)")
    patterns = _patterns(raw.get("names"), where + ["names"], fail)
    figure = _figure({k: raw.get(k) for k in ("value", "basis", "source")}, where, fail)
    return Ceiling(label, patterns, float(figure["value"]), str(figure["source"]))


def _model(sku: str, raw: Any, fail: Any) -> Model:
    where = ["models", sku]
    if not sku.strip():
        fail(where, "an SKU needs a name")
    if not isinstance(raw, dict):
        fail(where, "must be an object")
    patterns = _patterns(raw.get("names"), where + ["names"], fail)
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
    return Model(sku, patterns, raw["nvlink"],
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
    unknown = set(raw) - {"schema", "about", "rule", "models", "tensor_ceilings"}
    if unknown:
        fail([sorted(unknown)[0]], "unknown key (known: schema, about, rule, models, tensor_ceilings)")
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
                     tuple(_model(sku, m, fail) for sku, m in models.items()),
                     tuple(_ceiling(label, c, fail) for label, c in _ceilings(raw, fail).items()))


def _ceilings(raw: dict[str, Any], fail: Any) -> dict[str, Any]:
    ceilings = raw.get("tensor_ceilings", {})
    if not isinstance(ceilings, dict):
        fail(["tensor_ceilings"], "must be an object of GPU families")
    return ceilings


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
