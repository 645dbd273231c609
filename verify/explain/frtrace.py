"""torch's Flight Recorder analysis as `torchfrtrace` / `python -m torch.distributed.flight_recorder.fr_trace` prints
it (issue 35, batch 271): each finding is a heading and its `key: value` lines,

    Not all ranks joining collective, sequence number: 4
    group info: main_comm:gloo
    collective: nccl:all_reduce
    missing ranks: {1}
    world size: 2

(`Not all ranks joining collective 5 at entry 4` in 2.5-2.7; `Collective sequence number: 4 has errors` with its
`Error type: ...`; `Input/output mismatch in the collective sequence number: 4`). Read into the nccl facts as a
translation records them: the first finding whole as the error (verify/checks/nccl/flightrec.py judges it: a rank that
never joined is the job's hang, ranks issuing different collectives its desync), the world size where printed, the
backend `nccl` where the collective's profiling name says ProcessGroupNCCL's (`nccl:all_reduce`). A finding-free run
(`No errors found for this collective entry`) is no error: nothing to judge. Pure."""
from __future__ import annotations

import re
from typing import Any

from ..checks.nccl import opname
from ..checks.nccl.flightrec import MISSING
from .said import printed

_HEADING = re.compile(MISSING.pattern + r"|Collective sequence number: \d+ has errors|"
                      r"Input/output mismatch in the collective sequence number: \d+")
_WORLD = re.compile(r"^\s*world size:\s*(\d{1,7})\s*$", re.MULTILINE)
_OP = re.compile(r"^\s*collective:\s*(nccl:)?(\w{1,40})\s*$", re.MULTILINE)
MOST_LINES, LINE_CHARS = 12, 400


def detect(text: str) -> bool:
    return printed(_HEADING, text) is not None


def _finding(text: str, start: int) -> str:
    """The heading's line and the lines under it (its `key: value` lines, the errors it names) to a blank line or the
    next finding, joined."""
    lines = text[start:].splitlines()[:MOST_LINES]
    kept = [lines[0].strip()[:LINE_CHARS]]
    for line in lines[1:]:
        if not line.strip() or _HEADING.search(line):
            break
        kept.append(line.strip()[:LINE_CHARS])
    return " ".join(kept)


def parse(text: str) -> dict[str, Any]:
    hit = printed(_HEADING, text)
    if hit is None:
        return {"error": None}
    start = text.rfind("\n", 0, hit.start()) + 1
    block = text[start:start + MOST_LINES * (LINE_CHARS + 1)]
    finding = _finding(block, hit.start() - start)
    world, op = _WORLD.search(block), _OP.search(block)
    return {"backend": "nccl" if op and op.group(1) else None, "world_size": int(world.group(1)) if world else None,
            "sizes": None, "error": f"{(opname.key(op.group(2)) if op else None) or 'collective'}: {finding}"}
