"""Other prologs of this node at the same time: a timeout confirmed while they ran is a busy host, not a hung one.

Slurm starts a Prolog for every job (PrologFlags=Alloc: at allocation): eight one-GPU jobs that start together on a
node run eight preflights on all of its GPUs at once, and each one's checks, its confirmation alone included, are
slowed by the others. NVSentinel's checker rule reruns a stalled check alone before believing it; alone means no
other preflight of the node beside it. So each run holds a shared lock on STATE/history/.<node>.running while it
assesses (a shared lock conflicts with no other run's), and a confirmed timeout asks whether another run held it
at the end (an exclusive lock it cannot have) or ended while this one ran (an outcome in the history stamped after
this run began): then the timeout is not the node's (PREFLIGHT_TIMEOUT, not assessed; the hang streak counts runs at
once as one). Named per node, so a state folder shared by nodes sees only this node's runs. A lock that cannot be
had is no evidence of others: the confirmation stands as it is.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator

from . import history, statefile

OUTCOMES = ("pass", "fault", "not-assessed")      # the events a run ends with
SLACK_S = 0.001                                   # history stamps are kept to the millisecond
TRIES = 50                                        # tries at the shared lock, 10 ms apart


def lock_path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "history", f".{node}.running")


class Running:
    """This run's shared lock (fd None: not had) and when it began."""

    def __init__(self, fd: int | None, state_dir: str, node: str, started: float | None) -> None:
        self.fd, self.state_dir, self.node, self.started = fd, state_dir, node, started

    def others(self) -> str | None:
        """Why another prolog of this node ran beside this one, or None (none seen, or nothing to see it by)."""
        if self.fd is not None:
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.lockf(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)     # back to shared: others may start
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    return "another prolog of this node is running now"
        if self.started is not None:
            past, now = history.read(self.state_dir, self.node), time.time()
            # an outcome stamped after now is no run beside this one: its clock was ahead (then stepped back), and it
            # made every confirmed hang a busy host for as long as its stamp lay ahead
            ended = [e for e in past.events if e["event"] in OUTCOMES and self.started + SLACK_S < e["epoch"] <= now]
            if ended:
                return f"{len(ended)} other prolog run(s) of this node ended while this one ran"
        return None


@contextlib.contextmanager
def running(state_dir: str, node: str, started: float | None) -> Iterator[Running]:
    """Hold the node's shared run lock while assessing (never waits: a shared lock waits only on a check's moment)."""
    fd: int | None = None
    try:
        statefile.folder(os.path.join(state_dir, "history"))
        fd = statefile.open_rw(lock_path(state_dir, node))
        for _ in range(TRIES):            # held exclusive only for the moment another run looks (Running.others)
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                time.sleep(0.01)
        else:
            raise OSError(errno.EAGAIN, "not had")
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield Running(fd, state_dir, node, started)
    finally:
        if fd is not None:
            os.close(fd)                  # closing the fd releases the lock
