"""The kernel-log state file's shape (verify/prolog/kernlog.py keeps it): every field of its JSON type, or the file is
garbled. Pure."""
from __future__ import annotations

import math
from typing import Any

from . import statefile


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def typed(raw: Any) -> bool:
    """Every field of a kept state of its JSON type: one of another (a list where the boot id belongs, "5" where a
    stamp does) is a garbled state, never coerced into a cursor."""
    return isinstance(raw, dict) and isinstance(raw.get("boot_id"), str) and _number(raw.get("mono")) \
        and _strings(raw.get("at_mono")) and _strings(raw.get("unstamped")) and isinstance(raw.get("held"), list) \
        and all(isinstance(e, dict) and isinstance(e.get("line"), str) and _number(e.get("mono"))
                and math.isfinite(e["mono"]) and (e.get("read") is None or (_number(e["read"]) and math.isfinite(e["read"])))
                for e in raw["held"]) \
        and statefile.count_or_none(raw.get("at_count")) \
        and statefile.count_or_none(raw.get("unstamped_count")) \
        and (raw.get("wall") is None or (_number(raw["wall"]) and math.isfinite(raw["wall"]))) \
        and (raw.get("deferred") is None or _strings(raw["deferred"])) \
        and (raw.get("wall_up") is None or (_number(raw["wall_up"]) and math.isfinite(raw["wall_up"]))) \
        and (raw.get("tail") is None or _strings(raw["tail"])) and statefile.count_or_none(raw.get("tail_at")) \
        and isinstance(raw.get("tail_wall", False), bool)
