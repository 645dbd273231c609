"""The measured figures judged: copy and matmul rates against the SKU's baseline (verify/baselines.json) and against
same-model peers, and the silent-data-corruption canary (repeats bit for bit, the majority across devices)."""
from __future__ import annotations

import statistics
from typing import Any

from ... import baselines
from ...facts import NvmlDevice, Perf
from ...findings import Findings
from ...options import Options
from ...result import FAIL, PASS, WARN, CheckResult
from . import gpuidentity
from .node import Node

PERF_FIGURES = (("d2d_GBps", "d2d_copy_GBps", "device-to-device copy", "GB/s", "BANDWIDTH_LOW"),
                ("h2d_GBps", "h2d_pinned_GBps", "pinned host-to-device copy", "GB/s", "BANDWIDTH_LOW"),
                ("d2h_GBps", "d2h_pinned_GBps", "pinned device-to-host copy", "GB/s", "BANDWIDTH_LOW"),
                ("bf16_TFLOPs", "bf16_matmul_TFLOPs", "bf16 matmul", "TFLOP/s", "COMPUTE_LOW"))


PERF_REMEDY = ("Compare with another node of the same model; check PCIe/NVLink state, clocks, throttling and other "
               "processes on the GPU (`nvidia-smi`).")


def judge_perf(node: Node, result: CheckResult, found: Findings, options: Options) -> list[str]:
    """Figures against the SKU's baseline and against same-SKU peers; what could not be judged, said."""
    perf = node.facts.get("perf")
    unjudged: list[str] = []
    if perf is None:
        return ["figures not measured"]
    entries = [p for p in perf if isinstance(p, dict) and isinstance(p.get("index"), int)]
    if node.facts.get("cuda_available") and options.gpu_perf and node.torch_count and not entries and \
            not any(f.code in ("KERNEL_FAILED", "GPU_LOST") for f in found.items):
        found.add(FAIL, "MEASUREMENT_INVALID", f"no performance figures from {node.torch_count} device(s)",
                  "Rerun the check; run it with --no-perf to skip the figures on purpose.", "host")
        return unjudged
    measured = {p["index"] for p in entries}
    for k in node.facts.get("kernels") or []:
        if isinstance(k, dict) and k.get("max_abs_error") is not None and k.get("index") not in measured and options.gpu_perf:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{node.label(k.get('index'))}: its kernel ran but no performance "
                      f"figures were recorded ({len(entries)} of {node.torch_count} device(s) measured)",
                      "Rerun the check; run it with --no-perf to skip the figures on purpose.", "host",
                      (node.nvml_of(k.get("index")) or {}).get("index"))
    groups: dict[str, list[tuple[Perf, NvmlDevice]]] = {}
    for p in entries:
        missing = [what for key, _, what, _, _ in PERF_FIGURES if p.get(key) is None]
        if len(missing) == len(PERF_FIGURES) and options.gpu_perf:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{node.label(p['index'])}: a performance entry without a figure",
                      "Rerun the check.", "host", (node.nvml_of(p["index"]) or {}).get("index"))
        elif missing:
            unjudged.append(f"{node.label(p['index'])}: {', '.join(missing)} not measured")
        dev = node.nvml_of(p["index"]) or {}
        name = dev.get("name") or next((s.get("name") for s in node.facts.get("sdc") or []
                                        if isinstance(s, dict) and s.get("index") == p["index"]), None)
        mig = node.mig_of(p["index"]) or gpuidentity.mig_profile(name)
        mode = dev.get("mig")
        in_mig = isinstance(mode, list) and bool(mode) and mode[0] is True
        if mig or in_mig:
            unjudged.append(f"{node.label(p['index'])} is {'a MIG slice' if mig else 'in MIG mode'}: figures "
                            "reported, not judged against whole-GPU baselines")
            for key, _, _, unit, _ in PERF_FIGURES:
                if (value := figure_of(p, key)) is not None:
                    result.metric(f"{key}_dev{p['index']}", value, unit)
            continue
        model = node.table.model(name)
        groups.setdefault(model.sku if model else f"unknown:{name}", []).append((p, {**dev, "name": name}))
    for sku, members in groups.items():
        model = None if sku.startswith("unknown:") else next(m for m in node.table.models if m.sku == sku)
        if model is None:
            unjudged.append(f"no baseline for '{sku[8:]}' in verify/baselines.json: compared with its peers only")
        for p, dev in members:
            judge_perf_device(node, p, dev, model, members, result, found)
    return unjudged


def figure_of(p: Perf, key: str) -> float | None:
    """A PERF_FIGURES figure of one entry (its key comes from the table, not a literal; the gate made it a number)."""
    value = p.get(key)
    return value if isinstance(value, (int, float)) else None


# a measured dense matmul rate past the SKU's dense BF16 peak by more than this is no measurement (the datasheet's
# peak is at boost clock already; the margin is its rounding)
PEAK_MARGIN = 1.1


def judge_perf_device(node: Node, p: Perf, dev: NvmlDevice, model: baselines.Model | None,
                 peers: list[tuple[Perf, NvmlDevice]], result: CheckResult, found: Findings) -> None:
    i, rule = p["index"], node.table.rule
    for key, bkey, what, unit, code in PERF_FIGURES:
        value = figure_of(p, key)
        if value is None:
            continue
        peak = node.table.tensor_ceiling(dev.get("name"))
        if key == "bf16_TFLOPs" and value > PEAK_MARGIN * peak[0]:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{node.label(i)}: {what} {value} {unit} is above {peak[1]} "
                      f"({peak[0]:g} {unit}): no such GPU computes that much, physically impossible",
                      "Rerun the check.", "host", dev.get("index"))
            continue
        result.metric(f"{key}_dev{i}", value, unit)
        others = [float(v) for q, _ in peers if q is not p and (v := figure_of(q, key)) is not None]
        if others:
            median = statistics.median(others + [float(value)])
            peer_ratio = value / median
            result.metric(f"{key}_peer_ratio_dev{i}", peer_ratio, "x")
            if peer_ratio < rule.peer_below:
                found.add(FAIL, code, f"{node.label(i)}: {what} {value} {unit} is {peer_ratio:.2f}x the median of its "
                          f"{len(others) + 1} same-model peers ({median:g} {unit})", PERF_REMEDY, "host", dev.get("index"))
        figure = model.figures.get(bkey) if model else None
        if figure is None:
            result.details.append(f"{node.label(i)}: {what} {value} {unit} (no baseline)")
            continue
        verdict, ratio = baselines.judge_ratio(float(value), float(figure["value"]), rule)
        result.metric(f"{key}_ratio_dev{i}", ratio, "x")
        result.details.append(f"{node.label(i)}: {what} {value} {unit} = {ratio:.2f}x the {model.sku if model else ''} "
                              f"baseline {figure['value']} ({figure['source']})")
        if verdict != PASS:
            found.add(FAIL if verdict == FAIL else WARN, code, f"{node.label(i)}: {what} {value} {unit} is {ratio:.2f}x "
                      f"the {model.sku if model else ''} baseline {figure['value']} {unit}", PERF_REMEDY, "host",
                      dev.get("index"))


def judge_sdc(node: Node, result: CheckResult, found: Findings) -> None:
    """Repeats must agree bit for bit; across same-model devices the majority decides, and a tie fails all tied."""
    groups: dict[tuple[Any, Any], list[tuple[Any, str]]] = {}
    sdc = node.facts.get("sdc")
    ran = {k.get("index") for k in node.facts.get("kernels") or [] if isinstance(k, dict) and k.get("max_abs_error") is not None}
    if isinstance(sdc, list) and node.facts.get("perf"):
        missing = sorted(ran - {e.get("index") for e in sdc if isinstance(e, dict)}, key=str)
        if missing:
            found.add(FAIL, "MEASUREMENT_INVALID", f"no SDC canary result for torch device(s) "
                      f"{', '.join(map(str, missing))} whose kernels ran", "Rerun the check.", "host")
    for entry in sdc or []:
        if not isinstance(entry, dict):
            continue
        digests = [d for d in entry.get("digests") or [] if isinstance(d, str)]
        i = entry.get("index")
        nvml_dev = node.nvml_of(i) or {}
        dev = nvml_dev.get("index")
        if not digests:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{node.label(i)}: the SDC canary recorded no result", "Rerun the check.",
                      "host", dev)
            continue
        if len(set(digests)) > 1:
            found.add(FAIL, "SDC_MISMATCH", f"{node.label(i)}: the same matmul gave {len(set(digests))} different "
                      f"results in {len(digests)} runs", "Drain the node and run `dcgmi diag -r 4`; RMA the GPU.",
                      "host", dev)
        else:         # same model (NVML's name where the device is known) and the same slice size compare
            mig = node.mig_of(i) or gpuidentity.mig_profile(entry.get("name"))
            key = (nvml_dev.get("name") or entry.get("name"), entry.get("sm_count") if mig else None)
            groups.setdefault(key, []).append((i, digests[0]))
    for (name, _), members in groups.items():
        counts: dict[str, int] = {}
        for _, d in members:
            counts[d] = counts.get(d, 0) + 1
        if len(counts) < 2:
            continue
        top = max(counts.values())
        winners = [d for d, c in counts.items() if c == top]
        odd = [i for i, d in members if len(winners) > 1 or d != winners[0]]
        why = ("no majority: the devices split evenly, so none can be trusted" if len(winners) > 1
               else f"the other {top} {name} device(s) agree")
        for i in sorted(odd, key=str):
            found.add(FAIL, "SDC_MISMATCH", f"{node.label(i)} computes a different fp32 matmul result than its "
                      f"{name} peers ({why})", "Drain the node and run `dcgmi diag -r 4` on these GPUs; RMA them.",
                      "host", (node.nvml_of(i) or {}).get("index"))
    if sdc:
        result.details.append(f"SDC canary: {len(sdc)} device(s), a 2048^3 fp32 matmul repeated and "
                              "compared bit for bit")


def host_copy_low(node: Node, dev: NvmlDevice) -> bool:
    """A host<->device copy of this device below the warn ratio of its baseline: a narrow link seen once is real."""
    model = node.table.model(dev.get("name"))
    for p in node.facts.get("perf") or []:
        if not isinstance(p, dict) or node.nvml_of(p.get("index")) is not dev or model is None:
            continue
        for key, bkey in (("h2d_GBps", "h2d_pinned_GBps"), ("d2h_GBps", "d2h_pinned_GBps")):
            value, base = figure_of(p, key), model.figures.get(bkey)
            if value is not None and base and value < node.table.rule.warn_below * float(base["value"]):
                return True
    return False
