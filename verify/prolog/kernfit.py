"""The kernel-log state's evidence cut to what its own reader takes back (kernlog.STATE_CAP).

Each held line is kept at most about LINE_MAX characters, but a character outside ASCII is six bytes in the state's
JSON (`\\ufffd`, what a byte no UTF-8 decodes to): 200 watched Xid lines of a kilobyte of such bytes made a state of
1.2 MB, which the next run's reader (its last STATE_CAP bytes) found garbled; the state was read again from the
lookback, and an Xid 79 the breaker held for longer than the lookback was gone (issue 36, class 4: evidence is kept
until acted on). So the held events and the deferred lines are cut to a budget before the state is written: the
watched held events first (the oldest first: "3 on one device" counts the newest), then the deferred lines that do
not drain, then the other deferred, and the drain-worthy held events last (the oldest first). Pure.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def bounded(held: list[dict[str, Any]], deferred: list[str], budget: int,
            drains: Callable[[dict[str, Any]], bool]) -> tuple[list[dict[str, Any]], list[str]]:
    """(held, deferred) whose JSON fits in `budget` bytes, cut in the order above; `drains` tells a drain-worthy
    event (a deferred line is judged as an event of its line)."""
    held_sizes = [len(json.dumps(e)) + 2 for e in held]
    deferred_sizes = [len(json.dumps(x)) + 2 for x in deferred]
    total = sum(held_sizes) + sum(deferred_sizes)
    if total <= budget:
        return held, deferred
    held_drains = [drains(e) for e in held]
    deferred_drains = [drains({"line": x, "mono": -1.0}) for x in deferred]
    order = [("held", i) for i in range(len(held)) if not held_drains[i]] + \
        [("deferred", i) for i in range(len(deferred)) if not deferred_drains[i]] + \
        [("deferred", i) for i in range(len(deferred)) if deferred_drains[i]] + \
        [("held", i) for i in range(len(held)) if held_drains[i]]
    sizes = {"held": held_sizes, "deferred": deferred_sizes}
    dropped: set[tuple[str, int]] = set()
    for kind, i in order:
        if total <= budget:
            break
        dropped.add((kind, i))
        total -= sizes[kind][i]
    return ([e for i, e in enumerate(held) if ("held", i) not in dropped],
            [x for i, x in enumerate(deferred) if ("deferred", i) not in dropped])
