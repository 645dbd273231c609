"""Causes of a failed collective that live on the node but are set by the job or the container: NCCL's shared-memory
transport out of /dev/shm, and RDMA registration out of locked memory (the memlock limit)."""
from __future__ import annotations

from ...codes import CODES
from ...facts import UNLIMITED, NcclFacts
from ...options import human_bytes
from ...result import FAIL, CheckResult
from ...shared import rdma
from ...shared.shmem import nccl_shm_full


def shm_full_verdict(facts: NcclFacts, said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """NCCL's SHM transport (ranks of one node) found no room in /dev/shm: the container's size, the job's, whatever
    failed after it (the proxy's sockets, the bootstrap) is its consequence."""
    full = nccl_shm_full("\n".join(said))
    if not full:
        return None
    size = facts.get("shm_bytes")
    sized = f"; /dev/shm is {human_bytes(size)}" if isinstance(size, int) and not isinstance(size, bool) else ""
    return result.verdict(FAIL, "SHM_TOO_SMALL", f"{over} failed: NCCL's shared-memory "
                          f"transport ran out of /dev/shm ({full}){sized}",
                          "Give the container a larger /dev/shm: " + CODES["SHM_TOO_SMALL"].fix.rstrip(".")
                          + " (or NCCL_SHM_DISABLE=1, slower).", "job")


def memlock_verdict(facts: NcclFacts, said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """RDMA memory registration out of locked memory, the limit not read as unlimited: the fabric check's rule (read
    beside the container's devices, the container's limit; else the node's)."""
    pinned = rdma.pinning_failed("\n".join(said))
    if not pinned or facts.get("memlock_bytes") == UNLIMITED:
        return None
    whose, fix = rdma.memlock_owner(facts.get("uverbs") is not None or facts.get("verbs_loads") is not None)
    # the limit is the fabric check's finding (FABRIC_MEMLOCK_LOW): the collective failed on it, said under its own
    # code with the limit's owner and remedy
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: RDMA memory registration ran out "
                          f"of locked memory ({pinned}): the memlock limit is too low (FABRIC_MEMLOCK_LOW)", fix, whose)
