"""Stop signals (SIGTERM, SIGINT, SIGHUP) that come before the prolog's own handlers, and after its verdict.

Slurm's prolog semantics: a Prolog= that a signal ends (exit 143) drains the node. cli.main turns a stop into "not
assessed" (exit 0 under Prolog=), but only once its handlers are in place: a SIGTERM while Python imported the
prolog (a tenth of a second of every run) took the default action, exit 143, and Slurm drained a healthy node; one
after main restored the handlers it found, while the interpreter ended, turned a drain's or a pass's status into 143
too. So `hold` is the first thing `python -m verify.prolog` does: a stop is recorded, and main acts on it as on any
stop once it can (`pending`); after main, stops are ignored (the status is decided).
"""
from __future__ import annotations

import signal
from types import FrameType

STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PENDING: list[int] = []


def _record(signum: int, _frame: FrameType | None) -> None:
    PENDING.append(signum)


def hold() -> None:
    """Record stop signals from now on (the main thread only: elsewhere nothing is installed)."""
    try:
        for sig in STOPS:
            signal.signal(sig, _record)
    except ValueError:
        pass


def pending() -> int | None:
    """The first stop signal recorded before main's handlers, or None."""
    return PENDING[0] if PENDING else None


def ignore() -> None:
    """Stops ignored from now on (the run's status is decided; main thread only)."""
    try:
        for sig in STOPS:
            signal.signal(sig, signal.SIG_IGN)
    except ValueError:
        pass
