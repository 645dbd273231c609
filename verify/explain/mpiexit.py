"""Open MPI's report that a rank exited non-zero, beside an NCCL log that names no failure of its own:
`mpirun detected that one or more processes exited with non-zero status, thus causing the job to be terminated. The
first process to do so was: ... Exit code:    3` (an Azure health check's all_reduce_perf, batch 164). The program
failed: NCCL's last WARN, where the log has one, is what it met; with none the exit alone is the failure. Never a pass
over a job its launcher says failed; whose it is stays the nccl judge's reading of the message."""
from __future__ import annotations

import re

_ABORT = re.compile(r"mpirun detected that one or more processes exited with non-zero status[^\n]*"
                    r"(?:\n[^\n]*){0,8}?\n\s*Exit code:\s+(\d+)")
_WARN = re.compile(r"(?:(?<![\w/])[\w/]+\.(?:cc|cu|c|cpp|h):\d+ (?:\(\w+\) )?)?NCCL WARN [^\n]*")


def exited(text: str) -> str | None:
    abort = _ABORT.search(text)
    if not abort or int(abort.group(1)) == 0:
        return None
    warns = list(_WARN.finditer(text))
    said = f"mpirun: a rank exited with code {abort.group(1)}"
    return f"{warns[-1].group(0).strip()} ({said})" if warns else said
