"""Xid records as a poster digests a kernel log (`08-04 06:43:55 Xid 31 GPC1 GPCCLIENT_T1_9  @ 0xede3_7fa00000
FAULT_PDE ACCESS_TYPE_VIRT_READ`: the stamp, `Xid` and its number, then the NVRM record's own detail words), one event
per line, into the gpu facts' `xid_events`, judged by the one Xid catalog as the NVRM lines themselves are
(gb10-dgx-spark-vllm-0.27.1-mtp-async-kern-log-digest-...). Such a line names no GPU (its PCI address is dropped):
none is guessed. A record kept whole but for its `NVRM: ` prefix (`Xid (PCI:0000:0a:00): 31, pid=..., name=...`) is
read by the kernel log's own reader (verify/prolog/xid.py), its GPU with it. A digest line must carry the driver's detail (an upper-case enum word such as `FAULT_PDE`, or the
`PCI:` address): `Xid 79 means the GPU fell off the bus` in a sentence is prose, and a line that quotes the words in
prose (verify/explain/said.py) is no event. The digest says which log it came from only in prose: `source` null."""
from __future__ import annotations

import re
from typing import Any

from ..checks.gpu.figures_table import FIGURES
from ..figures import within
from ..prolog import xid as xidlog
from .said import mentioned

# an optional stamp (`08-04 06:43:55`, ISO, syslog's `Aug  4 06:43:55`, dmesg's `[12.3]`), then `Xid 31`, then the
# record's detail
_DIGEST = re.compile(r"^\s*(?:(\d\d-\d\d [\d:]{8}|\d{4}-\d\d-\d\d[ T][\d:.]+Z?|\w{3} +\d+ [\d:]{8}|\[[^\]]+\])\s+)?"
                     r"Xid[ :=]*(\d{1,3})\b(.*)$")
# the NVRM record's detail: an enum word of the driver (`FAULT_PDE`, `ACCESS_TYPE_VIRT_READ`, `GPCCLIENT_T1_9`,
# `ROBUST_CHANNEL_...`) or the GPU's `PCI:` address
# the NVRM record's own shape, its prefix cut: `Xid (PCI:0000:0a:00): 31, ...`
_RECORD = re.compile(r"^\s*(?:(\d\d-\d\d [\d:]{8}|\d{4}-\d\d-\d\d[ T][\d:.]+Z?|\w{3} +\d+ [\d:]{8}|\[[^\]]+\])\s+)?"
                     r"(Xid \((?:PCI:)?[0-9A-Fa-f:.]+\):\s*\d{1,9}\b.*)$")
_DETAIL = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bPCI:[0-9a-fA-F]")


def events(text: str) -> list[dict[str, Any]]:
    """The digest's Xid events, [] where no line is one."""
    rows = []
    for line in text.splitlines():
        if (r := _RECORD.match(line)) and not mentioned(line, line.find("Xid")):
            for f in xidlog.parse(["NVRM: " + r.group(2)]):
                if f.kind == "xid" and (xid := within(FIGURES, "xid_events[].xid", f.code)) is not None:
                    rows.append({"xid": xid, "index": None, "uuid": None,
                                 "pci_bus_id": f.device if f.device != "unknown" else None,
                                 "text": r.group(2).strip()[:300], "time": r.group(1), "source": None})
            continue
        m = _DIGEST.match(line)
        if not m or not _DETAIL.search(m.group(3)) or mentioned(line, line.find("Xid")):
            continue
        xid = within(FIGURES, "xid_events[].xid", int(m.group(2)))
        if xid is not None:
            rows.append({"xid": xid, "index": None, "uuid": None, "pci_bus_id": None,
                         "text": line.strip()[len(m.group(1) or ""):].strip()[:300], "time": m.group(1),
                         "source": None})
    return rows
