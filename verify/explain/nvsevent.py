"""NVIDIA NVSentinel's gpu-health-monitor event as Kubernetes shows it (`kubectl describe node`'s Events or
Conditions): `ErrorCode:DCGM_FR_CLOCK_THROTTLE_POWER GPU:0 PCI:0001:00:00.0 GPU_UUID:GPU-4af8... Detected clocks event
due to power violation in GPU 0. ... Recommended Action=CONTACT_SUPPORT;` (batch 193). It relays DCGM's health watch:
the GPU it names by UUID and bus id is one the monitor read (NVML), and DCGM's message says a fact of the schema only
where `dcgmi health`'s reader decodes the same words (explain/dcgmhealth.py: double-bit ECC, pending retirements,
remaps, links down, a corrupt InfoROM); the rest (power or thermal clock events, PCIe replays) name no field, and a
value written into DCGM's cache (`dcgmi test --inject`) reads the same: said, the GPU not assessed, never a fault nor
a pass. Xid events (DCGM_FR_XID_ERROR) are the relay parser's (explain/xidrelay.py); an IMEX code is the node's
daemon, no GPU's. The `GPU:` number is the monitor's own, no index of a devices list (explain/nvsentinel.py): not
recorded. The monitor's recommended action is not read: the judges decide."""
from __future__ import annotations

import re
from typing import Any

from . import dcgmhealth

_EVENT = re.compile(r"ErrorCode:(DCGM_FR_\w+) GPU:(\d+) PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d) "
                    r"GPU_UUID:(GPU-[0-9A-Fa-f-]{36}) ([^;\n]*)")
_NOT_OURS = re.compile(r"DCGM_FR_XID_ERROR|DCGM_FR_IMEX_")
_ACTION = re.compile(r"\s*Recommended Action=\w+\s*$")


def _events(text: str) -> list[re.Match[str]]:
    return [m for m in _EVENT.finditer(text) if not _NOT_OURS.match(m.group(1))]


def detect(text: str) -> bool:
    return bool(_events(text))


def parse(text: str) -> dict[str, Any]:
    devices: dict[str, dict[str, Any]] = {}
    for m in _events(text):
        said = _ACTION.sub("", m.group(5))
        dev = {**dcgmhealth.device(int(m.group(2)), said), "index": None, "uuid": m.group(4), "pci_bus_id": m.group(3)}
        devices.setdefault(m.group(4).lower(), {}).update(dev)
    return {"torch": None, "driver": None, "devices": list(devices.values())}


def unread(text: str) -> list[str]:
    """Each event whose DCGM message names no field (a clock event, an injected value reads the same)."""
    return [f"GPU {m.group(4)}, {m.group(1)}: {_ACTION.sub('', m.group(5)).strip()}" for m in _events(text)
            if not any(p.search(m.group(5)) for p in dcgmhealth.READ)]
