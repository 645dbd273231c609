"""What the gpu check reads and measures on a live node (NVML without root, torch); facts per verify/FACTS.md.

Every NVML field is read on its own: NotSupported and the like are facts (`unsupported`), GPU_IS_LOST or
Unknown Error mark the device lost (`lost`, `nvml_errors`), and no NVML error ever escapes as a crash.
Health that comes and goes (clock-event reasons, NVLink state) is re-read idle and under load (`samples`).
"""
from __future__ import annotations

import contextlib
import ctypes.util
import glob
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from ...factschema import ALL_REASONS
from ...options import Options
from ...shared.nvlink import links, nvswitch
from .gpuidentity import mig_profile

IDLE_REREADS = 2
LOST_ERRORS = ("GpuIsLost", "Unknown", "GPU_IS_LOST")
ABSENT_ERRORS = ("NotSupported", "InvalidArgument", "NoPermission", "FunctionNotFound", "NotFound", "ArgumentVersionMismatch",
                 "AttributeError")          # an older pynvml without the call: the field is absent, not an error
RECOVERY_ACTIONS = {0: "none", 1: "reset", 2: "reboot", 3: "drain_p2p", 4: "drain_and_reset"}
COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}   # NVML_COMPUTEMODE_*


def nvml_library_present() -> bool:
    if ctypes.util.find_library("nvidia-ml"):
        return True
    return any(glob.glob(p) for p in ("/usr/lib*/**/libnvidia-ml.so*", "/usr/local/nvidia/lib*/libnvidia-ml.so*"))


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _error_name(exc: BaseException) -> str:
    return type(exc).__name__.replace("NVMLError_", "") or str(exc)


def _reasons_fn(nvml: Any) -> Any:
    return getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons


def _nvlink_counters(nvml: Any, h: Any, links: int) -> dict[str, int] | None:
    kinds = {"crc": "NVML_NVLINK_ERROR_DL_CRC_FLIT", "replay": "NVML_NVLINK_ERROR_DL_REPLAY",
             "recovery": "NVML_NVLINK_ERROR_DL_RECOVERY"}
    if not links or not hasattr(nvml, "nvmlDeviceGetNvLinkErrorCounter"):
        return None
    out = {}
    try:
        for key, const in kinds.items():
            out[key] = sum(int(nvml.nvmlDeviceGetNvLinkErrorCounter(h, k, getattr(nvml, const))) for k in range(links))
    except Exception:  # noqa: BLE001 - counters not supported on this GPU/driver
        return None
    return out


def _ecc_by_location(nvml: Any, h: Any, where: str) -> int:
    location = getattr(nvml, f"NVML_MEMORY_LOCATION_{where}")
    return int(nvml.nvmlDeviceGetMemoryErrorCounter(h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC,
                                                    location))


def _field_value(nvml: Any, h: Any, const: str) -> int:
    field_id = getattr(nvml, const)
    value = nvml.nvmlDeviceGetFieldValues(h, [field_id])[0]
    if getattr(value, "nvmlReturn", 0) != 0:
        raise RuntimeError(f"NotSupported ({const})")
    v = value.value
    raw = getattr(v, "uiVal", None)
    return int(raw if raw is not None else getattr(v, "ullVal", 0))


def _mig_slice(nvml: Any, m: Any) -> dict[str, Any]:
    """One MIG device as nvidia-smi's "MIG devices" table shows it; a field NVML does not give stays absent."""
    profile = mig_profile(str(_text(nvml.nvmlDeviceGetName(m))))
    out: dict[str, Any] = {"uuid": str(_text(nvml.nvmlDeviceGetUUID(m))),
                           "profile": f"{profile[0]}g.{profile[1]}gb" if profile else None,
                           "slices": profile[0] if profile else None, "total_slices": 7 if profile else None}
    reads: dict[str, Callable[[], int]] = {
        "gpu_instance": lambda: int(nvml.nvmlDeviceGetGpuInstanceId(m)),
        "compute_instance": lambda: int(nvml.nvmlDeviceGetComputeInstanceId(m)),
        "memory_bytes": lambda: int(nvml.nvmlDeviceGetMemoryInfo(m).total),
        "sm_count": lambda: int(nvml.nvmlDeviceGetAttributes(m).multiprocessorCount)}
    for key, read in reads.items():
        with contextlib.suppress(Exception):      # not read: the key stays absent (unknown)
            out[key] = read()
    return out


def _mig_devices(nvml: Any, h: Any) -> list[dict[str, Any]]:
    out = []
    for k in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(h))):
        try:
            m = nvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except Exception:  # noqa: BLE001 - NotFound: no slice at this position
            continue
        out.append(_mig_slice(nvml, m))
    return out


def _numa_node(h: Any, nvml: Any) -> int | None:
    fn = getattr(nvml, "nvmlDeviceGetNumaNodeId", None)
    if fn is not None:
        return int(fn(h))
    bus = _text(nvml.nvmlDeviceGetPciInfo(h).busId).lower()
    for candidate in (bus, bus[4:]):
        try:
            with open(f"/sys/bus/pci/devices/{candidate}/numa_node", encoding="ascii") as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            continue
    return None


def _read(dev: dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    """dev[name] = fn(), or None with why: lost (the GPU fell off), unsupported (absent here), or an error."""
    try:
        dev[name] = fn()
    except Exception as exc:  # noqa: BLE001 - NotSupported etc. are facts, not crashes
        dev[name] = None
        error = _error_name(exc)
        if any(k in error for k in LOST_ERRORS):
            dev["lost"] = True
            dev["nvml_errors"][name] = error
        elif any(k in error for k in ABSENT_ERRORS) or "NotSupported" in str(exc):
            dev["unsupported"][name] = error
        else:
            dev["nvml_errors"][name] = error


FABRIC_STATES = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}   # NVML_GPU_FABRIC_STATE_*
# nvmlGpuFabricInfo_v2_t.healthMask: 2-bit fields at these shifts, 1 TRUE, 2 FALSE, 0 not supported
# (NVML_GPU_FABRIC_HEALTH_MASK_*); incorrect configuration is a 4-bit field at 8: 0 not supported, 1 none, else one.
FABRIC_HEALTH_BITS = {"degraded_bandwidth": 0, "route_recovery": 2, "route_unhealthy": 4, "access_timeout_recovery": 6}


def fabric_health(mask: int) -> dict[str, bool | None]:
    health: dict[str, bool | None] = {k: {1: True, 2: False}.get((mask >> shift) & 0x3)
                                      for k, shift in FABRIC_HEALTH_BITS.items()}
    config = (mask >> 8) & 0xF
    health["incorrect_configuration"] = None if config == 0 else config != 1
    return health


def gpu_fabric(nvml: Any, h: Any) -> dict[str, Any] | None:
    """nvmlDeviceGetGpuFabricInfoV (v2: with the health mask), else nvmlDeviceGetGpuFabricInfo (no mask); None where
    this pynvml or driver has neither (an older one): unknown, never a crash."""
    if hasattr(nvml, "nvmlDeviceGetGpuFabricInfoV") and hasattr(nvml, "c_nvmlGpuFabricInfoV_t"):
        info = nvml.c_nvmlGpuFabricInfoV_t()
        info.version = getattr(nvml, "nvmlGpuFabricInfo_v2", getattr(info, "version", 0))
        nvml.nvmlDeviceGetGpuFabricInfoV(h, info)
        mask = getattr(info, "healthMask", None)
    elif hasattr(nvml, "nvmlDeviceGetGpuFabricInfo") and hasattr(nvml, "c_nvmlGpuFabricInfo_t"):
        info = nvml.c_nvmlGpuFabricInfo_t()
        nvml.nvmlDeviceGetGpuFabricInfo(h, info)
        mask = None
    else:
        return None
    status = int(info.status)
    return {"state": FABRIC_STATES.get(int(info.state), "not_supported"),
            "status": "success" if status == 0 else _error_name(nvml.NVMLError(status)) if hasattr(nvml, "NVMLError")
            else str(status), "clique_id": int(info.cliqueId),
            "cluster_uuid": bytes(info.clusterUuid).hex() if hasattr(info, "clusterUuid") else None,
            "health": fabric_health(int(mask)) if mask is not None else None}


def _identity(dev: dict[str, Any], nvml: Any, h: Any) -> None:
    _read(dev, "name", lambda: _text(nvml.nvmlDeviceGetName(h)))
    _read(dev, "uuid", lambda: _text(nvml.nvmlDeviceGetUUID(h)))
    _read(dev, "pci_bus_id", lambda: _text(nvml.nvmlDeviceGetPciInfo(h).busId))
    _read(dev, "memory_bytes", lambda: int(nvml.nvmlDeviceGetMemoryInfo(h).total))
    _read(dev, "cc", lambda: ".".join(str(v) for v in nvml.nvmlDeviceGetCudaComputeCapability(h)))
    _read(dev, "persistence", lambda: bool(nvml.nvmlDeviceGetPersistenceMode(h)))
    _read(dev, "compute_mode", lambda: COMPUTE_MODES.get(int(nvml.nvmlDeviceGetComputeMode(h))))
    _read(dev, "mig", lambda: [bool(m) for m in nvml.nvmlDeviceGetMigMode(h)])           # [current, pending]
    if dev.get("mig") and dev["mig"][0]:
        _read(dev, "mig_devices", lambda: _mig_devices(nvml, h))


def _memory_health(dev: dict[str, Any], nvml: Any, h: Any) -> None:
    _read(dev, "ecc", lambda: [bool(m) for m in nvml.nvmlDeviceGetEccMode(h)])           # [current, pending]
    _read(dev, "ecc_volatile_uncorrectable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)))
    _read(dev, "ecc_aggregate_uncorrectable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_AGGREGATE_ECC)))
    _read(dev, "ecc_volatile_correctable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC)))
    _read(dev, "ecc_aggregate_correctable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_AGGREGATE_ECC)))
    dev["correctable_start"] = (dev.get("ecc_volatile_correctable"), time.monotonic())
    _read(dev, "ecc_sram_uncorrectable", lambda: _ecc_by_location(nvml, h, "SRAM"))
    _read(dev, "ecc_dram_uncorrectable", lambda: _ecc_by_location(nvml, h, "DRAM"))
    _read(dev, "retired_pages_pending", lambda: bool(nvml.nvmlDeviceGetRetiredPagesPendingStatus(h)))
    _read(dev, "row_remap", lambda: dict(zip(("correctable", "uncorrectable", "pending", "failed"),
                                             (int(v) for v in nvml.nvmlDeviceGetRemappedRows(h)), strict=False)))
    _read(dev, "recovery_action", lambda: RECOVERY_ACTIONS.get(
        _field_value(nvml, h, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION"), "unknown"))
    _read(dev, "throttle_reasons", lambda: int(_reasons_fn(nvml)(h)))
    if dev.get("throttle_reasons") is not None:
        dev["throttle_reasons_read"] = ALL_REASONS           # NVML gives the whole mask
    _inforom(dev, nvml, h)


def _inforom(dev: dict[str, Any], nvml: Any, h: Any) -> None:
    """The InfoROM's checksum, as nvidia-smi checks it before its `infoROM is corrupted` warning: only a corruption is
    recorded (`nvml_errors`); a pynvml without the call, NotSupported or any other answer says nothing of it."""
    try:
        nvml.nvmlDeviceValidateInforom(h)
    except Exception as exc:  # noqa: BLE001 - an absent call or another error is no fact of the InfoROM
        if "CorruptedInforom" in _error_name(exc):
            dev["nvml_errors"]["inforom"] = _error_name(exc)


def _interconnect(dev: dict[str, Any], nvml: Any, h: Any) -> None:
    _read(dev, "pcie_gen", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)))
    _read(dev, "pcie_width", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkWidth(h)))
    _read(dev, "pcie_gen_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(h)))
    _read(dev, "pcie_width_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkWidth(h)))
    _read(dev, "pcie_gen_gpu_max", lambda: int(nvml.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)))
    dev["nvlink"] = links(nvml, h)
    dev["nvswitch"] = nvswitch(nvml, h, len(dev["nvlink"]))
    _read(dev, "fabric", lambda: gpu_fabric(nvml, h))
    dev["nvlink_errors_start"] = _nvlink_counters(nvml, h, len(dev["nvlink"]))


def _thermal_power(dev: dict[str, Any], nvml: Any, h: Any) -> None:
    _read(dev, "temperature_c", lambda: int(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)))
    _read(dev, "temperature_slowdown_c", lambda: int(nvml.nvmlDeviceGetTemperatureThreshold(
        h, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)))
    _read(dev, "memory_temperature_c", lambda: _field_value(nvml, h, "NVML_FI_DEV_MEMORY_TEMP"))
    _read(dev, "memory_temperature_max_c", lambda: int(nvml.nvmlDeviceGetTemperatureThreshold(
        h, nvml.NVML_TEMPERATURE_THRESHOLD_MEM_MAX)))
    _read(dev, "sm_clock_mhz", lambda: int(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)))
    _read(dev, "sm_clock_max_mhz", lambda: int(nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM)))
    _read(dev, "power_w", lambda: nvml.nvmlDeviceGetPowerUsage(h) / 1000)
    _read(dev, "power_limit_w", lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000)
    _read(dev, "power_default_limit_w", lambda: nvml.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000)
    _read(dev, "power_requested_limit_w", lambda: nvml.nvmlDeviceGetPowerManagementLimit(h) / 1000)


def nvml_device(nvml: Any, index: int) -> dict[str, Any]:
    """Every health field of one device; a field NVML cannot give is None with its error."""
    dev: dict[str, Any] = {"index": index, "unsupported": {}, "nvml_errors": {}, "lost": False}
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:  # noqa: BLE001 - a GPU that fell off the bus has no handle
        dev["nvml_errors"]["handle"] = _error_name(exc)
        dev["lost"] = any(k in _error_name(exc) for k in LOST_ERRORS)
        return dev
    _identity(dev, nvml, h)
    _memory_health(dev, nvml, h)
    _interconnect(dev, nvml, h)
    _thermal_power(dev, nvml, h)
    _read(dev, "numa_node", lambda: _numa_node(h, nvml))
    dev["samples"] = []
    return dev


def sample(nvml: Any, index: int, phase: str) -> dict[str, Any] | None:
    """One re-read of what comes and goes: clock-event reasons, NVLink state, the PCIe link."""
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
        return {"phase": phase, "throttle_reasons": int(_reasons_fn(nvml)(h)), "nvlink": links(nvml, h),
                "gen": int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                "width": int(nvml.nvmlDeviceGetCurrPcieLinkWidth(h))}
    except Exception:  # noqa: BLE001 - a failed re-read adds no read
        return None


def _correctable_growth(nvml: Any, dev: dict[str, Any]) -> None:
    """Volatile correctable ECC errors between the first read and this one: the storm's rate."""
    count, started = dev.pop("correctable_start", (None, None))
    dev["ecc_correctable_growth"] = None
    if count is None or started is None or dev.get("lost"):
        return
    try:
        now = int(nvml.nvmlDeviceGetTotalEccErrors(nvml.nvmlDeviceGetHandleByIndex(dev["index"]),
                                                   nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC))
    except Exception:  # noqa: BLE001 - a failed re-read adds no read
        return
    seconds = time.monotonic() - started
    if seconds > 0:
        dev["ecc_correctable_growth"] = {"count": max(0, now - count), "seconds": round(seconds, 3)}


def finish_device(nvml: Any, dev: dict[str, Any]) -> None:
    """NVLink counter deltas over the run (start values are not facts of their own)."""
    _correctable_growth(nvml, dev)
    start = dev.pop("nvlink_errors_start", None)
    dev["nvlink_errors"] = None
    if start is None or dev.get("lost"):
        return
    try:
        end = _nvlink_counters(nvml, nvml.nvmlDeviceGetHandleByIndex(dev["index"]), len(dev.get("nvlink") or []))
    except Exception:  # noqa: BLE001
        end = None
    if end is not None:
        dev["nvlink_errors"] = {k: max(0, end[k] - start[k]) for k in start}


class XidWatch:
    """Critical Xid events raised while verify runs (an NVML event set); `events` is None when unsupported."""

    def __init__(self, nvml: Any, count: int) -> None:
        self.nvml = nvml
        self.events: list[dict[str, Any]] | None = None
        self.handles: dict[int, Any] = {}
        try:
            self.set = nvml.nvmlEventSetCreate()
            for i in range(count):
                h = nvml.nvmlDeviceGetHandleByIndex(i)
                nvml.nvmlDeviceRegisterEvents(h, nvml.nvmlEventTypeXidCriticalError, self.set)
                self.handles[i] = _text(nvml.nvmlDeviceGetUUID(h))
            self.events = []
        except Exception:  # noqa: BLE001 - no event support (containers without it, old drivers)
            self.set = None

    def drain(self) -> list[dict[str, Any]] | None:
        if self.set is None or self.events is None:
            return None
        for _ in range(1000):
            try:
                data = self.nvml.nvmlEventSetWait(self.set, 0)
            except Exception:  # noqa: BLE001 - Timeout: no more events
                break
            uuid = None
            with contextlib.suppress(Exception):
                uuid = _text(self.nvml.nvmlDeviceGetUUID(data.device))
            self.events.append({"uuid": uuid, "xid": int(data.eventData), "text": None, "source": "nvml"})
        with contextlib.suppress(Exception):
            self.nvml.nvmlEventSetFree(self.set)
        return self.events


def probe_nvml(facts: dict[str, Any]) -> Any:
    try:
        import pynvml as nvml
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ImportError ...
        facts["nvml_error"] = f"{type(exc).__name__}: {exc}"
        facts["devices"] = None                                  # NVML did not list them: unknown, not none
        return None
    facts["driver"] = _text(nvml.nvmlSystemGetDriverVersion())
    v = nvml.nvmlSystemGetCudaDriverVersion()
    facts["cuda_driver"] = f"{v // 1000}.{v % 1000 // 10}"
    facts["devices"] = [nvml_device(nvml, i) for i in range(nvml.nvmlDeviceGetCount())]
    for _ in range(IDLE_REREADS):
        time.sleep(0.2)
        for dev in facts["devices"]:
            if not dev.get("lost") and (s := sample(nvml, dev["index"], "idle")):
                dev["samples"].append(s)
    return nvml


# ------------------------------------------------------------------------------------------- torch side
def _timed(torch: Any, device: Any, fn: Callable[[], Any], iters: int) -> float:
    """Seconds per call, timed with CUDA events after one warm-up call."""
    fn()
    torch.cuda.synchronize(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / 1000 / iters


def _copy_rate(torch: Any, dev: Any, dst: Any, src: Any, nbytes: int) -> float:
    return round(nbytes / _timed(torch, dev, lambda: dst.copy_(src, non_blocking=True), 10) / 1e9, 1)


def _matmul(torch: Any, dev: Any, m: int) -> float:
    a = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    b = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    return round(2 * m ** 3 / _timed(torch, dev, lambda: a @ b, 10) / 1e12, 1)


@contextlib.contextmanager
def _on_numa(node: int | None) -> Iterator[bool]:
    """Run on the CPUs of the GPU's NUMA node, so pinned pages are first touched there; True when it could."""
    cpus: set[int] = set()
    if node is not None and node >= 0:
        try:
            with open(f"/sys/devices/system/node/node{node}/cpulist", encoding="ascii") as fh:
                for part in fh.read().strip().split(","):
                    lo, _, hi = part.partition("-")
                    cpus.update(range(int(lo), int(hi or lo) + 1))
        except (OSError, ValueError):
            cpus = set()
    before = os.sched_getaffinity(0)
    usable = cpus & before
    if usable:
        os.sched_setaffinity(0, usable)
    try:
        yield bool(usable)
    finally:
        if usable:
            os.sched_setaffinity(0, before)


def perf(torch: Any, i: int, options: Options, nvml: Any, nvml_index: int | None, numa: int | None) -> dict[str, Any]:
    dev = torch.device("cuda", i)
    out: dict[str, Any] = {"index": i, "numa_node": numa}
    with torch.cuda.device(dev):
        n = options.gpu_copy_bytes
        src = torch.empty(n, dtype=torch.uint8, device=dev)
        out["d2d_GBps"] = round(2 * _copy_rate(torch, dev, torch.empty_like(src), src, n), 1)   # read + write
        src = None
        h = options.gpu_h2d_bytes
        with _on_numa(numa) as pinned_local:
            host = torch.empty(h, dtype=torch.uint8, pin_memory=True)
            host.fill_(1)                                  # first touch on the GPU's NUMA node
            gpu = torch.empty(h, dtype=torch.uint8, device=dev)
            out["pinned_on_numa"] = pinned_local
            out["h2d_GBps"] = _copy_rate(torch, dev, gpu, host, h)
            read = sample(nvml, nvml_index, "load") if nvml is not None and nvml_index is not None else None
            out["pcie_under_load"] = ({"gen": read["gen"], "width": read["width"],
                                       "throttle_reasons": read["throttle_reasons"]} if read else None)
            out["d2h_GBps"] = _copy_rate(torch, dev, host, gpu, h)
        host = gpu = None
        out["bf16_TFLOPs"] = _matmul(torch, dev, options.matmul_n)
        read = sample(nvml, nvml_index, "load") if nvml is not None and nvml_index is not None else None
        out["throttle_under_load"] = read["throttle_reasons"] if read else None
        out["nvlink_under_load"] = read["nvlink"] if read else None
    return out


def canary(torch: Any, i: int, repeats: int) -> dict[str, Any]:
    """The same fp32 matmul `repeats` times on device i; sha256 of each result's bytes (TF32 off)."""
    gen = torch.Generator().manual_seed(1234)
    a = torch.randn(2048, 2048, generator=gen)
    b = torch.randn(2048, 2048, generator=gen)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda", i)
    a, b = a.to(dev), b.to(dev)
    digests = [hashlib.sha256((a @ b).cpu().numpy().tobytes()).hexdigest()[:16] for _ in range(repeats)]
    props = torch.cuda.get_device_properties(i)
    return {"index": i, "name": props.name, "sm_count": props.multi_processor_count, "digests": digests}


def kernel(torch: Any, i: int) -> dict[str, Any]:
    """A 256^2 fp32 matmul against float64 on the CPU: its largest error. A result holding NaN or Inf is a wrong
    result (torch's max() propagates NaN, and `nan > tolerance` is False: it once passed as correct)."""
    a = torch.randn(256, 256, device=f"cuda:{i}")
    b = torch.randn(256, 256, device=f"cuda:{i}")
    got = (a @ b).cpu()
    want = a.cpu().double() @ b.cpu().double()
    if not bool(torch.isfinite(got).all()):
        bad = int((~torch.isfinite(got)).sum())
        return {"index": i, "max_abs_error": None, "error": f"WrongResult: {bad} of {got.numel()} elements are NaN or Inf"}
    return {"index": i, "max_abs_error": float((got.double() - want).abs().max()), "error": None}


def torch_identity(torch: Any, count: int) -> list[dict[str, Any]]:
    """torch index -> UUID and PCI bus id, as CUDA reports them (a MIG slice's UUID is the slice's)."""
    out = []
    for i in range(count):
        props = torch.cuda.get_device_properties(i)
        uuid = str(getattr(props, "uuid", "") or "") or None
        bus = None
        if hasattr(props, "pci_bus_id"):
            bus = f"{getattr(props, 'pci_domain_id', 0):08x}:{props.pci_bus_id:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
        mig = "MIG" in props.name
        out.append({"torch_index": i, "name": props.name, "uuid": None if mig else uuid, "pci_bus_id": bus,
                    "mig_uuid": uuid if mig else None})
    return out
