"""A GPU marked lost for an `Unknown Error` on settings or limits only, no live read and no health field
(nvidia-smi's `power.default_limit` answering `[Unknown Error]`), while the same read answered its live readings
(temperature, power draw, clocks): NVML answered the GPU, so it is not lost, whatever one query's error. `lost`
(FACTS.md: `Unknown Error` on the handle or a query) stands wherever the handle, a live read or a health field
failed, or NVML said the GPU is lost. Pure."""
from __future__ import annotations

from ...facts import NvmlDevice
from .unanswering import VALUES

# settings and limits, whose error hides no health fact (not ECC, remapping, links or PCIe: an error there may)
SETTINGS = ("power_default_limit_w", "power_requested_limit_w", "temperature_slowdown_c", "temperature_tlimit_c",
            "temperature_slowdown_tlimit_c", "memory_temperature_max_c", "sm_clock_max_mhz", "numa_node",
            "persistence", "compute_mode")
MIN_ANSWERED = 2        # two live values read beside the error: one could be a figure kept from before the loss


def answers(dev: NvmlDevice) -> bool:
    """Whether a device whose `lost` is true answered its live reads beside an `Unknown Error` on settings only."""
    errors = dev.get("nvml_errors") or {}
    if not errors or any(k not in SETTINGS for k in errors):
        return False        # the handle, a live read or a health field in error: `lost` stands
    if not all(str(v).replace("_", " ").strip().lower() == "unknown error" for v in errors.values()):
        return False        # GPU_IS_LOST (or any other name) is NVML saying so
    return sum(1 for k in VALUES if dev.get(k) is not None) >= MIN_ANSWERED
