"""NCCL's failing-return traces that NCCL itself then handles (issue 35, batch 114).

CollNet (SHARP) is optional: when its plugin cannot set up (libsharp's `Cannot create SHARP job(-11)`, a fabric
without SHARP), NCCL's setup returns through `transport.cc:N -> 2` / `init.cc:N -> 2` and then says so itself
(src/transport.cc: `Cannot initialize CollNet, using point-to-point network instead`) and goes on over the point-to-
point network. Traces followed by that notice are no failure and nobody's fault (a job asking for a feature the
fabric does not offer); a failure said in words still decides."""
from __future__ import annotations

import re

FELL_BACK = re.compile(r"Cannot initialize CollNet, using point-to-point network instead")


def handled(text: str, trace: re.Pattern[str]) -> bool:
    """Whether NCCL's own fall-back notice follows the first failing-return trace (so the traces are handled)."""
    first = trace.search(text)
    return bool(first and FELL_BACK.search(text, first.start()))
