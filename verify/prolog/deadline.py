"""The prolog's whole wall time, capped: Slurm's PrologEpilogTimeout kills a Prolog that runs past it and drains
the node, so the prolog must end on its own well before, whatever hangs (verify, journalctl, sinfo, scontrol, the
breaker's lock).

The cap is --budget + --grace (default grace: the budget, at least 60 s: 90 s with the defaults). Every stage
gets what is left of it: the first verify run and its confirmation (which shares the cap, never adds to it) end
RESERVE before it, so that a drain (sinfo, scontrol, sinfo, the history) still fits; the kernel log, Slurm's
commands and the lock wait are bounded by what is left, so stopping a verify that ran to its limit (STOP_S: SIGTERM,
then SIGKILL) is the most a run takes past the cap. A timer (SIGALRM) at cap + STOP_S is the backstop for anything
still running then: it raises Overran, what runs is killed and the run is not assessed (PROLOG_OVERRAN). So a run
ends by cap + STOP_S: set PrologEpilogTimeout above that (cap + 10 s leaves Python's own start).
The clock is injectable: tests run these bounds without waiting on them.
"""
from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

STOP_S = 3.0                 # SIGTERM, 2 s, SIGKILL, 1 s: stopping verify's process group after the cap
RESERVE_SHARE = 0.15         # of the cap, kept after the verify runs for the drain (sinfo, scontrol, sinfo)
RESERVE_MAX_S = 10.0


class Overran(Exception):
    """The prolog reached its cap (the backstop timer): what runs is stopped and the run is not assessed."""


@dataclass
class Deadline:
    cap: float                                      # seconds the whole run may take
    clock: Callable[[], float] = time.monotonic
    at: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.at = self.clock() + self.cap

    @property
    def reserve(self) -> float:
        """Seconds kept after the verify runs for acting on the verdict (a drain)."""
        return min(RESERVE_MAX_S, self.cap * RESERVE_SHARE)

    def left(self) -> float:
        return max(0.0, self.at - self.clock())

    def for_verify(self) -> float:
        """Seconds a verify run may take now: what is left but the reserve."""
        return max(0.0, self.left() - self.reserve)

    def bound(self, wanted: float, least: float = 0.5) -> float:
        """`wanted` seconds, or what is left when that is less (never under `least`: a call needs some time)."""
        return max(least, min(wanted, self.left()))


def _overran(_signum: int, _frame: FrameType | None) -> None:
    raise Overran("the prolog reached its cap")


def arm(seconds: float) -> Callable[[], None]:
    """Raise Overran in the main thread after `seconds`; the function returned disarms it. No-op off the main
    thread (an embedding caller keeps its own signals)."""
    try:
        previous = signal.signal(signal.SIGALRM, _overran)
    except ValueError:
        return lambda: None
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return disarm
