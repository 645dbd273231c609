"""A rank's failure as torch.distributed.elastic's launcher saw it (issue 35, batches 141-142), and whose it is.

torchrun's agent reports a worker that died as a signal or an exit code (`failed (exitcode: -7) local_rank: 1`, its
`ChildFailedError` table's `exitcode : -9` and `Signal 9 (SIGKILL) received by PID N`), and its own rendezvous that
never formed (`RendezvousConnectionError: The connection to the C10d store has failed`, `DistStoreError`, the c10d
client socket timing out). None of these is a GPU's word:
- SIGBUS is a memory-mapped file that could not be backed: /dev/shm (a container's 64 MB) or the cache's disk, the
  job's resources (SHM_TOO_SMALL only where the failure's `shm_error` shows /dev/shm, the loader's rule);
- SIGKILL is the kernel's OOM killer or the launcher/scheduler stopping the process: the job's memory or its limits;
- a rendezvous or c10d store that cannot be reached is the launch's address, port or firewall;
- a summary with no cause shown (an exit code alone, the launcher's own exception) names no fault of the node.
All are the job's, never a drain (a SIGSEGV or SIGILL with no CUDA error is native code of the image crashing:
the image's, batch 206); a CUDA error the message names is judged by the catalog before this
(verify/checks/train/verdict.py)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# a signal by name, by torch's `Signal N (SIGX)` or by the agent's negative exit code
_SIGNAL = re.compile(r"\b(SIG[A-Z]{3,6})\b|\bSignal (\d+)\b|\bexitcode\s*:?\s*-(\d+)\b|\bBus error\b", re.IGNORECASE)
_NAMES = {"7": "SIGBUS", "9": "SIGKILL", "15": "SIGTERM", "6": "SIGABRT", "11": "SIGSEGV", "2": "SIGINT"}
# the launcher's rendezvous and its c10d store (torch/distributed/elastic/rendezvous, c10d's socket.cpp)
_RENDEZVOUS = re.compile(r"Rendezvous\w*Error|DistStoreError|DistNetworkError|\bC10d store\b|"
                         r"client socket has (?:timed out|failed to connect)|\brendezvous\b", re.IGNORECASE)
# the launcher's view of a child that ended (its exception, its table's words), with no cause of its own
_LAUNCHER = re.compile(r"ChildFailedError|\bexitcode\s*:?\s*-?\d+|received by PID", re.IGNORECASE)

_WHY = {
    "SIGBUS": ("the process was killed by SIGBUS: a memory-mapped file that could not be backed (/dev/shm or the "
               "cache's disk filling), the job's resources, not a GPU",
               "Give the container a larger /dev/shm (`--shm-size`, `--ipc=host`) or more room for the data cache."),
    "SIGKILL": ("the process was killed by SIGKILL, which no GPU or NCCL fault sends: the kernel's OOM killer (the "
                "job's or the pod's memory limit) or the launcher/scheduler stopping it",
                "Read the kernel log (`Out of memory: Killed process`) or the pod's OOMKilled status; give the job "
                "more memory or use less."),
}


def signal_of(failure: Mapping[str, Any]) -> str | None:
    """The signal that ended the failed process, by name, where its type or message shows one."""
    text = f"{failure.get('type') or ''}: {failure.get('message') or ''}"
    for m in _SIGNAL.finditer(text):
        if m.group(1):
            return m.group(1).upper()
        if m.group(0).lower() == "bus error":
            return "SIGBUS"
        name = _NAMES.get(m.group(2) or m.group(3))
        if name:
            return name
    return None


def native_crash(failure: Mapping[str, Any]) -> tuple[str, str] | None:
    """(why, remedy) where the worker died of SIGSEGV or SIGILL with no CUDA error shown (issue 35, batch 206): the CPU
    process crashed in native code (an extension, a library, the interpreter), which a failing GPU or HBM never causes
    (those show as a CUDA error, an Xid, a lost device): the image's software stack, not the job's settings; None
    otherwise."""
    if signal_of(failure) not in ("SIGSEGV", "SIGILL"):
        return None
    return ("the worker crashed in native code (SIGSEGV/SIGILL: an extension, a library or the interpreter built into "
            "the image); no CUDA error, Xid or lost device names the GPU",
            "Rerun the failed rank with `PYTHONFAULTHANDLER=1` or a core dump to name the library; rebuild or pin "
            "the extension for this GPU's architecture. No drain.")


def launcher_failure(failure: Mapping[str, Any]) -> tuple[str, str] | None:
    """(why, remedy) where the failure is the launcher's report of a worker killed by SIGBUS or SIGKILL, its
    rendezvous that never formed, or its summary with no cause shown: the job's; None otherwise."""
    text = f"{failure.get('type') or ''}: {failure.get('message') or ''}"
    signal = signal_of(failure)
    if signal in _WHY:
        return _WHY[signal]
    if _RENDEZVOUS.search(text):
        return ("the launcher's rendezvous never formed (its c10d store not reached): the launch's address, port or "
                "firewall, not a GPU or the node",
                "Check --rdzv_endpoint / MASTER_ADDR:MASTER_PORT: a store listening there, reachable from every node.")
    if _LAUNCHER.search(text):
        return ("the launcher reports the worker's exit and no cause: nothing shown is the node's",
                "Read the failed rank's own log (its error_file or traceback) for the cause.")
    return None


def killed(failure: Mapping[str, Any]) -> bool:
    """Whether the failure is the launcher's word of a process ended by a signal (its type a signal's name or the
    launcher's ChildFailedError), not an exception the process raised itself."""
    kind = str(failure.get("type") or "")
    return bool(re.fullmatch(r"SIG[A-Z]{3,6}|ChildFailedError", kind)) and signal_of(failure) is not None
