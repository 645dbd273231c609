"""The memlock limit a system-call trace shows the process reading or setting for itself: strace's
`prlimit64(0, RLIMIT_MEMLOCK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0` (UCX reads it to word its
ENOMEM hint; batch 150's Snellius job), `getrlimit(RLIMIT_MEMLOCK, {rlim_cur=64*1024, ...}) = 0`, and a successful
`setrlimit` / `prlimit64` with a new limit. That is the soft limit RLIMIT_MEMLOCK enforces on the very process that
pins memory: the limit read where RDMA runs. The last one in the trace is the one in force after it; a call that
failed (`= -1 EPERM`) changed nothing."""
from __future__ import annotations

import re

_VALUE = r"(?P<cur>RLIM(?:64)?_INFINITY|\d+(?:\*\d+)?)"
# pid 0 (or none): the calling process's own limit
_CALL = re.compile(
    r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?"
    r"(?:(?:get|set)rlimit\(|prlimit(?:64)?\(0,\s*)RLIMIT_MEMLOCK,\s*"
    r"(?:NULL,\s*)?\{rlim_cur=" + _VALUE + r",[^}]*\}"
    r"(?:,\s*(?:NULL|\{rlim_cur=[^}]*\}))?\)\s*=\s*0\b", re.MULTILINE)


def _bytes(value: str) -> int | str:
    if value.endswith("INFINITY"):
        return "unlimited"
    factors = [int(part) for part in value.split("*")]
    return factors[0] * (factors[1] if len(factors) > 1 else 1)


def memlock(text: str) -> int | str | None:
    """The soft limit in bytes (or "unlimited") the trace last shows in force, or None."""
    found = list(_CALL.finditer(text))
    return _bytes(found[-1].group("cur")) if found else None
