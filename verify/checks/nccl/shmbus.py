"""A process of an NCCL job killed by SIGBUS (issue 35, batch 142): UCX's or the signal handler's `Caught signal 7 (Bus
error: nonexistent physical address)` in NCCL's own threads, or the launcher's `Signal 7 (SIGBUS)` for an NCCL record.

NCCL maps one kind of file: its shared-memory transport's segments in /dev/shm (misc/shmutils.cc). tmpfs allocates
lazily, so a segment ftruncate()d past a container's /dev/shm (Docker's 64 MB default) kills the process with SIGBUS
when NCCL first touches the page beyond it. A broken GPU, link or adapter reaches NCCL as an error it returns, never
as a bus error. The container's launch (`--shm-size`, `--ipc=host`), the job's: SHM_TOO_SMALL, never a drain."""
from __future__ import annotations

import re

from ...codes import CODES
from ...facts import NcclFacts
from ...options import human_bytes
from ...result import FAIL, CheckResult

BUS = re.compile(r"Caught signal 7\b[^\n|]*|\bBus error\b[^\n|]*|\bSIGBUS\b[^\n|]*|\bSignal 7 \(SIGBUS\)[^\n|]*")


def bus_error_verdict(facts: NcclFacts, said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """SHM_TOO_SMALL, the job's, where the NCCL record's failure is a bus error; None otherwise."""
    found = BUS.search(" | ".join(said))
    if not found:
        return None
    size = facts.get("shm_bytes")
    sized = f"; /dev/shm is {human_bytes(size)}" if isinstance(size, int) and not isinstance(size, bool) else ""
    return result.verdict(FAIL, "SHM_TOO_SMALL", f"{over} failed: the process was killed "
                          f"by a bus error ({found.group(0).strip()[:160]}){sized}: NCCL's shared-memory segment in "
                          "/dev/shm could not be backed (a container's /dev/shm smaller than its segments)",
                          "Give the container a larger /dev/shm: " + CODES["SHM_TOO_SMALL"].fix.rstrip(".")
                          + " (or NCCL_SHM_DISABLE=1, slower).", "job")
