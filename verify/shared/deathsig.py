"""A child started in a session of its own dies with the process that started it (Linux's PR_SET_PDEATHSIG).

The prolog starts verify, and verify each check, in a new session, so that each can be stopped as a whole group.
That also takes them out of the group their parent's killer signals: slurmd ends a prolog past PrologEpilogTimeout
with SIGKILL to the prolog's process group, and an operator or the OOM killer SIGKILLs a prolog or verify alone.
No handler runs on SIGKILL, so verify and its checks (one stuck on a GPU) were left running, orphaned, beside the
next job's preflight. With this, the kernel sends SIGKILL to the child when its parent dies, however it dies.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def with_parent() -> Callable[[], None] | None:
    """A preexec_fn for subprocess.Popen that ties the child's life to this process's; None where it cannot
    (not Linux). Call it in the parent: the pid it checks against is the parent's at the call."""
    libc = _libc()
    if libc is None:
        return None
    parent = os.getpid()
    prctl = libc.prctl            # resolved here, in the parent: the child does as little as it can before exec

    def tie() -> None:            # in the child, after fork (and setsid)
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:            # the parent died before the tie was made: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)
    return tie
