"""A time budget shared by checks that run one after another (`verify --preflight --budget S`).

Each check's limit is its weight's share of the time that is LEFT when it starts, so the time an early check does
not use (the gpu check on a CPU host ends in 3 s of its 9) rolls forward to the later ones instead of being lost.
Fixed weights of the whole budget timed out shm and nccl on a healthy 2-core host with other work beside it.

Each check also has a floor in units of this host's own `import torch` time (measured first, by the environment
probe): a check starts processes that import torch (shm one, nccl one per rank), and on a busy host that cost alone
can pass a share. A floor can make the preflight run past its budget; a check is then slow, never falsely failed.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping

FLOOR_S = 1.0          # no check gets less than this, however little is left (the runner still kills it)


class Shares:
    """limit(name): the seconds `name` may run, from what is left of the budget and the weights not yet used."""

    def __init__(self, budget_s: float, weights: Mapping[str, float], reserve: float = 0.05,
                 cap_s: float | None = None, clock: Callable[[], float] = time.monotonic,
                 floors: Mapping[str, float] | None = None) -> None:
        self._clock = clock
        self.deadline = clock() + budget_s
        self._pending = {name: float(w) for name, w in weights.items()}
        self._reserve = reserve          # a weight never handed out: room for the report after the last check
        self._cap = cap_s
        self._floors = dict(floors or {})     # name -> how many `import torch` times the check needs at least
        self.startup_s: float | None = None   # this host's `import torch` time, once measured

    def limit(self, name: str) -> float:
        left = max(0.0, self.deadline - self._clock())
        weight = self._pending.pop(name, 0.2)
        share = left * weight / (weight + sum(self._pending.values()) + self._reserve)
        if self.startup_s and self.startup_s > 0:
            share = max(share, self._floors.get(name, 1.0) * self.startup_s)
        share = max(FLOOR_S, share)
        return min(share, self._cap) if self._cap else share
