"""NVIDIA's nvbandwidth (github.com/NVIDIA/nvbandwidth), as its header and errors print:
`CUDA Driver Version: 12080`, `Driver Version: 560.35.03`, one line per CUDA device it uses (`Device 0: NVIDIA H200
(00000000:8f:00)`, v0.2 without the bus id: `Device 0: NVIDIA GeForce RTX 4090`; multinode: `Process 0 (host):
device 0: NVIDIA H200 (00000000:8f:00)`), the host copies' matrices (`memcpy CE CPU(row) -> GPU(column) bandwidth
(GB/s)`, its `<-` twin, one row per CPU) and a failing CUDA driver call as its CU_ASSERT prints it:
`[CUDA_ERROR_NOT_PERMITTED] operation not permitted in expression cuMemCreate(...) on host, rank = 0` (a runtime
call's: `[cudaErrorUnsupportedPtxVersion] ... in expression cudaGetLastError() ...`).
Into the gpu facts: `driver` (the driver's own version, read through NVML), `cuda_driver`,
`cuda_init_error` "none" where devices are listed (CUDA enumerated them), the single-node listing's devices (index and
name: the bus id it prints lacks the function, so it is not a `pci_bus_id`), `perf` h2d/d2h per device from the
first matrix of each direction, and each error line as a CudaError, judged by the one catalog (one it does not decode
is said, not judged). The devices are CUDA's, not NVML's: no health field is read, so the GPUs' health is not
assessed (batch 163: a healthy A100's and eight 4090s' PCIe copies)."""
from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^nvbandwidth Version: ", re.MULTILINE)
_DRIVER = re.compile(r"^Driver Version: (\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_CUDA_DRIVER = re.compile(r"^CUDA Driver Version: (\d+)\s*$", re.MULTILINE)
_DEVICE = re.compile(r"^(?:Process \d+ \([^)\n]*\): )?[Dd]evice \d+: .+?(?: \([0-9a-fA-F:.]+\))?\s*$", re.MULTILINE)
_LOCAL = re.compile(r"^Device (\d+): (.+?)(?: \([0-9a-fA-F:.]+\))?\s*$", re.MULTILINE)
_MATRIX = re.compile(r"^memcpy \w+ CPU\(row\) (->|<-) GPU\(column\) bandwidth \(GB/s\)\s*$")
# CU_ASSERT's driver-API name, CUDA_ASSERT's runtime one (`[cudaErrorUnsupportedPtxVersion] the provided PTX was
# compiled with an unsupported toolchain. in expression cudaGetLastError() in ...`, NVIDIA/nvbandwidth#61)
_ERROR = re.compile(r"^\[(?:CUDA_ERROR_|cudaError)\w+\] [^\n]* in expression [^\n]*", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_HEADER.search(text) or (_ERROR.search(text) and "nvbandwidth" in text))


def _cuda(version: str) -> str:
    """CUDA's integer version (12080) as FACTS.md writes it (12.8)."""
    n = int(version)
    return f"{n // 1000}.{n % 1000 // 10}"


def _perf(text: str) -> list[dict[str, Any]] | None:
    """Each device's host copy rates: the first matrix of each direction, its CPU 0 row (the column header names
    the devices); a cell that is no number (`N/A`) is not read."""
    perf: dict[int, dict[str, Any]] = {}
    lines = text.splitlines()
    seen: set[str] = set()
    for n, line in enumerate(lines):
        m = _MATRIX.match(line.strip())
        if not m or n + 2 >= len(lines):
            continue
        key = "h2d_GBps" if m.group(1) == "->" else "d2h_GBps"
        cols, row = lines[n + 1].split(), lines[n + 2].split()
        if key in seen or not cols or not all(c.isdigit() for c in cols) or not row or row[0] != "0" \
                or len(row) != len(cols) + 1:
            continue
        seen.add(key)
        for col, cell in zip(cols, row[1:], strict=True):
            try:
                perf.setdefault(int(col), {"index": int(col)})[key] = float(cell)
            except ValueError:
                continue
    return [perf[i] for i in sorted(perf)] or None


def parse(text: str) -> dict[str, Any]:
    driver, cuda = _DRIVER.search(text), _CUDA_DRIVER.search(text)
    devices = [{"index": int(m.group(1)), "name": m.group(2)} for m in _LOCAL.finditer(text)]
    return {"torch": None, "devices": devices or None, "driver": driver.group(1) if driver else None,
            "cuda_driver": _cuda(cuda.group(1)) if cuda else None,
            "cuda_init_error": "none" if _DEVICE.search(text) else None,
            "perf": _perf(text),
            "cuda_errors": [{"index": None, "text": m.group(0).strip()} for m in _ERROR.finditer(text)]}
