"""The NVIDIA DRA driver's ComputeDomain kubelet plugin reading each GPU's NVLink fabric through NVML
(kubernetes-sigs/dra-driver-nvidia-gpu, `nvlib.go`'s getCliqueID), as its klog lines print it:
- `identified fabric clique UUID/ID (device 0/GPU-...): <cluster uuid>/<clique id>`: the GPU's clique, into the gpu
  facts' device (index, uuid) and its `fabric` cluster_uuid and clique_id. The line prints no registration state,
  status or health (the legacy path prints it for any GPU NVML calls fabric-attached): those stay unknown, so the
  GPU's health is not assessed, never healthy;
- `NVLink fabric not attached (device 0/GPU-...): state=2, refusing to start`: NVML's fabric state by its number
  (`nvmlGpuFabricState_t`: 1 not started, 2 in progress, 3 completed);
- `NVLink fabric registration error (device 0/GPU-...): status=<NVML return>, refusing to start`: the registration
  completed with that error.
The legacy path's `no-clique fallback: fabric not attached` says no state (a GPU with no fabric prints it too) and is
not read."""
from __future__ import annotations

import re
from typing import Any

_DEVICE = r"\(device (\d+)/(GPU-[0-9a-fA-F-]+)\)"
_CLIQUE = re.compile(r"identified fabric clique UUID/ID " + _DEVICE + r": ([0-9a-fA-F-]{36})/(\d+)")
_STATE = re.compile(r"NVLink fabric not attached " + _DEVICE + r": state=(\d+)")
_STATUS = re.compile(r"NVLink fabric registration error " + _DEVICE + r": status=([^,\n]+)")
# nvmlGpuFabricState_t (nvml.h): NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0, NOT_STARTED 1, IN_PROGRESS 2, COMPLETED 3
STATES = {"0": "not_supported", "1": "not_started", "2": "in_progress", "3": "completed"}


def detect(text: str) -> bool:
    return bool(_CLIQUE.search(text) or _STATE.search(text) or _STATUS.search(text))


def _fabric(**known: Any) -> dict[str, Any]:
    return {"state": None, "status": None, "clique_id": None, "cluster_uuid": None, "health": None, **known}


def _read(m: re.Match[str]) -> dict[str, Any]:
    if m.re is _CLIQUE:
        return _fabric(cluster_uuid=m.group(3).lower(), clique_id=int(m.group(4)))
    if m.re is _STATE:
        return _fabric(state=STATES.get(m.group(3)))
    status = m.group(3).strip()
    return _fabric(state="completed", status="success" if status.upper() in ("SUCCESS", "NVML_SUCCESS") else status)


def parse(text: str) -> dict[str, Any]:
    """One device per GPU the lines name (by its index and UUID), its last line in the text winning (a restart)."""
    found = sorted((m for r in (_CLIQUE, _STATE, _STATUS) for m in r.finditer(text)), key=lambda m: m.start())
    devices = {m.group(2): {"index": int(m.group(1)), "uuid": m.group(2), "fabric": _read(m)} for m in found}
    return {"torch": None, "devices": sorted(devices.values(), key=lambda d: d["index"]) or None}
