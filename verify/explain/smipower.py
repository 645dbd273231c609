"""`nvidia-smi -q`'s power limits (text or XML, read as smi.py's paths) into FACTS.md's two: `power_limit_w`, the
Current (enforced) Power Limit, and `power_default_limit_w`, the Default Power Limit. Both layouts are read:
- to R525, `Power Readings`: `Power Limit` (the limit set), `Default Power Limit`, `Enforced Power Limit` (in force,
  which wins over the limit set: the two differ where another constraint caps the board);
- R530 on, `GPU Power Readings`: `Current Power Limit` (in force), `Requested Power Limit`, `Default Power Limit`; then
  `Power Samples` (a draw's min/max/avg over a window, no limit).
`Requested Power Limit` (`Power Limit` to R525) is the limit set, FACTS.md's `power_requested_limit_w`: the enforced
limit below the default and equal to it is the owner's cap. Min/Max are the range a limit may be set in: no field. Only the GPU's own section is read: `Module Power Readings` (a Grace Hopper module's
budget, CPU and memory included) and `GPU Memory Power Readings` are another part's."""
from __future__ import annotations

import re

from .notknown import known

# the GPU's own power sections, text and XML (smixml.py turns `gpu_power_readings` into `gpu power readings`)
_SECTIONS = ("power readings", "gpu power readings")
_WATTS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*W\s*$")


def _watts(fields: dict[str, str], *names: str) -> float | None:
    for name in names:
        for section in _SECTIONS:
            value = known(fields.get(f"{section}/{name}"))
            if value is not None and (m := _WATTS.match(value)) and float(m.group(1)) > 0:
                return float(m.group(1))
    return None


def limits(fields: dict[str, str]) -> dict[str, float | None]:
    """FACTS.md's power limits of one GPU's report (None: not shown, or N/A)."""
    return {"power_limit_w": _watts(fields, "enforced power limit", "current power limit", "power limit"),
            "power_default_limit_w": _watts(fields, "default power limit"),
            "power_requested_limit_w": _watts(fields, "requested power limit", "power limit")}
