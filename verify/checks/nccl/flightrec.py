"""torch's Flight Recorder analysis (`torchfrtrace`, `python -m torch.distributed.flight_recorder.fr_trace`; issue 35,
batch 271) as a job's error: it matches each rank's recorded collectives and says where they part.

- `Not all ranks joining collective 5 at entry 4` (2.5-2.7), `Not all ranks joining collective, sequence number: 4`
  (2.8+), `Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce Missing ranks are {1}`
  (its first wording): some rank never issued the collective the others wait in. A hang, as the watchdog's timeout is
  (watchdog.py): the job's to read (the missing ranks' own logs), never a drain on this evidence alone.
- `Collective sequence number: 4 has errors` with its `Error type: ...` (COLLECTIVE_TYPE_MISMATCH,
  SIZE_OR_SYNTAX_MISMATCH, COLLECTIVE_DTYPE_MISMATCH), `Input/output mismatch in the collective sequence number: 4`:
  the ranks issued different collectives (a desync): the program's, NCCL_FAILED, owner job. A state mismatch alone
  (ranks at different states of one collective) names no desync: not read here."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

MISSING = re.compile(r"Not all ranks joining collective\b")
_DESYNC = re.compile(r"\b(?:COLLECTIVE_TYPE_MISMATCH|SIZE_OR_SYNTAX_MISMATCH|COLLECTIVE_DTYPE_MISMATCH)\b|"
                     r"Input/output mismatch in the collective sequence number: \d+")
REMEDY = ("Read the ranks' Flight Recorder entries at that sequence number (torchfrtrace -j prints them) and the "
          "stack traces: the program issued different collectives on different ranks (a branch on rank-local data, "
          "a skipped step, mismatched shapes). Nothing here shows a node at fault.")


def missing(error: str) -> bool:
    """The Flight Recorder says some rank never joined a collective the others issued."""
    return bool(MISSING.search(error))


def desync_verdict(error: str, over: str, result: CheckResult) -> CheckResult | None:
    """FAIL NCCL_FAILED, the job's, where the Flight Recorder names ranks that issued different collectives."""
    if not (hit := _DESYNC.search(error)):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; torch's Flight "
                          f"Recorder shows the ranks issued different collectives ({hit.group(0)})", REMEDY, "job")
