"""nvidia-smi's `WARNING: infoROM is corrupted at gpu 0000:0B:00.0` (printed after its table or report; exit code 14),
read into the device of that bus id as NVML's error on the InfoROM (`nvml_errors`: `inforom` -> `CorruptedInforom`,
NVML_ERROR_CORRUPTED_INFOROM by the name verify's own probe records), judged by verify/checks/gpu/inforom.py."""
from __future__ import annotations

import re
from typing import Any

from .said import printed_lines

CORRUPTED = "CorruptedInforom"
_WARNING = re.compile(r"WARNING: infoROM is corrupted at gpu ([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")


def _bus(domain: str, rest: str) -> tuple[int, str]:
    return int(domain, 16), rest.upper()


def mark(text: str, devices: list[dict[str, Any]] | None) -> None:
    """Each device the warning names (by its bus id, the domain in 4 or 8 digits) gets the InfoROM's error."""
    named = {_bus(*m.groups()) for m in _WARNING.finditer(text)}
    for dev in devices or []:
        bus = str(dev.get("pci_bus_id") or "")
        if bus.count(":") == 2 and _bus(*bus.split(":", 1)) in named:
            dev["nvml_errors"] = {**(dev.get("nvml_errors") or {}), "inforom": CORRUPTED}


def named(text: str) -> list[str]:
    """The bus ids the warning names where nvidia-smi printed it (`0000:0B:00.0`), never where prose quotes it."""
    lines = printed_lines(text, _WARNING)
    return list(dict.fromkeys(f"{m.group(1)}:{m.group(2)}" for line in lines for m in _WARNING.finditer(line)))
