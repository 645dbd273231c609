"""leptonai GPUd's fabric-state check (its fabric-manager component, reading NVML's nvmlDeviceGetGpuFabricInfo per
GPU), as it prints it:
- its reason, per GPU: `GPU GPU-<uuid>: state=Not Supported` joined by `; `, after `<product> with unhealthy fabric
  state: ` (the component's reason) or as a log line's `"reason":"..."` (`fabric state is not healthy`): the GPU's
  `fabric.state` (NVML's state as printed);
- its table, one per GPU: `| GPU UUID | GPU-... |`, `| Clique ID | 0 |`, `| State | ... |`, `| Status | Success |`,
  `| Health Summary | ... |`, `| Bandwidth | ... |`, `| Route Recovery | ... |`, `| Route Unhealthy | ... |`,
  `| Access Timeout Recovery | ... |`: the same reading with status, clique and health mask. A health field NVML
  answers `Not Supported` is null (FACTS.md).
GPUd calls any state but Completed unhealthy, a PCIe card's `Not Supported` included (its own bug, gpud PR 1147):
that is the monitor's reading, not read; the judge decides from the state. The product name is GPUd's, its spaces
written as dashes (`NVIDIA-H100-PCIe`): read back with spaces. Nothing else of the GPU is read, so its health is
not assessed, never healthy."""
from __future__ import annotations

import re
from typing import Any

_STATES = {"not supported": "not_supported", "not started": "not_started", "in progress": "in_progress",
           "completed": "completed"}
_STATE = re.compile(r"\bGPU (GPU-[0-9a-fA-F-]{36}): state=(Not Supported|Not Started|In Progress|Completed)\b")
_PRODUCT = re.compile(r"\b(NVIDIA-[\w-]+?) (?:with unhealthy fabric state|checked fabric state)\b")
_ROW = re.compile(r"^\|\s*([A-Za-z ]+?)\s*\|\s*(.*?)\s*\|\s*$")
_NOT_SUPPORTED = "Not Supported"


def detect(text: str) -> bool:
    return bool(_STATE.search(text) or _tables(text))


def _fabric(**known: Any) -> dict[str, Any]:
    return {"state": None, "status": None, "clique_id": None, "cluster_uuid": None, "health": None, **known}


def _flag(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get((value or "").lower())


def _tables(text: str) -> list[dict[str, str]]:
    """GPUd's per-GPU tables: the rows under each `| GPU UUID | GPU-... |`, by their label."""
    tables: list[dict[str, str]] = []
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            continue
        label, value = m.group(1), m.group(2)
        if label == "GPU UUID" and value.startswith("GPU-"):
            tables.append({})
        if tables:
            tables[-1][label] = value
    return [t for t in tables if t.get("State", "").lower() in _STATES]


def _from_table(row: dict[str, str]) -> dict[str, Any]:
    clique = row.get("Clique ID", "")
    status = row.get("Status")
    health = {
        "summary": {"Healthy": "healthy", "Unhealthy": "unhealthy"}.get(row.get("Health Summary", "")),
        "degraded_bandwidth": {"Degraded": True, "Full": False}.get(row.get("Bandwidth", "")),
        "route_recovery": _flag(row.get("Route Recovery")),
        "route_unhealthy": _flag(row.get("Route Unhealthy")),
        "access_timeout_recovery": _flag(row.get("Access Timeout Recovery")),
        "incorrect_configuration": None,
    } if any(k in row for k in ("Health Summary", "Bandwidth", "Route Recovery", "Route Unhealthy")) else None
    return _fabric(state=_STATES[row["State"].lower()],
                   status=None if not status or status == _NOT_SUPPORTED else
                   "success" if status.lower() == "success" else status,
                   clique_id=int(clique) if clique.isdigit() else None, health=health)


def parse(text: str) -> dict[str, Any]:
    """One device per GPU UUID the reason or a table names; a table's fuller reading of a GPU wins."""
    product = _PRODUCT.search(text)
    name = product.group(1).replace("-", " ") if product else None
    fabrics: dict[str, dict[str, Any]] = {}
    for m in _STATE.finditer(text):
        fabrics[m.group(1).lower()] = _fabric(state=_STATES[m.group(2).lower()])
    for row in _tables(text):
        fabrics[row["GPU UUID"].lower()] = _from_table(row)
    devices = [{"index": None, "uuid": uuid, "name": name, "fabric": fabric} for uuid, fabric in fabrics.items()]
    return {"torch": None, "devices": devices or None}
