"""Kernel logs (`dmesg`, `dmesg -T`, `journalctl -k`, /var/log/kern.log): NVRM Xid lines and "fallen off the bus",
read by the prolog's parser (verify/prolog/xid.py) into the gpu facts' `xid_events`; the driver's status lines
(`NVRM: ... [NV_ERR_RESET_REQUIRED]`) into `driver_errors`; the devices themselves are not in a kernel log (null).
SXids, the NVSwitches' events, go to `sxid_events` and are judged by the same catalog. A CUDA refusal the same
excerpt quotes (a test's `'CUDA-capable device(s) is/are busy or unavailable'` above the dmesg it sent) is kept as
`cuda_init_error`, read as the CUDA kind reads it. A log that is only the kernel's records, the NVIDIA driver's among
them and none reading as a failure, is a log read whole with no event: its lists are `[]` (nvidia-peermem's
`detected invalid context` at a job's teardown is no failure); one where the NVIDIA driver never speaks says nothing
of the GPUs (an excerpt picked for other lines reads alike) and is not read. A line that mentions a
kernel message in prose (`See NVRM: Xid (...): 79 in the docs`, verify/explain/said.py) is no event; the prolog's
reader of real kernel logs is not asked. The PCIe AER driver's lines (`pcieport ...: AER: ...`) are read into
`pcie_aer_events` (verify/explain/aer.py); a log of those alone says nothing of Xids (their lists unknown)."""
from __future__ import annotations

import functools
import re
from typing import Any

from ..checks.gpu.figures_table import FIGURES
from ..figures import within
from ..prolog import xid as xidlog
from ..shared.xidcatalog import MODULE_BUILD_FAILED, MODULE_REJECTED, NVIDIA_DKMS, module_build_failed, module_rejected, rm_status
from . import aer, cuda, xidrelay
from .said import printed_lines

_NVRM = re.compile(r"NVRM: Xid \(|NVRM:.*fallen off the bus|SXid \(")
# `[12.3]`, `Jan 25 10:34:54` (journal), ISO (`dmesg --time-format iso`), after `dmesg -x`'s `kern  :err   : `
_TIME = re.compile(r"^\s*(?:\w+\s*:\s*\w+\s*:\s*)?(\[[^\]]+\]|\w{3} +\d+ [\d:]+|\d{4}-\d\d-\d\dT[\d:.,+-]+)")


_MESSAGE = re.compile(r"NVRM:|SXid \(")


@functools.lru_cache(maxsize=2)
def _logged(text: str) -> str:
    """The log without the lines that mention a kernel message in prose (detect and parse read one text)."""
    return "\n".join(printed_lines(text, _MESSAGE)) if _MESSAGE.search(text) else text


# a kernel log's record as its readers print it: `dmesg -x`'s level, then dmesg's `[ 12.345678] ` or `dmesg -T`'s
# stamp, raw /dev/kmsg's `priority,sequence,usec,flags;`, `journalctl -k`'s or syslog's `Jan 25 10:34:54 host kernel: `
# and its ISO form; a shell prompt's `$ dmesg` line above them is the command, not the log
_RECORD = re.compile(r"^\s*(?:\w+\s*:\s*\w+\s*:\s*)?(?:\[ *\d+\.\d+\] |\[\w{3} \w{3} [ \d]\d [\d:]+ \d{4}\] |"
                     r"(\d+),\d+,\d+,[^;]*;|\w{3} +\d+ [\d:]+ \S+ kernel: |\d{4}-\d\d-\d\dT\S+ (?:\S+ kernel: )?)")
_PROMPT = re.compile(r"^\s*(?:\S*[$#] |-- )")          # a prompt, or journalctl's `-- Boot ... --` markers
# the NVIDIA driver's own modules speaking (NVRM, nvidia, nvidia-modeset/-uvm/-drm/-peermem, nvidia-nvswitchN);
# nvidia-peermem prints its function and line instead of a colon (`nvidia-peermem nv_get_p2p_free_callback:127 ...`)
_DRIVER = re.compile(r"\b(?:NVRM|nvidia(?:-nvswitch\d*|-modeset|-uvm|-drm|-peermem|-nvlink)?)(?: [0-9a-fA-F]{4,8}:[\w:.]+)?: "
                     r"|\bnvidia-peermem \w+:\d+ ")
# what no clean log holds, whoever printed it: a failure's words (the driver's `RmInitAdapter failed`, `probe ... failed`,
# PCIe AER, an MCE, a hung task), or a kmsg record at error priority or worse (0-3)
_TROUBLE = re.compile(r"fail|error|fault|fallen|invalid|mismatch|warn|time(?:d ?)?out|hung|lost|unable|cannot|"
                      r"corrupt|panic|oops|call trace|bug|taint", re.IGNORECASE)
# every boot of a node with NVIDIA's out-of-tree module prints these: no failure of anything
_BENIGN = re.compile(r"module verification failed: signature and/or required key missing - tainting kernel|"
                     r"(?:module license '[^']*'|loading out-of-tree module) taints kernel|"
                     r"module uses symbols from proprietary module \S+, inheriting taint|"
                     r"Disabling lock debugging due to kernel taint|"
                     # nvidia-peermem's free callback finding the CUDA context already gone: a job's RDMA-registered
                     # GPU memory freed at its exit before the verbs deregistration (its ERROR word names no fault of
                     # the GPU or the HCA, and no Xid comes with it)
                     r"nvidia-peermem nv_get_p2p_free_callback:\d+ ERROR detected invalid context, skipping further "
                     r"processing")
# the driver's RM speaks at load of itself and its GPUs; any other NVRM line is a state worth reading (a GPU without
# its power cables, an adapter that did not initialise), so the log is not read as clean
_NVRM_LOAD = re.compile(r"NVRM: (?:loading NVIDIA UNIX|GPU at PCI:|GPU Board Serial Number)")
_MIN_RECORDS = 3


def _clean(text: str) -> bool:
    """A kernel log and nothing else (each line a record, at least a few), in which the NVIDIA driver speaks and nothing
    reads as a failure: read whole, it shows no Xid, SXid or driver status. Anything else is not read as one (a log
    with a failure the catalog does not name is said not recognised, never passed)."""
    lines = [line for line in text.splitlines() if line.strip() and not _PROMPT.match(line)]
    records = [_RECORD.match(line) for line in lines]
    if len(lines) < _MIN_RECORDS or not all(records) or not any(_DRIVER.search(line) for line in lines):
        return False
    if any("NVRM:" in line and not _NVRM_LOAD.search(line) for line in lines):
        return False
    urgent = any(m and m.group(1) and int(m.group(1)) & 7 <= 3 for m in records)
    return not urgent and not any(_TROUBLE.search(_BENIGN.sub("", line)) for line in lines)


def _driver_said(text: str) -> bool:
    return bool(_NVRM.search(text)) or any(rm_status(line) or module_rejected(line) for line in text.splitlines()) \
        or _clean(text) or _nvidia_build_failed(text)


def _nvidia_build_failed(text: str) -> bool:
    """DKMS's failed build of a module, where the text shows the module is NVIDIA's."""
    return "Bad return status for module build" in text and module_build_failed(text) is not None \
        and bool(NVIDIA_DKMS.search(text))     # the line as DKMS prints it, naming its kernel: what parse() records


def detect(text: str) -> bool:
    text = _logged(text)
    return _driver_said(text) or aer.detect(text)


def _when(line: str) -> str | None:
    when = _TIME.match(line)
    return when.group(1) if when else None


def _driver_errors(text: str) -> list[dict[str, Any]]:
    rows = []
    nvidia_build = _nvidia_build_failed(text)
    for line in text.splitlines():
        status = rm_status(line) or ((MODULE_REJECTED, None) if module_rejected(line) else None) or (
            (MODULE_BUILD_FAILED, None) if nvidia_build and module_build_failed(line) else None)
        if status:
            rows.append({"status": status[0], "code": status[1], "text": line.strip()[:300], "time": _when(line),
                         "source": "kernel_log"})
    return rows


def parse(text: str) -> dict[str, Any]:
    quoted, text = text, _logged(text)
    events: list[dict[str, Any]] = []
    switches: list[dict[str, Any]] = []
    for f in xidlog.parse(text.splitlines()):
        row = {"pci_bus_id": f.device if f.device != "unknown" else None, "source": "kernel_log", "text": f.line[:300],
               "time": _when(f.line)}
        if f.kind == "status":
            continue                    # the driver's status lines are driver_errors, read below
        # a code past the facts' range (`Xid (...): 999...9`) is no event read: _unread() makes its list unknown
        if f.kind == "sxid" and within(FIGURES, "sxid_events[].sxid", f.code) is not None:
            switches.append({"sxid": f.code, **row})
        elif f.kind != "sxid" and within(FIGURES, "xid_events[].xid", f.code) is not None:
            events.append({"xid": f.code, **row})
    # the log was read: its Xids, SXids and status lines are known ([] when none); the GPUs are not in a kernel log
    # a relay's lines quoted beside the kernel's (a device plugin's log under dmesg) are events too
    facts = {"devices": None, "torch": None, "xid_events": events + xidrelay.events(quoted), "sxid_events": switches,
             "driver_errors": _driver_errors(text), "cuda_init_error": cuda.refusal(quoted),
             "pcie_aer_events": aer.events(text)}
    if errors := cuda.runtime_errors(quoted):
        facts["cuda_errors"] = errors   # a program's CUDA errors printed beside the kernel's lines, judged with its Xids
    if not _driver_said(text):
        # the PCIe AER driver's lines alone: the NVIDIA driver's own (Xids, status lines) were not in what was read
        facts.update(xid_events=None, sxid_events=None, driver_errors=None)
    return _unread(text, facts)


# a line that announces an event but was cut before its device or code (`NVRM: Xid (PCI:0000:3b:0`, a paste cut at
# its width): the event is not known, so its list is not "none seen"
_ANNOUNCED = {"xid_events": re.compile(r"NVRM: Xid \("), "sxid_events": re.compile(r"SXid \(")}


def _unread(text: str, facts: dict[str, Any]) -> dict[str, Any]:
    """Where an announced event was not read: its list unknown (null) when it read none; every list unknown when
    nothing was read at all (a log whose only event is cut says nothing, never that all is well)."""
    cut = {key for key, announced in _ANNOUNCED.items()
           if len(announced.findall(text)) > sum(1 for e in facts[key] or [] if e.get("source") == "kernel_log")}
    if not cut:
        return facts
    if not any(facts[k] for k in ("xid_events", "sxid_events", "driver_errors")):
        return {**facts, "xid_events": None, "sxid_events": None, "driver_errors": None}
    return {**facts, **{key: None for key in cut if not facts[key]}}
