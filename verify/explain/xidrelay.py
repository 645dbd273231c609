"""Xid events as the tools that watch NVML's event set relay them, into the gpu facts' `xid_events` (source `nvml`:
NVML raised them, not the kernel log), judged by the one Xid catalog as the kernel log's NVRM lines are:
- the Kubernetes NVIDIA device plugin (internal/rm/health.go): `XidCriticalError: Xid=94 on
  Device=GPU-3b6ec030-...; marking device as unhealthy.` (v0.9 on: `..., the device will go unhealthy.`), and the
  NVML event it logs before it, `Processing event {Device:{Handle:0x..} EventType:8 EventData:94 ...}` (EventType 8
  is nvmlEventTypeXidCriticalError, EventData the Xid): read only where no XidCriticalError line names the event;
- DCGM's health and diagnostics (DCGM_FR_XID_ERROR, dcgm_errors.h): `Detected XID 145 for GPU 0`.
The relaying tool's own verdict ("marking device as unhealthy", DCGM's `isFatal`) is not read: the catalog judges.
A line that mentions a relay's words in prose (a code span in a sentence, `If ... says Detected XID 79 ...`,
verify/explain/said.py) is no event."""
from __future__ import annotations

import re
from typing import Any

from ..shared.xidcatalog import RELAY_DCGM as _DCGM
from ..shared.xidcatalog import RELAY_EVENT as _EVENT
from ..shared.xidcatalog import RELAY_PLUGIN as _PLUGIN
from .said import mentioned

# a relay's time: the container runtime's RFC 3339 stamp (`kubectl logs --timestamps`), klog's `I0809 13:32:51.87`,
# Go's log `2020/08/10 19:09:42`
_TIME = re.compile(r"^\s*(\d{4}-\d\d-\d\dT[\d:.]+Z?|\d{4}/\d\d/\d\d [\d:]+|[IWEF]\d{4} [\d:.]+)")


def detect(text: str) -> bool:
    return bool((_PLUGIN.search(text) or _DCGM.search(text) or _EVENT.search(text)) and events(text))


def _row(xid: int, line: str, uuid: str | None = None, index: int | None = None) -> dict[str, Any]:
    when = _TIME.match(line)
    return {"xid": xid, "index": index, "uuid": uuid if uuid and uuid.startswith("GPU-") else None,
            "pci_bus_id": None, "text": line.strip()[:300], "time": when.group(1) if when else None, "source": "nvml"}


def events(text: str) -> list[dict[str, Any]]:
    """The relayed Xid events, one per line that names one."""
    rows = []
    lines = [line for line in text.splitlines() if not _mentioned(line)]
    named = any(_PLUGIN.search(line) for line in lines)
    for line in lines:
        if m := _PLUGIN.search(line):
            rows.append(_row(int(m.group(1)), line, uuid=m.group(2)))
        elif m := _DCGM.search(line):
            rows.append(_row(int(m.group(1)), line, index=int(m.group(2))))
        elif not named and (m := _EVENT.search(line)):
            rows.append(_row(int(m.group(1)), line))
    return rows


def _mentioned(line: str) -> bool:
    return any(m and mentioned(line, m.start()) for m in (_PLUGIN.search(line), _DCGM.search(line), _EVENT.search(line)))


def parse(text: str) -> dict[str, Any]:
    # the relay's events are what it shows; the GPUs themselves, their health and the kernel log are not in it
    return {"devices": None, "torch": None, "xid_events": events(text)}
