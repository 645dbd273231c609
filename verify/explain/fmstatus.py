"""The NVIDIA Fabric Manager service as systemd and its journal print it (verify/FACTS.md, `FabricManager`):
`systemctl status nvidia-fabricmanager` (`× nvidia-fabricmanager.service - NVIDIA fabric manager service` /
`Active: failed (Result: exit-code) since ...`, NVIDIA/NVSentinel#883; `Active: active (running)`,
bottlerocket-os/bottlerocket-kernel-kit#142), `systemctl start`'s `Job for nvidia-fabricmanager.service failed
because the control process exited with error code.` (NVIDIA/gpu-operator#356), a unit that is not installed, and
the journal's lines of the unit and of the fabric manager itself: its refusal where the node has no NVSwitch
(`request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do
[NV_WARN_NOTHING_TO_DO]`, NVIDIA/gpu-operator#610) and its word that it configured the node's switches
(`Successfully configured all the available NVSwitches`, NVIDIA/nvtrust#128). The `Active:` line is the unit's state
now; without one, a unit not installed or systemctl's `Job for ... failed` (the command's answer, newer than the
journal pasted below it); without either, the journal's last start, stop or failure of the unit.
Its own lines quoted bare, as its log file prints them (`[ERROR] not all local fabric manager instances finished their
configuration`, an EKS node's cloud-init start, pytorch/ci-infra#552) or a log shipper relays them (Talos's
`<node ip>: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value`), are read too.
The fabric manager's SXid lines are fmlog.py's."""
from __future__ import annotations

import re
from typing import Any

from ..shared.fastre import guarded
from .said import said as printed_by_it

UNIT = r"nvidia-fabricmanager(?:\.service)?"
# a unit header of `systemctl status` (any unit: the block it opens runs to the next header)
# blanks within the line only: `^\s*` runs over every blank line below each line start (quadratic on the journal's
# view, which keeps its blank lines)
_HEADER = re.compile(r"^[ \t]*(?:[●×○↻*][ \t]*)?([\w@.:-]+\.service)[ \t]+-[ \t]", re.MULTILINE)
_ACTIVE = re.compile(r"^[ \t]*Active:[ \t]+([a-z]+)((?:[ \t]+\([^)\n]*\))*)", re.MULTILINE)
_RESULT = re.compile(r"Result:\s*([\w-]+)")
_NOT_FOUND = re.compile(rf"Unit {UNIT} (?:could not be found|not found)")
_JOB_FAILED = re.compile(rf"Job for {UNIT} failed")
# the journal's events of the unit, in order: the last one is its state
_EVENTS = (
    (re.compile(rf"systemd\[\d+\]: Started {UNIT}\b|systemd\[\d+\]: Started NVIDIA fabric manager"), "active"),
    (re.compile(rf"systemd\[\d+\]: Stopped (?:{UNIT}\b|NVIDIA fabric manager)", re.IGNORECASE), "inactive"),
    (re.compile(rf"{UNIT}: Failed with result '([\w-]+)'|Failed to start {UNIT}\b|Failed to start NVIDIA fabric "
                rf"manager|{UNIT}: (?:Control|Main) process exited, code=\w+, status=(?!0/)"), "failed"),
)
# the fabric manager's own failure line (nv-fabricmanager[pid]:, its start script's), not an SXid (fmlog.py's)
_FM_LINE = re.compile(r"(?:nv-fabricmanager|nvidia-fabricmanager-start\.sh)\[\d+\]:\s*(.*)")
_FAILURE = guarded(re.compile(r"fail|error|invalid|not found|unable|n.t match|mismatch", re.IGNORECASE))
# its own lines quoted without the journal's prefix, as its log file prints them (`[ERROR] [tid 1374] ...`, the
# timestamp before) or a log shipper relays them (Talos's `<node ip>: fabric manager config file item: ...`): an
# `[ERROR]` line, or a line of its own words (it names itself, its config items, or the switches and GPUs it
# configures), that says it failed; never systemd's lines about the unit
_LOG_ERROR = re.compile(r"\[ERROR\]\s*(?:\[tid \d+\]\s*)?(.*)")
_OWN_WORDS = re.compile(r"\b(?:local )?fabric manager\b|\bFABRIC_[A-Z_]+\b|\bGPUs or NVSwitches\b|request to query "
                        r"NVSwitch device information|NV_WARN_NOTHING_TO_DO", re.IGNORECASE)
_SYSTEMD = re.compile(r"systemd\[\d+\]:|\.service\b")
# a failure of its configuration of the devices it found: it gets there only after the NVSwitch driver listed
# switches (with none it stops at NV_WARN_NOTHING_TO_DO), so these show the node's own switches
_CONFIG_STAGE = re.compile(r"not all local fabric manager instances finished their configuration|unhandled config "
                           r"error type \d+|failed to configure all the available GPUs or NVSwitches", re.IGNORECASE)
# the start script's precheck on an NVL5+ baseboard (`Detected NVL5+ system`, then `Kernel module "ib_umad" has not
# been loaded, fabric manager cannot be started`) and NVLSM's failure to open the switches' MAD interface (`nvlsm:
# ibwarn: [15] umad_init: can't read ABI version ...: is ib_umad module loaded?`, a Talos log shipper's relay): the
# fabric manager cannot come up; NVLSM runs only where the fabric manager drives the node's own NVSwitches (batch 163)
_PRECHECK = re.compile(r"Kernel module \"[\w-]+\" has not been loaded, fabric manager cannot be started[^\n]*"
                       r"|\bnvlsm: [^\n]*\bumad_init: [^\n]*")
_NVL5 = re.compile(r"Detected NVL5\+ system|\bnvlsm: ")
_SXID = re.compile(r"detected NVSwitch (?:non-)?fatal error")
NOTHING_TO_DO = "NV_WARN_NOTHING_TO_DO"
_CONFIGURED = re.compile(r"Successfully configured all the available NVSwitches")
# the node's own NVSwitches shown beside the service in the same paste: the fabric manager configuring or reporting
# them, their kernel driver's lines (`nvidia-nvswitch3: SXid ...`), lspci's NVSwitch bridges
# (Talos's fabric manager wrapper listing the switches' LPF management ports, `found NVSwitch LPF: device=mlx5_10`:
# an NVL5+ baseboard's own switches, batch 184)
_LPF = re.compile(r"nvidia-fabricmanager-wrapper: found NVSwitch LPF\b")
_SWITCHES = guarded(re.compile(r"nvidia-fabricmanager-wrapper: found NVSwitch LPF\b|Successfully configured all the available NVSwitches|detected NVSwitch (?:non-)?fatal error"
                       r"|\bnvidia-nvswitch\d+: |^[0-9a-fA-F:.]+ [\w -]+: NVIDIA Corporation [^\n]*NVSwitch", re.MULTILINE))


def _block(text: str) -> str | None:
    """The `systemctl status` block of the fabric manager's unit, or None."""
    heads = list(_HEADER.finditer(text))
    for n, head in enumerate(heads):
        if re.fullmatch(UNIT, head.group(1)):
            return text[head.start():heads[n + 1].start() if n + 1 < len(heads) else len(text)]
    return None


def _state(text: str) -> tuple[str | None, str | None]:
    """(state, result): the status block's `Active:` line, else the journal's last event, else a not-installed unit or
    systemctl's `Job for ... failed`."""
    block = _block(text)
    if block and (active := _ACTIVE.search(block)):
        result = _RESULT.search(active.group(2))
        return active.group(1), result.group(1) if result else None
    if _NOT_FOUND.search(text):
        return "not_found", None
    if _JOB_FAILED.search(text):        # the command's own answer: newer than any journal line pasted below it
        return "failed", None
    events = sorted((m.start(), state, m) for pattern, state in _EVENTS for m in pattern.finditer(text))
    if not events:
        return None, None
    _, state, last = events[-1]
    return state, last.group(1) if last.lastindex else None


# its refusal names the driver the kernel runs (`... driver interface version 530.30.02 don't match with driver
# version 530.41.03`): a read of the node's driver, as nvidia-smi's header is
_LOADED_DRIVER = re.compile(r"don'?t match with driver version (\d+\.\d+(?:\.\d+)?)\b")


def _own_line(line: str) -> str | None:
    """What the fabric manager itself printed on the line: after the journal's prefix, or its bare log's words."""
    if said := _FM_LINE.search(line):
        return said.group(1)
    own = _OWN_WORDS.search(line)
    if _SYSTEMD.search(line) or not own:
        return None
    if logged := _LOG_ERROR.search(line):
        return logged.group(1)
    # its message at the line's head (after a shipper's `<node ip>: `), never a sentence about it ("the fabric
    # manager failed ...")
    return line[own.start():] if printed_by_it(line, own.start()) else None


def _error(text: str) -> str | None:
    for line in text.splitlines():
        if precheck := _PRECHECK.search(line):
            return precheck.group(0).strip()
        said = _own_line(line)
        if said and (_FAILURE.search(said) or _LOG_ERROR.search(line)) and not _SXID.search(said):
            return said.strip()
    return None


def detect(text: str) -> bool:
    return any(f(text) for f in (_block, _NOT_FOUND.search, _JOB_FAILED.search, _CONFIGURED.search)) or (
        NOTHING_TO_DO in text and "NVSwitch" in text) or bool(_PRECHECK.search(text) or _LPF.search(text)) or any(p.search(text) for p, _ in _EVENTS) or bool(
        _OWN_WORDS.search(text) and _error(text))


def parse(text: str) -> dict[str, Any]:
    state, result = _state(text)
    nvswitches = True if _SWITCHES.search(text) or _CONFIG_STAGE.search(text) or _NVL5.search(text) else False if NOTHING_TO_DO in text else None
    error = _error(text)
    manager = {"state": state, "result": result, "error": error, "nvswitches": nvswitches}
    loaded = _LOADED_DRIVER.search(error or "")
    return {"torch": None, "devices": None, "fabric_manager": manager, "driver": loaded.group(1) if loaded else None}
