"""The clock-skew allowance: how far in the future a recorded or signed time may lie and still be believed (clocks
differ). One knob, TORCHIMAGES_CLOCK_SKEW, read as report, gate and fleet-report read CLOCK_SKEW (a number with s,
m, h, d or w; no unit: seconds; default 5m), shared by facts replay (verify/replay.py) and the prolog (a GPU reset
record as the repair: verify/prolog/repair.py). A bad value is the caller's setting: one line (ValueError). The host
side's parser (scripts/durations.py parse_skew) reads the same grammar and range, held to one answer by
tests/test_cluster_lows82.py: 0 to a day (above it no clocks differ: a unit was lost, 300000 meant as ms)."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping

ENV = "TORCHIMAGES_CLOCK_SKEW"
DEFAULT_S = 300.0
MAX_S = 86400.0
_DURATION = re.compile(r"^([0-9]{1,12}(?:\.[0-9]{1,9})?)([smhdw]?)$")
_NAMES = {"": "seconds (no unit given)", "s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


def allowance(env: Mapping[str, str] | None = None) -> float:
    """TORCHIMAGES_CLOCK_SKEW in seconds (unset or empty: DEFAULT_S); ValueError, one line, for anything else than
    a duration from 0 to a day (MAX_S)."""
    text = (os.environ if env is None else env).get(ENV, "").strip()
    if not text:
        return DEFAULT_S
    m = _DURATION.match(text.lower())
    if not m:
        raise ValueError(f"{ENV}={text[:40]!r} is not a duration: a number of seconds, or with s, m, h, d or w "
                         "(e.g. 5m), from 0 to 1d")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if value > MAX_S:
        raise ValueError(f"{ENV}={text[:40]!r} is {value / 3600:.4g} h, read in {_NAMES[m.group(2)]}: a clock "
                         "tolerance is 0 to 1d (86400 s); give e.g. 5m")
    return value
