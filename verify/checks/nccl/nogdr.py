"""GPUs that have no GPUDirect RDMA by design (issue 35, batch 110): on them NCCL stages every IB/RoCE transfer
through host memory whatever the node runs, so a log without `/GDRDMA` (`GDR 0`, `GPU Direct RDMA Disabled for HCA`)
names nothing missing on the host: no nvidia-peermem or dma-buf to load, no drain.

GB10 (DGX Spark and its OEM twins): one SoC whose GPU shares the CPU's LPDDR5X. NVIDIA's DGX Spark porting guide
(docs.nvidia.com/dgx/dgx-spark-porting-guide/porting/cuda.html, "GPUDirect RDMA"): memory from cudaMalloc "cannot be
coherently accessed ... by I/O peripherals like PCI Express devices (e.g. the Mellanox NIC). Hence the GPUDirect RDMA
technology is not supported, and ... nvidia-peermem, dma-buf or GDRCopy, do not work."

GeForce boards (issue 35, batch 157: rtx3090-two-nodes-could-not-enable-p2p-...-geforce-by-design): NVIDIA's
GPUDirect RDMA guide (docs.nvidia.com/cuda/gpudirect-rdma, "Overview") names the data-centre (Tesla) and professional
(Quadro, RTX) GPUs only; the driver gives a GeForce card neither peer-memory nor dma-buf export, so NCCL stages through
host memory on every such node, and a maintainer says as much of the RTX 3090 (NVIDIA/nccl#1516). Only the word
`GeForce` decides: a professional RTX (`RTX A6000`, `RTX 5880 Ada`) can, and a bare `RTX 3090` is the poster's words.
Pure."""
from __future__ import annotations

import re

from ...facts import NcclFacts

# the GPU's name as NVML, torch and nccl-tests print it (`NVIDIA GB10`), or the system's; a word, so GB100/GB102
# never match
_BY_DESIGN = re.compile(r"\bGB10\b|\bDGX Spark\b", re.IGNORECASE)
_GEFORCE = re.compile(r"\bGeForce\b", re.IGNORECASE)


def no_gdr_by_design(facts: NcclFacts) -> str | None:
    """Why this record's GPU cannot do GPUDirect RDMA at all, or None (a GPU that can, or one not named)."""
    name = str(facts.get("device_name") or "")
    if _BY_DESIGN.search(name):
        return f"{name.strip()} shares system memory with the CPU: no GPUDirect RDMA by design, NVIDIA's DGX Spark porting guide"
    if _GEFORCE.search(name):
        return f"{name.strip()} is a GeForce board: no GPUDirect RDMA by design (NVIDIA's GPUDirect RDMA guide names data-centre and professional GPUs)"
    return None
