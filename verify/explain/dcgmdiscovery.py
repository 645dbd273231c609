"""`dcgmi discovery -l`: DCGM's inventory of the GPUs its host engine sees, `N GPUs found.` above a table whose rows
are `| 0      | Name: NVIDIA H100 80GB HBM3 |`, then `|        | PCI Bus ID: 00000000:4C:00.0 |` and
`|        | Device UUID: GPU-... |` (newer DCGM add `Device Type`, then tables of NvSwitches and CPUs, which are not
GPUs and are not read). Into the gpu facts' devices (index, name, bus id, uuid) and `nvml_error` "none" (the host
engine enumerated them through NVML). A name DCGM could not fill (`<<<NULL>>>`, its blank string) is no name: null,
and no sign of a sick GPU. The listing holds no health field: the judge says the GPUs are not assessed, never
healthy; the rows a cut excerpt does not show are not guessed."""
from __future__ import annotations

import re
from typing import Any

_FOUND = re.compile(r"^[^\S\n]*\d+ GPUs? found\.?\s*$", re.MULTILINE)
_HEADER = re.compile(r"^\|\s*(GPU|Switch|NvSwitch|CPU|Link)\s+ID\s*\|", re.IGNORECASE)
_ROW = re.compile(r"^\|\s*(\d+)?\s*\|\s*([^:|]+?)\s*:\s*(.*?)\s*\|\s*$")
_BLANK = re.compile(r"^(<<<NULL>>>|N/A|)$")


def detect(text: str) -> bool:
    return bool(_FOUND.search(text)) and any(_HEADER.match(line.strip()) and "GPU" in line.upper()
                                             for line in text.splitlines())


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    in_gpus = False
    for line in (raw.strip() for raw in text.splitlines()):
        if m := _HEADER.match(line):
            in_gpus = m.group(1).upper() == "GPU"
            continue
        row = _ROW.match(line) if in_gpus else None
        if not row:
            continue
        if row.group(1) is not None:
            devices.append({"index": int(row.group(1)), "name": None, "uuid": None, "pci_bus_id": None})
        if not devices:
            continue
        key, value = row.group(2).lower(), None if _BLANK.match(row.group(3)) else row.group(3)
        field = {"name": "name", "pci bus id": "pci_bus_id", "device uuid": "uuid"}.get(key)
        if field:
            devices[-1][field] = value
    return {"torch": None, "nvml_error": "none" if devices else None, "devices": devices or None}
