"""Ages and durations as people write them (`7d`, `12h`, `30m`, `90s`, `1w`) and as they read them back."""
from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from .errors import UserError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([smhdw]?)$")
# before this no verify report of schema 1 or 2, nor its attestation, was written: an earlier time (1970, a BIOS's 2000)
# is a clock that was never set, no time of the evidence (the fleet report and make report/gate alike)
EARLIEST_CREATED = "2025-01-01T00:00:00Z"


def parse_duration(text: str, what: str) -> float:
    """Seconds of `text` (a number with s, m, h, d or w; no unit: seconds); UserError naming `what` otherwise."""
    match = DURATION.match(text.strip().lower())
    # 400 nines is a float's infinity: no age at all, never a bound (every stale report believed, `shown` overflowing)
    if not match or not 0 < float(match.group(1)) * UNITS[match.group(2) or "s"] < math.inf:
        raise UserError(f"{what}={text[:40]!r} is not a duration: a positive number with s, m, h, d or w (e.g. 7d, 12h)")
    return float(match.group(1)) * UNITS[match.group(2) or "s"]


# A clock tolerance (CLOCK_SKEW, TORCHIMAGES_CLOCK_SKEW): how far ahead a recorded or signed time may lie and be
# believed. One grammar and one range with the prolog's (verify/shared/clockskew.py; the host side never imports verify:
# tests/test_cluster_lows82.py holds the two to one answer). 0 is a tolerance (clocks kept to the second): a smaller one
# only believes less. Above a day no clocks differ, a unit was lost (300000 meant as ms read as 83 h): refused.
SKEW_GRAMMAR = re.compile(r"^([0-9]{1,12}(?:\.[0-9]{1,9})?)([smhdw]?)$")
SKEW_MAX_S = 86400.0


def parse_skew(text: str, name: str) -> float:
    """Seconds of a clock tolerance (a number with s, m, h, d or w; no unit: seconds), 0 to SKEW_MAX_S; UserError,
    one line naming `name`, the value, the unit it was read in and the range, otherwise."""
    text = text.strip()
    match = SKEW_GRAMMAR.match(text.lower())
    if not match:
        raise UserError(f"{name}={text[:40]!r} is not a duration: a number of seconds, or with s, m, h, d or w "
                        "(e.g. 5m), from 0 to 1d")
    value = float(match.group(1)) * UNITS[match.group(2) or "s"]
    if value > SKEW_MAX_S:
        unit = {"": "seconds (no unit given)", "s": "seconds", "m": "minutes", "h": "hours", "d": "days",
                "w": "weeks"}[match.group(2)]
        raise UserError(f"{name}={text[:40]!r} is {value / 3600:.4g} h, read in {unit}: a clock tolerance is "
                        "0 to 1d (86400 s); give e.g. 5m")
    return value


def shown(seconds: float) -> str:
    """An age as a person reads it: 9d 3h, 5h 12m, 42m, 17s."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    return f"{minutes}m" if minutes else f"{secs}s"


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 / ISO 8601 UTC time (2026-11-25T19:00:00Z) as an aware datetime; None when it is not one."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
