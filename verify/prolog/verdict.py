"""What a preflight report says, as one verdict: pass, a fault with its owner, or not assessed.

Pure: no process, no file. "Not assessed" is the tool's own trouble (no report, a report that contradicts
itself, an interrupted or timed-out verify, a check without an owner, a figure the gate refused): it is
reported and counted, and never drains a node. A host-owned timeout is a fault only once confirmed.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..codes import CODES, OWNERS
from ..findings import RANK
from .decimals import DECIMAL as DECIMAL
from .decimals import decimal as decimal
from .decimals import finite_positive as finite_positive
from .deviceshape import container_problem, shape_problem
from .hidden import hidden_failure
from .passfacts import pass_problem
from .ranks import count_problem, ranks_problem

# The prolog's exit statuses (docs/prolog-and-fleet.md "torchimages-prolog"): one for each outcome, so a script can tell them apart.
EXIT_PASS = 0            # healthy (or, as Slurm's Prolog=, a fault that is the job's or the image's)
EXIT_FAULT = 1           # a host fault (the node drained), or the job's/image's fault in a first step
EXIT_USAGE = 2           # bad arguments or environment: one line, nothing done
# The prolog's own "not assessed" codes (its trouble or a setting of ours, never the node's): they never drain, so
# they are no check's codes in verify/codes.py; docs/prolog.md names them and tests/test_docs.py checks it against this.
NOT_ASSESSED_CODES = frozenset({
    "BUDGET_TOO_SMALL", "CONFIG_ERROR", "GPU_COUNT_UNPROVEN", "GPU_NOT_ASSESSED", "KERNEL_LOG_UNREAD", "OWNER_MISSING",
    "PREFLIGHT_BUSY", "PREFLIGHT_EMPTY", "PREFLIGHT_INTERRUPTED", "PREFLIGHT_NO_REPORT", "PREFLIGHT_TIMEOUT", "PROLOG_CRASHED",
    "PROLOG_INTERRUPTED", "PROLOG_OVERRAN", "REPAIR_UNPROVEN", "REPORT_INVALID"})
EXIT_NOT_ASSESSED = 3    # no verdict could be reached: the node is left in service
EXIT_BREAKER = 4         # a host fault, but draining it would pass the breaker's share: not drained
EXIT_REFUSED = 5         # --revalidate refused: not drained by torchimages, flagged for inspection, still failing

PASS, FAULT, NOT_ASSESSED = "pass", "fault", "not-assessed"
REASON_PREFIX = "torchimages:"
# verify codes that say the measurement, not the node, went wrong
UNJUDGED_CODES = frozenset({"MEASUREMENT_INVALID", "FACTS_INVALID", "FACTS_INCOMPLETE", "INTERRUPTED"})
TIMEOUT_CODES = frozenset({"CHECK_TIMEOUT", "NCCL_TIMEOUT"})
INTERRUPTED_CODES = frozenset({"PREFLIGHT_INTERRUPTED", "PROLOG_INTERRUPTED"})   # a signal: our trouble, no verdict
STALLED = "PREFLIGHT_TIMEOUT"      # a check that outran its budget: a run towards --hang-runs
# evidence that a hang is the hardware's: a lost GPU, an Xid (under its own code where the one Xid catalog names its
# condition: an ECC error, a failed row remap), a reset the driver asks for
HUNG_HARDWARE = frozenset({"GPU_LOST", "XID_ERROR", "GPU_RESET_REQUIRED", "ECC_UNCORRECTABLE", "ROW_REMAP_FAILED"})
STATUSES = frozenset({"pass", "warn", "skip", "fail"})
# Codes verify only ever gives their catalog's owner (verify/codes.py), and codes it only ever writes on a failed check:
# read from its source by tests/codewalk.py (tests/test_report_owners.py holds these to what it finds). A report that
# gives one another owner (ECC_UNCORRECTABLE to the job: the node kept in service) or another status (GPU_LOST as a
# warning: a pass) is none verify wrote. scripts/fleet/plausible.py holds the same two sets on the host side.
CATALOG_OWNED = frozenset({
    "ARCH_NOT_IN_BUILD", "ARCH_PTX_JIT", "ARROW_COPIED", "ARROW_SLOW", "CHECK_TIMEOUT", "COMPUTE_LOW",
    "CUDA_KERNEL_FAULT", "DEVICE_COUNT_MISMATCH", "DISK_FULL", "DISTRIBUTED_UNAVAILABLE", "DRIVER_TOO_OLD",
    "ECC_UNCORRECTABLE", "EMULATION_STALLED", "FABRIC_ADAPTERS_MISSING", "FABRIC_EFA_PLUGIN_MISSING", "FABRIC_MIXED_ADAPTERS", "FABRIC_NONE", "FABRIC_NOT_PASSED",
    "FABRIC_PORT_DOWN", "FABRIC_RATE_DEGRADED", "FABRIC_USERSPACE_MISSING", "FACTS_INCOMPLETE", "FACTS_INVALID",
    "GPU_LOST", "GPU_OUT_OF_MEMORY", "GPU_RESET_REQUIRED", "HDF5_BROKEN", "HDF5_MISMATCH", "HEALTH_NOT_ASSESSED",
    "IMAGE_DECODE_FAILED", "IMAGE_DECODE_WRONG", "INTERRUPTED", "KERNEL_FAILED", "MEASUREMENT_INVALID",
    "NCCL_NOT_EXERCISED", "NCCL_SINGLE_RANK", "NCCL_WRONG_RESULT", "NVLINK_DOWN", "NVLINK_ERRORS",
    "PACKAGE_MISSING", "PCIE_DOWNGRADED", "RETIREMENT_PENDING", "ROW_REMAP_FAILED", "SDC_MISMATCH",
    "SHM_TOO_SMALL_FOR_LOADER", "THROTTLED", "TORCHVISION_CUDA_MISMATCH", "TORCHVISION_IMPORT_FAILED",
    "TORCHVISION_MISMATCH", "TORCHVISION_OPS_MISSING", "TORCHVISION_OPS_WRONG", "TORCH_IMPORT_FAILED",
    "TRAIN_LOSS_NOT_FALLING", "TRAIN_LOSS_NOT_FINITE", "TRAIN_REPLICA_MISMATCH", "TRAIN_SLOW",
    "TRANSFORMS_FAILED", "TRANSFORMS_WRONG"})
FAILURES_ONLY = frozenset({
    "ARROW_COPIED", "CHECK_CRASHED", "CHECK_TIMEOUT", "DISK_FULL", "FABRIC_EFA_PLUGIN_MISSING",
    "FABRIC_MEMLOCK_LOW", "FABRIC_USERSPACE_MISSING", "GPU_LOST", "GPU_RESET_REQUIRED", "HDF5_BROKEN",
    "IMAGE_DECODE_WRONG", "KERNEL_FAILED", "LOADER_FAILED", "MEASUREMENT_INVALID", "NCCL_FAILED", "NCCL_TIMEOUT",
    "NCCL_WRONG_RESULT", "ROW_REMAP_FAILED", "SDC_MISMATCH", "SHM_TOO_SMALL", "TORCHVISION_CUDA_MISMATCH",
    "TORCHVISION_IMPORT_FAILED", "TORCHVISION_OPS_MISSING", "TORCHVISION_OPS_WRONG", "TORCH_IMPORT_FAILED",
    "TRAIN_FAILED", "TRAIN_LOSS_NOT_FALLING", "TRAIN_LOSS_NOT_FINITE", "TRAIN_REPLICA_MISMATCH",
    "TRANSFORMS_FAILED", "TRANSFORMS_WRONG"})
# a check's name as verify writes one (gpu, shm, nccl): the history and Slurm's reason carry it
CHECK_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
LINE_MAX = 1000                 # characters of a summary in the verdict's line (the history's detail keeps as many)
MAX_DEVICES = 4096              # NVML or torch devices on one node: verify's own ceiling (gpu/verdict.py)


@dataclass(frozen=True)
class Verdict:
    kind: str                    # PASS, FAULT or NOT_ASSESSED
    code: str | None = None
    owner: str | None = None     # host, image or job (FAULT only)
    summary: str = ""
    check: str | None = None     # the check it came from, where one did
    confirmed: bool = True       # False: a host-owned timeout not yet confirmed by a second run
    stalled: bool = False        # a pass whose timed-out checks ended only alone, with more time (a confirmation)

    @property
    def drains(self) -> bool:
        return self.kind == FAULT and self.owner == "host" and self.confirmed

    def line(self) -> str:
        """The one line a person or a script reads, its summary at most LINE_MAX characters: a report's summary of
        20 MB (under the report's cap) went whole into slurmd's log on every job's prolog."""
        summary = one_line(self.summary)
        if len(summary) > LINE_MAX:
            summary = f"{summary[:LINE_MAX]}... ({len(summary) - LINE_MAX} more characters)"
        if self.kind == PASS:
            return f"prolog: PASS {summary}".rstrip()
        who = f" {self.owner}" if self.owner else ""
        where = f" {self.check}" if self.check else ""
        return f"prolog: {self.kind.upper()} {self.code}{who}{where}: {summary}"


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\x20-\x7e]+", " ", text)).strip()


def not_assessed(code: str, summary: str, check: str | None = None) -> Verdict:
    return Verdict(NOT_ASSESSED, code, None, summary, check)


def _shape_problem(report: Any) -> str | None:
    if not isinstance(report, dict):
        return "the report is not a JSON object"
    checks = report.get("checks")
    if not isinstance(checks, list):
        return "the report has no list of checks"
    if not checks:
        return "the report lists no checks: nothing was judged"
    # report schema 1 (verify 1.x) has no codes: only schema 2 codes every result that did not pass
    coded = not (type(report.get("schema_version")) is int and report["schema_version"] == 1)
    for c in checks:
        if not isinstance(c, dict) or not isinstance(c.get("status"), str) or c["status"] not in STATUSES \
                or not isinstance(c.get("name"), str):      # a list as a status is unhashable: no crash of ours
            return f"a check entry is malformed: {str(c)[:80]}"
        if why := _code_problem(c, coded):
            return why
    names = Counter(c["name"] for c in checks)
    if twice := next((n for n, k in names.items() if k > 1), None):
        # verify writes one result per check: two (a pass beside a skip, 8 GPUs beside 0) cannot both be true
        return f"the report holds the {twice[:40]} check {names[twice]} times: one result per check"
    failed = any(c["status"] == "fail" for c in checks)
    if not isinstance(report.get("status"), str) or report["status"] not in STATUSES:
        return f"the report's status {report.get('status')!r} is none of {sorted(STATUSES)}"
    # verify's report.overall: "fail" when a check failed or the run was cut off (a signal before any check ended
    # leaves every check skipped INTERRUPTED, under "fail"): verify's own report, an interrupted run, not a forgery
    # (and an interruption is never a pass, whatever its status says: decide() reads it as interrupted)
    if failed != (report["status"] == "fail") and not (report["status"] == "fail" and report.get("interrupted")):
        return f"the report's status is {report['status']} but {'a' if failed else 'no'} check failed"
    return next((why for c in checks if (why := _impossible_pass(c))), None) or ranks_problem(checks) \
        or pass_problem(checks, own_names(report))


def _code_problem(c: dict[str, Any], coded: bool = True) -> str | None:
    """Why a check's name or code is none verify writes, or None. verify codes only what it did not pass, and only
    with a key of its catalog (verify/codes.py, which only grows): a code outside it (BANANA, gpu_lost, 79, one of
    5 MiB) would drain a node under a reason the breaker and return to service cannot read as ours."""
    if not CHECK_NAME.fullmatch(c["name"]):
        return f"a check named {one_line(repr(c['name']))[:60]}, which is no check of verify's"
    code = c.get("code")
    if c["status"] == "pass" and code is not None:
        return f"its {c['name']} check passes with code {one_line(str(code))[:40]}: verify codes only what it did " \
               "not pass"
    if c["status"] == "pass" and c.get("owner") is not None:     # an owner is whose fault it is: a pass has none
        return f"its {c['name']} check passes with owner {one_line(str(c['owner']))[:20]}: verify names an owner " \
               "only for what it did not pass"
    if code is not None and not (isinstance(code, str) and code in CODES):
        return f"its {c['name']} check carries code {one_line(repr(code))[:60]}, which is no code of verify's " \
               "(verify/codes.py)"
    # report schema 2: fail, warn and skip each carry one; schema 1 (verify 1.x: `coded` False) has no codes at all
    if c["status"] != "pass" and code is None and coded:
        return f"its {c['name']} check is {c['status']} without a code: verify codes every result it did not pass"
    owner = c.get("owner")
    if code in CATALOG_OWNED and owner is not None and owner != CODES[code].owner:
        return f"its {c['name']} check gives {code} to {one_line(repr(owner))[:20]}: verify gives it only to its " \
               f"catalog's owner ({CODES[code].owner})"
    if code in FAILURES_ONLY and c["status"] != "fail":
        return f"its {c['name']} check is {c['status']} with {code}: verify writes {code} only on a failed check"
    return None


def whole_count(value: Any) -> int | None:
    """A count verify wrote as a metric (8 or 8.0: result.Metric holds floats) as an int of 1 or more, or None: not a
    number, not whole, not finite, or below 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value == int(value) and value >= 1 else None


# a passing (or warning) check whose own figure says it cannot pass: (check, metric) -> the test a value fails, and
# why. scripts/fleet/plausible.py holds the same rule for the fleet report and `make isolate` (the host side never
# imports verify): tests/test_report_plausible.py keeps the three one rule on one table of reports.
BUSBW_MAX_GBPS = 10_000.0       # GB/s of bus bandwidth above any link (NVLink5: 900 GB/s per GPU)
CANNOT_PASS: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("nccl", "wrong"): (lambda v: v > 0, "wrong elements in an all-reduce fail it"),
    ("nccl", "busbw_ratio"): (lambda v: v > 3.0, "over 3x its GPU's baseline is no measurement"),
    ("nccl", "busbw_max"): (lambda v: v > BUSBW_MAX_GBPS, "above any link (NVLink5: 900 GB/s per GPU)")}
# a gpu check passes only on the devices it judged: 0 NVML or torch devices on a pass is none verify writes. A warning
# may count 0 (NVML's devices not recorded: HEALTH_NOT_ASSESSED; CUDA up, NVML silent: GPU_NOT_VISIBLE), as verify
# writes it: the rule must refuse no report verify writes (scripts/fleet/plausible.py PASS_NEEDS, the same table)
PASS_NEEDS: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("gpu", "nvml_devices"): (lambda v: whole_count(v) is None or v > MAX_DEVICES,
                              "no count of devices a gpu check passes on (a whole number, 1 to 4096)"),
    ("gpu", "torch_devices"): (lambda v: whole_count(v) is None or v > MAX_DEVICES,
                               "no count of devices a gpu check passes on (a whole number, 1 to 4096)")}


# a figure no check of verify's writes on any status (scripts/fleet/plausible.py NEVER_WRITTEN, the same rule): the
# gpu check counts its devices (len() of a list, 0 on a failure that found none), so 8.5, -1 or 5,000 is no count of
# it, on a failure as on a pass (the prolog drained on a failed check's 8.5 GPUs that the fleet report refused)
NEVER_WRITTEN: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("gpu", "nvml_devices"): (lambda v: v != int(v) or not 0 <= v <= MAX_DEVICES,
                              "no count of devices (a whole number, 0 to 4096)"),
    ("gpu", "torch_devices"): (lambda v: v != int(v) or not 0 <= v <= MAX_DEVICES,
                               "no count of devices (a whole number, 0 to 4096)")}


# the most a rate of each unit can be on one node, and never below 0, on any status (scripts/fleet/plausible.py
# RATE_MOST, the same table: a passing report with a negative busbw passed here while the fleet report refused it)
RATE_MOST = {"GB/s": 1e5, "GiB/s": 1e5, "MB/s": 1e8, "MiB/s": 1e8, "TFLOP/s": 1e5, "samples/s": 1e9,
             "images/s": 1e9, "tokens/s": 1e12, "Gb/s": 8e5}     # Gb/s: the fabric check's link_gbps, bits
# nor is a time, a ratio of two rates or an error's size (scripts/fleet/plausible.py NON_NEGATIVE; counts: ranks.py)
NON_NEGATIVE = ("s", "x", "abs")


def _rate_problem(name: str, key: str, m: dict[str, Any], value: float) -> str | None:
    most = RATE_MOST.get(str(m.get("unit")))
    if most is not None and value > most:
        return f"its {name} check's {key[:40]} = {value:g} {m['unit']} is impossible (above {most:g})"
    if (most is not None or m.get("unit") in NON_NEGATIVE) and value < 0:
        return f"its {name} check's {key[:40]} = {value:g} {str(m['unit'])[:20]} is negative: verify writes none"
    return None


def _impossible_pass(c: dict[str, Any]) -> str | None:
    """Why a check's own figures cannot be true, or None: a figure that is no finite number (verify writes none), a
    pass or a warning its own figure contradicts (CANNOT_PASS), a gpu pass whose NVML devices disagree with its
    count. Refused as a report no verify writes, never a pass and never a drain."""
    metrics: dict[str, Any] = c["metrics"] if isinstance(c.get("metrics"), dict) else {}
    passing = c["status"] in ("pass", "warn")
    if shape := container_problem(c):        # a list where verify writes an object hid every figure in it
        return f"its {c['name']} check ({c['status']}) with {shape}"
    for key, m in metrics.items():
        value = m.get("value") if isinstance(m, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"its {c['name']} check {c['status']}s with {str(key)[:40]} = {str(value)[:20]}: verify writes " \
                   "every figure as a finite number"
        if isinstance(m, dict) and (why := _rate_problem(c["name"], str(key), m, value)):
            return why
        fails, why = CANNOT_PASS.get((c["name"], str(key)), (None, ""))
        if passing and fails is not None and fails(value) and not across_nodes(c, str(key)):
            return f"its {c['name']} check {_does(c['status'])} with {str(key)[:40]} = {value}: {why}"
        fails, why = PASS_NEEDS.get((c["name"], str(key)), (None, ""))
        if c["status"] == "pass" and fails is not None and fails(value) and not no_device_read(c):
            return f"its {c['name']} check passes with {str(key)[:40]} = {value}: {why}"
        never, said = NEVER_WRITTEN.get((c["name"], str(key)), (None, ""))
        if never is not None and never(value):
            return f"its {c['name']} check's {str(key)[:40]} = {value:g} is {said}: no figure verify writes"
        if isinstance(m, dict) and (why := count_problem(c["name"], str(key), m, value)):
            return why
    return (_devices_problem(c, metrics) if passing and c["name"] == "gpu" else None) or hidden_failure(c)


# what NVML writes when it cannot read a board's UUID (nvidia-smi's "N/A"): no identity, so two of them are no one
# GPU listed twice. The gpu check's own judge (verify/checks/gpu/contradictions.py) skips the same words, and a pass
# it wrote on two "N/A" boards was refused here forever (tests/test_report_plausible.py holds the two equal)
NO_UUID = frozenset({"", "n/a", "na", "unknown", "none"})


def board_uuid(text: Any) -> str | None:
    """A UUID as the gpu check compares them (gpuidentity.norm_uuid: GPU-/MIG- prefix, dashes and case dropped), or
    None for no identity (NO_UUID)."""
    t = str(text or "").strip().lower()
    for prefix in ("gpu-", "mig-"):
        t = t.removeprefix(prefix)
    t = t.replace("-", "")
    return None if t in NO_UUID else t


def across_nodes(c: dict[str, Any], metric: str) -> bool:
    """Whether a busbw_ratio past 3x may be a measurement: an all-reduce across nodes is judged against the
    inter-node floor (verify/baselines.json: one NIC per node; an 8-rail fabric is 9x it, and verify passes it), a
    ratio only one node's NVLink baseline bounds. verify says its nodes in the check's data (nccl/verdict.py); a report
    of a verify that did not, a torchrun group's (its `rank`), may be across nodes too. One node: no measurement."""
    if c.get("name") != "nccl" or metric != "busbw_ratio":
        return False
    raw = c.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    nodes = data.get("nodes", "unsaid")
    if nodes == "unsaid":
        return data.get("rank") is not None
    return isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1


def no_device_read(c: dict[str, Any]) -> bool:
    """A gpu pass on 0 NVML devices that verify writes: its partial judgement (NVML's devices not recorded, no torch
    device seen, a clean kernel log: "the devices themselves not assessed") counts nvml_devices 0, lists no device and
    writes no torch_devices. The rule refused it, and with it every other check's fault in that report; decide() reads
    it as no GPU judged (GPU_NOT_ASSESSED where Slurm allocated GPUs). scripts/fleet/plausible.py holds the same."""
    raw, data = c.get("metrics"), c.get("data")
    metrics: dict[str, Any] = raw if isinstance(raw, dict) else {}
    nvml = metrics.get("nvml_devices")
    listed = data.get("devices") if isinstance(data, dict) else None
    return c.get("name") == "gpu" and isinstance(nvml, dict) and nvml.get("value") == 0 \
        and "torch_devices" not in metrics and isinstance(listed, list) and not listed


def _does(state: str) -> str:
    return "passes" if state == "pass" else f"{state}s"


def board_bus(text: Any) -> str | None:
    """A PCI bus id as the gpu check compares them (gpuidentity.norm_bus: case, and a domain of zeros, dropped), or
    None for none (NO_UUID's words): NVML gives each board its own."""
    t = str(text or "").strip().lower()
    parts = t.split(":")
    if len(parts) == 3:
        domain = parts[0].lstrip("0")
        t = (domain + ":" if domain else "") + parts[1] + ":" + parts[2]
    return None if t in NO_UUID else t


def _devices_problem(c: dict[str, Any], metrics: dict[str, Any]) -> str | None:
    """Why a passing gpu check's NVML devices (its data, as verify writes them) cannot be true, or None: a list of
    another length than the nvml_devices it counted, one GPU (one UUID) listed twice, or a GPU listed lost."""
    data = c.get("data") if isinstance(c.get("data"), dict) else {}
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, list):
        return None
    if shape := shape_problem(devices):       # no device verify lists: none of its facts below can be read
        return f"its gpu check {_does(c['status'])} with {shape}"
    counted = metrics.get("nvml_devices")
    counted = counted.get("value") if isinstance(counted, dict) else None
    # any number, 0 too (a warning may count none): verify counts len() of the list (plausible.py holds the same)
    if isinstance(counted, (int, float)) and not isinstance(counted, bool) and len(devices) != counted:
        return f"its gpu check {_does(c['status'])} with nvml_devices = {counted:g} and {len(devices)} NVML device(s) listed"
    uuids = [u for d in devices if isinstance(d, dict) and (u := board_uuid(d.get("uuid")))]
    if len(set(uuids)) != len(uuids):
        return f"its gpu check {_does(c['status'])} with one GPU (UUID) listed twice among its NVML devices"
    # NVML numbers its devices 0 .. count-1, each once (nvmlDeviceGetHandleByIndex): verify's facts contract refuses an
    # index twice ("devices holds index N more than once"), so a pass listing one twice is no report verify writes
    indices = [i for d in devices if isinstance(d, dict) and isinstance(i := d.get("index"), int)
               and not isinstance(i, bool)]
    if (twice := next((i for n, i in enumerate(indices) if i in indices[:n]), None)) is not None:
        return f"its gpu check {_does(c['status'])} with NVML device index {twice} listed twice among its NVML devices"
    buses = [b for d in devices if isinstance(d, dict) and (b := board_bus(d.get("pci_bus_id")))]
    if len(set(buses)) != len(buses):
        return f"its gpu check {_does(c['status'])} with one GPU (PCI bus id) listed twice among its NVML devices"
    if gone := next((d for d in devices if isinstance(d, dict) and d.get("lost") is True), None):
        # verify fails a check on any lost GPU (GPU_LOST, gpu/gpuhealth.py): listed lost beside a pass, it hid one
        return f"its gpu check {_does(c['status'])} with NVML device {one_line(str(gone.get('index')))[:8]} listed lost: verify " \
               "fails it (GPU_LOST)"
    return None


def _rank(c: dict[str, Any]) -> tuple[int, int]:
    # a measurement that went wrong (MEASUREMENT_INVALID is the host's by its catalog) says nothing of another
    # check's proven fault: it comes last, so it never hides one (wrong all-reduce results beside it drain the node)
    owner = c.get("owner")
    order = 3 if str(c.get("code")) in UNJUDGED_CODES else 0 if owner == "host" else 1 if owner in OWNERS else 2
    return order, RANK.get(str(c.get("code")), 10)


def decide(report: Any, gpus_expected_by_scheduler: bool = False, gpus_allocated: bool | None = None) -> Verdict:
    """The verdict a (complete) preflight report gives. A failed check whose owner is missing or unknown, or whose
    code says the measurement went wrong, is not assessed; the host's faults come first, then the image's and the
    job's. Under Slurm's Prolog= (gpus_expected_by_scheduler), GPUs Slurm allocated but none visible on the host
    itself are the host's: no container or job setting stands between them. Where Slurm allocated GPUs
    (`gpus_allocated`, by default as gpus_expected_by_scheduler), a report that did not judge them is no pass."""
    if problem := _shape_problem(report):
        return not_assessed("REPORT_INVALID", problem)
    failed = sorted((c for c in report["checks"] if c["status"] == "fail"), key=_rank)
    if report.get("interrupted"):
        # a check that ended before the signal and proved a host fault (a lost GPU) is evidence all the same: the
        # node is drained for it; anything less in a cut run (a timeout, the tool's trouble, a pass) is unjudged
        failed = [c for c in failed if c.get("owner") == "host" and str(c.get("code")) not in UNJUDGED_CODES
                  and str(c.get("code")) not in TIMEOUT_CODES]
        if not failed:
            return not_assessed("PREFLIGHT_INTERRUPTED", f"verify was interrupted by {report['interrupted']}")
    if not failed:
        judged = [c for c in report["checks"] if c["status"] in ("pass", "warn")]
        if not judged:
            return not_assessed("PREFLIGHT_EMPTY", "every check skipped: nothing was judged")
        allocated = gpus_expected_by_scheduler if gpus_allocated is None else gpus_allocated
        if allocated and not any(c["name"] == "gpu" for c in judged):
            # Slurm gave this node GPUs (SLURM_GPUS_ON_NODE / SLURM_JOB_GPUS): a report that did not judge them says
            # nothing of them, so it is no pass (and, the tool's own gap, no fault either)
            gpu = next((c for c in report["checks"] if c["name"] == "gpu"), None)
            said = "holds no gpu check" if gpu is None else f"skipped the gpu check ({gpu.get('code') or 'no code'})"
            return not_assessed("GPU_NOT_ASSESSED", f"Slurm allocated GPUs on this node, but the report {said}: "
                                "its GPUs were not judged", "gpu")
        if allocated and (unread := health_unread(next(c for c in judged if c["name"] == "gpu"))):
            # the GPUs answered and ran work, but NVML read none of a GPU's health (ECC, remaps, clocks...) or its
            # cooling: a warning verify itself calls "not assessed, not healthy". No pass (a repaired ECC fault
            # resumed on it unproven), and no drain either: the tool could not see (docs/cluster-safety.md)
            return not_assessed("GPU_NOT_ASSESSED", f"Slurm allocated GPUs on this node, and the gpu check could not "
                                f"read their health: {unread}", "gpu")
        return Verdict(PASS, summary=f"{len(judged)} check(s) passed")
    c = failed[0]
    code, owner, name = str(c.get("code") or ""), c.get("owner"), c["name"]
    summary = str(c.get("summary") or "")
    if code == "GPU_NOT_VISIBLE" and gpus_expected_by_scheduler and owner == "job":
        owner = "host"            # not when the image is at fault (a CPU build of torch): that stays the image's
    if owner not in OWNERS or not code:
        return not_assessed("OWNER_MISSING", f"{name} failed ({code or 'no code'}) without an owner: {summary}", name)
    if code in UNJUDGED_CODES:
        return not_assessed(code, summary, name)
    hung_evidence = any(str(x.get("code")) in HUNG_HARDWARE for x in failed)
    confirmed = not (owner == "host" and code in TIMEOUT_CODES) or hung_evidence
    return Verdict(FAULT, code, owner, summary, name, confirmed)


def health_unread(check: dict[str, Any]) -> str | None:
    """What of a judged gpu check's GPUs verify could not assess (HEALTH_NOT_ASSESSED: its code, or a finding of it
    behind a warning that outranks it, THROTTLED on another GPU), or None."""
    if check.get("code") == "HEALTH_NOT_ASSESSED":
        return one_line(str(check.get("summary") or "HEALTH_NOT_ASSESSED"))[:300]
    if no_device_read(check):
        return "it judged no NVML device (nvml_devices 0): " + one_line(str(check.get("summary") or ""))[:300]
    data = check.get("data") if isinstance(check.get("data"), dict) else {}
    findings = data.get("findings") if isinstance(data, dict) else None
    for f in findings if isinstance(findings, list) else []:
        if isinstance(f, dict) and f.get("code") == "HEALTH_NOT_ASSESSED":
            return one_line(str(f.get("text") or "HEALTH_NOT_ASSESSED"))[:300]
    return None


def timed_out(report: dict[str, Any]) -> list[str]:
    """The checks of a report that failed with a host-owned timeout: the ones a confirmation runs again."""
    return [c["name"] for c in report.get("checks") or [] if isinstance(c, dict) and c.get("status") == "fail"
            and c.get("owner") == "host" and c.get("code") in TIMEOUT_CODES]


def merge(report: dict[str, Any], rerun_report: dict[str, Any]) -> dict[str, Any]:
    """The report with the confirmation run's checks in place of the ones it ran again (and its status to match)."""
    # a name that is no string (a list: unhashable) is no check's: a confirmation report no verify writes, already
    # refused by confirmation(); merged without it, never a crash of ours
    checks = rerun_report.get("checks")
    again = {c["name"]: c for c in (checks if isinstance(checks, list) else [])
             if isinstance(c, dict) and isinstance(c.get("name"), str)}
    checks = [again.get(c["name"], c) if isinstance(c, dict) else c for c in report["checks"]]
    failed = any(isinstance(c, dict) and c.get("status") == "fail" for c in checks)
    return {**report, "checks": checks, "status": "fail" if failed else "pass"}


def confirmation(report: dict[str, Any], rerun: Verdict, rerun_report: Any, limit_s: float,
                 gpus_expected_by_scheduler: bool = False, gpus_allocated: bool | None = None) -> Verdict:
    """The verdict once the timed-out checks ran again alone with a longer limit: their new results replace the old
    ones; a timeout again is confirmed (the node's), a check that now ends was a busy host, not a broken one, and a
    confirmation that reached no verdict leaves the whole run not assessed."""
    if rerun_report is None or _shape_problem(rerun_report) or rerun_report.get("interrupted"):
        # the first run's stall stands, unconfirmed and unrefuted: a run towards --hang-runs (PREFLIGHT_TIMEOUT), as
        # a confirmation that ran out of time is. A crash or no report there (a GPU that stalls its checker, then
        # faults its rerun) ended the streak and left that GPU in service for good; a signal is our trouble still
        stalled = rerun.code if rerun.code in INTERRUPTED_CODES else STALLED
        return not_assessed(stalled, f"a check timed out and its confirmation run reached no verdict: {rerun.summary}")
    again = {c["name"] for c in rerun_report["checks"]}
    asked = timed_out(report)
    if missing := [n for n in asked if n not in again]:
        # verify writes a result for every check it is asked to run: a confirmation without one confirmed nothing,
        # and the first run's timeout, kept by merge, would drain on one run (NVSentinel's checker rule: never)
        return not_assessed("REPORT_INVALID", f"the confirmation run was asked to run {', '.join(missing)} again and "
                            "its report holds no result for it: a report no verify writes; the timeout is unconfirmed")
    v = decide(merge(report, rerun_report), gpus_expected_by_scheduler, gpus_allocated)
    if v.kind == FAULT and not v.confirmed and v.check in again:
        return Verdict(FAULT, v.code, v.owner, f"{v.summary} (confirmed: it failed again alone with {limit_s:.0f} s)",
                       v.check, confirmed=True)
    skipped = [c for c in rerun_report["checks"] if c["name"] in asked and c["status"] == "skip"]
    if v.kind == PASS and skipped:
        # skipped alone, it neither failed again nor ended: the timeout stands unconfirmed and unrefuted (never a
        # pass that ends the --hang-runs streak)
        return not_assessed("PREFLIGHT_TIMEOUT", f"{', '.join(c['name'] for c in skipped)} timed out, and its "
                            f"confirmation run skipped it ({'; '.join(str(c.get('code')) for c in skipped)}): neither "
                            "confirmed nor refuted")
    if v.kind == PASS:
        return Verdict(PASS, summary=f"{v.summary}; {', '.join(asked)} timed out once, then ended alone within "
                                     f"{limit_s:.0f} s: a busy host, not a broken one", stalled=True)
    return v


def own_names(report: dict[str, Any]) -> tuple[Any, ...]:
    """The names a report gives the node that wrote it (its environment's hostname and scheduler node): the node whose
    GPUs its gpu check counted (passfacts._gpus_problem)."""
    env = report.get("environment")
    sched = env.get("scheduler") if isinstance(env, dict) else None
    return (env.get("hostname") if isinstance(env, dict) else None,
            sched.get("node") if isinstance(sched, dict) else None)
