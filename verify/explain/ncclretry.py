"""NCCL's socket connect retried over and over where the excerpt's NCCL log ends (issue 35, batch 107).

src/misc/socket.cc (2.19+) retries a connect refused or timed out, `socketPollConnect: connect to 10.0.0.4<52333>
returned Connection refused, retrying (21/34) after sleep for 2100 msec`, up to NCCL_SOCKET_RETRY_CNT (34) times;
before 2.19, `Call to connect returned Connection refused, retrying`, with no count. The retries exist for a listener
not up yet (a job's NCCL_COMM_ID root started late): that race is over within the first attempts, and NCCL then goes
on (its next init line). A run of several attempts at one connect (counts climbing, where printed) with nothing from
NCCL after the last is the group not forming, whether or not the excerpt reaches the last attempt (the spent one,
`(34/34)`, is a failure wherever it is); one retry alone is no failure. The errno (`Connection refused`, `No route to
host`) is the judge's to read. Pure."""
from __future__ import annotations

import re

from ..checks.nccl import ncclog

# 2.19+ with its count; NCCL before 2.19 (`Call to connect returned Connection refused, retrying`, once per thousand
# refused attempts a millisecond apart, or per timed-out one) without
_RETRY = re.compile(r"(?:\bsocket\w*Connect: connect (?:to (\S+) )?|\bCall to connect )returned (.+?), retrying"
                    r"(?: \((\d+)/(\d+)\))?")
# the connect retried to its last attempt (2.19: `connect returned No route to host, retrying (34/34)`; later releases
# name the address, `connect to 10.0.0.4<52333> returned ...`): it gave up, the group never formed
_SPENT = re.compile(r"\bsocket\w*Connect: connect (?:to \S+ )?returned [^\n]*?retrying \((\d+)/(\d+)\)[^\n]*")
# attempts shown before the run reads as a failure: more than a late listener takes
MIN_RUN = 3


def gave_up(text: str) -> str | None:
    """The connect NCCL gave up on (its last attempt) or still retried where its log ends; else None."""
    if spent := next((m for m in _SPENT.finditer(text) if m.group(1) == m.group(2)), None):
        return spent.group(0).strip()[:300]
    return still_retrying(text)


def still_retrying(text: str) -> str | None:
    """The last attempt of a run of at least MIN_RUN retries of one connect (its address and errno; counts climbing)
    that NCCL's log in the text ends on: after it only other connects' retries (ranks interleaved) or lines not
    NCCL's (a launcher's, a traceback). Else None."""
    run: list[re.Match[str]] = []
    for line in reversed(text[-(1 << 20):].splitlines()):
        hit = _RETRY.search(line)
        if hit is None:
            if ncclog.message(line):
                break                   # NCCL went on (or said something else) after the connect
            continue
        if run and hit.group(1, 2) != run[0].group(1, 2):
            continue                    # another rank's connect, interleaved
        if run and hit.group(3) and run[-1].group(3) and int(hit.group(3)) >= int(run[-1].group(3)):
            break
        run.append(hit)
    return run[0].string.strip()[:300] if len(run) >= MIN_RUN else None
