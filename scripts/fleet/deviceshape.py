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

from typing import Any

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
    return _index_problem(devices)


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
