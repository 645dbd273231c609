"""`nvidia-smi mig -lgip`: the GPU instance profiles a GPU in MIG mode offers, one table row each (`|   0  MIG 1g.23gb
19     7/7        20.50      No ...|`: GPU, profile, profile id, Free/Total instances, memory). NVML lists them only
for a GPU whose MIG mode is on, so each GPU listed is there, read by NVML (`nvml_error` "none"), in MIG mode (`mig`
[true, null]: the pending mode is not shown), its health not read: not assessed, never healthy.

The profiles are no instances, but their free counts bound them: any GPU instance takes at least one of the GPU's
slices, so a one-slice profile (`1g.*`, not a `+me` variant) with every instance free (7/7) proves the GPU holds no
GPU instance yet (`mig_devices` []). Any other reading (a 1g profile partly taken, or none printed) leaves the
instances unknown (null). Compute instance profiles (`-lcip`) exist only under a GPU instance and are not read."""
from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^\|\s*GPU instance profiles:\s*\|?\s*$", re.MULTILINE)
# `|   0  MIG 1g.23gb       19     7/7        20.50 ...`: GPU, profile, profile id, free/total
_ROW = re.compile(r"^\|\s+(\d+)\s+MIG\s+(\d+g\.\d+gb(?:\+\w+)?)\s+(\d+)\s+(\d+)/(\d+)\b")
_OTHER_TABLE = re.compile(r"^\|\s*(?:GPU instances|Compute instances|Compute instance profiles):", re.IGNORECASE)


def _rows(text: str) -> list[re.Match[str]]:
    found = _HEADER.search(text)
    if not found:
        return []
    rows = []
    for line in text[found.end():].splitlines():
        line = line.strip()
        if _OTHER_TABLE.match(line):
            break
        if m := _ROW.match(line):
            rows.append(m)
    return rows


def detect(text: str) -> bool:
    return bool(_rows(text))


def parse(text: str) -> dict[str, Any]:
    by_gpu: dict[int, list[re.Match[str]]] = {}
    for m in _rows(text):
        by_gpu.setdefault(int(m.group(1)), []).append(m)
    devices = []
    for gpu, rows in sorted(by_gpu.items()):
        one_slice = [m for m in rows if m.group(2).startswith("1g.") and "+" not in m.group(2)]
        # every one-slice instance free: no GPU instance holds any slice; otherwise which exist is unknown
        empty = bool(one_slice) and all(m.group(4) == m.group(5) and int(m.group(5)) > 0 for m in one_slice)
        devices.append({"index": gpu, "mig": [True, None], "mig_devices": [] if empty else None})
    return {"torch": None, "nvml_error": "none", "devices": devices or None}
