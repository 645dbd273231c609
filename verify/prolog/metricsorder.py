"""Which outcome node_exporter's file of a node keeps when prologs of the node end out of order (pure but for the read).

Prologs of jobs starting together on one node run side by side and end in any order. Written last-wins, a pass of a
run begun before another run's drain, ending after it, hid that drain (verdict pass, exit 0 for a drained node); and
started-last-wins would hide a drain whose run began first. So: runs that did not overlap keep the later one; runs
that overlapped measured the node at the same time, and the graver outcome stands (a fault over not assessed over a
pass: a concurrent pass never cancels evidence of a fault), the later start breaking a tie. A kept run stamped past
now + the clock-skew allowance (a clock that was ahead, set right since), or ending past it, is no run kept: it never
freezes the file.
"""
from __future__ import annotations

import math
import re
import time
from typing import Any

from . import statefile

RANK = {"fault": 3, "not-assessed": 2, "refused": 2, "pass": 1}
_VALUE = r'\{node="[^"]*"\} (\S+)$'
_STARTED = re.compile(r"^torchimages_prolog_last_run_timestamp_seconds" + _VALUE, re.M)
_DURATION = re.compile(r"^torchimages_prolog_duration_seconds" + _VALUE, re.M)
_VERDICT = re.compile(r'^torchimages_prolog_verdict\{[^}]*verdict="([^"]*)"[^}]*\} ', re.M)


def _number(pattern: re.Pattern[str], text: str) -> float | None:
    found = pattern.search(text)
    try:
        value = float(found.group(1)) if found else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def kept_instead(target: str, outcome: dict[str, Any], skew_s: float, now: float | None = None) -> str | None:
    """Why the outcome `target` holds stands over `outcome` (a run's verdict, its `time` and `duration_s`), or None."""
    try:
        text = statefile.read_tail(target, 1 << 20).text
    except OSError:
        return None
    started, duration = _number(_STARTED, text), _number(_DURATION, text) or 0.0
    verdict = (m.group(1) if (m := _VERDICT.search(text)) else "")
    now = time.time() if now is None else now
    mine = outcome.get("time")
    if started is None or not isinstance(mine, (int, float)) or started > now + skew_s:
        return None
    if started + duration > now + skew_s:
        # a run ends before its file is written: one whose start + duration lies past now (a garbled or planted file,
        # `duration 1e9`) ended at no time a clock has reached, and overlapped every run to come, so its fault stood
        # over each of them for good (node_exporter showed a repaired node faulty, no pass ever written)
        return None
    mine_end = mine + float(outcome.get("duration_s") or 0.0)
    later = started > mine
    if not (started < mine_end and mine < started + duration):
        return f"the outcome of a run that started {started - mine:.3f} s after this one" if later else None
    theirs, ours = RANK.get(verdict, 0), RANK.get(str(outcome.get("verdict")), 0)
    if theirs > ours or (theirs == ours and later):
        return f"the outcome ({verdict}) of a run beside this one, which stands over this run's"
    return None
