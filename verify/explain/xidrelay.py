"""Xid events as the tools that watch NVML's event set relay them, into the gpu facts' `xid_events` (source `nvml`:
NVML raised them, not the kernel log), judged by the one Xid catalog as the kernel log's NVRM lines are:
- the Kubernetes NVIDIA device plugin (internal/rm/health.go): `XidCriticalError: Xid=94 on
  Device=GPU-3b6ec030-...; marking device as unhealthy.` (v0.9 on: `..., the device will go unhealthy.`), and the
  NVML event it logs before it, `Processing event {Device:{Handle:0x..} EventType:8 EventData:94 ...}` (EventType 8
  is nvmlEventTypeXidCriticalError, EventData the Xid): read only where no XidCriticalError line names the event;
- DCGM's health and diagnostics (DCGM_FR_XID_ERROR, dcgm_errors.h): `Detected XID 145 for GPU 0`;
- leptonai gpud (`XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00`; its events output's `xid 119
  detected by dmesg`, verify/explain/gpudevents.py) and LBNL NHC's check_xid_errors
  (`Found XID errors: 63`: the kernel log's Xids it counted, no GPU named);
- NVIDIA NVSentinel's health events (JSON: `"checkName":"GpuXidError",...,"message":"GPU has fallen off the bus
  (XID 79). ..."`, verify/explain/nvsentinel.py), where no line above named its events;
- GKE's device plugin's node condition (container-engine-accelerators): `kubectl describe node`'s row
  `XidCriticalError   True   <heartbeat>   <transition>   {"31":true}   <message>`, or the YAML item whose `type:` is
  XidCriticalError, its `status: "True"` and `reason: '{"31":true}'`: each Xid the reason sets true is one event of a
  GPU it does not name (the message is the condition's own id), once however often the condition is shown; a
  condition that is False holds none.
The relaying tool's own verdict ("marking device as unhealthy", DCGM's `isFatal`) is not read: the catalog judges.
A line that mentions a relay's words in prose (a code span in a sentence, `If ... says Detected XID 79 ...`,
verify/explain/said.py) is no event."""
from __future__ import annotations

import re
from typing import Any

from ..checks.gpu.figures_table import FIGURES
from ..figures import within
from ..shared.xidcatalog import RELAY_CONDITION as _CONDITION
from ..shared.xidcatalog import RELAY_DCGM as _DCGM
from ..shared.xidcatalog import RELAY_EVENT as _EVENT
from ..shared.xidcatalog import RELAY_GPUD as _GPUD
from ..shared.xidcatalog import RELAY_NHC as _NHC
from ..shared.xidcatalog import RELAY_PLUGIN as _PLUGIN
from .gpudevents import events as gpud_events
from .nvsentinel import events as nvsentinel_events
from .said import mentioned
from .xiddigest import events as digest_events

# a relay's time: the container runtime's RFC 3339 stamp (`kubectl logs --timestamps`), klog's `I0809 13:32:51.87`,
# Go's log `2020/08/10 19:09:42`
_TIME = re.compile(r"^\s*(\d{4}-\d\d-\d\dT[\d:.]+Z?|\d{4}/\d\d/\d\d [\d:]+|[IWEF]\d{4} [\d:.]+)")


def detect(text: str) -> bool:
    return bool((_PLUGIN.search(text) or _DCGM.search(text) or _EVENT.search(text) or _CONDITION.search(text) or
                 _GPUD.search(text) or _NHC.search(text)) and events(text)) or bool(gpud_events(text) or nvsentinel_events(text)) \
        or bool(digest_events(text))


def _code(digits: str) -> int | None:
    """A relayed number, None past 9 digits (no Xid or GPU is near it; int() refuses 4,300 digits or more)."""
    return int(digits) if len(digits) <= 9 else None


def _row(xid: int | None, line: str, uuid: str | None = None, index: int | None = None, bus: str | None = None,
         source: str | None = "nvml") -> dict[str, Any]:
    when = _TIME.match(line)
    return {"xid": within(FIGURES, "xid_events[].xid", xid), "index": within(FIGURES, "xid_events[].index", index), "uuid": uuid if uuid and uuid.startswith("GPU-") else None,
            "pci_bus_id": bus, "text": line.strip()[:300], "time": when.group(1) if when else None, "source": source}


def events(text: str) -> list[dict[str, Any]]:
    """The relayed Xid events, one per line that names one."""
    rows = []
    lines = [line for line in text.splitlines() if not _mentioned(line)]
    named = any(_PLUGIN.search(line) for line in lines)
    for line in lines:
        if m := _PLUGIN.search(line):
            rows.append(_row(_code(m.group(1)), line, uuid=m.group(2)))
        elif m := _DCGM.search(line):
            rows.append(_row(_code(m.group(1)), line, index=_code(m.group(2))))
        elif m := _GPUD.search(line):
            # gpud reads the kernel log and NVML alike: which one raised it is not said
            rows.append(_row(_code(m.group(1)), line, bus=m.group(2), source=None))
        elif m := _NHC.search(line):
            # each row keeps the line's first 300 characters: cut once, not once per Xid of a long list (quadratic)
            short = line.strip()[:300]
            rows += [_row(int(x), short, source="kernel_log") for x in re.split(r"[ ,]+", m.group(1))]
        elif not named and (m := _EVENT.search(line)):
            rows.append(_row(_code(m.group(1)), line))
    # a code past the facts' range (`Xid=99999999999`) is no event read
    rows = [r for r in rows if r["xid"] is not None]
    rows += _conditions(lines, {r["xid"] for r in rows})
    # GPUd's events output (`xid 119 detected by dmesg`, gpudevents.py), where no line above named its events
    # a poster's digest of kernel-log Xid records (xiddigest.py), where nothing above named an event
    return rows or gpud_events(text) or nvsentinel_events(text) or digest_events(text)


# describe's row: type, status, then the two times and the reason, columns apart by two blanks or more
_DESCRIBED = re.compile(r"^\s*XidCriticalError\s+(True|False|Unknown)\s+(?:\S.*?\s{2,})?(\S.*?)\s{2,}(\{[^}]*\})")
_SET = re.compile(r'"(\d{1,3})"\s*:\s*true\b')
_ITEM = re.compile(r"^\s*-\s")
_KEY = re.compile(r"""^\s*-?\s*(type|status|reason|lastTransitionTime):\s*['"]?(.*?)['"]?\s*$""")


def _conditions(lines: list[str], seen: set[int]) -> list[dict[str, Any]]:
    """The Xids an XidCriticalError condition holds, once each (its row and its YAML show one set)."""
    rows: list[dict[str, Any]] = []
    for status, when, reason, line in [*_described(lines), *_yaml(lines)]:
        for xid in (int(x) for x in _SET.findall(reason)) if status == "True" else ():
            if xid not in seen:
                seen.add(xid)
                rows.append({**_row(xid, line), "time": when})
    return rows


def _described(lines: list[str]) -> list[tuple[str, str | None, str, str]]:
    return [(m.group(1), m.group(2).strip(), m.group(3), line) for line in lines if (m := _DESCRIBED.match(line))]


def _yaml(lines: list[str]) -> list[tuple[str, str | None, str, str]]:
    """Each YAML list item whose type is XidCriticalError: (status, transition time, reason, its type and reason
    lines as printed, joined: the event's text names its relay)."""
    items: list[list[str]] = []
    for line in lines:
        if _ITEM.match(line) or not items:
            items.append([])
        items[-1].append(line)
    found = []
    for item in items:
        keys = {m.group(1): (m.group(2), line) for line in item if (m := _KEY.match(line))}
        if keys.get("type", ("",))[0] == "XidCriticalError" and "reason" in keys:
            when = keys.get("lastTransitionTime", (None,))[0]
            said = f"{keys['type'][1].strip()} {keys['reason'][1].strip()}"
            found.append((keys.get("status", ("",))[0], when, keys["reason"][0], said))
    return found


def _mentioned(line: str) -> bool:
    return any(m and mentioned(line, m.start()) for m in (_PLUGIN.search(line), _DCGM.search(line), _EVENT.search(line)))


def parse(text: str) -> dict[str, Any]:
    # the relay's events are what it shows; the GPUs themselves, their health and the kernel log are not in it
    return {"devices": None, "torch": None, "xid_events": events(text)}
