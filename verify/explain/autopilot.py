"""IBM Autopilot's health-check daemon (github.com/IBM/autopilot) as its pod's log prints its PCIe bandwidth check:
`functions.go:176] GPU_MODEL: NVIDIA H100 80GB HBM3`, `Running health check: pciebw`, `GPU PCIe BW test completed:`
and one `Observation: <node> <gpu> <GB/s>` line per GPU, the host-to-device copy rate (cuda-samples' bandwidthTest).
Into the gpu facts: each observed GPU (its index; the daemon's model line as its name, one model per node) and its
`perf` h2d_GBps. The daemon's own figure reads no ECC, remap, thermal or link field: the GPUs' health is not assessed
(batch 196: three H100s at 55.2 GB/s), never a pass on a checker's word."""
from __future__ import annotations

import re
from typing import Any

_PCIEBW = re.compile(r"\] (?:Running health check: pciebw|GPU PCIe BW test completed:)")
_MODEL = re.compile(r"\] GPU_MODEL: (\S(?:.*\S)?)\s*$", re.MULTILINE)
_OBSERVATION = re.compile(r"\] Observation: \S+ (\d+) (\d+(?:\.\d+)?)\s*$", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_PCIEBW.search(text) and _OBSERVATION.search(text))


def parse(text: str) -> dict[str, Any]:
    model = _MODEL.search(text)
    rates = {int(m.group(1)): float(m.group(2)) for m in _OBSERVATION.finditer(text)}
    return {"torch": None,
            "devices": [{"index": i, "name": model.group(1) if model else None} for i in sorted(rates)],
            "perf": [{"index": i, "h2d_GBps": rates[i]} for i in sorted(rates)]}
