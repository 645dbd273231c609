"""NCCL failing on CUDA error 217, `peer access is not supported between these two devices` (issue 35, batch 120).
Pure.

CUDA returns 217 (cudaErrorPeerAccessUnsupported, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) when a caller asks for peer
access a pair of GPUs cannot give: PCIe GPUs without P2P between them (L4s, T4s, GPUs under different root ports) are
built so, and CUDA says so honestly. NCCL checks peer access before it chooses its P2P transport, so 217 from NCCL is a
path of its own that skipped the check: 2.27's cuMem host buffers for the SHM transport (NVIDIA/nccl#1838, vLLM's CI
on 4x L4: `transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'`,
passing with NCCL_CUMEM_HOST_ENABLE=0; ray-project/ray#64109 on T4s). The NCCL the image ships and its defaults, not
the node: no drain."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

PEER_ACCESS = re.compile(r"Cuda failure (?:217\b(?: '[^'|\n]*')?|'peer access is not supported between these two devices')"
                         r"|peer access is not supported between these two devices")

IPC_HANDLE = re.compile(r"failed to open CUDA IPC handle|transport/p2p\.cc", re.IGNORECASE)

REMEDY = ("Set NCCL_CUMEM_HOST_ENABLE=0 in the image (NCCL's SHM transport then uses /dev/shm, not cuMem host memory "
          "shared between GPUs), or ship an NCCL release with the fix; NCCL_DEBUG=INFO names the transport.")


def peer_access_verdict(said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """The image's failure where NCCL met CUDA's 217 on a GPU pair without peer access."""
    text = " | ".join(said)
    hit = PEER_ACCESS.search(text)
    # NCCL's name, or its P2P transport's own words (transport/p2p.cc: `failed to open CUDA IPC handle : 217`, batch
    # 189, quoted without the tag): torch's own peer copy under an NCCL group is not NCCL's
    if hit is None or not ("NCCL" in text or IPC_HANDLE.search(text)):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: NCCL asked for peer access "
                          f"these GPUs cannot give ({hit.group(0).strip()[:160]}; CUDA error 217): GPUs without P2P "
                          "between them are built so, and a path of NCCL's skipped its check (2.27's cuMem host memory "
                          "for the SHM transport): the image's NCCL, not the node", REMEDY, "image")
