"""Azure's node health checks (https://github.com/Azure/azurehpc-health-checks, read at commit
0e0a1ac26a64b32ac4dd7632a529638505d3314a; the wordings older releases printed, from the repository's history, beside
them) as clusters print them: LBNL NHC's `ERROR:  nhc:  Health check failed:  <message>` and Azure's own
`SUCCESS:  nhc:  Health check passed:  <message>` / `WARNING:  nhc:  Nearing a failure threshold:` (customTests/
azure_common.nhc), distributed NHC's `{hostname} | {result}` health.log (distributed_nhc/README.md), its debug dump,
and run-health-checks.sh's own lines. Only the GPU, NCCL and InfiniBand checks are read (CPU, memory, NVMe: no check
of verify's holds them); `check_hw_ib` is LBNL's and read by nhc.py.

What a message proves by FACTS.md's letter is read into the facts (the check's source decides, cited at each
pattern); what no field holds (a lifetime SRAM count, a measured bandwidth, a check's own pass) is said beside the
verdict (`unread`), never a pass nor "nothing to judge"; a check that could not run (Azure's `FaultCode: NHCNA`,
"NHC Set Up issue error" in triggerGHR/config/nhc_fault_dictionary.cfg; a check not installed, `returned 127`; a SKU
or conf it has no thresholds for) is the tool's own trouble (`trouble`): not assessed, no owner, never a drain."""
from __future__ import annotations

import re
from typing import Any

from . import kernel, nccltests

REMEDY_GPU = ("Read the GPUs on the node (`nvidia-smi -q`, `dcgmi diag -r 2`) and act on Azure's fault code for what "
              "the check reports (a GPU's ECC or remap fault, a missing GPU: drain, reset or redeploy the VM).")
REMEDY_NCCL = ("Rerun the all-reduce with nccl-tests on the node (`all_reduce_perf -b 8 -e 16G -f 2 -g <GPUs>`) and "
               "judge its table; a low figure on one node points at its GPUs' links or its HCAs (ibstat, nvidia-smi -q).")
REMEDY_FABRIC = ("Read the node's ports and links (`ibstat`, `ib_write_bw` per HCA, the kernel log's link events) "
                 "before the node takes multi-node jobs.")
MAX_LINE = 4096         # a line longer than any message the checks print is read by its first characters only
# distributed NHC's `{hostname} | {result}` (onetouch_nhc.sh's NHC-RESULT / NHC-DEBUG lines, sorted per host)
HOST = re.compile(r"^([A-Za-z0-9][\w.-]{0,253}) \| ")     # distributed NHC's `{hostname} | ` (nhc.py too)
_FAILED = re.compile(r"Health check failed:\s+(\S.*)")
_PASSED = re.compile(r"Health check passed:\s+(\S.*)")
_NEARING = re.compile(r"Nearing a failure threshold:\s+(\S.*)")
_NAMED = re.compile(r"^(?:ERROR:\s+)?(check_\w{1,64}|collect_\w{1,64}|run_ib_bw_gdr|ib_write):\s*(.*)$")
_RETURNED = re.compile(r"\bCheck (check_\w{1,64}) returned (\d+)\b")     # LBNL nhc: a check that ended without `die`
_NHCNA = re.compile(r"\bfau\w{0,3}code:\s*NHCNA\b", re.IGNORECASE)   # azure_hw_topology_check.nhc spells FauleCode
_CODE = re.compile(r"\bFau\w{0,3}Code:\s*\w+\s*$", re.IGNORECASE)
_LOGGED = re.compile(r"\b(check_\w{1,64}):\s+(\S.*)$")     # a check's `log` line: read only where it says it did not run

GPU_CHECKS = frozenset({
    "check_gpu_count", "check_gpu_xid", "check_gpu_ecc", "check_ecc", "check_SDBE_ecc", "collect_ecc_data",
    "check_nvsmi_healthmon", "check_gpu_bw", "check_nvBW_gpu_bw", "check_cuda_bw", "check_nvlink_status",
    "check_gpu_clock_throttling", "check_app_gpu_clocks", "collect_clocks_data", "check_gpu_persistence",
    "collect_persistence_data", "check_vbios_version", "check_hw_topology", "check_gpu_xgmi"})
NCCL_CHECKS = frozenset({
    "check_nccl_allreduce", "collect_nccl_allreduce_data", "check_nccl_allreduce_ib_loopback",
    "collect_nccl_allreduce_ib_loopback_data", "check_all_reduce_dependencies", "check_rccl_allreduce",
    "collect_rccl_allreduce_data"})
FABRIC_CHECKS = frozenset({
    "check_ib_bw_gdr", "check_ib_bw_non_gdr", "run_ib_bw_gdr", "ib_write", "check_ib_link_flapping",
    "determine_IB_devices", "map_IB_to_numa", "get_ib_numa_node"})
# the check could not do its work, in the words releases before FaultCodes (2024) printed: a dependency, a file or
# a setting missing, a SKU it has no thresholds for (azure_common.nhc, azure_cpu_stream.nhc, ...)
_SETUP = re.compile(r"\b(?:is not set|not set!|not found\.|does not exist|Missing one or more dependencies|"
                    r"No expected value provided|not (?:currently )?(?:supported|implemented)|failed to parse results|"
                    r"Port argument was not specified|Skipping GPU Xid error test|test skipped|not found, skipping|"
                    r"test failed to run)", re.IGNORECASE)
# a bandwidth check's verdict with no figure where its measurement goes: the check measured nothing (the test program
# not launched, or its table not printed), its own trouble, never a slow node nor a pass. Releases before 2024 compare
# as strings (`[[ $avg_bus_bw < $EXP ]]`: an empty figure dies `but measured  GB/s`); since, `bc` answers nothing for an
# empty figure and the check passes it (azure_nccl_allreduce.nhc: `test passed,  GB/s`; `IB BW= Gbps`)
_NO_FIGURE = re.compile(r"(?:\bmeasured|\bis|[=:,])[ \t]*(?:GB/s|Gbps|GB/sec)\b", re.IGNORECASE)
# run-health-checks.sh and distributed NHC: the run itself did not happen
_RUN_TROUBLE = re.compile(r"The vm SKU '[^'\n]{1,100}' is currently not supported by Azure health checks\.|"
                          r"The conf file \S{1,400} does not exist\.|(?<=\| )ERROR: No results reported\b|"
                          r"Failed to run health checks, no log file was generated")

# --- what a message proves (customTests/azure_gpu_ecc.nhc, check_ecc): `GPU id $i` is the line's place in
# `nvidia-smi --query-remapped-rows` output, checked to hold as many lines as `--query-gpu`'s: NVML index order.
# `die` fires only on a count `-gt 0` as bash reads it (a `[N/A]` reads as no number and never fires).
_REMAP_PENDING = re.compile(r"^GPU id (\d{1,3}): Row remap pending\b")
_REMAP_FAILED = re.compile(r"^GPU id (\d{1,3}): Row remap error\b")
# (volatile, aggregate) of `ecc.errors.uncorrected.{volatile,aggregate}.sram`: the volatile one is FACTS' field
_SRAM_UNCORR = re.compile(r"^GPU id (\d{1,3}): SRAM Uncorrectable ECC error count detected, \((\d{1,18}),(\d{1,18})\)")
# (uncorrected volatile, uncorrected aggregate, corrected volatile, corrected aggregate) of DRAM
_DRAM = re.compile(r"^GPU id (\d{1,3}): High DRAM Uncorrectable/correctable ECC error count detected, \((\d{1,18}),")
# azure_gpu_xid.nhc: `die 1 "$FUNCNAME: $GPU_XID_TEST: $xid_found_line"`, the kernel log's own line quoted
_XID = re.compile(r"^GPU Xid errors detected: (.*)$")
# azure_gpu_clock_throttling.nhc logs `clocks_event_reasons.active` (NVML's whole mask) for a GPU it calls throttled
_THROTTLED = re.compile(r"\bWarning: GPU (\d{1,3}) throttled, reason=0x([0-9a-fA-F]{1,16})\b")
# (a GPU's index and a count as the checks print them: digits past any GPU or count are no reading, and said)
# debug lines (distributed NHC's NHC-DEBUG dump; `dbg` in the checks): measured figures, no field holds them
_MEASURED = {
    "gpu": re.compile(r"\bDevice \d+ (?:Host to Device|Device to Host) reported bandwidth is \S+ GB/s|"
                      r"\b(?:H2D|D2H|P2P)_GPU_\d+(?:_\d+)?: \S+ GB/s"),
    "nccl": re.compile(r"\bMeasured Avg [NR]CCL allreduce bus BW \S+ GB/s[^\n]{0,60}|"
                       r"\bNCCL allreduce IB loopback bandwidth \S+ GB/s|\b[nr]ccl_all_red(?:_lb)?: \S+ +GB/s"),
    "fabric": re.compile(r"\bIB devices=[^\n]{1,200}?Measured IB BW \S+ Gbps|\bib_write_lb_\S+: \S+ Gbps"),
}


def _group(name: str) -> str | None:
    return ("gpu" if name in GPU_CHECKS else "nccl" if name in NCCL_CHECKS
            else "fabric" if name in FABRIC_CHECKS else None)


def _lines(text: str) -> list[tuple[str | None, str]]:
    """(host, line) for each line: distributed NHC's host taken off where it names one."""
    out = []
    for raw in text.splitlines():
        line = raw[:MAX_LINE]
        m = HOST.match(line)
        out.append((m.group(1), line[m.end():]) if m else (None, line))
    return out


def _message(line: str) -> tuple[str, str, str] | None:
    """(how, check, message) of a line that carries one of the checks' verdicts: `failed`, `passed`, `nearing`, or
    `returned` (LBNL's `Check X returned N`, the message its code)."""
    if m := _RETURNED.search(line):
        return "returned", m.group(1), m.group(2)
    for how, pattern in (("failed", _FAILED), ("passed", _PASSED), ("nearing", _NEARING)):
        if (m := pattern.search(line)) and (named := _NAMED.match(m.group(1).strip())):
            return how, named.group(1), named.group(2).strip()
        if m and how == "failed" and m.group(1).startswith("Bandwidth is low on device"):
            return how, "check_cuda_bw", m.group(1).strip()      # before 2024 (distributed_nhc/README.md)
    if (m := _LOGGED.search(line)) and _SETUP.search(m.group(2)):     # `Skipping GPU Xid error test.`, ...
        return "logged", m.group(1), m.group(2).strip()
    if "check_SDBE_ecc: Retirement Table Full" in line:          # `die 1 "ERROR: $IFS$error_msg"`: a line of its own
        return "failed", "check_SDBE_ecc", line[line.index("Retirement Table Full"):].strip()
    return None


def _is_trouble(how: str, name: str, message: str) -> bool:
    if how == "logged":
        return True
    if how == "returned":
        return message in ("126", "127")          # the shell's "cannot execute" / "command not found"
    if name == "check_all_reduce_dependencies":
        return True
    return bool(_NHCNA.search(message) or _SETUP.search(message) or _NO_FIGURE.search(message))


def _said(host: str | None, what: str) -> str:
    return f"{host}: {what}" if host else what


# a literal every line _read takes holds (its patterns' own words): a text with none of them is read in one scan per
# word, not each line by a dozen patterns three times over (hunt97: a 20,000-line log spent 1.2 s here)
_WORDS = ("check_", "Health check", "Nearing a failure threshold", "Healthy", "The vm SKU", "The conf file",
          "No results reported", "Failed to run health checks", "reported bandwidth is", "_GPU_", "CCL allreduce",
          "ccl_all_red", "Measured IB BW", "ib_write_lb_", "throttled, reason=")


def _read(text: str, group: str) -> tuple[list[tuple[str | None, str, str]], list[str], list[str]]:
    """The group's messages a field may hold (host, check, message), what is said (a finding no field holds), and
    the tool's own trouble."""
    facts: list[tuple[str | None, str, str]] = []
    said: list[str] = []
    trouble: list[str] = []
    if not any(word in text for word in _WORDS):
        return facts, said, trouble
    verdicts: list[tuple[str | None, str, str]] = []
    skipped: set[tuple[str | None, str]] = set()
    for host, line in _lines(text):
        if group == "gpu" and (m := _RUN_TROUBLE.search(line if host is None else f"| {line}")):
            trouble.append(_said(host, m.group(0)))
            continue
        if group == "gpu" and host is not None and line.strip() == "Healthy":
            said.append(_said(host, "Healthy (distributed NHC: every check passed)"))
            continue
        if (m := _MEASURED[group].search(line)) and not _FAILED.search(line):
            said.append(_said(host, f"measured: {m.group(0)}"))
            continue
        if group == "gpu" and (t := _THROTTLED.search(line)):
            facts.append((host, "check_gpu_clock_throttling", t.group(0)))
            continue
        found = _message(line)
        if found is None or _group(found[1]) != group:
            continue
        how, name, message = found
        if _is_trouble(how, name, message):
            trouble.append(_said(host, f"{name}: {message}" if how != "returned" else line.strip()))
            skipped.add((host, name))
        elif how == "failed":
            facts.append((host, name, _CODE.sub("", message).rstrip(" .")))
        else:
            word = {"passed": "passed", "nearing": "warned near its threshold", "returned": "returned"}[how]
            verdicts.append((host, name, _said(host, f"{name} {word}: {message}")))
    # a check that logged it skipped its work (azure_gpu_xid.nhc: no kernel log; azure_ib_link_flapping.nhc: a log
    # file missing) proves nothing by a pass of the same host: its trouble is said, never that pass
    said += [text for host, name, text in verdicts if (host, name) not in skipped]
    return facts, said, trouble


def _device(devices: dict[int, dict[str, Any]], index: int) -> dict[str, Any]:
    return devices.setdefault(index, {"index": index})


def _remap(dev: dict[str, Any]) -> dict[str, Any]:
    return dev.setdefault("row_remap", {"correctable": None, "uncorrectable": None, "pending": None, "failed": None})


def _fill(name: str, message: str, devices: dict[int, dict[str, Any]], xids: list[dict[str, Any]]) -> bool:
    """Read one GPU failure into the facts; False where no field holds what it says (it is said instead)."""
    if name in ("check_gpu_ecc", "check_ecc"):
        if m := _REMAP_PENDING.match(message):
            _remap(_device(devices, int(m.group(1))))["pending"] = 1
            return True
        if m := _REMAP_FAILED.match(message):      # remapped_rows.failure > 0: a remap failed (FACTS' RowRemap)
            _remap(_device(devices, int(m.group(1))))["failed"] = 1
            return True
        if m := _SRAM_UNCORR.match(message):       # the volatile count read; the aggregate (lifetime) said as well
            _device(devices, int(m.group(1)))["ecc_sram_uncorrectable"] = int(m.group(2))
            return False
        if m := _DRAM.match(message):              # the volatile uncorrectable read; the other three said
            _device(devices, int(m.group(1)))["ecc_dram_uncorrectable"] = int(m.group(2))
            return False
        return False
    if name == "check_gpu_xid" and (m := _XID.match(message)):
        events = kernel.parse(m.group(1)).get("xid_events") or []
        xids.extend(events)
        return bool(events)
    if name == "check_gpu_clock_throttling" and (m := _THROTTLED.search(message)):
        mask = int(m.group(2), 16)
        if mask > 0x1FF:        # a bit nvml.h's nine do not name: not read
            return False
        dev = _device(devices, int(m.group(1)))
        dev["throttle_reasons"], dev["throttle_reasons_read"] = mask, 0x1FF
        return True
    return False


def _one_host(facts: list[tuple[str | None, str, str]]) -> str | None:
    """The host whose failures fill the facts: the first named (FACTS.md: a folder holds one host)."""
    return facts[0][0] if facts else None


def _gpu(text: str) -> tuple[dict[str, Any], list[str], list[str]]:
    facts, said, trouble = _read(text, "gpu")
    devices: dict[int, dict[str, Any]] = {}
    xids: list[dict[str, Any]] = []
    host = _one_host(facts)
    for where, name, message in facts:
        if where != host or not _fill(name, message, devices, xids):
            said.append(_said(where, f"{name} failed: {message}"))
    read: dict[str, Any] = {"torch": None, "driver": None,
                            "devices": [devices[i] for i in sorted(devices)] or None, "xid_events": xids or None}
    return read, said, trouble


def detect_gpu(text: str) -> bool:
    return _any(text, "gpu")


def _any(text: str, group: str) -> bool:
    facts, said, trouble = _read(text, group)
    return bool(facts or said or trouble)


def parse_gpu(text: str) -> dict[str, Any]:
    return _gpu(text)[0]


def unread_gpu(text: str) -> list[str]:
    return list(dict.fromkeys(_gpu(text)[1]))


def trouble_gpu(text: str) -> list[str]:
    return list(dict.fromkeys(_gpu(text)[2]))


def detect_nccl(text: str) -> bool:
    """Not beside nccl-tests' own table: that run is judged by its rows (size, count, time); the check's one figure
    (no size) is not a second verdict of the node's all-reduce (h200-x8-aznhc-...-480-busbw: the check's own launch
    measured 15 GB/s, nccl-tests by hand 480)."""
    return _any(text, "nccl") and not nccltests.detect(text)


def parse_nccl(text: str) -> dict[str, Any]:
    """No field: NHC's all-reduce lines have no size, count or time (a SizeRow needs them)."""
    return {}


def _all_said(text: str, group: str) -> list[str]:
    facts, said, _ = _read(text, group)
    return list(dict.fromkeys(said + [_said(host, f"{name} failed: {message}") for host, name, message in facts]))


def unread_nccl(text: str) -> list[str]:
    return _all_said(text, "nccl")


def trouble_nccl(text: str) -> list[str]:
    return list(dict.fromkeys(_read(text, "nccl")[2]))


def detect_fabric(text: str) -> bool:
    return _any(text, "fabric")


def parse_fabric(text: str) -> dict[str, Any]:
    """No field: a measured write bandwidth, a flapping count name no port's state or rate."""
    return {"adapters": None}


def unread_fabric(text: str) -> list[str]:
    return _all_said(text, "fabric")


def trouble_fabric(text: str) -> list[str]:
    return list(dict.fromkeys(_read(text, "fabric")[2]))
