"""A GPU marked lost for an `Unknown Error` on a field or two that are no live read (nvidia-smi's
`power.default_limit` answering `[Unknown Error]`) while the same read answered its live readings (temperature, power
draw, clocks): NVML answered the GPU, so it is not lost, whatever one query's error. `lost` (FACTS.md: `Unknown
Error` on the handle or a query) stands wherever a live read or the handle failed, or NVML said the GPU is lost.
Pure."""
from __future__ import annotations

from ...facts import NvmlDevice
from .unanswering import LIVE, VALUES

MIN_ANSWERED = 2        # two live values read beside the error: one could be a figure kept from before the loss


def answers(dev: NvmlDevice) -> bool:
    """Whether a device whose `lost` is true answered its live reads beside an `Unknown Error` on other fields only."""
    errors = dev.get("nvml_errors") or {}
    if not errors or "handle" in errors or any(k in errors for k in LIVE):
        return False
    if not all(str(v).replace("_", " ").strip().lower() == "unknown error" for v in errors.values()):
        return False        # GPU_IS_LOST (or any other name) is NVML saying so
    return sum(1 for k in VALUES if dev.get(k) is not None) >= MIN_ANSWERED
