"""NCCL's failing-return traces printed while communicators are torn down (issue 35, batch 94).

A job that finished aborts its communicators at exit; each rank's proxy then logs its closed sockets as traces
(`misc/socket.cc:47 -> 3`, `misc/socket.cc:832 -> 3`) followed by the teardown's own line (src/init.cc:
`comm %p rank %d nranks %d cudaDev %d busId %lx - Abort COMPLETE`, or `- Destroy COMPLETE`). Traces alone (no WARN,
no error message) are no failure, least of all at a teardown: read from the first trace on, a teardown line that
follows says the group was being closed, not that it failed to form."""
from __future__ import annotations

import re

TEARDOWN = re.compile(r"NCCL INFO comm 0x[0-9a-f]+ rank \d+ n[Rr]anks \d+ [^\n]*- (?:Abort|Destroy) COMPLETE")


def at_teardown(text: str, trace: re.Pattern[str]) -> bool:
    """Whether a teardown line follows the first failing-return trace (so the traces are the teardown's)."""
    first = trace.search(text)
    return bool(first and TEARDOWN.search(text, first.start()))
