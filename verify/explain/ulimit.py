"""`ulimit -a` (bash, and dash/busybox's `-l: locked-in-memory size (kb)`): the memlock limit, as the fabric facts'
`memlock` (bytes, or "unlimited"). bash prints `max locked memory       (kbytes, -l) 64`."""
from __future__ import annotations

import re
from typing import Any

_BASH = re.compile(r"^max locked memory\s+\((kbytes|bytes|blocks)?,?\s*-l\)\s+(\S+)\s*$", re.MULTILINE)
_DASH = re.compile(r"^-l:\s+locked-in-memory size \((kb|kbytes)\)\s+(\S+)\s*$", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_BASH.search(text) or _DASH.search(text))


def parse(text: str) -> dict[str, Any]:
    found = _BASH.search(text) or _DASH.search(text)
    value = found.group(2) if found else ""
    if value == "unlimited":
        return {"memlock": "unlimited"}
    unit = 1 if found and found.group(1) == "bytes" else 1024
    return {"memlock": int(value) * unit} if value.isdecimal() else {}
