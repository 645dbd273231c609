"""NVML refusing to start, as nvidia-smi, the container toolkit and DCGM print it (`Failed to initialize NVML: Driver/
library version mismatch`, `nvidia-container-cli: initialization error: nvml error: driver/library version mismatch`,
`NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`), with the kernel module's version
where `/proc/driver/nvidia/version` is quoted, or nvidia-smi's `Driver Version`: into the gpu facts' `nvml_error`
and `driver`; NVML's library not found is `nvml_library` false. Judged by the gpu check's rule for no usable GPU
(verify/checks/gpu/node.py): a driver whose kernel module and library differ is a fault whether GPUs were expected or
not; no driver loaded is one only where GPUs are expected; no library in a process on a node whose driver answers is
the process's start. A GPU whose handle NVML cannot get (`GPU is lost`, `Unknown Error`) is recorded lost, by its PCI
address, its UUID or (the device plugin's) its NVML index."""
from __future__ import annotations

import re
from typing import Any

from ..shared.fastre import guarded
from . import driverversion, inforom
from .said import said

# (the container toolkit's `nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: ...`
# too: its hook on the host found no driver library, the host's driver install; and its `detection error: driver error:
# timed out`: the host's driver did not answer the hook, verify/checks/gpu/node.py)
# (the toolkit's packages install the binary as `nvidia-container-cli.real` behind a wrapper: it names itself so; its
# `device error: 1: unknown device`, a GPU the container asked for that the node lacks, is the job's request, read up
# to the `\\n` docker's quoting puts after it, as its `nvml error: unknown error` is (batch 298); bounded: a hostile
# line of repeated prefixes stays linear)
_CLI = r"nvidia-container-cli(?:\.real)?: "
_REFUSED = guarded(re.compile(r"Failed to initialize NVML: [^\n]+|nvml error: [^\n\\]+|NVIDIA-SMI has failed because it "
                      r"couldn't communicate with the NVIDIA driver[^\n]*|" + _CLI + r"initialization error: "
                      r"load library failed: libnvidia-ml[^\n]*|" + _CLI + r"[\w ]*error: driver (?:rpc )?"
                      r"error: [^\n]*|" + _CLI + r"device error: [^\n\\]{0,200}?unknown device[^\n\\]{0,200}",
                      re.IGNORECASE))
_MODULE = driverversion.VERSION
# nvidia-smi's own `Driver Version` (the -q header, `Driver Version  : 450.80.02`; the table's `Driver Version:
# 450.80.02`), pasted beside the refusal from the host: the node's driver answers
_SMI_DRIVER = re.compile(r"\bDriver Version\s*:\s*(\d+\.\d+(?:\.\d+)?)")
# NVML's library itself not found by the process (NVML_ERROR_LIBRARY_NOT_FOUND: `NVML Shared Library Not Found`,
# pynvml's `NVMLError_LibraryNotFound`, go-nvml's `ERROR_LIBRARY_NOT_FOUND` and the older bindings' `could not load
# NVML library`): no libnvidia-ml in the process (`nvml_library` false), not an error of a loaded NVML
_NO_LIBRARY = guarded(re.compile(r"Shared Library Not Found|LibraryNotFound|LIBRARY_NOT_FOUND|could not load NVML library",
                         re.IGNORECASE))


def _refused(text: str) -> re.Match[str] | None:
    """NVML's refusal where a tool says it, never where a how-to or a program's source mentions it (explain/said.py)."""
    for m in _REFUSED.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1          # the line's start: said() reads what is before the message
        if said(text[start:m.start()], m.start() - start):
            return m
    return None

# nvidia-smi when NVML cannot get one GPU's handle (`Unable to determine the device handle for GPU 0000:03:00.0: GPU is
# lost.  Reboot the system to recover this GPU`, or `: Unknown Error`; older drivers print `for GPU0000:4F:00.0`, and
# `nvidia-smi -L` prints `for gpu 0000:18:00.0` in lower case, among the GPUs that answer): that GPU
# is lost (FACTS.md `lost`), whatever its address reads: one a poster shortened or masked (`GPU 000:BA:80.0`, `GPU
# ******`) is still a GPU lost, recorded without an address (never a guessed one); newer drivers put the GPU's index
# before its address (`for GPU0: 0000:09:00.0: Unknown Error`); Windows' nvidia-smi (a Hyper-V GPU-PV guest, batch
# 276) says `Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error`
_HANDLE = re.compile(r"Unable to (?:determine|detect) the device handle for GPU ?(?:\d{1,3}: )?([^\s:]*(?::[^\s:]+)*?)"
                     r": (GPU is lost|Unknown Error)", re.IGNORECASE)
_BUS = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[01][0-9A-Fa-f]\.[0-7]")


# an NVML binding's lost GPU by its UUID (go-nvml's `ERROR_GPU_IS_LOST`, pynvml's `NVMLError_GPUIsLost`, as gpud and
# exporters log a query that failed: `failed to get remapped rows for GPU-ac89...: ... ERROR_GPU_IS_LOST`)
_LOST_UUID = re.compile(r"\b(GPU-[0-9a-fA-F]{8}-[0-9a-fA-F-]{27})\b[^\n]*?(?:ERROR_GPU_IS_LOST|NVMLError_GPUIsLost)")


# the k8s device plugin's go-nvml binding, which names a GPU by its NVML index only (`error creating nvml.Device 5:
# nvml: GPU is lost`; newer releases `error getting device handle for index '5': GPU is lost`): that GPU is lost;
# `... for index '0': Unknown Error` (batch 305: the plugin panics at start) is the handle nvidia-smi's `Unable to
# determine the device handle ...: Unknown Error` fails to get: that GPU does not answer
_LOST_INDEX = guarded(re.compile(r"(?:\bnvml\.Device |device handle for index '?)(\d{1,3})'?: (?:nvml: )?"
                                 r"(GPU is lost|Unknown Error)"))


# Slurm's NVML GPU plugin (gpu_nvml.c) when a query of a job's GPU fails (`slurmstepd: error: NVML: Failed to get
# usage(15): GPU is lost`: 15 is NVML_ERROR_GPU_IS_LOST): one GPU of the job's is lost, which one not printed (batch 267)
_SLURM_LOST = re.compile(r"\bNVML: Failed to get [\w ]{1,40}\(15\): GPU is lost")


# pynvml's (nvidia-ml-py's) exception for a handle it could not get, as a Python traceback prints it: the call
# (`nvmlDeviceGetHandleByIndex(device)`, torch's own `_get_pynvml_handler` among its callers) in the frames above the
# exception's line (`pynvml.NVMLError_Unknown: Unknown Error`, `NVMLError_GpuIsLost: GPU is lost`): NVML initialised
# and that GPU did not answer, as nvidia-smi's `Unable to determine the device handle` says; its index is the
# program's variable, not printed
_BINDING_LOST = re.compile(r"\bNVMLError_(GpuIsLost|Unknown): [^\n]*")
_HANDLE_CALL = re.compile(r"\bnvmlDeviceGetHandleBy(?:Index|UUID|PciBusId)\w*\(")
_TRACE_SPAN = 3000


def _binding_lost(text: str) -> list[str]:
    """pynvml's error names, one per exception its handle call raised."""
    return [m.group(1) for m in _BINDING_LOST.finditer(text)
            if _HANDLE_CALL.search(text, max(0, m.start() - _TRACE_SPAN), m.start())]


def _bus(bus: str) -> str:
    domain, rest = bus.split(":", 1)
    return f"{int(domain, 16):08X}:{rest.upper()}"


def _bus_or_none(printed: str) -> str | None:
    """The PCI address as the facts hold it, or None where what was printed is none (masked, shortened, a device
    number past 0x1f)."""
    return _bus(printed) if _BUS.fullmatch(printed) else None


def detect(text: str) -> bool:
    return _refused(text) is not None or any(p.search(text) for p in (_HANDLE, _LOST_UUID, _LOST_INDEX, _SLURM_LOST)) \
        or inforom.named(text) != [] or ("NVMLError_" in text and _binding_lost(text) != [])


def error_of(text: str) -> str | None:
    """NVML's refusal as the facts' `nvml_error` holds it (a library not found is `nvml_library` false, none)."""
    refused = _refused(text)
    return refused.group(0).strip()[:400] if refused and not _NO_LIBRARY.search(refused.group(0)) else None


def parse(text: str) -> dict[str, Any]:
    refused = _refused(text)
    module = _MODULE.search(text) or _SMI_DRIVER.search(text)
    missing = bool(refused and _NO_LIBRARY.search(refused.group(0)))
    lost: list[dict[str, Any]] = [
        {"index": None, "pci_bus_id": _bus_or_none(m.group(1)), "lost": True,
         "nvml_errors": {"handle": "GPU_IS_LOST" if m.group(2).lower() == "gpu is lost" else "Unknown Error"}}
        for m in _HANDLE.finditer(text)]
    lost += [{"index": None, "uuid": uuid, "lost": True, "nvml_errors": {"handle": "GPU_IS_LOST"}}
             for uuid in dict.fromkeys(m.group(1) for m in _LOST_UUID.finditer(text))]
    by_index = {int(m.group(1)): m.group(2) for m in _LOST_INDEX.finditer(text)}
    lost += [{"index": index, "lost": True,
              "nvml_errors": {"handle": "GPU_IS_LOST" if said.lower() == "gpu is lost" else "Unknown Error"}}
             for index, said in by_index.items()]
    lost += [{"index": None, "lost": True, "nvml_errors": {"handle": "GPU_IS_LOST" if name == "GpuIsLost" else
                                                            "Unknown Error"}} for name in _binding_lost(text)[:1]]
    if not lost and _SLURM_LOST.search(text):
        lost.append({"index": None, "lost": True, "nvml_errors": {"handle": "GPU_IS_LOST"}})
    # nvidia-smi's InfoROM warning on its own (its table cut away): the GPU it names, by bus id
    lost += [{"index": None, "pci_bus_id": _bus(bus), "nvml_errors": {"inforom": inforom.CORRUPTED}}
             for bus in inforom.named(text) if _bus(bus) not in {d.get("pci_bus_id") for d in lost}]
    return {"torch": None, "devices": lost or None,
            "nvml_error": error_of(text),
            **({"nvml_library": False} if missing else {}),
            "driver": module.group(1) if module else None}
