"""gpu: the driver, the devices, and whether this torch build can really use them."""
from __future__ import annotations

import ctypes.util
import glob
import os

from ..options import Options
from ..result import FAIL, PASS, SKIP, WARN, CheckResult

DRIVER_FLOOR = {12: "525.60.13", 13: "580.65.06"}   # minor-version compatibility per CUDA major


def _nvml_library_present() -> bool:
    if ctypes.util.find_library("nvidia-ml"):
        return True
    return any(glob.glob(p) for p in ("/usr/lib*/**/libnvidia-ml.so*", "/usr/local/nvidia/lib*/libnvidia-ml.so*"))


def why_no_gpu(torch_cuda: str | None, nvml_error: str | None) -> tuple[str, str]:
    """(cause, remedy) when no GPU is usable, in the order a user should look."""
    if torch_cuda is None:
        return ("this is a CPU build of torch (torch.version.cuda is None)",
                "Use a CUDA image of the matrix (e.g. a -cuda13.x- tag), or install a CUDA build of torch.")
    if not glob.glob("/dev/nvidia[0-9]*"):
        return ("no /dev/nvidia* device nodes: the container was started without GPUs",
                "Start it with `docker run --gpus all` (NVIDIA Container Toolkit installed on the host); on "
                "Kubernetes request nvidia.com/gpu in the pod's resources.")
    if not _nvml_library_present():
        return ("/dev/nvidia* exist but libnvidia-ml.so is missing: the container toolkit is not injecting the driver",
                "Install/configure the NVIDIA Container Toolkit (`nvidia-ctk runtime configure`) and keep "
                "NVIDIA_DRIVER_CAPABILITIES=compute,utility in the image.")
    return (f"NVML does not initialise: {nvml_error}",
            "Check `nvidia-smi` on the host; the driver may be too old for this CUDA build or not loaded.")


def _driver_ok(driver: str, cuda_major: int) -> bool:
    floor = DRIVER_FLOOR.get(cuda_major)
    to_tuple = lambda v: tuple(int(x) for x in v.split(".") if x.isdigit())  # noqa: E731
    return floor is None or to_tuple(driver) >= to_tuple(floor)


def run(options: Options) -> CheckResult:
    result = CheckResult("gpu", PASS, "")
    import torch

    torch_cuda = torch.version.cuda
    result.details.append(f"torch {torch.__version__}, built for CUDA {torch_cuda or 'none (CPU build)'}")
    devices, driver, cuda_driver, nvml_error = [], None, None, None
    try:
        import pynvml
        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
        v = pynvml.nvmlSystemGetCudaDriverVersion()
        cuda_driver = f"{v // 1000}.{v % 1000 // 10}"
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
            devices.append({"index": i, "name": name.decode() if isinstance(name, bytes) else name,
                            "memory_bytes": int(pynvml.nvmlDeviceGetMemoryInfo(h).total), "cc": f"{major}.{minor}"})
        pynvml.nvmlShutdown()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        nvml_error = f"{type(exc).__name__}: {exc}"
    result.data.update(driver=driver, cuda_driver=cuda_driver, devices=devices)
    result.metric("nvml_devices", len(devices), "count")

    if not devices or torch_cuda is None:
        cause, remedy = why_no_gpu(torch_cuda, nvml_error)
        result.status = FAIL if options.expect_gpus > 0 else SKIP
        result.summary = f"no GPU visible: {cause}"
        if nvml_error:
            result.details.append(f"NVML: {nvml_error}")
        result.remedy = remedy if result.status == FAIL else remedy + " (--expect-gpus N makes this a failure)"
        return result

    result.details.append(f"driver {driver} (supports CUDA up to {cuda_driver}); {len(devices)} device(s): " +
                          "; ".join(f"{d['index']}: {d['name']}, {d['memory_bytes'] / 2**30:.0f} GiB, sm_{d['cc'].replace('.', '')}" for d in devices))
    problems, warnings = [], []
    cuda_major = int(torch_cuda.split(".")[0])
    if not _driver_ok(driver, cuda_major):
        problems.append(f"driver {driver} is too old for CUDA {torch_cuda} (needs >= {DRIVER_FLOOR[cuda_major]})")
    elif tuple(map(int, cuda_driver.split("."))) < tuple(map(int, torch_cuda.split("."))):
        warnings.append(f"driver supports CUDA {cuda_driver} < {torch_cuda}: running under minor-version compatibility (no PTX JIT)")
    available = torch.cuda.is_available()
    count = torch.cuda.device_count() if available else 0
    result.metric("torch_devices", count, "count")
    if not available:
        problems.append("torch.cuda.is_available() is False although NVML sees devices")
    elif count != len(devices):
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        (warnings if visible else problems).append(f"torch sees {count} device(s), NVML {len(devices)}"
                                                   + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible else ""))
    arch_list = torch.cuda.get_arch_list() if available else []
    result.details.append(f"torch arch list: {' '.join(arch_list)}")
    for i in range(count):
        major, minor = torch.cuda.get_device_capability(i)
        sm, ptx = f"sm_{major}{minor}", [a for a in arch_list if a.startswith("compute_")]
        if sm not in arch_list and not any(int(a.split("_")[1]) <= major * 10 + minor for a in ptx):
            problems.append(f"device {i} is {sm}, not in this build's arch list ({' '.join(arch_list)})")
            continue
        try:
            a = torch.randn(256, 256, device=f"cuda:{i}")
            b = torch.randn(256, 256, device=f"cuda:{i}")
            got = (a @ b).cpu()
            want = a.cpu().double() @ b.cpu().double()
            err = float((got.double() - want).abs().max())
            result.metric(f"matmul_max_abs_error_dev{i}", err, "abs")
            if err > 1e-1:
                problems.append(f"device {i}: a 256x256 matmul is wrong (max error {err:.3g})")
        except Exception as exc:  # noqa: BLE001 - the failing kernel is the finding
            problems.append(f"device {i}: a kernel failed: {type(exc).__name__}: {exc}")
    if options.expect_gpus and count < options.expect_gpus:
        problems.append(f"expected {options.expect_gpus} GPU(s), torch sees {count}")
    result.details += [f"warning: {w}" for w in warnings]
    if problems:
        result.status, result.summary = FAIL, "; ".join(problems)
        result.remedy = ("Match the image to the node: a CUDA 13.x build needs driver >= 580 and sm_75 or newer; "
                         "a 12.x build driver >= 525.60.13. Pick another image tag or update the driver.")
    elif warnings:
        result.status, result.summary = WARN, "; ".join(warnings)
        result.remedy = "Update the driver to one that supports this CUDA version natively."
    else:
        result.summary = f"{count} GPU(s) ({devices[0]['name']}), driver {driver}, CUDA {torch_cuda}; kernels correct"
    return result
