"""NCCL's failing-return traces that a later line of NCCL's own says were no failure.

- At a teardown (issue 35, batch 94): a job that finished aborts its communicators at exit; each rank's proxy then
  logs its closed sockets as traces (`misc/socket.cc:47 -> 3`, `misc/socket.cc:832 -> 3`) followed by the teardown's
  own line (src/init.cc: `comm %p rank %d nranks %d cudaDev %d busId %lx - Abort COMPLETE`, or `- Destroy COMPLETE`):
  the group was being closed, not failing to form.
- Past an optional transport (batch 114): when CollNet's SHARP plugin cannot set up (libsharp's `Cannot create SHARP
  job(-11)`, a fabric without SHARP), NCCL's setup returns through `transport.cc:N -> 2` / `init.cc:N -> 2`, then says
  so itself (src/transport.cc: `Cannot initialize CollNet, using point-to-point network instead`) and goes on over
  the point-to-point network: nobody's fault (a job asking for a feature the fabric does not offer).

Either is read from the first trace on; a failure said in words still decides."""
from __future__ import annotations

import re

TEARDOWN = re.compile(r"NCCL INFO comm 0x[0-9a-f]+ rank \d+ n[Rr]anks \d+ [^\n]*- (?:Abort|Destroy) COMPLETE")
FELL_BACK = re.compile(r"Cannot initialize CollNet, using point-to-point network instead")


def _after_first(text: str, trace: re.Pattern[str], line: re.Pattern[str]) -> bool:
    first = trace.search(text)
    return bool(first and line.search(text, first.start()))


def at_teardown(text: str, trace: re.Pattern[str]) -> bool:
    """Whether a teardown line follows the first failing-return trace (so the traces are the teardown's)."""
    return _after_first(text, trace, TEARDOWN)


def went_past(text: str, trace: re.Pattern[str]) -> bool:
    """Whether NCCL's own CollNet fall-back notice follows the first failing-return trace (so they are handled)."""
    return _after_first(text, trace, FELL_BACK)
