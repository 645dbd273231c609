"""NVIDIA NVSentinel's health events (protobuf HealthEvent as JSON) as its modules log them: fault-quarantine's
`Handling event for ruleset` / `Setting annotations on node` (the event escaped once inside the
`quarantineHealthEvent` annotation), platform-connectors' `Health events received`. Each event holds its `agent`,
`checkName`, `isFatal`/`isHealthy`, the `message` of the monitor it relays (DCGM's health watch: `GPU had an
uncontained error (XID 95) ...`, `GPU has fallen off the bus (XID 79). ...`) and the GPUs it names in
`entitiesImpacted` (`GPU_UUID`, `PCI`). An Xid the message names is one event of `xid_events`, judged by the one Xid
catalog like the kernel's NVRM lines; the monitor's own verdict (`isFatal`, `recommendedAction`) is not read. An
event marked healthy (`isHealthy: true`, the monitor's all-clear) holds none. A line's JSON is often cut where it was
pasted, so the fields are read per event, never by parsing the whole line. The `GPU` entity is the monitor's own
number, not an index of a `devices` list this text does not show: not recorded (FACTS.md)."""
from __future__ import annotations

import re
from typing import Any

_Q = r'\\*"'                       # a key's quote, escaped once inside an annotation's string or not at all
_AGENT = re.compile(_Q + r"agent" + _Q + r"\s*:")
# what marks an event as NVSentinel's: its agent beside its check name and the entities it names
_MARK = re.compile(_Q + r"checkName" + _Q + r"\s*:.*" + _Q + r"entitiesImpacted" + _Q, re.DOTALL)
_MESSAGE = re.compile(_Q + r"message" + _Q + r'\s*:\s*' + _Q + r'(.*?)(?<!\\)' + _Q)
# the Xid a DCGM health message names (`(XID 95)`, `XID 79`); DCGM's DCGM_FR_XID_ERROR wording (`Detected XID 145 for
# GPU 0`) is xidrelay's own pattern and read there
_XID = re.compile(r"\bXID (\d{1,3})\b(?! for GPU)", re.IGNORECASE)
_HEALTHY = re.compile(_Q + r"isHealthy" + _Q + r"\s*:\s*true\b")
_ENTITY = re.compile(_Q + r"entityType" + _Q + r"\s*:\s*" + _Q + r"(GPU_UUID|PCI)" + _Q + r"\s*,\s*" + _Q +
                     r"entityValue" + _Q + r"\s*:\s*" + _Q + r"([^\"\\]+)")
_SYSLOG = re.compile(_Q + r"agent" + _Q + r"\s*:\s*" + _Q + r"syslog-health-monitor")   # reads the kernel log
_TIME = [re.compile(_Q + key + _Q + r"\s*:\s*" + _Q + r"(\d{4}-\d\d-\d\dT[\d:.]+Z?)") for key in ("CreatedAt", "time")]


def events(text: str) -> list[dict[str, Any]]:
    """The Xid events NVSentinel's health events name, [] where the text holds none."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        starts = [m.start() for m in _AGENT.finditer(line)]
        if not starts or not _MARK.search(line):
            continue
        # the event's CreatedAt where the line holds it before the event, else the log line's own time
        when = next((m for t in _TIME if (m := t.search(line[:starts[0]]))), None)
        for k, start in enumerate(starts):
            scope = line[start:starts[k + 1] if k + 1 < len(starts) else len(line)]
            said = _MESSAGE.search(scope)
            xid = _XID.search(said.group(1)) if said else None
            if said is None or xid is None or _HEALTHY.search(scope):
                continue
            named = {m.group(1): m.group(2) for m in _ENTITY.finditer(scope)}
            uuid = named.get("GPU_UUID")
            rows.append({"xid": int(xid.group(1)), "index": None,
                         "uuid": uuid if uuid and uuid.startswith("GPU-") else None, "pci_bus_id": named.get("PCI"),
                         "text": said.group(1).replace('\\"', '"')[:300], "time": when.group(1) if when else None,
                         "source": "kernel_log" if _SYSLOG.search(scope) else "nvml"})
    return rows
