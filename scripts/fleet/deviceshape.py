"""A gpu check's NVML devices as verify writes them, or why not (tests/test_cluster_hunt76.py).

verify's gpu check lists each NVML device it read (`data.devices`: verify/checks/gpu/gpuprobe.py) as one object (its NVML
`index`, null where none was read) with facts of the types verify's facts contract declares
(verify/checks/gpu/figures_table.py: `lost` a bool, `uuid` a string, `ecc` a list of bools). The fleet report reads
no verify module, so the fields its readers act on are held here: a passing check listing
eight strings, or a device whose `lost` is the string "true", was read as eight healthy GPUs (a device that is no
object has no `lost`, no UUID, no ECC state to read) and counted healthy. verify/prolog/deviceshape.py holds the same
rule on the prolog's side (the host side never imports verify: tests/test_layout.py; the hunt's test keeps the two
alike).
"""
from __future__ import annotations

import math
from typing import Any, TypeGuard

MOST_INDEX = 4095                 # verify/figures.py INDEX
# a device's fields the readers act on (lost, ECC, identity), each with the one JSON type verify writes (None: unknown)
KINDS: dict[str, type] = {"lost": bool, "persistence": bool, "retired_pages_pending": bool, "nvswitch": bool,
                          "uuid": str, "pci_bus_id": str, "name": str}
BOOL_LISTS = ("ecc", "mig")


def shape_problem(devices: list[Any]) -> str | None:
    """Why one of `devices` is no NVML device verify lists, or None."""
    for n, dev in enumerate(devices):
        if not isinstance(dev, dict):
            return f"NVML device {n} listed as {type(dev).__name__}, not the object verify writes"
        index = dev.get("index")       # null where NVML gave none (a device it could not open)
        if index is not None and (type(index) is not int or not 0 <= index <= MOST_INDEX):
            return f"NVML device {n} listed with index {str(index)[:20]!r}: verify writes each one's NVML index " \
                   f"(a whole number 0 to {MOST_INDEX})"
        for key, kind in KINDS.items():
            if dev.get(key) is not None and type(dev[key]) is not kind:
                return f"NVML device {index} listed with {key} {str(dev[key])[:20]!r}, no {kind.__name__} as verify writes"
        for key in BOOL_LISTS:
            value = dev.get(key)
            if value is not None and (not isinstance(value, list)
                                      or any(x is not None and type(x) is not bool for x in value)):
                return f"NVML device {index} listed with {key} {str(value)[:20]!r}, no list of booleans as verify writes"
    return _index_problem(devices) or _reading_problem(devices)


# a reading no board gives beside its own limit, which verify's facts refuse (verify/checks/gpu/contradictions.py:
# MEASUREMENT_INVALID, never a pass): a current PCIe link past its maximum, power past twice the enforced limit
LINK_MAX = (("pcie_gen", ("pcie_gen_max", "pcie_gen_gpu_max")), ("pcie_width", ("pcie_width_max", "pcie_width_gpu_max")))
POWER_OVER_LIMIT = 2.0
# the range verify's facts contract allows each figure a reader may see (verify/figures.py, verify/checks/gpu/
# figures_table.py: CELSIUS, MEMORY, WATTS, LIMIT_WATTS), held here as the readers never load that table: a pass beside
# 1e308 C or -1 bytes of memory, where no limit of its own rules it out, is no report verify wrote (hunt105)
RANGES: dict[str, tuple[float, float, bool]] = {          # field: (lowest, highest, the lowest itself allowed)
    "temperature_c": (-60, 250, True), "memory_temperature_c": (-60, 250, True),
    "temperature_slowdown_c": (0, 250, False), "memory_temperature_max_c": (0, 250, False),
    "memory_bytes": (0, 2 ** 50, False), "power_w": (0, 10_000, True), "power_limit_w": (0, 10_000, False),
    "power_default_limit_w": (0, 10_000, False), "power_requested_limit_w": (0, 10_000, False),
    "sm_clock_mhz": (0, 10_000, True), "sm_clock_max_mhz": (0, 10_000, False),
}


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _reading_problem(devices: list[dict[str, Any]]) -> str | None:
    """Why a passing gpu check's device lists a reading its own limit rules out, or None: verify's gpu check fails such
    facts (MEASUREMENT_INVALID) before it judges, so a pass beside a PCIe Gen 9 link of a Gen 5 slot, or 1e308 W of a
    700 W limit, is no report verify wrote (hunt103)."""
    for dev in devices:
        index = dev.get("index")
        for now, tops in LINK_MAX:
            for top in tops:
                if _number(dev.get(now)) and _number(dev.get(top)) and dev[top] > 0 and dev[now] > dev[top]:
                    return (f"NVML device {index} listed with {now} {dev[now]:g} above its {top} {dev[top]:g}: no "
                            "link runs past its maximum")
        power, limit = dev.get("power_w"), dev.get("power_limit_w") or dev.get("power_default_limit_w")
        if _number(power) and _number(limit) and limit > 0 and power > POWER_OVER_LIMIT * limit:
            return (f"NVML device {index} listed drawing {power:g} W of a {limit:g} W limit: no board draws over "
                    f"{POWER_OVER_LIMIT:g}x the limit NVML enforces")
        for key, (low, high, closed) in RANGES.items():
            value = dev.get(key)
            if _number(value) and not (math.isfinite(value) and (low <= value if closed else low < value) and
                                       value <= high):
                return (f"NVML device {index} listed with {key} {value:g}, outside what verify's facts allow "
                        f"({'[' if closed else '('}{low:g}, {high:g}]): no reading of a board")
    return None


def _index_problem(devices: list[dict[str, Any]]) -> str | None:
    """NVML numbers each device it counts once, and verify lists each once: an index listed twice is no list verify
    wrote (one GPU counted twice hides another). A list that does not start at 0 can be: a replayed excerpt
    (`--from-facts`) shows only the GPUs it was pasted with."""
    seen: set[int] = set()
    for dev in devices:
        if (index := dev.get("index")) in seen:
            return f"NVML device index {index} listed twice: NVML numbers each device it counts once"
        if index is not None:
            seen.add(index)
    return None


def container_problem(check: dict[str, Any]) -> str | None:
    """Why a check's `metrics` or `data`, or its data's `devices`, is not the container verify writes (an object, an
    object, a list: verify/result.py CheckResult, the gpu check's data), or None; absent or null is none of this."""
    for key, kind in (("metrics", dict), ("data", dict)):
        if check.get(key) is not None and not isinstance(check[key], kind):
            return f"{key} written as {type(check[key]).__name__}, not the object verify writes"
    devices = check["data"].get("devices") if isinstance(check.get("data"), dict) else None
    if devices is not None and not isinstance(devices, list):
        return f"data.devices written as {type(devices).__name__}, not the list verify writes"
    return None
