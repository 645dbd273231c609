"""Kernel logs (`dmesg`, `dmesg -T`, `journalctl -k`, /var/log/kern.log): NVRM Xid lines and "fallen off the bus",
read by the prolog's parser (verify/prolog/xid.py) into the gpu facts' `xid_events`; the devices themselves are not
in a kernel log (null). SXids are NVSwitch events: no gpu fact holds them, they are said, not judged."""
from __future__ import annotations

import re
from typing import Any

from ..prolog import xid as xidlog

_NVRM = re.compile(r"NVRM: Xid \(|NVRM:.*fallen off the bus|SXid \(")
_TIME = re.compile(r"^\s*(\[[^\]]+\]|\w{3} \d+ [\d:]+|\d{4}-\d\d-\d\dT[\d:.+-]+)")


def detect(text: str) -> bool:
    return bool(_NVRM.search(text))


def parse(text: str) -> dict[str, Any]:
    events = []
    found = xidlog.parse(text.splitlines())
    if found and all(f.kind == "sxid" for f in found):
        return {"devices": None, "torch": None, "xid_events": None}     # NVSwitch events only: not a GPU's, unjudged
    for f in found:
        if f.kind == "sxid":
            continue
        when = _TIME.match(f.line)
        events.append({"xid": f.code, "pci_bus_id": f.device if f.device != "unknown" else None, "source": "kernel_log",
                       "text": f.line[:300], "time": when.group(1) if when else None})
    return {"devices": None, "torch": None, "xid_events": events}
