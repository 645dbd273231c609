"""NCCL's MNNVL probe of each GPU's NVLink fabric (src/transport/nvls.cc / init.cc, 2.19+, NCCL_DEBUG=INFO):
`MNNVL busId 0x901000 fabric UUID 3143b15bc2cd192b.28cc9b5473fb5b93 cliqueId 0x7ffe state 3 healthMask 0xaa`.
NCCL prints what NVML's nvmlDeviceGetGpuFabricInfoV returned, so it is read into the gpu facts' `fabric`, the field
FACTS.md names for that call:
- busId: NCCL's packed bus id (`int64ToBusId`: domain >> 20, bus, device, function), the device's `pci_bus_id`;
- state: nvmlGpuFabricState_t (1 not started, 2 in progress, 3 completed); NCCL prints no status;
- healthMask: 2 bits per field (degraded bandwidth at shift 0, route recovery 2, route unhealthy 4, access-timeout
  recovery 6: 0 not supported, 1 true, 2 false), incorrect configuration 4 bits at shift 8 (0 not supported, 1 none,
  any other a misconfiguration). The summary is not in the mask.
The `[n]` of NCCL's prefix is the line's CUDA device, its index."""
from __future__ import annotations

import re
from typing import Any

from .drafabric import STATES

_LINE = re.compile(r"(?:\[(\d+)\] )?NCCL INFO MNNVL busId 0x([0-9a-fA-F]+) fabric UUID (\S+) cliqueId 0x([0-9a-fA-F]+) "
                   r"state (\d+)(?: healthMask 0x([0-9a-fA-F]+))?")
_BITS = {"1": True, "2": False}
_FIELDS = (("degraded_bandwidth", 0), ("route_recovery", 2), ("route_unhealthy", 4), ("access_timeout_recovery", 6))


def detect(text: str) -> bool:
    return bool(parse(text)["devices"])


def _bus(packed: int) -> str:
    return f"{packed >> 20:08x}:{(packed >> 12) & 0xff:02x}:{(packed >> 4) & 0xff:02x}.{packed & 0xf:x}"


def health(mask: int) -> dict[str, Any]:
    """The FabricHealth a mask packs; a field NVML does not support is null."""
    config = (mask >> 8) & 0xf
    return {"summary": None, **{name: _BITS.get(str((mask >> shift) & 0x3)) for name, shift in _FIELDS},
            "incorrect_configuration": None if config == 0 else config != 1}


def parse(text: str) -> dict[str, Any]:
    """One device per bus id, its last line winning (a communicator set up again)."""
    devices: dict[str, dict[str, Any]] = {}
    for m in _LINE.finditer(text):
        # a GPU with no multi-node fabric (an HGX H100: `fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x0`) reads
        # completed with every health bit unsupported: it says nothing of health, so it is not taken
        mask = health(int(m.group(6), 16)) if m.group(6) else None
        if m.group(5) == "3" and not any(v is not None for v in (mask or {}).values()):
            continue
        bus = _bus(int(m.group(2), 16))
        devices[bus] = {"index": int(m.group(1)) if m.group(1) else None, "pci_bus_id": bus,
                        "fabric": {"state": STATES.get(m.group(5)), "status": None, "clique_id": int(m.group(4), 16),
                                   "cluster_uuid": m.group(3), "health": mask}}
    return {"torch": None, "devices": sorted(devices.values(), key=lambda d: (d["index"] is None, d["index"] or 0,
                                                                           d["pci_bus_id"])) or None}
