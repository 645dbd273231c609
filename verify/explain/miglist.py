"""`nvidia-smi mig -lgi` and `nvidia-smi mig -lci`: the GPU instances and compute instances of GPUs in MIG mode, one
table row each (`|   0  MIG 1g.10gb         19        9          2:1     |`: GPU, name, profile id, instance id,
placement; -lci adds the GPU instance's id before the name), into the gpu facts' devices: each GPU listed is in MIG
mode (`mig` [true, null]: instances exist only there; the pending mode is not shown) with its `mig_devices` (the
compute instances where -lci is quoted, which are the MIG devices programs use; else the GPU instances). NVML read
the GPU to list them, so it is there, its health not read: not assessed, never healthy. The profile lists (`-lgip`,
`-lcip`: what could be created) are no instances and are not read; a row the paste cut (`|   2  MIG 1g.10gb`) keeps
what it shows. The profile id and placement have no field.

`nvidia-smi -mig 0|1`'s warning that the change waits (`Warning: MIG mode is in pending enable state for GPU
00000001:00:00.0:In use by another client`) is that GPU's `mig` [current, pending]: [false, true] pending enable,
[true, false] pending disable."""
from __future__ import annotations

import re
from typing import Any

_GI_HEADER = re.compile(r"^\|\s*GPU instances:\s*\|?\s*$", re.MULTILINE)
_CI_HEADER = re.compile(r"^\|\s*Compute instances:\s*\|?\s*$", re.MULTILINE)
# `1g.10gb`, `1g.10gb+me`, a compute instance's `1c.3g.40gb`: (compute slices of the CI, of the GI)
_PROFILE = r"((?:(\d+)c\.)?(\d+)g\.\d+gb(?:\+\w+)?)"
_GI_ROW = re.compile(r"^\|\s+(\d+)\s+MIG\s+" + _PROFILE + r"(?:\s+(\d+)\s+(\d+)\b)?")
_CI_ROW = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+MIG\s+" + _PROFILE + r"(?:\s+(\d+)\s+(\d+)\b)?")


_PENDING = re.compile(r"MIG mode is in pending (enable|disable) state for GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
                      r"[0-9A-Fa-f]{2}\.[0-7])")


def detect_pending(text: str) -> bool:
    return _PENDING.search(text) is not None


def parse_pending(text: str) -> dict[str, Any]:
    by_bus: dict[str, dict[str, Any]] = {}
    for m in _PENDING.finditer(text):
        on = m.group(1) == "enable"
        by_bus[m.group(2).upper()] = {"index": None, "pci_bus_id": m.group(2).upper(), "mig": [not on, on]}
    return {"torch": None, "devices": list(by_bus.values()) or None}


def detect(text: str) -> bool:
    return bool(_rows(text, _GI_HEADER, _GI_ROW) or _rows(text, _CI_HEADER, _CI_ROW))


def _rows(text: str, header: re.Pattern[str], row: re.Pattern[str]) -> list[re.Match[str]]:
    """The table's rows after its header (up to the next table's header)."""
    found = header.search(text)
    if not found:
        return []
    rows = []
    for line in text[found.end():].splitlines():
        if _GI_HEADER.match(line) or _CI_HEADER.match(line) or "instance profiles:" in line:
            break
        if m := row.match(line.strip()):
            rows.append(m)
    return rows


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


def _slice(profile: str, ci_slices: str | None, gi_slices: str) -> dict[str, Any]:
    return {"profile": profile, "slices": int(ci_slices or gi_slices)}


def parse(text: str) -> dict[str, Any]:
    by_gpu: dict[int, list[dict[str, Any]]] = {}
    compute = _rows(text, _CI_HEADER, _CI_ROW)
    for m in compute:
        entry = {**_slice(m.group(3), m.group(4), m.group(5)), "gpu_instance": int(m.group(2)),
                 "compute_instance": _int(m.group(7))}
        by_gpu.setdefault(int(m.group(1)), []).append({k: v for k, v in entry.items() if v is not None})
    for m in _rows(text, _GI_HEADER, _GI_ROW) if not compute else []:
        entry = {**_slice(m.group(2), m.group(3), m.group(4)), "gpu_instance": _int(m.group(6))}
        by_gpu.setdefault(int(m.group(1)), []).append({k: v for k, v in entry.items() if v is not None})
    devices = [{"index": i, "mig": [True, None], "mig_devices": slices} for i, slices in sorted(by_gpu.items())]
    return {"torch": None, "devices": devices or None}
