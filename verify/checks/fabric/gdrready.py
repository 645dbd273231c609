"""GPUDirect RDMA readiness (nvidia_peermem loaded, or dma-buf: the open GPU kernel module on kernel 5.12+), and what
a record of the peer-memory plumbing alone proves where no adapter or device was read. Pure.

- A kernel below 5.12 has no dma-buf GPUDirect path whatever the GPU module's flavour (FACTS.md `gpu_module`), so
  there `peermem` false alone decides it: GPUDirect RDMA is off (a RHEL 7 node whose `modprobe nv_peer_mem` is
  refused, `Unknown symbol ib_register_peer_memory_client`: rhel7.8-ofed-5.0-modprobe-nv-peer-mem-...). With the
  kernel unknown (or 5.12+) and the module's flavour unknown, `peermem` false decides nothing (dma-buf may carry it).
- `peermem` true (gpud's `lsmod`: `nvidia_peermem 16384 0`, ib_core holding it) is a sound reading of the one thing
  a node does for peer-memory GPUDirect RDMA: the verdict rests on it, as on a memlock limit read alone, and says the
  adapters, the container and the image were not read.
- A memlock limit read as unlimited beside a call that pinned memory failing with ENOMEM: the limit is not what ran
  out (the adapter's per-process resources the job's peers take: the nccl check judges the failure): no memlock
  verdict, and the limit, sound, is what the verdict rests on (700-nodes-nccl-2.20.3-alltoall-ibv-create-cq-...).
"""
from __future__ import annotations

import re
from typing import Any

from ...facts import FabricFacts
from ...options import human_bytes
from ...result import WARN, CheckResult

DMABUF_KERNEL = (5, 12)
GDR_REMEDY = "`modprobe nvidia_peermem` on the host, or the open GPU kernel module on kernel 5.12+ (dma-buf)."
NOT_READ = "the host's adapters, the container's devices and the image's libraries were not read: not assessed"


def kernel_at_least(release: Any, floor: tuple[int, int]) -> bool | None:
    found = re.match(r"(\d+)\.(\d+)", str(release or ""))
    return None if not found else (int(found.group(1)), int(found.group(2))) >= floor


def gdr(facts: FabricFacts) -> tuple[bool | None, str]:
    """GPUDirect RDMA readiness: nvidia_peermem loaded, or dma-buf (open GPU module on kernel 5.12+)."""
    if facts.get("peermem"):
        return True, "nvidia_peermem loaded"
    recent = kernel_at_least(facts.get("kernel"), DMABUF_KERNEL)
    dmabuf = facts.get("gpu_module") == "open" and recent
    if dmabuf:
        return True, f"dma-buf (open GPU kernel module, kernel {facts.get('kernel')})"
    if facts.get("peermem") is False and ((facts.get("gpu_module") is not None and dmabuf is False) or recent is False):
        module = f"{facts.get('gpu_module')} GPU kernel module, " if facts.get("gpu_module") else ""
        return False, (f"nvidia_peermem not loaded and no dma-buf ({module}kernel {facts.get('kernel')}"
                       f"{' below 5.12' if recent is False else ''})")
    return None, "not judged (no GPU driver or module list visible)"


def plumbing_alone(facts: FabricFacts, result: CheckResult) -> CheckResult | None:
    """The verdict of a record with no adapter, device or verbs list read, where the peer-memory plumbing or an
    unlimited limit is what it holds; None where neither decides (the caller says nothing was judged)."""
    ready, why = gdr(facts)
    limit = facts.get("memlock")
    read = "unlimited" if limit == "unlimited" else human_bytes(limit) \
        if isinstance(limit, int) and not isinstance(limit, bool) else None
    said = [f"memlock limit {read}"] if read else []
    if limit == "unlimited" and facts.get("memlock_error"):
        said[0] += (f", so the ENOMEM logged ({str(facts.get('memlock_error'))[:160]}) is not the limit's (the nccl "
                    "check judges the failure)")
    if ready is False:
        return result.verdict(WARN, "FABRIC_GDR_OFF", f"GPUDirect RDMA unavailable: {why}; NCCL stages every transfer "
                              f"through host memory; {NOT_READ}", GDR_REMEDY, "host")
    if ready:
        said.append(f"GPUDirect RDMA: {why}")
    if not said or (facts.get("memlock_error") and limit != "unlimited"):
        return None
    result.summary = "; ".join(said) + f"; {NOT_READ}"     # a pass: the judge's result starts as one
    return result
