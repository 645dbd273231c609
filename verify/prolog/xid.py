"""NVIDIA Xid and SXid lines of a kernel log, judged by the one Xid catalog the gpu check uses too
(verify/shared/xidcatalog.py: DRAIN, APP, WATCH, INFO; Xid 45 judged as the cause it names). Here: a DRAIN event drains,
a WATCH code drains after REPEATS events on the same device within the lookback, APP and INFO never do. SXids by the
same catalog (one that says Fatal drains, a non-fatal one is INFO, one without a severity by its code); "fallen off the bus" without an Xid
(newer drivers print it on its own) drains as Xid 79. The driver's status lines (`NVRM: ... [NV_ERR_RESET_REQUIRED]`,
`status=0x00000062`) by the same catalog's RM_STATUS, as the gpu check reads them: a status that describes the GPU's
own state (reset required, lost, no fabric manager) drains; any other status answers one caller and is not read.
Pure: lines in, findings out.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..shared.xidcatalog import APP as APP
from ..shared.xidcatalog import DRAIN as DRAIN
from ..shared.xidcatalog import INFO as INFO
from ..shared.xidcatalog import RM_STATUS, after_application, classify, reboot_only, rm_status, sxid_action, sxid_states
from ..shared.xidcatalog import WATCH as WATCH

REPEATS = 3
# re.ASCII: the kernel prints ASCII digits; a line with '７９' or a stamp of '１００' is no line of its (\d takes them)

# a code is at most 9 digits (no Xid is near it; int() refuses a text of 4,300 digits or more);
# a line cut short (`NVRM: Xid (PCI:0000:3b:00): 79,` or without the comma) still names its code: the rest is optional;
# on a MIG GPU the driver names the GPU instance (and compute instance) after the address: `(PCI:0000:01:00 GPU-I:05)`
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)(?:\s+GPU-C?I:\s*\d+)*\):\s*(\d{1,9})\b(?:\s*,\s*(.*))?", re.ASCII)
_SXID = re.compile(r"(nvidia-nvswitch\d*): SXid \((?:PCI:)?([0-9A-Fa-f:.]+)\):\s*(\d{1,9})\b(?:\s*,\s*(.*))?", re.ASCII)
_FALLEN = re.compile(r"NVRM:.*fallen off the bus")
_ADDRESS = re.compile(r"NVRM: .*?\b(?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\b")


@dataclass(frozen=True)
class Finding:
    kind: str          # "xid", "sxid", "fallen" (fallen off the bus without an Xid) or "status" (NV_ERR_*)
    code: int
    device: str        # the PCI address the line names
    action: str        # DRAIN, APP, WATCH or INFO
    what: str
    line: str
    reboot: bool = False   # the line asks for the node's reboot, which no GPU reset stands for (reboot_only)

    def label(self) -> str:
        if self.kind == "fallen":
            return f"GPU {self.device} has fallen off the bus (no Xid line; as Xid 79)"
        if self.kind == "status":
            return f"driver status {self.what} on {self.device}"
        return f"{'SXid' if self.kind == 'sxid' else 'Xid'} {self.code} on {self.device}: {self.what}"


def parse(lines: list[str]) -> list[Finding]:
    """Every Xid, SXid and fallen-off-the-bus event in the lines, in order. A fallen-off-the-bus message without an
    Xid may span lines (`NVRM: The NVIDIA GPU 0000:b3:00.0` ... `NVRM: fallen off the bus`): it names the device
    the last NVRM line before it named."""
    found: list[Finding] = []
    faulted: set[str] = set()          # GPUs whose process raised an application Xid
    device = "unknown"
    stated = {(m.group(2), m.group(3)) for m in map(_SXID.search, lines) if m and sxid_states(m.group(4) or "")}
    for line in lines:
        if m := _XID.search(line):
            bus = m.group(1)
            judged = after_application(classify(int(m.group(2)), m.group(3) or ""), bus in faulted)
            if judged.action == APP:
                faulted.add(bus)
            what = f"Xid {judged.xid}: {judged.what}" if judged.xid != judged.seen else judged.what
            found.append(Finding("xid", judged.seen, bus, judged.action, what, line.strip(),
                                 judged.action == DRAIN and reboot_only(judged.xid, m.group(3) or "")))
        elif m := _SXID.search(line):
            action, what = sxid_action(int(m.group(3)), m.group(4) or "", (m.group(2), m.group(3)) in stated)
            found.append(Finding("sxid", int(m.group(3)), m.group(2), action, what, line.strip()))
        elif _FALLEN.search(line):
            here = _ADDRESS.search(line)
            found.append(Finding("fallen", 79, here.group(1) if here else device, DRAIN, "GPU has fallen off the bus",
                                 line.strip()))
        elif (status := rm_status(line)) and status[0] in RM_STATUS:
            here = _ADDRESS.search(line)
            number, _, what = RM_STATUS[status[0]]
            found.append(Finding("status", number, here.group(1) if here else device, DRAIN,
                                 f"{status[0]} ({what})", line.strip()))
        if m := _ADDRESS.search(line):
            device = m.group(1)
    return found


_STAMP = re.compile(r"^(\[\s*\d+(?:\.\d+)?\]|\d{4}-\d\d-\d\dT\S+)")


def _event(line: str, position: int) -> tuple[str, str] | int:
    """What makes a line one event: its stamp and the driver's words (journalctl's host prefix left out), or, for a
    line without a stamp, its position."""
    stamp = _STAMP.match(line)
    if not stamp:
        return position
    stamp_text = "".join(stamp.group(1).split())          # "[ 12.5]" and "[12.5]" are one stamp
    words = [i for i in (line.find("NVRM:"), line.find("nvidia-nvswitch")) if i >= 0]
    return stamp_text, line[min(words):] if words else line[stamp.end():]


_BDF = re.compile(r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.[0-7])?$")


def is_address(address: str) -> bool:
    """Whether `address` is a PCI address (any spelling device_key takes), not a placeholder ("N/A", "")."""
    return bool(_BDF.match(address.strip().lower()))


def device_key(address: str) -> str:
    """One GPU however its PCI address is spelt: the driver's Xid lines name `0000:3b:00`, its fallen-off-the-bus and
    NVML's lines `0000:3B:00.0` or `00000000:3b:00.0`, a line without a domain `3b:00`. Three Xid 94 on one device
    under two spellings were two devices, and "3 on one device" never drained (hunt95). The domain is a number (4 or
    8 hex digits), the hex case none, and a GPU is function 0 of its device."""
    m = _BDF.match(address.strip().lower())
    if not m:
        return address.strip().lower()
    return f"{int(m.group(1) or '0', 16):04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}"


def judge(findings: list[Finding], repeats: int = REPEATS) -> tuple[str, str] | None:
    """(code, summary) of the kernel-log evidence that drains the node, or None. A DRAIN event drains; a WATCH code
    seen `repeats` times on one device drains; APP and INFO never do."""
    drains = [f for f in findings if f.action == DRAIN]
    if drains:
        f = drains[0]
        more = f" (and {len(drains) - 1} more)" if len(drains) > 1 else ""
        return "XID_HISTORY", f"kernel log: {f.label()}{more}"
    for (kind, code, device), n in _watched(findings).most_common():
        if n >= repeats:
            what = next(f.what for f in findings if (f.kind, f.code, device_key(f.device)) == (kind, code, device))
            name = "SXid" if kind == "sxid" else "Xid"
            return "XID_REPEATED", f"kernel log: {name} {code} on {device} {n} times ({what})"
    return None


def faulted_devices(findings: list[Finding], repeats: int = REPEATS) -> set[str]:
    """The GPUs (device_key) judge's evidence stands on: each DRAIN event's, and each watched code's that repeated
    `repeats` times on one device; a watched Xid seen fewer times names no faulted GPU (hunt95: return to service asks
    for the reset of these)."""
    found = {device_key(f.device) for f in findings if f.action == DRAIN and f.device != "unknown"}
    return found | {device for (_, _, device), n in _watched(findings).items() if n >= repeats and device != "unknown"}


def _watched(findings: list[Finding]) -> Counter[tuple[str, int, str]]:
    """How often each watched (kind, code, device) was logged, judge's count and faulted_devices' alike. A stamped line
    twice (a log forwarded twice, journald and syslog merged) is one event: the kernel stamps each record to the
    microsecond, so two records never share stamp and text; lines without a stamp each count."""
    events = {(f.kind, f.code, device_key(f.device), _event(f.line, i)) for i, f in enumerate(findings)
              if f.action == WATCH}
    return Counter(key[:3] for key in events)

