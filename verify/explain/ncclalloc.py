"""NCCL's allocation WARN and the CUDA failure that caused it (issue 35, batch 88).

NCCL's `include/alloc.h` prints `Cuda failure 'out of memory'` and then `Failed to CUDA calloc N bytes` (or
`malloc`, `host alloc`): the last WARN before the failing returns is the allocation, its cause the CUDA error printed
just above it by the same rank. The translation quotes both (the narval DeepSpeed entry); `verify explain` keeps the
cause beside the allocation so that the one CUDA catalog decides the owner (out of memory: the job's), never the
default of a bare NCCL failure. NCCL's MNNVL check is read the same way (batch 111): `mnnvl.cc:67 NCCL WARN MNNVL
(cliqueSize 8) is available but not working on this system` follows the `Cuda failure 800 'operation not permitted'`
its allocation met, and that error says whose it is (verify/checks/nccl/mnnvl.py)."""
from __future__ import annotations

import re

# `include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes` (2.18-2.30 wording: calloc, malloc, host alloc)
_ALLOC = re.compile(r"NCCL WARN Failed to CUDA (?:calloc|malloc|host ?alloc)\b|NCCL WARN MNNVL \(cliqueSize \d+\) is "
                    r"available but not working")
# the same rank's `host:pid:tid [dev]` prefix, to pair the CUDA failure with its allocation
_PREFIX = re.compile(r"^(?:.*?\s)?([\w.-]+:\d+):\d+ \[\d+\]", re.MULTILINE)


def with_cuda_cause(error: str, text: str, cuda: re.Pattern[str]) -> str:
    """`error` (the allocation WARN explain chose as the failure) with the CUDA failure the same rank printed before
    it, where the error does not already name one."""
    alloc = _ALLOC.search(text)
    if not alloc or not _ALLOC.search(error) or cuda.search(error):
        return error
    line_start = text.rfind("\n", 0, alloc.start()) + 1
    rank = _PREFIX.match(text, line_start)
    before = [m for m in cuda.finditer(text, 0, alloc.start())
              if rank is None or (r := _PREFIX.match(text, text.rfind("\n", 0, m.start()) + 1)) is None
              or r.group(1) == rank.group(1)]
    if not before:
        return error
    return f"{error} (after {before[-1].group(0).strip()[:200]})"
