"""The one Xid catalog: what each NVIDIA Xid asks of an operator, read by the gpu check (its Xid events) and the
Slurm prolog (the kernel log) alike.

It follows NVIDIA's published Xid catalog (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html,
its "Resolution Bucket (Immediate Action)" column; and NVIDIA Health Validation's Xid checks,
https://docs.nvidia.com/health-validation/reference/checks/xid.md):
- DRAIN: the GPU needs a reset or the node a reboot (RESET_GPU, RESTART_BM): 46, 48, 62, 64, 74, 79, 95, 110, 119,
  120, 140, an NVLink Xid 144-150 that says Fatal (or that a teardown names as its cause), Xid 154 asking for a reset,
  reboot or drain;
- APP: the application's fault (RESTART_APP): 13, 31, 43, 45, 68, 69, 137; never a reason to drain;
- WATCH: a drain only when it repeats (32 PBDMA error, 63 row remap pending, 92 high single-bit ECC rate, 94
  contained ECC, 109 context-switch timeout, a non-fatal NVLink Xid, and any code not listed);
- INFO: nothing to do (154 back to None).

Xid 45 is the driver tearing down a process's channels ("preemptive cleanup"): alone it is the job ending, and
when its line says `caused by previous Xid N` it is judged as N, the fault that ended the job. A context-switch
timeout (109) on a GPU that raised an application Xid in the same log is that application being torn down.
NVSwitch SXids follow the Fabric Manager User Guide (DU-09883-001, "NVSwitch SXid Errors"): a line that prints
`Fatal` drains, `Non-fatal` never does (the gpu check warns on it, the prolog counts it); a line that prints no severity (a `Data {...}` or `Severity N` detail line) is
detail when another line of the same switch and SXid states it, and otherwise takes the guide's impact for its code:
one that stalls the NVLink traffic through the switch (GPU access hangs, jobs abort with Xid 45) drains, a single-bit
ECC error the switch corrected is noted, any other detail line is noted and any other line watched.
Pure: codes and messages in, actions out.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

DRAIN, APP, WATCH, INFO = "drain", "app", "watch", "info"

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
    # NVIDIA's Xid guide (https://docs.nvidia.com/deploy/xid-errors/, "Common Xid Errors"): 137 is the remote MMU's
    # fault on an illegal NVLink peer access, "typically application-level bugs" like 31; 32 a PBDMA fault, "quality
    # issues on PCI ... generally not caused by user application actions"; 110 a security fault, "uncommon unless
    # there is a hardware failure": cold reset the system
    137: (APP, "NVLink FLA privilege error (an illegal NVLink peer access)"),
    32: (WATCH, "PBDMA error (the PCIe stream between driver and GPU)"),
    110: (DRAIN, "security fault"),
}
LOST = 79                       # the GPU itself is gone (the gpu check's GPU_LOST)
# The verify code whose meaning an Xid names (verify/codes.py), so a finding says the condition, not only "an Xid":
# NVIDIA's catalog names 48 a double-bit ECC error, 94/95 contained/uncontained ECC errors, 140 an unrecovered ECC
# error, 92 a high single-bit ECC rate (FACTS.md files correctable storms under ECC_UNCORRECTABLE too), 63 a row
# remap pending, 64 a row remap that failed. Any other Xid is XID_ERROR; an Xid 154 asking for a reset or reboot
# is NVML's recovery action (GPU_RESET_REQUIRED).
CODES: dict[int, str] = {LOST: "GPU_LOST", 48: "ECC_UNCORRECTABLE", 92: "ECC_UNCORRECTABLE", 94: "ECC_UNCORRECTABLE",
                         95: "ECC_UNCORRECTABLE", 140: "ECC_UNCORRECTABLE", 63: "RETIREMENT_PENDING",
                         64: "ROW_REMAP_FAILED"}
RECOVERY = 154
TEARDOWN = 45
CONTEXT_TIMEOUT = 109
NVLINK = range(144, 151)        # NVLink Xids: the message says Fatal or Nonfatal
# Xid 154's recovery actions (nvmlDeviceGpuRecoveryAction_t): 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P,
# 4 drain and reset, 5 recover IMEX domain, 6 bus reset, 7 system reboot
RECOVERY_NONE, RECOVERY_IMEX = 0, 5
RECOVERY_REBOOT = frozenset({2, 7})     # node reboot, system reboot: no GPU reset repairs them

_RECOVERY = re.compile(r"recovery action changed from \S+ \([^)]*\) to 0x([0-9A-Fa-f]+)")
# the action by its words alone, as tools and people quote the line (`Xid 154: GPU Reset Required`), numbers cut away
_RECOVERY_WORDS = re.compile(r"\b(GPU Reset Required|Node Reboot Required|Drain P2P|Drain and Reset|Bus Reset|"
                             r"System Reboot)\b", re.IGNORECASE)
_CAUSED_BY = re.compile(r"caused by previous Xid (\d+)", re.IGNORECASE)
_FATAL = re.compile(r"\bfatal\b", re.IGNORECASE)
_NONFATAL = re.compile(r"\bnon-?fatal\b", re.IGNORECASE)


@dataclass(frozen=True)
class Judged:
    xid: int             # the Xid judged: the cause a teardown names, else the Xid itself
    action: str          # DRAIN, APP, WATCH or INFO
    what: str
    seen: int            # the Xid the line carries
    code: str = "XID_ERROR"  # the verify code of the condition it names (CODES)


def _action(code: int, message: str, cause_of_teardown: bool = False) -> tuple[str, str]:
    if code == RECOVERY:
        m = _RECOVERY.search(message)
        if not m:
            words = _RECOVERY_WORDS.search(message)
            return (DRAIN, f"GPU recovery action: {words.group(1)}") if words else \
                (WATCH, "GPU recovery action changed (action not read)")
        action = int(m.group(1), 16)
        if action == RECOVERY_NONE:
            return INFO, "GPU recovery action back to none"
        said = message.split("(")[-1].rstrip(")").strip()
        if action == RECOVERY_IMEX:
            return WATCH, f"GPU recovery action {action:#x}: {said} (the IMEX domain's, not this GPU's)"
        return DRAIN, f"GPU recovery action {action:#x}: {said}"
    if code in NVLINK:
        if cause_of_teardown:       # its own line (and its severity) is not here, but it ended the job's channels
            return DRAIN, "NVLink error that tore down the running job"
        fatal = bool(_FATAL.search(message)) and not _NONFATAL.search(message)
        return (DRAIN, "fatal NVLink error") if fatal else (WATCH, "non-fatal NVLink error")
    return CATALOG.get(code, (WATCH, "an Xid this catalog does not list"))


def _code(xid: int, action: str) -> str:
    if xid == RECOVERY and action == DRAIN:
        return "GPU_RESET_REQUIRED"
    return CODES.get(xid, "XID_ERROR")


def classify(code: int, message: str = "") -> Judged:
    """One Xid line's action and code; Xid 45 that names its cause is judged as that cause."""
    cause = _CAUSED_BY.search(message or "") if code == TEARDOWN else None
    if cause and int(cause.group(1)) != TEARDOWN:
        judged = int(cause.group(1))
        action, what = _action(judged, "", cause_of_teardown=True)
        return Judged(judged, action, f"{what} (named by Xid 45 as its cause)", code, _code(judged, action))
    action, what = _action(code, message or "")
    return Judged(code, action, what, code, _code(code, action))


def reboot_only(code: int, message: str = "") -> bool:
    """Whether an Xid line asks for the node's reboot, which no GPU reset stands for: Xid 154's recovery action 0x2
    (node reboot) or 0x7 (system reboot), by its number or, where a tool quoted the line, its words. A GPU reset
    recorded since spent such an Xid at the gate and repaired its drain (hunt102): a node the driver said needs a
    reboot was returned on `nvidia-smi -r`."""
    if code != RECOVERY:
        return False
    if m := _RECOVERY.search(message or ""):
        return int(m.group(1), 16) in RECOVERY_REBOOT
    words = _RECOVERY_WORDS.search(message or "")
    return words is not None and words.group(1).lower() in ("node reboot required", "system reboot")


def after_application(judged: Judged, earlier_app_on_gpu: bool) -> Judged:
    """A context-switch timeout on a GPU whose process already raised an application Xid is that process's end."""
    if judged.xid == CONTEXT_TIMEOUT and judged.action == WATCH and earlier_app_on_gpu:
        return Judged(judged.xid, APP, "context switch timeout of a process that had already faulted", judged.seen,
                      judged.code)
    return judged


def storm(keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """How many times each (GPU, judged Xid) was seen: a storm counts once per GPU and Xid."""
    counts: dict[tuple[str, int], int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


# The guide's SXids whose impact is "NVLink traffic will be stalled, and subsequent GPU access will hang; the GPU
# driver will abort CUDA jobs with Xid 45" (recovery: restart the VM / reset GPUs and switches).
SXID_STALL: dict[int, str] = {11004: "ingress invalid ACL", 12028: "egress non-posted PRIV error"}
# Single-bit ECC errors the switch corrects itself ("no guest VM impact").
SXID_CORRECTED = frozenset({11012, 11021, 11022, 11023, 12021, 12023, 15008, 15011, 19049, 19055, 19057, 19059, 19062,
                            19065, 19068, 19071, 24001})


def sxid_states(message: str) -> bool:
    """Whether an SXid line prints its severity (`Fatal`, `Non-fatal`)."""
    return bool(_FATAL.search(message or ""))


def sxid_action(code: int, rest: str, stated_elsewhere: bool = False) -> tuple[str, str]:
    """One SXid line's action from what follows its code (`Non-fatal, Link 32 ...`, `Data {...}`); `stated_elsewhere`:
    another line of the same switch and SXid prints the severity."""
    rest = rest or ""
    if _NONFATAL.search(rest):        # the switch contained it: never a drain (the gpu check warns, the prolog counts)
        return INFO, "non-fatal NVSwitch error"
    if _FATAL.search(rest):
        return DRAIN, "fatal NVSwitch error"
    if code in SXID_CORRECTED:
        return INFO, "NVSwitch single-bit ECC error (corrected by the switch)"
    detail = rest.startswith(("Data {", "Severity"))
    if detail and stated_elsewhere:
        return INFO, "NVSwitch error detail (its severity is on another line)"
    if code in SXID_STALL:
        return DRAIN, (f"NVSwitch {SXID_STALL[code]}: NVLink traffic through the switch stalls, GPU access hangs and "
                       "jobs abort with Xid 45 (Fabric Manager guide)")
    if detail:      # a detail line whose event's first line is not in the excerpt: reported, never drained on its own
        return INFO, "NVSwitch error detail (its severity is not in the log)"
    return WATCH, "NVSwitch error of unstated severity"


# The resource manager's own status lines in the kernel log (`NVRM: ... Reset required [NV_ERR_RESET_REQUIRED]
# (0x00000062)`, `NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: ... status=0x00000062`): the statuses of
# src/common/sdk/nvidia/inc/nvstatuscodes.h (NVIDIA/open-gpu-kernel-modules) that describe the GPU's own state, each
# with its verify code. Every other status (NV_ERR_NO_MEMORY, NV_ERR_INVALID_ARGUMENT, NV_ERR_INSUFFICIENT_PERMISSIONS,
# ...) answers one caller's request, says nothing of the GPU, and is not judged.
RM_STATUS: dict[str, tuple[int, str, str]] = {
    "NV_ERR_RESET_REQUIRED": (0x62, "GPU_RESET_REQUIRED", "the driver refuses work until the GPU is reset"),
    "NV_ERR_GPU_IS_LOST": (0x0F, "GPU_LOST", "the GPU is lost from the bus"),
    "NV_ERR_FABRIC_MANAGER_NOT_PRESENT": (0x7A, "DRIVER_ERROR", "the fabric manager is not running on this "
                                                                "NVSwitch node"),
}
RM_BY_NUMBER = {number: name for name, (number, _, _) in RM_STATUS.items()}
# `RmInitAdapter failed! (0x62:0x40:2168)` (osinit.c: init step, RM status, line): the driver probed a GPU and could
# not bring it up (GSP firmware that will not boot, a VBIOS that never finished, a state a failed boot left). The GPU
# is missing from NVML and CUDA; the status says whether its own state needs a reset, else it did not come up at all.
RM_INIT_FAILED = re.compile(r"RmInitAdapter failed!|rm_init_adapter failed", re.IGNORECASE)
RM_INIT_RESET = frozenset({"NV_ERR_INVALID_STATE", "NV_ERR_RESET_REQUIRED"})
_RM_NAMED = re.compile(r"\[(NV_ERR_\w+)\](?:\s*\((0x[0-9A-Fa-f]+)\))?")
_RM_NUMBER = re.compile(r"\bstatus=(0x[0-9A-Fa-f]+)")
_RM_INIT = re.compile(r"RmInitAdapter failed! \((0x[0-9A-Fa-f]+):(0x[0-9A-Fa-f]+):\d+\)")
# the statuses an initialisation failure names besides RM_STATUS's, by the driver's nvstatuscodes.h: named as FACTS.md
# records them ("the status's name, from the number where only the number is printed"), so `verify explain` and a
# translation of one line agree (fix153: `(0x61:0x56:1770)` is NV_ERR_NOT_SUPPORTED, never "0x56")
RM_INIT_NAMES = {**RM_BY_NUMBER, 0x05: "NV_ERR_CARD_NOT_PRESENT", 0x11: "NV_ERR_GPU_NOT_FULL_POWER",
                 0x1A: "NV_ERR_INSUFFICIENT_RESOURCES", 0x1C: "NV_ERR_INSUFFICIENT_POWER",
                 0x1F: "NV_ERR_INVALID_ARGUMENT", 0x25: "NV_ERR_INVALID_DATA", 0x26: "NV_ERR_INVALID_DEVICE",
                 0x40: "NV_ERR_INVALID_STATE", 0x45: "NV_ERR_IRQ_NOT_FIRING", 0x47: "NV_ERR_MEMORY_TRAINING_FAILED",
                 0x4B: "NV_ERR_MODULE_LOAD_FAILED", 0x51: "NV_ERR_NO_MEMORY", 0x55: "NV_ERR_NOT_READY",
                 0x56: "NV_ERR_NOT_SUPPORTED", 0x59: "NV_ERR_OPERATING_SYSTEM", 0x61: "NV_ERR_REJECTED_VBIOS",
                 0x65: "NV_ERR_TIMEOUT", 0x70: "NV_ERR_FLCN_ERROR", 0x71: "NV_ERR_FATAL_ERROR",
                 0x72: "NV_ERR_MEMORY_ERROR", 0x73: "NV_ERR_INVALID_LICENSE", 0x79: "NV_ERR_RISCV_ERROR",
                 0x7F: "NV_ERR_SECURE_BOOT_FAILED", 0xFFFF: "NV_ERR_GENERIC"}
# `NVRM: The NVIDIA probe routine was not called for 3 device(s).` (the driver's nv.c, then "This can occur when a
# driver such as: nouveau, rivafb, nvidiafb or rivatv was loaded and obtained ownership of the NVIDIA device(s)"):
# NVIDIA GPUs are on the bus and another kernel driver holds them, so the nvidia driver binds none. It names no RM
# status: recorded as the status PROBE_NOT_CALLED (verify/FACTS.md, DriverError).
PROBE_NOT_CALLED = "probe_not_called"
_PROBE_NOT_CALLED = re.compile(r"NVRM: The NVIDIA probe routine was not called for (\d+) device\(s\)")
# `NVRM: The NVIDIA probe routine failed for 1 device(s).` (nv.c, after the reason: `The NVIDIA GPU 000a:00:00.0 (PCI
# ID: 10de:2330) installed in this system is not supported by the NVIDIA 580.126.09 driver release`, a GPU it could
# not map or enable): the driver probed GPUs on the bus and binds none of them. Recorded as the status PROBE_FAILED.
PROBE_FAILED = "probe_failed"
_PROBE_FAILED = re.compile(r"NVRM: The NVIDIA probe routine failed for (\d+) device\(s\)")
# nv.c's legacy notice, five lines of one message: `NVRM: The NVIDIA Tesla K80 GPU installed in this system is` /
# `NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please` / ... / `The 510.47.03 NVIDIA driver will ignore`
# / `NVRM:  this GPU.  Continuing probe...`: a driver branch that dropped the GPU, which is on the bus and bound to
# nothing. Its second line names the branch that supports it: recorded (once per notice) as the status LEGACY_GPU.
LEGACY_GPU = "legacy_gpu"
_LEGACY_GPU = re.compile(r"NVRM:(?:\s+|.*installed in this system is\s+)supported through the NVIDIA (\S+) Legacy "
                         r"drivers", re.IGNORECASE)


# The kernel refusing to load the driver's module for its signature (modprobe: `could not insert 'nvidia': Key was
# rejected by service`; insmod: `could not insert module nvidia.ko: ...`, EKEYREJECTED; `Required key not available`, ENOKEY): Secure Boot or a lockdown
# enforcing module signatures the module's key does not meet; no driver is loaded. Not an NVRM line: recorded as the
# status MODULE_REJECTED (verify/FACTS.md, DriverError).
MODULE_REJECTED = "module_rejected"
_MODULE_REJECTED = re.compile(r"could not insert (?:'(nvidia[\w-]*)'|module \S*?\b(nvidia[\w-]*)\.ko): (?:Key was "
                              r"rejected by service|Required key not available)")


# DKMS failing to build the NVIDIA module for a kernel (`Building module:` ... `(bad exit status: 2)` then `Error! Bad
# return status for module build on kernel: 5.13.18-... (x86_64)`), where the text shows the package is NVIDIA's (its
# make line's NV_EXCLUDE_BUILD_MODULES, `DKMS make.log for nvidia-470.86`, `nvidia/470.86`): that kernel has no NVIDIA
# module, and a node booted into it no driver. Not an NVRM line: recorded as the status MODULE_BUILD_FAILED (FACTS.md).
MODULE_BUILD_FAILED = "module_build_failed"
_MODULE_BUILD_FAILED = re.compile(r"Error! Bad return status for module build on kernel: (\S+)")
NVIDIA_DKMS = re.compile(r"NV_EXCLUDE_BUILD_MODULES|DKMS make\.log for nvidia|\bnvidia(?:-dkms)?[/-]\d{3}\.\d+|"
                         r"\bdkms\b[^\n]*\bnvidia\b", re.IGNORECASE)


def module_build_failed(line: str) -> str | None:
    """The kernel DKMS could not build a module for, from its line; None where the line is not it."""
    m = _MODULE_BUILD_FAILED.search(line)
    return m.group(1) if m else None


# nv.c's version check of a client's ioctl: `NVRM: API mismatch: the client has the version 535.183.01, but` / `NVRM:
# this kernel module has the version 535.161.07.  Please ...` (the client may be named: `the client 'kwin_wayland' (pid
# 1005)`): the driver's user space and its loaded module are two releases (an upgrade without a reboot, a DKMS module
# not rebuilt), so every client of that user space is refused. Recorded as the status API_MISMATCH (FACTS.md).
API_MISMATCH = "api_mismatch"
# the kernel's record only: `NVRM:` at the start of the line or after a reader's stamp or tag (`[  9.42] `, `kernel: `,
# /dev/kmsg's `6,123,456,-;`, syslog's `<4>`, pdsh's `gpu-07: `); a quote of it in prose (`wrote: "NVRM: API mismatch ...`) is no
# record, and would fail a healthy host's driver install
_API_MISMATCH = re.compile(r"(?:^|^\s*[\w.-]+:|\]|\bkernel:|^\d+,\d+,\d+,[^;]*;|<\d>)\s*NVRM: API mismatch: the client\b")
_API_VERSIONS = re.compile(r"has the version (\d+(?:\.\d+)+), but[\s\S]{0,60}?this kernel module has\W+"
                           r"(?:NVRM:\s*)?the version (\d+(?:\.\d+)*\d)")


def api_mismatch(line: str) -> bool:
    """Whether a line is the driver's `NVRM: API mismatch: the client ...` (its user space and module disagree)."""
    return bool(_API_MISMATCH.search(line))


def api_versions(text: str) -> tuple[str, str] | None:
    """(client's version, module's version) where the mismatch's text carries both; None otherwise."""
    m = _API_VERSIONS.search(text)
    return (m.group(1), m.group(2)) if m else None


def module_rejected(line: str) -> str | None:
    """The NVIDIA module the kernel refused for its signature, from modprobe's line; None where the line is not it."""
    m = _MODULE_REJECTED.search(line)
    return (m.group(1) or m.group(2)) if m else None


def probe_failed(line: str) -> int | None:
    """How many NVIDIA devices the driver probed and could not bind, from its line; None where the line is not it."""
    m = _PROBE_FAILED.search(line)
    return int(m.group(1)) if m else None


def legacy_gpu(line: str) -> str | None:
    """The legacy branch (`470.xx`) that supports a GPU this driver ignores, from its notice; None where not it."""
    m = _LEGACY_GPU.search(line)
    return m.group(1).rstrip(".,") if m else None


def probe_not_called(line: str) -> int | None:
    """How many NVIDIA devices another kernel driver holds, from the driver's line; None where the line is not it."""
    m = _PROBE_NOT_CALLED.search(line)
    return int(m.group(1)) if m else None


def rm_status(line: str) -> tuple[str, int | None] | None:
    """(status name, number) an NVRM line names: `[NV_ERR_X] (0x..)` in any line, `RmInitAdapter failed! (step:status:
    line)`'s status, or `status=0x..` where the number is one RM_STATUS lists; the probe another driver kept from
    the GPUs as PROBE_NOT_CALLED, a probe that failed as PROBE_FAILED, a GPU only a legacy branch supports as
    LEGACY_GPU, a client of another release than the module as API_MISMATCH; None otherwise."""
    if "NVRM" not in line:
        return None
    if probe_not_called(line) is not None:
        return PROBE_NOT_CALLED, None
    if probe_failed(line) is not None:
        return PROBE_FAILED, None
    if legacy_gpu(line) is not None:
        return LEGACY_GPU, None
    if api_mismatch(line):
        return API_MISMATCH, None
    named = _RM_NAMED.search(line)
    if named:
        return named.group(1), int(named.group(2), 16) if named.group(2) else None
    if init := _RM_INIT.search(line):           # (init step, RM status, line): the status is the middle number
        status = int(init.group(2), 16)
        return RM_INIT_NAMES.get(status, f"{status:#x}"), status
    number = _RM_NUMBER.search(line)
    if number and int(number.group(1), 16) in RM_BY_NUMBER:
        return RM_BY_NUMBER[int(number.group(1), 16)], int(number.group(1), 16)
    return None


# The tools that relay NVML's Xid events (source `nvml` in the facts, as verify's own watch is): each line names its
# relay, so a verdict says where the event was seen, never "during the check" for what a relay logged
RELAY_PLUGIN = re.compile(r"XidCriticalError: Xid=(\d+) on Device=([\w-]+)")   # the k8s device plugin (health.go)
RELAY_EVENT = re.compile(r"EventType:8 EventData:(\d+)\b")                    # its dump of the NVML event
RELAY_DCGM = re.compile(r"Detected XID (\d+) for GPU (\d+)", re.IGNORECASE)    # DCGM_FR_XID_ERROR
# GKE's device plugin keeps the Xids it saw as the node's condition `XidCriticalError`, its reason a JSON set of them
# (`{"31":true}`): `kubectl describe node`'s row, or `type: XidCriticalError` beside its `reason:` in the YAML
RELAY_CONDITION = re.compile(r"\bXidCriticalError\b(?!:)")
# leptonai gpud's Xid component (`XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00`), and LBNL NHC's
# check_xid_errors (`Found XID errors: 63`, the Xids it counted in the kernel log, no GPU named)
RELAY_GPUD = re.compile(r"\bXID (\d{1,3}) ?\([^)\n]{0,120}\) detected on (?:GPU )?PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})")
RELAY_NHC = re.compile(r"\bFound XID errors?: ?(\d{1,3}(?:[ ,]+\d{1,3})*)")


def relayed_by(text: str | None) -> str | None:
    """The tool that relayed an NVML Xid event, from its line; None for verify's own watch (no line)."""
    if not text:
        return None
    if RELAY_PLUGIN.search(text) or RELAY_EVENT.search(text):
        return "the k8s device plugin"
    if RELAY_DCGM.search(text):
        return "DCGM"
    if RELAY_GPUD.search(text):
        return "gpud"
    if RELAY_NHC.search(text):
        return "NHC's check_xid_errors"
    if RELAY_CONDITION.search(text):
        return "the device plugin's XidCriticalError node condition"
    return "a tool watching NVML's events"
