"""The memlock limit a command line sets for the program it runs: `ulimit -l unlimited && ./alltoall_perf ...` (a
launcher's `bash -c '...'`, a job script's line). `&&` runs the program only where `ulimit -l` succeeded, so the
program ran under that limit (NVIDIA/nccl#1191's `mpirun ... bash -c 'ulimit -l unlimited && ulimit -n 1048576 &&
./alltoall_perf ...'`). `;` or a newline after it proves nothing (a failed `ulimit` lets the next command run under
the old limit), nor does a `ulimit -l N` with no command chained after it.

A container engine's run sets it for the container's processes: `docker run ... --ulimit memlock=-1 ... image cmd`
(Docker, Podman and nerdctl: `soft[:hard]` in bytes, -1 unlimited; the engine refuses to start the container where it
cannot set it), its lines joined where a trailing backslash continues them (batch 236's BytePS scheduler)."""
from __future__ import annotations

import re

# `ulimit -l` (or `-Sl`, `-S -l`) setting a value, then `&&` and a command
_SET = re.compile(r"\bulimit\s+(?:-S\s+)?-S?l\s+(unlimited|\d+)\s*&&\s*\S")


# an engine's run or create command (a `\` line continuation joined), and the soft memlock its --ulimit sets
_ENGINE_RUN = re.compile(r"(?:^|[\s$#>;&|])(?:sudo\s+)?(?:docker|podman|nerdctl)\s+(?:container\s+)?(?:run|create)\b[^\n]*")
_ENGINE_LIMIT = re.compile(r"--ulimit[= ]memlock=(-1|\d+)(?::(?:-1|\d+))?(?!\S)")


def _engine(text: str) -> list[int | str]:
    joined = re.sub(r"\\\r?\n", " ", text) if "\\\n" in text or "\\\r\n" in text else text
    return ["unlimited" if v == "-1" else int(v) for run in _ENGINE_RUN.finditer(joined)
            for v in _ENGINE_LIMIT.findall(run.group(0))]


def memlock(text: str) -> int | str | None:
    """The limit the chained program ran under (bytes, or "unlimited"); the lowest where several are set."""
    values: list[int | str] = ["unlimited" if v == "unlimited" else int(v) * 1024 for v in _SET.findall(text)]
    values += _engine(text)
    numbers = [v for v in values if isinstance(v, int)]
    return min(numbers) if numbers else values[0] if values else None
