"""What no real node or report can show, held once for the fleet report and `make isolate`'s runner (standard
library only: the runner starts inside the allocation with the host's python3)."""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from .deviceshape import container_problem, shape_problem
from .passfacts import pass_problem
from .ranks import count_problem, ranks_problem

# GB/s of bus bandwidth above any link (NVLink5: 900 GB/s per GPU): a figure past it is no measurement
BUSBW_MAX_GBPS = 10_000.0
# one host or Slurm node name (a DNS name of at most 253 characters): a hostlist (n[1-4], a,b), a newline, a space or
# a path is none, nor a name a drain line or srun may be given
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")


def node_key(name: str) -> str:
    """One host however it is spelt: DNS names are case-insensitive (RFC 4343) and a trailing dot is the root's, so
    N1, n1 and n1. are one node (its reports, its history, its drain), never two."""
    return name.lower().rstrip(".")

# verify codes that say the measurement, not the node, went wrong (verify/prolog/verdict.py's UNJUDGED_CODES, which the
# host side does not import: tests/test_fleet_hostile.py keeps the two equal): never a node to drain
UNJUDGED_CODES = frozenset({"MEASUREMENT_INVALID", "FACTS_INVALID", "FACTS_INCOMPLETE", "INTERRUPTED"})
# Every code verify writes: verify/codes.py's CODES, which only grows (codes never change meaning), copied because the
# host side never imports verify (tests/test_layout.py); tests/test_fleet_codes.py keeps the two equal. A report
# carrying another code is a report no verify wrote: not assessed, never a node to drain.
VERIFY_CODES = frozenset({
    "ARCH_NOT_IN_BUILD", "ARCH_PTX_JIT", "ARROW_COPIED", "ARROW_SLOW", "BANDWIDTH_LOW", "CHECK_CRASHED",
    "CHECK_TIMEOUT", "COMPUTE_LOW", "CUDA_KERNEL_FAULT", "DEVICE_COUNT_MISMATCH", "DISK_FULL",
    "DISTRIBUTED_UNAVAILABLE", "DRIVER_ERROR", "DRIVER_TOO_OLD", "ECC_UNCORRECTABLE", "EMULATION_STALLED", "FABRIC_BANDWIDTH_LOW",
    "FABRIC_ADAPTERS_MISSING", "FABRIC_EFA_PLUGIN_MISSING", "FABRIC_GDR_OFF", "FABRIC_MEMLOCK_LOW", "FABRIC_MIXED_ADAPTERS",
    "FABRIC_NCCL_FORCED_SOCKET", "FABRIC_NONE", "FABRIC_NOT_PASSED", "FABRIC_PORT_DOWN", "FABRIC_RATE_DEGRADED",
    "FABRIC_USERSPACE_MISSING", "FACTS_INCOMPLETE", "FACTS_INVALID", "GPU_LOST", "GPU_NOT_VISIBLE",
    "GPU_OUT_OF_MEMORY", "GPU_RESET_REQUIRED", "HDF5_BROKEN", "HDF5_MISMATCH", "HEALTH_NOT_ASSESSED",
    "IMAGE_DECODE_FAILED", "IMAGE_DECODE_WRONG", "INTERRUPTED", "KERNEL_FAILED", "LOADER_FAILED",
    "MEASUREMENT_INVALID", "NCCL_FAILED", "NCCL_NET_FALLBACK", "NCCL_NOT_EXERCISED", "NCCL_SINGLE_RANK",
    "NCCL_TIMEOUT", "NCCL_WRONG_RESULT", "NVLINK_DOWN", "NVLINK_ERRORS", "NVLS_NOT_USED", "PACKAGE_MISSING",
    "PCIE_DOWNGRADED", "PREFLIGHT_HUNG", "RETIREMENT_PENDING", "ROW_REMAP_FAILED", "SDC_MISMATCH", "SHM_TOO_SMALL",
    "SHM_TOO_SMALL_FOR_LOADER", "THROTTLED", "TORCHVISION_CUDA_MISMATCH", "TORCHVISION_IMPORT_FAILED",
    "TORCHVISION_MISMATCH", "TORCHVISION_OPS_MISSING", "TORCHVISION_OPS_WRONG", "TORCH_IMPORT_FAILED", "TRAIN_FAILED",
    "TRAIN_LOSS_NOT_FALLING", "TRAIN_LOSS_NOT_FINITE", "TRAIN_REPLICA_MISMATCH", "TRAIN_SLOW", "TRANSFORMS_FAILED",
    "TRANSFORMS_WRONG", "XID_ERROR"})
# Codes verify only ever gives their catalog's owner, each with that owner, and codes it only ever writes on a failed
# check (verify/prolog/verdict.py's CATALOG_OWNED and FAILURES_ONLY, read from verify's source by tests/codewalk.py;
# tests/test_report_owners.py keeps the copies equal): a report that says otherwise is none verify wrote.
CATALOG_OWNER: dict[str, str] = {
    "ARCH_NOT_IN_BUILD": "image", "ARCH_PTX_JIT": "image", "ARROW_COPIED": "image", "ARROW_SLOW": "host",
    "CHECK_TIMEOUT": "host", "COMPUTE_LOW": "host", "CUDA_KERNEL_FAULT": "job", "DEVICE_COUNT_MISMATCH": "job",
    "DISK_FULL": "host", "DISTRIBUTED_UNAVAILABLE": "image", "DRIVER_TOO_OLD": "host",
    "ECC_UNCORRECTABLE": "host",
    "EMULATION_STALLED": "job",
    "FABRIC_ADAPTERS_MISSING": "host", "FABRIC_EFA_PLUGIN_MISSING": "image", "FABRIC_MIXED_ADAPTERS": "job", "FABRIC_NONE": "host",
    "FABRIC_NOT_PASSED": "job", "FABRIC_PORT_DOWN": "host", "FABRIC_RATE_DEGRADED": "host",
    "FABRIC_USERSPACE_MISSING": "image", "FACTS_INCOMPLETE": "job", "FACTS_INVALID": "job", "GPU_LOST": "host",
    "GPU_OUT_OF_MEMORY": "job", "GPU_RESET_REQUIRED": "host", "HDF5_BROKEN": "image", "HDF5_MISMATCH": "image",
    "HEALTH_NOT_ASSESSED": "host", "IMAGE_DECODE_FAILED": "image", "IMAGE_DECODE_WRONG": "image", "INTERRUPTED":
    "job", "KERNEL_FAILED": "host", "MEASUREMENT_INVALID": "host", "NCCL_NOT_EXERCISED": "job", "NCCL_SINGLE_RANK":
    "job", "NCCL_WRONG_RESULT": "host", "NVLINK_DOWN": "host", "NVLINK_ERRORS": "host", "PACKAGE_MISSING": "image",
    "PCIE_DOWNGRADED": "host", "RETIREMENT_PENDING": "host", "ROW_REMAP_FAILED": "host", "SDC_MISMATCH": "host",
    "SHM_TOO_SMALL_FOR_LOADER": "job", "THROTTLED": "host", "TORCHVISION_CUDA_MISMATCH": "image",
    "TORCHVISION_IMPORT_FAILED": "image", "TORCHVISION_MISMATCH": "image", "TORCHVISION_OPS_MISSING": "image",
    "TORCHVISION_OPS_WRONG": "image", "TORCH_IMPORT_FAILED": "image",
    "TRAIN_LOSS_NOT_FALLING": "host", "TRAIN_LOSS_NOT_FINITE": "host", "TRAIN_REPLICA_MISMATCH": "host",
    "TRAIN_SLOW": "host", "TRANSFORMS_FAILED": "image", "TRANSFORMS_WRONG": "image"}
FAILURES_ONLY = frozenset({
    "ARROW_COPIED", "CHECK_CRASHED", "CHECK_TIMEOUT", "DISK_FULL", "FABRIC_EFA_PLUGIN_MISSING",
    "FABRIC_MEMLOCK_LOW", "FABRIC_USERSPACE_MISSING", "GPU_LOST", "GPU_RESET_REQUIRED", "HDF5_BROKEN",
    "IMAGE_DECODE_WRONG", "KERNEL_FAILED", "LOADER_FAILED", "MEASUREMENT_INVALID", "NCCL_FAILED", "NCCL_TIMEOUT",
    "NCCL_WRONG_RESULT", "ROW_REMAP_FAILED", "SDC_MISMATCH", "SHM_TOO_SMALL", "TORCHVISION_CUDA_MISMATCH",
    "TORCHVISION_IMPORT_FAILED", "TORCHVISION_OPS_MISSING", "TORCHVISION_OPS_WRONG", "TORCH_IMPORT_FAILED",
    "TRAIN_FAILED", "TRAIN_LOSS_NOT_FALLING", "TRAIN_LOSS_NOT_FINITE", "TRAIN_REPLICA_MISMATCH",
    "TRANSFORMS_FAILED", "TRANSFORMS_WRONG"})

STATUSES = frozenset({"pass", "warn", "skip", "fail"})
CHECK_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")     # a check's name as verify writes one (gpu, shm, nccl)
MAX_DEVICES = 4096              # NVML or torch devices on one node: verify's own ceiling (verify/prolog/verdict.py)
# a figure no check of verify's writes on any status: (check, metric) -> the test a value fails, and why. The gpu
# check counts its devices (len() of a list, 0 on a failure that found none): 8.5, -1 or 5,000 is no count it gave,
# on a failure as on a pass (the fleet report refused a failed check's 8.5 GPUs that the prolog drained on)
NEVER_WRITTEN: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("gpu", "nvml_devices"): (lambda v: v != int(v) or not 0 <= v <= MAX_DEVICES,
                              "no count of devices (a whole number, 0 to 4096)"),
    ("gpu", "torch_devices"): (lambda v: v != int(v) or not 0 <= v <= MAX_DEVICES,
                               "no count of devices (a whole number, 0 to 4096)")}
# a passing (or warning) check whose own figures say it cannot pass: (check, metric) -> the test a value fails
CANNOT_PASS: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("nccl", "wrong"): (lambda v: v > 0, "wrong elements in an all-reduce fail it"),
    ("nccl", "busbw_ratio"): (lambda v: v > 3.0, "over 3x its GPU's baseline is no measurement"),
    ("nccl", "busbw_max"): (lambda v: v > BUSBW_MAX_GBPS, "above any link (NVLink5: 900 GB/s per GPU)")}
# a gpu check passes only on the devices it judged: 0 NVML or torch devices on a pass is none verify writes. A warning
# may count 0 (NVML's devices not recorded: HEALTH_NOT_ASSESSED; CUDA up, NVML silent: GPU_NOT_VISIBLE), as verify
# writes it: the rule must refuse no report verify writes (verify/prolog/verdict.py PASS_NEEDS, the same table)
PASS_NEEDS: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {
    ("gpu", "nvml_devices"): (lambda v: v != int(v) or not 1 <= v <= MAX_DEVICES,
                              "no count of devices a gpu check passes on (a whole number, 1 to 4096)"),
    ("gpu", "torch_devices"): (lambda v: v != int(v) or not 1 <= v <= MAX_DEVICES,
                               "no count of devices a gpu check passes on (a whole number, 1 to 4096)")}


# the most a rate of each unit can be on one node (HBM3e is ~8 TB/s, a B200 ~10 PFLOP/s sparse FP4: past it no
# machine measures, and one such figure would move every median of the fleet report) and, a rate, never below 0: on
# any status. verify/prolog/verdict.py RATE_MOST is the same table (tests/test_report_plausible.py)
RATE_MOST = {"GB/s": 1e5, "GiB/s": 1e5, "MB/s": 1e8, "MiB/s": 1e8, "TFLOP/s": 1e5, "samples/s": 1e9,
             "images/s": 1e9, "tokens/s": 1e12, "Gb/s": 8e5}     # Gb/s: the fabric check's link_gbps, bits
# nor is a time, a ratio of two rates or an error's size: verify writes none below 0 (a busbw_ratio of -1 x, a -1 s
# first step, a -0.5 matmul error were read as measured; counts and sizes: ranks.py count_problem)
NON_NEGATIVE = ("s", "x", "abs")


def _rate_problem(name: str, metric: str, m: dict[str, Any], value: float) -> str | None:
    most = RATE_MOST.get(str(m.get("unit")))
    if most is not None and value > most:
        return f"the {name} check's {_shown(metric)} = {value:g} {m['unit']} is impossible (above {most:g})"
    if (most is not None or m.get("unit") in NON_NEGATIVE) and value < 0:
        return f"the {name} check's {_shown(metric)} = {value:g} {str(m['unit'])[:20]} is negative: verify writes none"
    return None


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
    """A gpu pass on 0 NVML devices that verify writes (verify/prolog/verdict.py no_device_read, the same rule): its
    partial judgement (NVML's devices not recorded, no torch device, a clean kernel log) counts nvml_devices 0, lists
    no device and writes no torch_devices; refused, it hid every other check's fault in its report."""
    raw, data = c.get("metrics"), c.get("data")
    metrics: dict[str, Any] = raw if isinstance(raw, dict) else {}
    nvml = metrics.get("nvml_devices")
    listed = data.get("devices") if isinstance(data, dict) else None
    return c.get("name") == "gpu" and isinstance(nvml, dict) and nvml.get("value") == 0 \
        and "torch_devices" not in metrics and isinstance(listed, list) and not listed


def _does(state: str) -> str:
    return "passes" if state == "pass" else f"{state}s"


def _shown(value: Any, most: int = 40) -> str:
    return " ".join(str(value).split())[:most]


def report_problem(report: Any) -> str | None:
    """Why a report is none verify writes, or None: the one rule the fleet report and `make isolate` apply (the
    prolog's verify/prolog/verdict.py applies the same on the verify side; tests/test_report_plausible.py holds the
    three to one table). verify writes one result per check, each with one of its four statuses, a code of its
    catalog on exactly what did not pass (report schema 2: fail, warn and skip carry one; a pass none), a report
    status that is "fail" exactly when a check failed or the run was interrupted, and no figure that is not finite or that its own pass
    contradicts (CANNOT_PASS). Such a report is no evidence: not assessed, never a drain, never a clean pair."""
    checks = report.get("checks") if isinstance(report, dict) else None
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        return "its checks are no list of results"
    if not checks:
        return "it lists no checks: nothing was judged"
    # report schema 1 (verify 1.x) has no codes: only schema 2 codes every result that did not pass
    coded = not (type(report.get("schema_version")) is int and report["schema_version"] == 1)
    for c in checks:
        if why := _check_problem(c, coded):
            return why
        if shape := container_problem(c):        # a list where verify writes an object hid every figure in it
            return f"the {_shown(c.get('name'))} check is {_shown(c.get('status'))} with {shape}"
    names = Counter(str(c.get("name")) for c in checks)   # counted once each (a list of 100,000 was quadratic)
    if twice := next((n for n, k in names.items() if k > 1), None):     # a pass beside a failure: which is true?
        return f"it holds the {_shown(twice)} check {names[twice]} times: verify writes one result per check"
    state = report.get("status")
    if not isinstance(state, str) or state not in STATUSES:
        return f"its status {_shown(repr(state))} is none of verify's"
    # verify's report.overall: "fail" when a check failed or the run was cut off (SIGTERM before any check ended
    # leaves every check skipped INTERRUPTED, under "fail"): that report is verify's, an interrupted one (and an
    # interruption is never a pass, whatever its status says: the readers judge it interrupted)
    failed = any(c["status"] == "fail" for c in checks)
    if failed != (state == "fail") and not (state == "fail" and report.get("interrupted")):
        return f"its status is {state}, which its checks contradict"
    return ranks_problem(checks) or pass_problem(checks, own_names(report)) or _expected_problem(report, checks)


def _expected_problem(report: dict[str, Any], checks: list[dict[str, Any]]) -> str | None:
    """Why a gpu (or train) pass cannot be true beside the GPUs verify was told to expect (its options' expect_gpus),
    or None: verify's gpu check fails when fewer are usable (torch's count, else NVML's), on a node in no MIG mode
    (GPU_NOT_VISIBLE), and its train check a run over gloo. The prolog holds the same against Slurm's count (verify/prolog/notes.proven_gpus)."""
    options = report.get("options")
    expect = options.get("expect_gpus") if isinstance(options, dict) else None
    trained = next((c for c in checks if c.get("name") == "train" and c.get("status") in ("pass", "warn")), None)
    data = trained.get("data") if trained is not None else None
    backend = data.get("backend") if isinstance(data, dict) else None
    if type(expect) is int and expect > 0 and trained is not None and backend is not None and backend != "nccl":
        # verify/checks/train/verdict.py: told to expect GPUs, a run over gloo (on CPU) fails GPU_NOT_VISIBLE, as the
        # nccl check's does (ranks.py): make slurm's collective (--expect-gpus) passing so trained no GPU (hunt99)
        return (f"the train check {_does(str(trained['status']))} over {_shown(repr(backend), 20)} where verify was "
                f"told to expect {expect} GPU(s): verify fails a run on no GPU (GPU_NOT_VISIBLE)")
    gpu = next((c for c in checks if c.get("name") == "gpu" and c.get("status") in ("pass", "warn")), None)
    if type(expect) is not int or expect <= 0 or gpu is None or not isinstance(gpu.get("metrics"), dict):
        return None
    data = gpu.get("data")
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, list) or any(isinstance(d, dict) and isinstance(d.get("mig"), list) and d["mig"]
                                            and d["mig"][0] is True for d in devices):
        return None             # a GPU in MIG mode is counted by its MIG devices, which torch may not all see
    counted = [m.get("value") for k in ("torch_devices", "nvml_devices") if isinstance(m := gpu["metrics"].get(k), dict)]
    usable = counted[0] if counted else None
    if isinstance(usable, (int, float)) and not isinstance(usable, bool) and usable < expect:
        return (f"the gpu check {_does(gpu['status'])} with {usable:g} usable GPU(s) where verify was told to expect "
                f"{expect}: verify fails that (GPU_NOT_VISIBLE)")
    return None


def _coded_problem(c: dict[str, Any], coded: bool) -> str | None:
    """verify codes, and names an owner for, only what did not pass, and codes every such result (schema 2)."""
    name, state, code = _shown(c.get("name")), c.get("status"), c.get("code")
    if state == "pass" and code is not None:
        return f"the {name} check passes with code {_shown(code)}: verify codes only what it did not pass"
    if state == "pass" and c.get("owner") is not None:         # an owner is whose fault it is: a pass has none
        return f"the {name} check passes with owner {_shown(repr(c['owner']), 20)}: verify names an owner only for " \
               "what it did not pass"
    if state != "pass" and code is None and coded:
        return f"the {name} check is {state} without a code: verify codes every result it did not pass"
    return None


def _check_problem(c: dict[str, Any], coded: bool = True) -> str | None:
    """Why one check is none verify writes, or None. `coded`: report schema 2, whose every result that did not pass
    carries a code; schema 1 (verify 1.x, still read) has no code or owner at all, and its failure is a failure."""
    name, state, code = _shown(c.get("name")), c.get("status"), c.get("code")
    if not isinstance(c.get("name"), str) or not CHECK_NAME.fullmatch(c["name"]):
        return f"a check named {_shown(repr(c.get('name')), 60)}, which is no check of verify's"
    if not isinstance(state, str) or state not in STATUSES:
        return f"the {name} check's status {_shown(repr(state))} is none of verify's"
    if code is not None and not (isinstance(code, str) and code in VERIFY_CODES):
        return f"the {name} check carries code {_shown(repr(code), 60)}, which is no code of verify's (verify/codes.py)"
    if why := _coded_problem(c, coded):
        return why
    owner = c.get("owner")
    if code in CATALOG_OWNER and owner is not None and owner != CATALOG_OWNER[code]:
        return f"the {name} check gives {code} to {_shown(repr(owner), 20)}: verify gives it only to its catalog's " \
               f"owner ({CATALOG_OWNER[code]})"
    if code in FAILURES_ONLY and state != "fail":
        return f"the {name} check is {state} with {code}: verify writes {code} only on a failed check"
    raw = c.get("metrics")
    metrics: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for metric, m in metrics.items():
        value = m.get("value") if isinstance(m, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"the {name} check's {_shown(metric)} = {_shown(value, 20)} is not a finite number: verify " \
                   "writes every figure as one"
        if isinstance(m, dict) and (why := _rate_problem(name, str(metric), m, value)):
            return why
        fails, why = CANNOT_PASS.get((str(c.get("name")), str(metric)), (None, ""))
        if state in ("pass", "warn") and fails is not None and fails(value) and not across_nodes(c, str(metric)):
            return f"the {name} check {_does(state)} with {_shown(metric)} {value:g}: {why}"
        fails, why = PASS_NEEDS.get((str(c.get("name")), str(metric)), (None, ""))
        if state == "pass" and fails is not None and fails(value) and not no_device_read(c):
            return f"the {name} check passes with {_shown(metric)} {value:g}: {why}"
        never, said = NEVER_WRITTEN.get((str(c.get("name")), str(metric)), (None, ""))
        if never is not None and never(value):
            return f"the {name} check's {_shown(metric)} = {value:g} is {said}: no figure verify writes"
        if isinstance(m, dict) and (why := count_problem(name, str(metric), m, value)):
            return why
    return (_devices_problem(c, metrics) if name == "gpu" and state in ("pass", "warn") else None) or \
        _hidden_failure(c)


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
    data = c.get("data")
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, list):
        return None
    if shape := shape_problem(devices):       # no device verify lists: none of its facts below can be read
        return f"the gpu check {_does(c['status'])} with {shape}"
    counted = metrics.get("nvml_devices")
    counted = counted.get("value") if isinstance(counted, dict) else None
    if isinstance(counted, (int, float)) and not isinstance(counted, bool) and len(devices) != counted:
        return f"the gpu check {_does(c['status'])} with nvml_devices = {counted:g} and {len(devices)} NVML device(s) listed"
    uuids = [u for d in devices if isinstance(d, dict) and (u := board_uuid(d.get("uuid")))]
    if len(set(uuids)) != len(uuids):
        return f"the gpu check {_does(c['status'])} with one GPU (UUID) listed twice among its NVML devices"
    # NVML numbers its devices 0 .. count-1, each once (nvmlDeviceGetHandleByIndex): verify's facts contract refuses an
    # index twice ("devices holds index N more than once"), so a pass listing one twice is no report verify writes
    indices = [i for d in devices if isinstance(d, dict) and isinstance(i := d.get("index"), int)
               and not isinstance(i, bool)]
    if (twice := next((i for n, i in enumerate(indices) if i in indices[:n]), None)) is not None:
        return f"the gpu check {_does(c['status'])} with NVML device index {twice} listed twice among its NVML devices"
    buses = [b for d in devices if isinstance(d, dict) and (b := board_bus(d.get("pci_bus_id")))]
    if len(set(buses)) != len(buses):
        return f"the gpu check {_does(c['status'])} with one GPU (PCI bus id) listed twice among its NVML devices"
    if gone := next((d for d in devices if isinstance(d, dict) and d.get("lost") is True), None):
        # verify fails a check on any lost GPU (GPU_LOST, gpu/gpuhealth.py): listed lost beside a pass, it hid one
        return f"the gpu check {_does(c['status'])} with NVML device {_shown(gone.get('index'), 8)} listed lost: verify " \
               "fails it (GPU_LOST)"
    return None


# what a recovery action of NVML's that asks nothing is written as (verify/facts NONE, or not read)
NO_ACTION = ("none", "unknown")


def _memory_failure(dev: dict[str, Any]) -> str | None:
    """The code verify's gpu check fails a device for on its memory-error fields (verify/shared/gpumemory.memory:
    the prolog reads them by that very function, verify/prolog/hidden.py; tests/test_cluster_hunt67.py holds the two
    to one answer), or None."""
    remap = dev.get("row_remap")
    if remap is not None and not isinstance(remap, dict):
        return "a row_remap verify never writes"
    if dev.get("ecc_volatile_uncorrectable") or dev.get("ecc_sram_uncorrectable") or dev.get("ecc_dram_uncorrectable"):
        return "ECC_UNCORRECTABLE"
    if dev.get("retired_pages_pending"):
        return "RETIREMENT_PENDING"
    if (remap or {}).get("failed"):
        return "ROW_REMAP_FAILED"
    if (remap or {}).get("pending"):
        return "RETIREMENT_PENDING"
    action = dev.get("recovery_action")
    return "GPU_RESET_REQUIRED" if action and action not in NO_ACTION else None


def _hidden_failure(c: dict[str, Any]) -> str | None:
    """Why a check that passes or warns cannot, by its own data (the prolog's verify/prolog/hidden.py): a finding of
    severity fail (verify fails a check on any), or a gpu check's NVML device showing a memory fault verify fails."""
    if c.get("status") not in ("pass", "warn"):
        return None
    data: dict[str, Any] = c["data"] if isinstance(c.get("data"), dict) else {}
    findings = data.get("findings")
    for f in findings if isinstance(findings, list) else []:
        if isinstance(f, dict) and f.get("severity") == "fail":
            return (f"the {_shown(c.get('name'))} check {_does(str(c['status']))} while its own findings list a failure "
                    f"({_shown(f.get('code'))}): verify fails a check on any")
    devices = data.get("devices") if c.get("name") == "gpu" else None
    for dev in devices if isinstance(devices, list) else []:
        if isinstance(dev, dict) and (code := _memory_failure(dev)):
            return (f"the gpu check {_does(str(c['status']))} with NVML device {_shown(dev.get('index'), 8)} showing "
                    f"{code}: verify fails it")
    return None


def own_names(report: dict[str, Any]) -> tuple[Any, ...]:
    """The names a report gives the node that wrote it (its environment's hostname and scheduler node): the node whose
    GPUs its gpu check counted (passfacts._gpus_problem)."""
    env = report.get("environment")
    sched = env.get("scheduler") if isinstance(env, dict) else None
    return (env.get("hostname") if isinstance(env, dict) else None,
            sched.get("node") if isinstance(sched, dict) else None)
