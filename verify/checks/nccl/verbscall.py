"""A verbs call NCCL names with no errno (issue 35, batch 166). NCCL before 2.8 words a failed verbs call `Call to
ibv_create_cq failed` (misc/ibvwrap.cc's IBV_INT_CHECK, no `with error ...`): the call that failed, not why. A CQ,
QP or MR refused without a cause is as often the process's limits as it was launched (the memlock it inherited from
a Spark worker or a scheduler daemon) or what the job opened, and nothing in it shows the adapter or port at fault.
Like a bare error class (barefail.py), it shows no cause: judged (fail), owned by the job (its owner reads the
launch's limits and the other ranks' logs), never a drain. Where an errno is printed, or another line of the log
names a cause (an adapter's async event, a completion's status, a memlock read), the rules that read it decide
first; this is read only where none did."""
from __future__ import annotations

import re

# the error as NCCL (and a record's phase prefix, host:pid:tid [dev] and source line) prints it, with no errno after
_NO_ERRNO = re.compile(r"^(?:\w+:\s+)?(?:[\w.-]+:\d+:\d+\s+\[\d+\]\s+)?(?:[\w/.-]+\.cc:\d+\s+)?(?:NCCL WARN\s+)?"
                       r"Call to (ibv_\w+) failed\.?\s*$")


def verbs_call_without_errno(error: str) -> str | None:
    """The verbs call the error names where it names nothing else (None: an errno, or more, is said)."""
    m = _NO_ERRNO.match(error.strip())
    return m.group(1) if m else None
