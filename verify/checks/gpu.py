"""gpu: the driver, the devices, their health (NVML), whether this torch build can use them, and how fast.

probe() reads and measures (NVML without root, torch, copies, a bf16 matmul, the SDC canary); judge() is pure
and decides from those facts alone, so every branch is tested from recorded or hand-made facts.
"""
from __future__ import annotations

import ctypes.util
import glob
import hashlib
import os
from collections.abc import Callable
from typing import Any

from .. import baselines
from ..codes import Owner
from ..cuda_errors import decode
from ..options import Options
from ..result import FAIL, PASS, SKIP, WARN, CheckResult, Status

# Minimum driver per CUDA major under minor-version compatibility (CUDA Toolkit release notes, table
# "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility"). Our images carry
# the exact floor from compat.yaml in TORCHIMAGES_DRIVER_MIN; this table serves images built elsewhere.
DRIVER_FLOOR = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}
DRIVER_MIN_ENV = "TORCHIMAGES_DRIVER_MIN"

# nvmlClocksEventReasons / nvmlClocksThrottleReasons bits (nvml.h)
THROTTLE_BITS = {0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap", 0x8: "HwSlowdown",
                 0x10: "SyncBoost", 0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown",
                 0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting"}
THROTTLE_FAIL = {"HwSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown"}
THROTTLE_WARN = {"SwThermalSlowdown"}
NVLINK_MAX_LINKS = 18
TEMP_MARGIN_C = 3            # within this of the slowdown threshold warns


# ----------------------------------------------------------------------------------------------- probe
def _nvml_library_present() -> bool:
    if ctypes.util.find_library("nvidia-ml"):
        return True
    return any(glob.glob(p) for p in ("/usr/lib*/**/libnvidia-ml.so*", "/usr/local/nvidia/lib*/libnvidia-ml.so*"))


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _nvml_device(nvml: Any, index: int) -> dict[str, Any]:
    """Every health field of one device; a field NVML cannot give is None with its error in `unsupported`."""
    h = nvml.nvmlDeviceGetHandleByIndex(index)
    dev: dict[str, Any] = {"index": index, "unsupported": {}}

    def field(name: str, fn: Callable[[], Any]) -> None:
        try:
            dev[name] = fn()
        except Exception as exc:  # noqa: BLE001 - NVMLError_NotSupported etc. are facts, not crashes
            dev[name] = None
            dev["unsupported"][name] = type(exc).__name__.replace("NVMLError_", "") or str(exc)

    field("name", lambda: _text(nvml.nvmlDeviceGetName(h)))
    field("uuid", lambda: _text(nvml.nvmlDeviceGetUUID(h)))
    field("pci_bus_id", lambda: _text(nvml.nvmlDeviceGetPciInfo(h).busId))
    field("memory_bytes", lambda: int(nvml.nvmlDeviceGetMemoryInfo(h).total))
    field("cc", lambda: ".".join(str(v) for v in nvml.nvmlDeviceGetCudaComputeCapability(h)))
    field("persistence", lambda: bool(nvml.nvmlDeviceGetPersistenceMode(h)))
    field("mig", lambda: [bool(m) for m in nvml.nvmlDeviceGetMigMode(h)])           # [current, pending]
    field("ecc", lambda: [bool(m) for m in nvml.nvmlDeviceGetEccMode(h)])           # [current, pending]
    field("ecc_volatile_uncorrectable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)))
    field("ecc_aggregate_uncorrectable", lambda: int(nvml.nvmlDeviceGetTotalEccErrors(
        h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_AGGREGATE_ECC)))
    field("retired_pages_pending", lambda: bool(nvml.nvmlDeviceGetRetiredPagesPendingStatus(h)))
    field("row_remap", lambda: dict(zip(("correctable", "uncorrectable", "pending", "failed"),
                                        (int(v) for v in nvml.nvmlDeviceGetRemappedRows(h)), strict=False)))
    reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    field("throttle_reasons", lambda: int(reasons(h)))
    field("pcie_gen", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)))
    field("pcie_width", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkWidth(h)))
    field("pcie_gen_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(h)))
    field("pcie_width_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkWidth(h)))
    field("pcie_gen_gpu_max", lambda: int(nvml.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)))
    links: list[bool | None] = []
    for link in range(NVLINK_MAX_LINKS):
        try:
            links.append(bool(nvml.nvmlDeviceGetNvLinkState(h, link)))
        except Exception:  # noqa: BLE001 - NotSupported / InvalidArgument: no such link
            break
    dev["nvlink"] = links
    field("temperature_c", lambda: int(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)))
    field("temperature_slowdown_c", lambda: int(nvml.nvmlDeviceGetTemperatureThreshold(
        h, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)))
    field("power_w", lambda: nvml.nvmlDeviceGetPowerUsage(h) / 1000)
    field("power_limit_w", lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000)
    field("power_default_limit_w", lambda: nvml.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000)
    return dev


def _probe_nvml(facts: dict[str, Any]) -> Any:
    try:
        import pynvml as nvml
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ImportError ...
        facts["nvml_error"] = f"{type(exc).__name__}: {exc}"
        return None
    facts["driver"] = _text(nvml.nvmlSystemGetDriverVersion())
    v = nvml.nvmlSystemGetCudaDriverVersion()
    facts["cuda_driver"] = f"{v // 1000}.{v % 1000 // 10}"
    facts["devices"] = [_nvml_device(nvml, i) for i in range(nvml.nvmlDeviceGetCount())]
    return nvml


def _pcie_now(nvml: Any, index: int) -> dict[str, Any] | None:
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
        return {"gen": int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                "width": int(nvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
                "throttle_reasons": int((getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                                         or nvml.nvmlDeviceGetCurrentClocksThrottleReasons)(h))}
    except Exception:  # noqa: BLE001
        return None


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
    return start.elapsed_time(end) / 1000 / iters


def _copy_rate(torch: Any, dev: Any, dst: Any, src: Any, nbytes: int) -> float:
    return round(nbytes / _timed(torch, dev, lambda: dst.copy_(src, non_blocking=True), 10) / 1e9, 1)


def _d2d(torch: Any, dev: Any, n: int) -> float:
    src = torch.empty(n, dtype=torch.uint8, device=dev)
    return 2 * _copy_rate(torch, dev, torch.empty_like(src), src, n)       # bytes read + bytes written


def _matmul(torch: Any, dev: Any, m: int) -> float:
    a = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    b = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    return round(2 * m ** 3 / _timed(torch, dev, lambda: a @ b, 10) / 1e12, 1)


def _perf(torch: Any, i: int, options: Options, nvml: Any) -> dict[str, Any]:
    dev = torch.device("cuda", i)
    out: dict[str, Any] = {"index": i}
    with torch.cuda.device(dev):
        out["d2d_GBps"] = _d2d(torch, dev, options.gpu_copy_bytes)
        h = options.gpu_h2d_bytes
        host = torch.empty(h, dtype=torch.uint8, pin_memory=True)
        gpu = torch.empty(h, dtype=torch.uint8, device=dev)
        out["h2d_GBps"] = _copy_rate(torch, dev, gpu, host, h)
        if nvml is not None:
            out["pcie_under_load"] = _pcie_now(nvml, i)     # read right after the copies: the link is up to speed
        out["d2h_GBps"] = _copy_rate(torch, dev, host, gpu, h)
        host = gpu = None
        out["bf16_TFLOPs"] = _matmul(torch, dev, options.matmul_n)
        if nvml is not None:
            out["throttle_under_load"] = (_pcie_now(nvml, i) or {}).get("throttle_reasons")
    return out


def _canary(torch: Any, i: int, repeats: int) -> dict[str, Any]:
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


def probe(options: Options) -> dict[str, Any]:
    import warnings

    import torch

    facts: dict[str, Any] = {
        "torch": torch.__version__, "torch_cuda": torch.version.cuda, "driver_min_env": os.environ.get(DRIVER_MIN_ENV),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "device_nodes": bool(glob.glob("/dev/nvidia[0-9]*")), "nvml_library": _nvml_library_present(),
        "nvml_error": None, "driver": None, "cuda_driver": None, "devices": [],
        "cuda_available": False, "cuda_init_error": None, "torch_devices": 0, "arch_list": [], "capabilities": [],
        "kernels": [], "perf": [], "sdc": [],
    }
    nvml = _probe_nvml(facts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    facts["cuda_available"] = available
    if not available and torch.version.cuda and facts["devices"]:
        try:
            torch.cuda.init()
        except Exception as exc:  # noqa: BLE001 - the driver's refusal is the fact
            facts["cuda_init_error"] = f"{type(exc).__name__}: {exc}"
        if not facts["cuda_init_error"] and caught:
            facts["cuda_init_error"] = str(caught[-1].message)
    if available:
        count = torch.cuda.device_count()
        facts["torch_devices"] = count
        facts["arch_list"] = torch.cuda.get_arch_list()
        facts["capabilities"] = [".".join(map(str, torch.cuda.get_device_capability(i))) for i in range(count)]
        for i in range(count):
            kernel: dict[str, Any] = {"index": i, "max_abs_error": None, "error": None}
            try:
                a = torch.randn(256, 256, device=f"cuda:{i}")
                b = torch.randn(256, 256, device=f"cuda:{i}")
                got = (a @ b).cpu()
                want = a.cpu().double() @ b.cpu().double()
                kernel["max_abs_error"] = float((got.double() - want).abs().max())
                if options.gpu_perf:
                    facts["sdc"].append(_canary(torch, i, options.sdc_repeats))
                    facts["perf"].append(_perf(torch, i, options, nvml))
            except Exception as exc:  # noqa: BLE001 - the failing kernel is the finding
                kernel["error"] = f"{type(exc).__name__}: {exc}"
            facts["kernels"].append(kernel)
    if nvml is not None:
        try:
            nvml.nvmlShutdown()
        except Exception as exc:  # noqa: BLE001 - a shutdown error changes no fact
            facts["nvml_shutdown_error"] = str(exc)
    return facts


# ----------------------------------------------------------------------------------------------- judge
def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdecimal())


def driver_floor(facts: dict[str, Any]) -> str | None:
    """The driver the image needs: TORCHIMAGES_DRIVER_MIN (our images), else the table by CUDA major."""
    if facts.get("driver_min_env"):
        return str(facts["driver_min_env"])
    cuda = facts.get("torch_cuda")
    return DRIVER_FLOOR.get(int(cuda.split(".")[0])) if cuda else None


def why_no_gpu(facts: dict[str, Any]) -> tuple[str, str, Owner]:
    """(cause, remedy, owner) when no GPU is usable, in the order a user should look."""
    if facts.get("torch_cuda") is None:
        return ("this is a CPU build of torch (torch.version.cuda is None)",
                ("Use a CUDA image of the matrix (e.g. a -cuda13.x- tag), or install a CUDA build of torch."), "image")
    if not facts.get("device_nodes"):
        return ("no /dev/nvidia* device nodes: the container was started without GPUs",
                ("Start it with `docker run --gpus all` (NVIDIA Container Toolkit installed on the host); on "
                "Kubernetes request nvidia.com/gpu in the pod's resources."), "job")
    if not facts.get("nvml_library"):
        return ("/dev/nvidia* exist but libnvidia-ml.so is missing: the container toolkit is not injecting the driver",
                ("Install/configure the NVIDIA Container Toolkit (`nvidia-ctk runtime configure`) and keep "
                "NVIDIA_DRIVER_CAPABILITIES=compute,utility in the image."), "host")
    return (f"NVML does not initialise: {facts.get('nvml_error')}",
            "Check `nvidia-smi` on the host; the driver may be too old for this CUDA build or not loaded.", "host")


class Findings:
    """Problems found, each with its severity, code and owner; the first failure names the result's code."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, severity: Status, code: str, text: str, remedy: str, owner: Owner) -> None:
        self.items.append({"severity": severity, "code": code, "owner": owner, "text": text, "remedy": remedy})

    def apply(self, result: CheckResult, ok_summary: str) -> CheckResult:
        result.data["findings"] = self.items
        for severity in (FAIL, WARN):
            hits = [f for f in self.items if f["severity"] == severity]
            if hits:
                remedies = list(dict.fromkeys(f["remedy"] for f in hits))
                result.details += [f"{f['severity']}: [{f['code']}, {f['owner']}] {f['text']}" for f in self.items]
                return result.verdict(severity, hits[0]["code"], "; ".join(f["text"] for f in hits),
                                      " ".join(remedies), hits[0]["owner"])
        result.summary = ok_summary
        return result


def _health(dev: dict[str, Any], found: Findings) -> None:
    i, name = dev.get("index"), dev.get("name")
    where = f"device {i} ({name}, {dev.get('pci_bus_id') or 'bus ?'})"
    ecc = dev.get("ecc") or [None, None]
    vol, agg = dev.get("ecc_volatile_uncorrectable"), dev.get("ecc_aggregate_uncorrectable")
    if vol:
        found.add(FAIL, "ECC_UNCORRECTABLE", f"{where}: {vol} volatile uncorrectable ECC error(s) since the last reset",
                  "Drain the node, reset the GPU and run `dcgmi diag -r 3`; repeated errors mean RMA.", "host")
    elif agg:
        found.add(WARN, "ECC_UNCORRECTABLE", f"{where}: {agg} uncorrectable ECC error(s) in its lifetime (none since reset)",
                  "Watch the count: if it grows, drain the node and run DCGM diagnostics.", "host")
    if ecc[0] is False and name and any(k in name for k in ("H100", "H200", "A100", "B200", "GH200")):
        found.add(WARN, "ECC_UNCORRECTABLE", f"{where}: ECC is disabled on a data-centre GPU",
                  "Enable it: `nvidia-smi -e 1` and reset the GPU.", "host")
    if dev.get("retired_pages_pending"):
        found.add(FAIL, "RETIREMENT_PENDING", f"{where}: retired pages pending (take effect at the next reset)",
                  "Drain the node and reset the GPU (nvidia-smi -r or reboot).", "host")
    remap = dev.get("row_remap") or {}
    if remap.get("failed"):
        found.add(FAIL, "ROW_REMAP_FAILED", f"{where}: an HBM row remap failed (no spare rows left)",
                  "Take the GPU out of service (RMA).", "host")
    elif remap.get("pending"):
        found.add(FAIL, "RETIREMENT_PENDING", f"{where}: row remap pending (takes effect at the next reset)",
                  "Drain the node and reset the GPU (nvidia-smi -r or reboot).", "host")
    reasons = throttle_names(dev.get("throttle_reasons"))
    hard, soft = sorted(reasons & THROTTLE_FAIL), sorted(reasons & THROTTLE_WARN)
    if hard:
        found.add(FAIL, "THROTTLED", f"{where}: clocks throttled by {', '.join(hard)}",
                  "Check cooling, power supply and the BMC event log (`nvidia-smi -q -d PERFORMANCE`).", "host")
    elif soft:
        found.add(WARN, "THROTTLED", f"{where}: clocks throttled by {', '.join(soft)}",
                  "Check cooling and airflow (`nvidia-smi -q -d TEMPERATURE`).", "host")
    temp, slow = dev.get("temperature_c"), dev.get("temperature_slowdown_c")
    if temp is not None and slow and temp >= slow - TEMP_MARGIN_C:
        found.add(WARN, "THROTTLED", f"{where}: {temp} C, at its slowdown threshold ({slow} C)",
                  "Check cooling and airflow (`nvidia-smi -q -d TEMPERATURE`).", "host")
    limit, default = dev.get("power_limit_w"), dev.get("power_default_limit_w")
    if limit and default and limit < 0.9 * default:
        found.add(WARN, "THROTTLED", f"{where}: power limit {limit:.0f} W below its default {default:.0f} W",
                  "Restore the default power limit (`nvidia-smi -pl`), unless the cap is intended.", "host")
    links = [s for s in dev.get("nvlink") or [] if s is not None]
    if any(links) and not all(links):
        down = [str(k) for k, s in enumerate(links) if not s]
        found.add(FAIL, "NVLINK_DOWN", f"{where}: NVLink link(s) {', '.join(down)} inactive of {len(links)}",
                  "Check `nvidia-smi nvlink -s`, the fabric manager and the NVSwitch trays.", "host")


def throttle_names(mask: int | None) -> set[str]:
    return {name for bit, name in THROTTLE_BITS.items() if mask and mask & bit}


def _pcie(dev: dict[str, Any], under_load: dict[str, Any] | None, found: Findings) -> None:
    where = f"device {dev.get('index')} ({dev.get('name')})"
    gen_max, width_max = dev.get("pcie_gen_max"), dev.get("pcie_width_max")
    now = under_load or {}
    gen = now.get("gen", dev.get("pcie_gen")) if under_load else dev.get("pcie_gen")
    width = now.get("width", dev.get("pcie_width")) if under_load else dev.get("pcie_width")
    if gen is None or width is None or gen_max is None or width_max is None:
        return
    # Idle GPUs lower the link generation to save power; only a reading under load can prove a downgrade.
    gen_low = gen < gen_max and under_load is not None
    if gen_low or width < width_max:
        found.add(FAIL, "PCIE_DOWNGRADED", f"{where}: PCIe link Gen{gen} x{width}"
                  f"{' under load' if under_load else ''}, capable of Gen{gen_max} x{width_max}",
                  "Reseat the GPU or its riser and check the BIOS PCIe settings (`nvidia-smi -q -d PCI`).", "host")
    gpu_max = dev.get("pcie_gen_gpu_max")
    if gpu_max and gen_max < gpu_max:
        found.add(WARN, "PCIE_DOWNGRADED", f"{where}: the slot runs at most Gen{gen_max}, the GPU supports Gen{gpu_max}",
                  "Move the GPU to a slot (or riser) of its generation, or check the BIOS link speed setting.", "host")


PERF_FIGURES = (("d2d_GBps", "d2d_copy_GBps", "device-to-device copy", "GB/s", "BANDWIDTH_LOW"),
                ("h2d_GBps", "h2d_pinned_GBps", "pinned host-to-device copy", "GB/s", "BANDWIDTH_LOW"),
                ("d2h_GBps", "d2h_pinned_GBps", "pinned device-to-host copy", "GB/s", "BANDWIDTH_LOW"),
                ("bf16_TFLOPs", "bf16_matmul_TFLOPs", "bf16 matmul", "TFLOP/s", "COMPUTE_LOW"))


def _perf_judge(perf: dict[str, Any], name: str | None, result: CheckResult, found: Findings) -> None:
    i = perf["index"]
    base = baselines.for_model(name)
    if base is None:
        result.details.append(f"device {i}: no baseline for '{name}' in verify/baselines.yaml: figures reported, not judged")
    for key, bkey, what, unit, code in PERF_FIGURES:
        value = perf.get(key)
        if value is None:
            continue
        result.metric(f"{key}_dev{i}", value, unit)
        figure = (base or {}).get(bkey)
        if not figure:
            result.details.append(f"device {i}: {what} {value} {unit}")
            continue
        verdict, ratio = baselines.judge_ratio(float(value), float(figure["value"]))
        result.metric(f"{key}_ratio_dev{i}", ratio, "x")
        result.details.append(f"device {i}: {what} {value} {unit} = {ratio:.2f}x baseline {figure['value']} ({figure['source']})")
        if verdict != PASS:
            found.add(FAIL if verdict == FAIL else WARN, code, f"device {i}: {what} {value} {unit} is {ratio:.2f}x the {name} baseline "
                      f"{figure['value']} {unit}", "Compare with another node of the same model; check PCIe/NVLink "
                      "state, clocks, throttling and other processes on the GPU (`nvidia-smi`).", "host")


def _sdc_judge(sdc: list[dict[str, Any]], found: Findings) -> None:
    groups: dict[tuple[Any, Any], list[tuple[int, str]]] = {}
    for entry in sdc:
        digests = entry.get("digests") or []
        if len(set(digests)) > 1:
            found.add(FAIL, "SDC_MISMATCH", f"device {entry['index']}: the same matmul gave {len(set(digests))} "
                      f"different results in {len(digests)} runs", "Drain the node and run `dcgmi diag -r 4`; RMA the GPU.",
                      "host")
        elif digests:
            groups.setdefault((entry.get("name"), entry.get("sm_count")), []).append((entry["index"], digests[0]))
    for (name, _), members in groups.items():
        values = [d for _, d in members]
        if len(set(values)) > 1:
            majority = max(set(values), key=values.count)
            odd = [str(i) for i, d in members if d != majority]
            found.add(FAIL, "SDC_MISMATCH", f"device(s) {', '.join(odd)} compute a different matmul result than the "
                      f"other {name} devices", "Drain the node and run `dcgmi diag -r 4` on those GPUs; RMA them.", "host")


def judge(facts: dict[str, Any], options: Options) -> CheckResult:
    result = CheckResult("gpu", PASS, "")
    torch_cuda, devices = facts.get("torch_cuda"), facts.get("devices") or []
    driver, cuda_driver = facts.get("driver"), facts.get("cuda_driver")
    result.details.append(f"torch {facts.get('torch')}, built for CUDA {torch_cuda or 'none (CPU build)'}")
    result.data.update(driver=driver, cuda_driver=cuda_driver, devices=devices)
    result.metric("nvml_devices", len(devices), "count")

    if not devices or torch_cuda is None:
        cause, remedy, owner = why_no_gpu(facts)
        if facts.get("nvml_error"):
            result.details.append(f"NVML: {facts['nvml_error']}")
        status = FAIL if options.expect_gpus > 0 else SKIP
        return result.verdict(status, "GPU_NOT_VISIBLE", f"no GPU visible: {cause}",
                              remedy if status == FAIL else remedy + " (--expect-gpus N makes this a failure)", owner)

    result.details.append(f"driver {driver} (supports CUDA up to {cuda_driver}); {len(devices)} device(s): " + "; ".join(
        f"{d.get('index')}: {d.get('name')}, {(d.get('memory_bytes') or 0) / 2**30:.0f} GiB, sm_{str(d.get('cc') or '?').replace('.', '')}, "
        f"{d.get('pci_bus_id')}, {d.get('uuid')}" for d in devices))
    found = Findings()
    floor = driver_floor(facts)
    if floor and driver and _version(driver) < _version(floor):
        found.add(FAIL, "DRIVER_TOO_OLD", f"driver {driver} is too old for CUDA {torch_cuda} (needs >= {floor}"
                  f"{', from ' + DRIVER_MIN_ENV if facts.get('driver_min_env') else ''})",
                  "Update the host driver, or pick an image built for an older CUDA.", "host")
    elif cuda_driver and _version(cuda_driver) < _version(torch_cuda):
        found.add(WARN, "DRIVER_TOO_OLD", f"driver supports CUDA {cuda_driver} < {torch_cuda}: running under "
                  "minor-version compatibility (no PTX JIT)",
                  "Update the driver to one that supports this CUDA version natively.", "host")
    count = facts.get("torch_devices") or 0
    result.metric("torch_devices", count, "count")
    if not facts.get("cuda_available"):
        decoded = decode(facts.get("cuda_init_error"))
        if decoded:
            found.add(FAIL, decoded.code, f"CUDA does not initialise: {decoded.cause}", decoded.fix, decoded.owner)
        else:
            found.add(FAIL, "GPU_NOT_VISIBLE", "torch.cuda.is_available() is False although NVML sees devices"
                      + (f": {facts['cuda_init_error']}" if facts.get("cuda_init_error") else ""),
                      "Check that the driver supports this CUDA build and that no other process holds the GPUs "
                      "in exclusive mode.", "host")
    elif count != len(devices):
        visible = facts.get("cuda_visible_devices")
        found.add(WARN if visible else FAIL, "DEVICE_COUNT_MISMATCH", f"torch sees {count} device(s), NVML {len(devices)}"
                  + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible else ""),
                  "Check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and the device request.", "job")
    arch_list = facts.get("arch_list") or []
    if facts.get("cuda_available"):
        result.details.append(f"torch arch list: {' '.join(arch_list)}")
    ptx = [a for a in arch_list if a.startswith("compute_")]
    bad_arch = set()
    for i, cc in enumerate(facts.get("capabilities") or []):
        major, minor = (int(x) for x in cc.split("."))
        sm = f"sm_{major}{minor}"
        if sm not in arch_list and not any(int(a.split("_")[1]) <= major * 10 + minor for a in ptx):
            bad_arch.add(i)
            found.add(FAIL, "ARCH_NOT_IN_BUILD", f"device {i} is {sm}, not in this build's arch list ({' '.join(arch_list)})",
                      "Use a torch build that includes this architecture (another image tag).", "image")
    for k in facts.get("kernels") or []:
        if k["index"] in bad_arch:
            continue
        if k.get("error"):
            decoded = decode(k["error"])
            found.add(FAIL, decoded.code if decoded else "KERNEL_FAILED", f"device {k['index']}: a kernel failed: "
                      f"{decoded.cause if decoded else k['error']}", decoded.fix if decoded else
                      "Drain the node and run `dcgmi diag -r 3`; check dmesg for Xid errors.",
                      decoded.owner if decoded else "host")
        elif k.get("max_abs_error") is not None:
            result.metric(f"matmul_max_abs_error_dev{k['index']}", k["max_abs_error"], "abs")
            if k["max_abs_error"] > 1e-1:
                found.add(FAIL, "KERNEL_FAILED", f"device {k['index']}: a 256x256 matmul is wrong (max error "
                          f"{k['max_abs_error']:.3g})", "Drain the node and run `dcgmi diag -r 3`.", "host")
    if options.expect_gpus and count < options.expect_gpus:
        found.add(FAIL, "GPU_NOT_VISIBLE", f"expected {options.expect_gpus} GPU(s), torch sees {count}",
                  "Request the GPUs in the job (`--gpus all`, nvidia.com/gpu) or lower --expect-gpus.", "job")
    perf_by_index = {p["index"]: p for p in facts.get("perf") or []}
    for dev in devices:
        _health(dev, found)
        perf = perf_by_index.get(dev.get("index"))
        _pcie(dev, (perf or {}).get("pcie_under_load"), found)
        if perf and perf.get("throttle_under_load") is not None:
            hard = sorted(throttle_names(perf["throttle_under_load"]) & THROTTLE_FAIL)
            if hard and not (throttle_names(dev.get("throttle_reasons")) & THROTTLE_FAIL):
                found.add(FAIL, "THROTTLED", f"device {dev.get('index')}: under load clocks throttled by {', '.join(hard)}",
                          "Check cooling, power supply and the BMC event log.", "host")
        if perf:
            _perf_judge(perf, dev.get("name"), result, found)
    _sdc_judge(facts.get("sdc") or [], found)
    if facts.get("sdc"):
        result.details.append(f"SDC canary: {len(facts['sdc'])} device(s) x {len(facts['sdc'][0].get('digests') or [])} "
                              "runs of a 2048^3 fp32 matmul compared bit for bit")
    mig = [str(d.get("index")) for d in devices if (d.get("mig") or [False])[0]]
    if mig:
        result.details.append(f"MIG enabled on device(s) {', '.join(mig)}")
    no_persist = [str(d.get("index")) for d in devices if d.get("persistence") is False]
    if no_persist:
        result.details.append(f"persistence mode off on device(s) {', '.join(no_persist)} (first CUDA call is slower)")
    return found.apply(result, f"{count} GPU(s) ({devices[0].get('name')}), driver {driver}, CUDA {torch_cuda}; "
                               f"healthy, kernels correct" + ("; figures within baselines" if perf_by_index else ""))


def run(options: Options) -> CheckResult:
    return judge(probe(options), options)
