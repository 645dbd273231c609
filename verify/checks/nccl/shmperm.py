"""NCCL's shared-memory segment refused by /dev/shm's permissions (issue 35, batch 189). Pure.

NCCL's SHM transport creates its segments in /dev/shm (include/shm.h before 2.12: `Call to shm_open failed :
Permission denied`, then `Error while creating shared memory segment nccl-shm-... (size N)` with no errno of its own;
misc/shmutils.cc from 2.12: `... error: Permission denied (13)`). The errno decides the owner: ENOSPC (28) is the
container's size (SHM_TOO_SMALL, the job's, localcause.py); EACCES (13) is /dev/shm's mode, which must be 1777 for
every user's ranks: a mount the node set up wrong (NVIDIA/nccl#328, fixed by root's `chmod 777 /dev/shm` on the
node), every job on it meets it, the host's."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

SHM_REFUSED = re.compile(r"(?:shm_open|/dev/shm/|shared memory segment)[^\n|]*?(?:Permission denied|\(13\))",
                         re.IGNORECASE)

REMEDY = ("Restore /dev/shm's mode on the node (a tmpfs mounted 1777, sticky and world-writable: `chmod 1777 "
          "/dev/shm`, and fix whatever mounts it otherwise); NCCL_SHM_DISABLE=1 works around it, slower.")


def shm_refused_verdict(said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """NCCL_FAILED, the host's, where NCCL's shared-memory call was refused with EACCES; None otherwise."""
    hit = SHM_REFUSED.search(" | ".join(said))
    if hit is None:
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: /dev/shm refused NCCL's "
                          f"shared-memory segment ({hit.group(0).strip()[:160]}): its mode forbids the job's user, "
                          "not its size", REMEDY, "host")
