"""Other prologs of this node at the same time: a timeout confirmed while they ran is a busy host, not a hung one.

Slurm starts a Prolog for every job (PrologFlags=Alloc: at allocation): eight one-GPU jobs that start together on a
node run eight preflights on all of its GPUs at once, and each one's checks, its confirmation alone included, are
slowed by the others. NVSentinel's checker rule reruns a stalled check alone before believing it; alone means no
other preflight of the node beside it. So each run holds a shared lock on STATE/history/.<node>.running while it
assesses (a shared lock conflicts with no other run's), and a confirmed timeout asks whether another run held it
at the end (an exclusive lock it cannot have) or ended while this one ran (an outcome in the history stamped after
this run began): then the timeout is not the node's (PREFLIGHT_TIMEOUT, not assessed; the hang streak counts runs at
once as one). Named per node, so a state folder shared by nodes sees only this node's runs. A lock that cannot be
had is no evidence of others: the confirmation stands as it is. Nor is one a job could hold: a lock file owned by
another user, or in a folder group or others may write (a job makes its own file in our file's place and holds a read
lock on it): its locks are not believed and the trace says so (hunt89).
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import math
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

    def __init__(self, fd: int | None, state_dir: str, node: str, started: float | None,
                 problem: str | None = None, clock: tuple[str, float] | None = None) -> None:
        self.fd, self.state_dir, self.node, self.started = fd, state_dir, node, started
        self.clock = clock              # (boot id, /proc/uptime at this run's start): a stepped wall clock moves not it
        self.problem = problem          # the run lock's file refused (a FIFO, a link planted there): said, not hidden

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
            past = history.read(self.state_dir, self.node)
            ended = [e for e in past.events if e["event"] in OUTCOMES and self._after(e)]
            if ended:
                return f"{len(ended)} other prolog run(s) of this node ended while this one ran"
        return None

    def _after(self, event: dict) -> bool:
        """The event ended after this run began: by the boot's own clock where both kept it (a wall clock stepped
        back stamps every earlier run "later", and a hung GPU's confirmed timeout was excused as a busy host), else by
        the wall clock."""
        up = event.get("uptime")
        if self.clock and history.same_boot(event, self.clock[0]) and isinstance(up, (int, float)) \
                and not isinstance(up, bool) and math.isfinite(up):
            return up > self.clock[1] + SLACK_S
        # by the wall clock, between this run's start and now: an outcome stamped past now is from the future (a clock
        # that was ahead, set right since), no run beside this one; it made every confirmed hang a busy host
        return self.started is not None and self.started + SLACK_S < event["epoch"] <= time.time() + SLACK_S


class _NotOurs(OSError):
    """The run lock's file is one a job could have made or may hold."""


def _not_ours(fd: int, path: str) -> str | None:
    """Why the run lock's file could be another user's, or None: a file owned by another user, or in a folder
    group or others may write (one made there in our file's place), takes the job's read lock, and every slow figure
    or confirmed hang was excused as "another prolog of this node is running now" (hunt89). The fd's own owner, not
    the path's: the file may be swapped between the open and the look."""
    uid = os.fstat(fd).st_uid
    if uid not in (0, os.geteuid()):
        return f"{path} belongs to another user (uid {uid}): a job could hold it"
    return statefile.not_ours(path)


@contextlib.contextmanager
def running(state_dir: str, node: str, started: float | None,
            clock: tuple[str, float] | None = None) -> Iterator[Running]:
    """Hold the node's shared run lock while assessing (never waits: a shared lock waits only on a check's moment)."""
    fd: int | None = None
    problem: str | None = None
    try:
        statefile.folder(os.path.join(state_dir, "history"))
        fd = statefile.open_rw(lock_path(state_dir, node))
        if why := _not_ours(fd, lock_path(state_dir, node)):
            raise _NotOurs(errno.EPERM, why)
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
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        fd = None
        if isinstance(exc, _NotOurs):
            problem = (f"the run lock {exc.strerror}: its locks are not believed (no slow figure or timeout is "
                       "excused on them); other prologs of this node are seen by the history alone")
        elif not isinstance(exc, statefile.LockUnavailable) and exc.errno != errno.EAGAIN:
            problem = (f"the run lock {statefile.problem(exc, lock_path(state_dir, node))}: other prologs of this "
                       "node are seen by the history alone")
    try:
        yield Running(fd, state_dir, node, started, problem, clock)
    finally:
        if fd is not None:
            os.close(fd)                  # closing the fd releases the lock
