"""The memlock limit a command line sets for the program it runs: `ulimit -l unlimited && ./alltoall_perf ...` (a
launcher's `bash -c '...'`, a job script's line). `&&` runs the program only where `ulimit -l` succeeded, so the
program ran under that limit (NVIDIA/nccl#1191's `mpirun ... bash -c 'ulimit -l unlimited && ulimit -n 1048576 &&
./alltoall_perf ...'`). `;` or a newline after it proves nothing (a failed `ulimit` lets the next command run under
the old limit), nor does a `ulimit -l N` with no command chained after it."""
from __future__ import annotations

import re

# `ulimit -l` (or `-Sl`, `-S -l`) setting a value, then `&&` and a command
_SET = re.compile(r"\bulimit\s+(?:-S\s+)?-S?l\s+(unlimited|\d+)\s*&&\s*\S")


def memlock(text: str) -> int | str | None:
    """The limit the chained program ran under (bytes, or "unlimited"); the lowest where several are set."""
    values: list[int | str] = ["unlimited" if v == "unlimited" else int(v) * 1024 for v in _SET.findall(text)]
    numbers = [v for v in values if isinstance(v, int)]
    return min(numbers) if numbers else values[0] if values else None
