"""The NVIDIA Fabric Manager's log (/var/log/fabricmanager.log, `nv-fabricmanager`), whose lines are
`[Dec 19 2024 19:17:49] [ERROR] [tid 1374] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id
00000000:83:00.0 physical id 0 port 34` (and `... fatal error ...`): the SXid the kernel logs as `nvidia-nvswitchN:
SXid (PCI:...): 12028, ...`, as the fabric manager saw it. Each such line is one SxidEvent, read as the kernel's are
(its number, the switch's address, the line, its time): judged by the one catalog. The fabric manager's other lines
(multicast teams, restarts, GPUs registered) fill no field and are not judged. `source` is `fabric_manager`."""
from __future__ import annotations

import re
from typing import Any

# under any prefix (journald's `nv-fabricmanager[1234]: `); the time is FM's own leading `[...]` where the line has it
_SXID = re.compile(r"^[^\n]*?detected NVSwitch (?:non-)?fatal error (\d+) on fid \d+ on NVSwitch pci bus id "
                   r"([0-9a-fA-F:.]+)[^\n]*", re.MULTILINE)
_TIME = re.compile(r"\[([A-Z][a-z]{2} \d{1,2} \d{4} \d\d:\d\d:\d\d)\]")


def detect(text: str) -> bool:
    return bool(_SXID.search(text))


def parse(text: str) -> dict[str, Any]:
    events = [{"sxid": int(m.group(1)), "pci_bus_id": m.group(2), "text": m.group(0).strip(),
               "time": t.group(1) if (t := _TIME.search(m.group(0))) else None, "source": "fabric_manager"}
              for m in _SXID.finditer(text)]
    return {"torch": None, "devices": None, "sxid_events": events}
