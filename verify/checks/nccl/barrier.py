"""torch's monitored barrier naming the ranks that never arrived (batch 194): `monitored_barrier()`, or the
ProcessGroupWrapper that TORCH_DISTRIBUTED_DEBUG=DETAIL puts before each collective, raises `[Rank 0]: Ranks 4, 5, 6, 7
failed to pass monitoredBarrier in 2000000 ms` (`Rank 1 failed to pass ...` for one). It is a timeout like the
watchdog's: a collective some rank never joined. Where nothing else names a cause it is the job's to read (the missing
ranks' own logs), never a drain (verify/FACTS.md). Its other failure, `Rank 0 successfully reached monitoredBarrier, but
received errors while waiting for send/recv from rank 1. Please check rank 1 logs for faulty rank.`, is a peer gone
(its process exited): a casualty, the job's to read in that rank's log (casualty.py)."""
from __future__ import annotations

import re

MISSED = re.compile(r"\bRanks? \d+(?:, \d+)* failed to pass monitoredBarrier in \d+ ms")
PEER_FAILED = re.compile(r"successfully reached monitoredBarrier, but received errors while waiting for send/recv "
                         r"from rank \d+")
# either, as a rank's error in an explained log
FAILED = re.compile(MISSED.pattern + "|" + PEER_FAILED.pattern)


def missed(error: str) -> bool:
    """The error is torch's monitored barrier timing out on ranks that never arrived."""
    return bool(MISSED.search(error))


def missed_line(text: str) -> str | None:
    """The barrier's line whole, as a rank's error (an explained log), where the text prints it."""
    if not (hit := FAILED.search(text)):
        return None
    start, end = text.rfind("\n", 0, hit.start()) + 1, text.find("\n", hit.end())
    return f"barrier: {text[start:end if end >= 0 else len(text)].strip()[:300]}"
