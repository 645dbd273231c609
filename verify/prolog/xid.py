"""NVIDIA Xid and SXid lines of a kernel log, through a catalog of what each one asks of an operator.

The catalog follows NVIDIA's published Xid catalog (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html,
its "Resolution Bucket (Immediate Action)" column; and NVIDIA Health Validation's Xid checks,
https://docs.nvidia.com/health-validation/reference/checks/xid.md):
- DRAIN: the GPU needs a reset or the node a reboot (RESET_GPU, RESTART_BM): 48, 62, 64, 74, 79, 95, 119, 120, 140,
  an NVLink Xid 144-150 that says Fatal, Xid 154 asking for a reset, reboot or drain, an SXid that says Fatal, and
  "fallen off the bus" without an Xid (newer drivers print it on its own);
- APP: the application's fault (RESTART_APP): 13, 31, 43, 45, 68, 69; never a reason to drain;
- WATCH: a drain only after REPEATS events on the same device within the lookback (63 row remap pending, 92 high
  single-bit ECC rate, 94 contained ECC, 109 context-switch timeout, a non-fatal NVLink Xid, and any code not listed);
- INFO: nothing to do (154 back to None, a non-fatal SXid, an SXid's detail lines).
Pure: lines in, findings out.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

DRAIN, APP, WATCH, INFO = "drain", "app", "watch", "info"
REPEATS = 3

CATALOG: dict[int, tuple[str, str]] = {
    13: (APP, "graphics engine exception"), 31: (APP, "GPU memory page fault"),
    43: (APP, "GPU stopped processing (reset channel verification)"), 45: (APP, "preemptive cleanup after earlier errors"),
    68: (APP, "video decoder exception"), 69: (APP, "graphics engine class error"),
    46: (DRAIN, "GPU stopped processing"), 48: (DRAIN, "double-bit ECC error"),
    62: (DRAIN, "internal micro-controller halt"), 64: (DRAIN, "row remapping failure"),
    74: (DRAIN, "NVLink error"), 79: (DRAIN, "GPU has fallen off the bus"), 95: (DRAIN, "uncontained ECC error"),
    119: (DRAIN, "GSP RPC timeout"), 120: (DRAIN, "GSP error"), 140: (DRAIN, "unrecovered ECC error"),
    63: (WATCH, "row remapping pending"), 92: (WATCH, "high single-bit ECC error rate"),
    94: (WATCH, "contained ECC error"), 109: (WATCH, "context switch timeout"),
}
NVLINK = range(144, 151)        # NVLink Xids: the message says Fatal or Nonfatal
# Xid 154's recovery actions (nvmlDeviceGpuRecoveryAction_t): 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P,
# 4 drain and reset, 5 recover IMEX domain, 6 bus reset, 7 system reboot
RECOVERY_NONE, RECOVERY_IMEX = 0, 5

# a line cut short (`NVRM: Xid (PCI:0000:3b:00): 79,` or without the comma) still names its code: the rest is optional
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)\):\s*(\d+)\b(?:\s*,\s*(.*))?")
_SXID = re.compile(r"(nvidia-nvswitch\d*): SXid \((?:PCI:)?([0-9A-Fa-f:.]+)\): (\d+),\s*(.*)")
_FALLEN = re.compile(r"NVRM:.*fallen off the bus")
_ADDRESS = re.compile(r"NVRM: .*?\b(?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\b")
_RECOVERY = re.compile(r"recovery action changed from \S+ \([^)]*\) to 0x([0-9A-Fa-f]+)")
_FATAL = re.compile(r"\bfatal\b", re.IGNORECASE)
_NONFATAL = re.compile(r"\bnon-?fatal\b", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    kind: str          # "xid", "sxid" or "fallen" (fallen off the bus without an Xid)
    code: int
    device: str        # the PCI address the line names
    action: str        # DRAIN, APP, WATCH or INFO
    what: str
    line: str

    def label(self) -> str:
        if self.kind == "fallen":
            return f"GPU {self.device} has fallen off the bus (no Xid line; as Xid 79)"
        return f"{'SXid' if self.kind == 'sxid' else 'Xid'} {self.code} on {self.device}: {self.what}"


def _xid_action(code: int, message: str) -> tuple[str, str]:
    if code == 154:
        m = _RECOVERY.search(message)
        if not m:
            return WATCH, "GPU recovery action changed (action not read)"
        action = int(m.group(1), 16)
        if action == RECOVERY_NONE:
            return INFO, "GPU recovery action back to none"
        said = message.split("(")[-1].rstrip(")").strip()
        if action == RECOVERY_IMEX:
            return WATCH, f"GPU recovery action {action:#x}: {said} (the IMEX domain's, not this GPU's)"
        return DRAIN, f"GPU recovery action {action:#x}: {said}"
    if code in NVLINK:
        fatal = bool(_FATAL.search(message)) and not _NONFATAL.search(message)
        return (DRAIN, "fatal NVLink error") if fatal else (WATCH, "non-fatal NVLink error")
    return CATALOG.get(code, (WATCH, "an Xid this catalog does not list"))


def _sxid_action(rest: str) -> tuple[str, str]:
    if _NONFATAL.search(rest):
        return INFO, "non-fatal NVSwitch error"
    if _FATAL.search(rest):
        return DRAIN, "fatal NVSwitch error"
    if rest.startswith(("Data {", "Severity")):
        return INFO, "NVSwitch error detail (its severity is on another line)"
    return WATCH, "NVSwitch error of unstated severity"


def parse(lines: list[str]) -> list[Finding]:
    """Every Xid, SXid and fallen-off-the-bus event in the lines, in order. A fallen-off-the-bus message without an
    Xid may span lines (`NVRM: The NVIDIA GPU 0000:b3:00.0` ... `NVRM: fallen off the bus`): it names the device
    the last NVRM line before it named."""
    found: list[Finding] = []
    device = "unknown"
    for line in lines:
        if m := _XID.search(line):
            action, what = _xid_action(int(m.group(2)), m.group(3) or "")
            found.append(Finding("xid", int(m.group(2)), m.group(1), action, what, line.strip()))
        elif m := _SXID.search(line):
            action, what = _sxid_action(m.group(4))
            found.append(Finding("sxid", int(m.group(3)), m.group(2), action, what, line.strip()))
        elif _FALLEN.search(line):
            here = _ADDRESS.search(line)
            found.append(Finding("fallen", 79, here.group(1) if here else device, DRAIN, "GPU has fallen off the bus",
                                 line.strip()))
        if m := _ADDRESS.search(line):
            device = m.group(1)
    return found


def judge(findings: list[Finding], repeats: int = REPEATS) -> tuple[str, str] | None:
    """(code, summary) of the kernel-log evidence that drains the node, or None. A DRAIN event drains; a WATCH code
    seen `repeats` times on one device drains; APP and INFO never do."""
    drains = [f for f in findings if f.action == DRAIN]
    if drains:
        f = drains[0]
        more = f" (and {len(drains) - 1} more)" if len(drains) > 1 else ""
        return "XID_HISTORY", f"kernel log: {f.label()}{more}"
    counts = Counter((f.kind, f.code, f.device) for f in findings if f.action == WATCH)
    for (kind, code, device), n in counts.most_common():
        if n >= repeats:
            what = next(f.what for f in findings if (f.kind, f.code, f.device) == (kind, code, device))
            name = "SXid" if kind == "sxid" else "Xid"
            return "XID_REPEATED", f"kernel log: {name} {code} on {device} {n} times ({what})"
    return None
