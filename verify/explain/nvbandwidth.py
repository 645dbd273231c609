"""NVIDIA's nvbandwidth (github.com/NVIDIA/nvbandwidth), as its header and errors print:
`CUDA Driver Version: 12080`, `Driver Version: 560.35.03`, one line per CUDA device it uses (`Device 0: NVIDIA H200
(00000000:8f:00)`, multinode: `Process 0 (host): device 0: NVIDIA H200 (00000000:8f:00)`), and a failing CUDA driver
call as its CU_ASSERT prints it: `[CUDA_ERROR_NOT_PERMITTED] operation not permitted in expression cuMemCreate(...)
on host, rank = 0` (a runtime call's: `[cudaErrorUnsupportedPtxVersion] ... in expression cudaGetLastError() ...`).
Into the gpu facts: `driver` (the driver's own version, read through NVML), `cuda_driver`,
`cuda_init_error` "none" where devices are listed (CUDA enumerated them), and each error line as a CudaError, judged
by the one catalog (one it does not decode is said, not judged). The devices are CUDA's, not NVML's: no health field
is read, so the GPUs' health is not assessed."""
from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^nvbandwidth Version: ", re.MULTILINE)
_DRIVER = re.compile(r"^Driver Version: (\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_CUDA_DRIVER = re.compile(r"^CUDA Driver Version: (\d+)\s*$", re.MULTILINE)
_DEVICE = re.compile(r"^(?:Process \d+ \([^)\n]*\): )?[Dd]evice \d+: .+ \([0-9a-fA-F:.]+\)\s*$", re.MULTILINE)
# CU_ASSERT's driver-API name, CUDA_ASSERT's runtime one (`[cudaErrorUnsupportedPtxVersion] the provided PTX was
# compiled with an unsupported toolchain. in expression cudaGetLastError() in ...`, NVIDIA/nvbandwidth#61)
_ERROR = re.compile(r"^\[(?:CUDA_ERROR_|cudaError)\w+\] [^\n]* in expression [^\n]*", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_HEADER.search(text) or (_ERROR.search(text) and "nvbandwidth" in text))


def _cuda(version: str) -> str:
    """CUDA's integer version (12080) as FACTS.md writes it (12.8)."""
    n = int(version)
    return f"{n // 1000}.{n % 1000 // 10}"


def parse(text: str) -> dict[str, Any]:
    driver, cuda = _DRIVER.search(text), _CUDA_DRIVER.search(text)
    return {"torch": None, "devices": None, "driver": driver.group(1) if driver else None,
            "cuda_driver": _cuda(cuda.group(1)) if cuda else None,
            "cuda_init_error": "none" if _DEVICE.search(text) else None,
            "cuda_errors": [{"index": None, "text": m.group(0).strip()} for m in _ERROR.finditer(text)]}
