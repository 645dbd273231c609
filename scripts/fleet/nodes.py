"""One node's report read as a row of the fleet (its verdict, model, figures, phases), and the fleet's comparison of
those rows (the model medians, the slow starts).
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from ..errors import one_line
from . import collective
from .model import (
    DEVICE,
    MIN_NODES,
    NOT_FIGURES,
    OUTLIER_BELOW,
    PHASES,
    RATE_UNITS,
    SLOW_START,
    Figure,
    Node,
    drain_reason,
)
from .plausible import UNJUDGED_CODES

# ---------------------------------------------------------------------------------------------- one node

def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _named(doc: dict[str, Any]) -> str | None:
    """The node the report names itself: the scheduler's node, else the host name (None: it names none)."""
    env: dict[str, Any] = doc["environment"] if isinstance(doc.get("environment"), dict) else {}
    scheduler: dict[str, Any] = env["scheduler"] if isinstance(env.get("scheduler"), dict) else {}
    return _text(scheduler.get("node")) or _text(env.get("hostname"))


def _node_name(doc: dict[str, Any], name: str) -> str:
    return _named(doc) or Path(name.split("#")[0]).stem


def _model(doc: dict[str, Any]) -> tuple[str, dict[int, str]]:
    """The node's GPU model (NVML names from the gpu check, else the environment's), and per torch device index
    the model where devices differ; "cpu" without a GPU."""
    names: dict[int, str] = {}
    gpu = next((c for c in doc["checks"] if c.get("name") == "gpu"), None)
    data = gpu.get("data") if gpu and isinstance(gpu.get("data"), dict) else {}
    devices = [d for d in data.get("devices") or [] if isinstance(d, dict) and _text(d.get("name"))]
    by_nvml = {d.get("index"): str(d["name"]).strip() for d in devices}
    for m in data.get("torch_to_nvml") or []:
        if isinstance(m, dict) and isinstance(m.get("torch_index"), int) and m.get("nvml_index") in by_nvml:
            names[m["torch_index"]] = by_nvml[m["nvml_index"]]
    models = sorted(set(by_nvml.values()))
    if not models:      # a report without the gpu check's devices: the environment's GPU names, where it has them
        env = doc.get("environment") or {}
        listed = env.get("gpus") or env.get("gpu_names")
        named = [g.get("name") if isinstance(g, dict) else g for g in (listed if isinstance(listed, list) else [])]
        models = sorted({text for text in map(_text, named) if text})
    if not models:
        return "cpu", names
    return (models[0] if len(models) == 1 else " + ".join(models)), names


def _verdict(doc: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The node's verdict and the check that decides it (the first failure, else the first warning)."""
    checks = [c for c in doc["checks"] if isinstance(c, dict)]
    worst = next((c for c in checks if c.get("status") == "fail"), None) or \
        next((c for c in checks if c.get("status") == "warn"), None)
    if doc.get("interrupted") or doc.get("status") == "interrupted":
        cut = next((c for c in checks if c.get("code") == "INTERRUPTED"), None)
        return "interrupted", cut or worst
    if not checks:
        return "empty", None
    status = doc.get("status")
    if worst is not None and worst.get("status") == "fail":
        return "fail", worst                # whatever the status field says
    if status in ("pass", "warn") and not any(c.get("status") in ("pass", "warn") for c in checks):
        return "skip", None                 # nothing was judged: never a pass
    return (status if isinstance(status, str) else "fail"), worst


def _figures(doc: dict[str, Any], model: str, per_device: dict[int, str]) -> list[Figure]:
    found = []
    for check in doc["checks"]:
        for metric, m in (check.get("metrics") or {}).items():
            unit, value = m.get("unit"), m.get("value")
            if unit not in RATE_UNITS or isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                continue
            match = DEVICE.match(metric)
            if (check["name"], match["family"] if match else metric) in NOT_FIGURES:
                continue
            device = int(match["index"]) if match else None
            found.append(Figure(check["name"], metric, match["family"] if match else metric, device, float(value),
                                unit, per_device.get(device, model) if device is not None else model))
    return found


def _phases(doc: dict[str, Any]) -> dict[str, float | None]:
    raw = (doc.get("environment") or {}).get("phases")
    if not isinstance(raw, dict):
        return {}
    ordered = [p for p in PHASES if p in raw] + sorted(k for k in raw if k not in PHASES and isinstance(k, str))
    phases: dict[str, float | None] = {}
    for key in ordered:
        value = raw[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        phases[key] = round(float(value), 3) if ok else None
    return phases


def read_node(name: str, doc: dict[str, Any]) -> Node:
    verdict, decisive = _verdict(doc)
    model, per_device = _model(doc)
    env = doc.get("environment") or {}
    summary = "" if decisive is None else str(decisive.get("summary") or "")
    if verdict == "empty":
        summary = "no check ran: the report holds no result"
    elif verdict == "skip" and decisive is None:
        summary = "nothing was judged (every check skipped)"
    elif verdict == "interrupted" and not summary:
        summary = f"interrupted by {doc.get('interrupted') or 'a signal'}"
    node = Node(report=name, node=_node_name(doc, name), verdict=verdict,
                code=decisive.get("code") if decisive else None, owner=decisive.get("owner") if decisive else None,
                summary=one_line(summary), model=model, replay=bool(doc.get("replay")),
                emulated=env.get("emulated") is True, phases=_phases(doc),
                checks=tuple(str(c.get("name")) for c in doc["checks"] if isinstance(c, dict)),
                expect_gpus=_expected_gpus(doc),
                gpu_judged=any(isinstance(c, dict) and c.get("name") == "gpu" and c.get("status") in ("pass", "warn", "fail")
                               for c in doc["checks"]))
    groups = [collective.group_nodes(c) if isinstance(c, dict) else None for c in doc["checks"]]
    node.group = max((g or 0 for g in groups), default=0)
    node.local = any(g is None for g in groups)
    node.across = tuple(str(c.get("name")) for c, g in zip(doc["checks"], groups, strict=True) if g is not None)
    if not node.emulated:       # figures under CPU emulation measure the emulator: reported by verify, not compared
        node.figures = _figures(doc, model, per_device)
    for check in doc["checks"]:
        # a measurement that went wrong (MEASUREMENT_INVALID is verify's own trouble, owner host by default) is
        # not assessed, as the prolog has it: the tool's trouble never lists a node to drain
        if check.get("status") == "fail" and check.get("owner") == "host" and check.get("code") not in UNJUDGED_CODES:
            if (group := collective.group_nodes(check)) is not None:
                node.group_notes.append(collective.note(node.node, name, check, group))
                continue
            node.drain.append(drain_reason(str(check.get("code") or "HOST_FAULT"), str(check.get("summary") or "")))
    return node


def _expected_gpus(doc: dict[str, Any]) -> int:
    """The GPUs verify was told to expect (its options' expect_gpus, as verify writes every report), else 0."""
    options = doc.get("options")
    value = options.get("expect_gpus") if isinstance(options, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


# ---------------------------------------------------------------------------------------------- the fleet

def _compare(nodes: list[Node], notes: list[str]) -> None:
    groups: dict[tuple[str, str, str], list[tuple[Node, Figure]]] = {}
    for n in nodes:
        for f in n.figures:
            groups.setdefault((f.model, f.check, f.family), []).append((n, f))
    few: dict[tuple[str, int], list[str]] = {}
    for (model, check, family), members in groups.items():
        healthy = [f.value for n, f in members if n.passing]     # a failed or cut-off run is no reference
        count = len({n.node for n, _ in members if n.passing})
        if count < MIN_NODES:
            few.setdefault((model, count), []).append(f"{check}.{family}")
            continue
        median = statistics.median(healthy)
        for _, f in members:
            f.median, f.peers = median, count
            if median > 0:
                f.ratio = round(f.value / median, 3)
                f.outlier = f.value < OUTLIER_BELOW * median
    for (model, count), keys in sorted(few.items()):
        notes.append(f"{model}: {', '.join(sorted(keys))} from {count} passing node(s), fewer than {MIN_NODES}: "
                     f"shown, not compared with a median")


def _slow_starts(nodes: list[Node], notes: list[str]) -> float | None:
    timed = [n for n in nodes if n.phases_total is not None]
    if not timed:
        return None
    if len({n.node for n in timed}) < MIN_NODES:
        notes.append(f"time to first step from {len({n.node for n in timed})} node(s), fewer than {MIN_NODES}: "
                     f"shown, not compared with a median")
        return None
    median = statistics.median(n.phases_total for n in timed if n.phases_total is not None)
    for n in timed:
        n.slow_start = n.phases_total is not None and median > 0 and n.phases_total > SLOW_START * median
    return median
