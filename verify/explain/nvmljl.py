"""NVML's clock event reasons as Julia's NVML bindings (CUDA.jl's `NVML.clock_event_reasons(dev)`) print them, one
named tuple of nine booleans (issue 35, batch 186: cuda-jl-nvml-clock-event-reasons-nine-read-idle-only-...):

    (idle = true, display_setting = false, hw_power_brake = false, sw_power_cap = false, application_setting = false,
     hw_slow = false, sync_boost = false, sw_thermal = false, hw_thermal = false)

Into one device's `throttle_reasons` (NVML's bit mask of those true) and `throttle_reasons_read` (the bits of those
named): the same judge as nvidia-smi's Clocks Event Reasons. The tuple names no GPU: one device of unknown index."""
from __future__ import annotations

import re
from typing import Any

# NVML's nvmlClocksEventReason bits by the names the Julia bindings give them
_BITS = {"idle": 0x1, "application_setting": 0x2, "sw_power_cap": 0x4, "hw_slow": 0x8, "sync_boost": 0x10,
         "sw_thermal": 0x20, "hw_thermal": 0x40, "hw_power_brake": 0x80, "display_setting": 0x100}
_TUPLE = re.compile(r"^[^\S\n]*\(((?:\s*\w+ = (?:true|false),?)+)\s*\)\s*$", re.MULTILINE)
_PAIR = re.compile(r"(\w+) = (true|false)")


def _reasons(text: str) -> dict[str, bool] | None:
    for m in _TUPLE.finditer(text):
        pairs = dict(_PAIR.findall(m.group(1)))
        # every name one of NVML's and the slowdowns that decide health among them: no other tuple of booleans
        if pairs and set(pairs) <= set(_BITS) and {"hw_slow", "hw_thermal", "sw_thermal"} <= set(pairs):
            return {k: v == "true" for k, v in pairs.items()}
    return None


def detect(text: str) -> bool:
    return "clock_event_reasons" in text and _reasons(text) is not None


def parse(text: str) -> dict[str, Any]:
    reasons = _reasons(text) or {}
    mask = sum(_BITS[k] for k, on in reasons.items() if on)
    read = sum(_BITS[k] for k in reasons)
    return {"torch": None, "driver": None, "cuda_driver": None,
            "devices": [{"throttle_reasons": mask, "throttle_reasons_read": read}] if reasons else None}
