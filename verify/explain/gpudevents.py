"""leptonai GPUd's event records of its Xid component (`accelerator-nvidia-error-xid`, `gpud` events output), as JSON:
an event whose `message` is `xid 119 detected by dmesg (47 minutes ago)`, its `time` the event's, and under
`extra_info.data` the same event as an escaped JSON string (`{\"time\":...,\"data_source\":\"dmesg\",
\"device_uuid\":\"\",\"xid\":119,...}`). One Xid event per message (the data only where no message is shown: it is the
same event), read into the gpu facts' `xid_events` and judged by the one Xid catalog like the kernel's NVRM lines:
GPUd only relays what the kernel log (`dmesg`) or NVML raised, which its `data_source` / `detected by` names. An empty
`device_uuid` names no GPU (null, never guessed). GPUd's suggested actions are its own advice: not read."""
from __future__ import annotations

import re
from typing import Any

# `detected by dmesg`; GPUd's later wording `detected by kmsg`/`nvml` alike
_MESSAGE = re.compile(r"\bxid (\d{1,3}) detected by (\w+)", re.IGNORECASE)
# the data string's fields, its quotes escaped once (`\"xid\":119`) or not at all
_Q = r'\\?"'
_DATA_XID = re.compile(_Q + r"xid" + _Q + r"\s*:\s*(\d{1,3})\b")
_SOURCE = re.compile(_Q + r"data_source" + _Q + r"\s*:\s*" + _Q + r"(\w+)")
_UUID = re.compile(_Q + r"device_uuid" + _Q + r"\s*:\s*" + _Q + r"(GPU-[0-9a-fA-F-]+)")
_TIME = re.compile(_Q + r"time" + _Q + r"\s*:\s*" + _Q + r"(\d{4}-\d\d-\d\dT[\d:.]+Z?)")
# what marks the text as GPUd's: its component's name or its data's own key
_GPUD = re.compile(r"accelerator-nvidia-error-xid|suggested_actions_by_gpud|\berror_xid\b")


def _source(name: str | None) -> str | None:
    name = (name or "").lower()
    return "kernel_log" if name in ("dmesg", "kmsg", "kernel", "journal") else "nvml" if name == "nvml" else None


def _event(xid: int, said: str, scope: str, time: str | None) -> dict[str, Any]:
    src, uuid, when = _SOURCE.search(scope), _UUID.search(scope), _TIME.search(scope)
    return {"xid": xid, "index": None, "uuid": uuid.group(1) if uuid else None, "pci_bus_id": None,
            "text": " ".join(said.split())[:300], "time": time or (when.group(1) if when else None),
            "source": _source(src.group(1) if src else None)}


def events(text: str) -> list[dict[str, Any]]:
    """GPUd's Xid events, [] where the text is not GPUd's events output."""
    if not _GPUD.search(text):
        return []
    lines = text.splitlines()
    said = [n for n, line in enumerate(lines) if _MESSAGE.search(line)]
    rows = []
    for k, n in enumerate(said):
        m = _MESSAGE.search(lines[n])
        assert m is not None
        # the event's own fields: its `time` above the message, its data below it, up to the next message
        above = next((t.group(1) for line in reversed(lines[max(0, n - 4):n]) if (t := _TIME.search(line))), None)
        scope = "\n".join(lines[n:said[k + 1] if k + 1 < len(said) else len(lines)])
        row = _event(int(m.group(1)), m.group(0), scope, above)
        if row["source"] is None:
            row["source"] = _source(m.group(2))
        rows.append(row)
    if not rows:
        rows = [_event(int(m.group(1)), line, line, None) for line in lines for m in [_DATA_XID.search(line)] if m]
    return rows
