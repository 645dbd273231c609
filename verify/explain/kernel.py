"""Kernel logs (`dmesg`, `dmesg -T`, `journalctl -k`, /var/log/kern.log): NVRM Xid lines and "fallen off the bus",
read by the prolog's parser (verify/prolog/xid.py) into the gpu facts' `xid_events`; the devices themselves are not
in a kernel log (null). SXids, the NVSwitches' events, go to `sxid_events` and are judged by the same catalog."""
from __future__ import annotations

import re
from typing import Any

from ..prolog import xid as xidlog

_NVRM = re.compile(r"NVRM: Xid \(|NVRM:.*fallen off the bus|SXid \(")
# `[12.3]`, `Jan 25 10:34:54` (journal), ISO (`dmesg --time-format iso`), after `dmesg -x`'s `kern  :err   : `
_TIME = re.compile(r"^\s*(?:\w+\s*:\s*\w+\s*:\s*)?(\[[^\]]+\]|\w{3} +\d+ [\d:]+|\d{4}-\d\d-\d\dT[\d:.,+-]+)")


def detect(text: str) -> bool:
    return bool(_NVRM.search(text))


def parse(text: str) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    switches: list[dict[str, Any]] = []
    for f in xidlog.parse(text.splitlines()):
        when = _TIME.match(f.line)
        row = {"pci_bus_id": f.device if f.device != "unknown" else None, "source": "kernel_log", "text": f.line[:300],
               "time": when.group(1) if when else None}
        if f.kind == "sxid":
            switches.append({"sxid": f.code, **row})
        else:
            events.append({"xid": f.code, **row})
    # the log was read: its Xids and SXids are known ([] when none); the GPUs themselves are not in a kernel log
    return {"devices": None, "torch": None, "xid_events": events, "sxid_events": switches}
