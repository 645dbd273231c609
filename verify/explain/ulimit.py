"""`ulimit -a` (bash, and dash/busybox's `-l: locked-in-memory size (kb)`): the memlock limit, as the fabric facts'
`memlock` (bytes, or "unlimited"). bash prints `max locked memory       (kbytes, -l) 64`. UCX's refusal to register names both."""
from __future__ import annotations

import re
from typing import Any

_BASH = re.compile(r"^max locked memory\s+\((kbytes|bytes|blocks)?,?\s*-l\)\s+(\S+)\s*$", re.MULTILINE)
_DASH = re.compile(r"^-l:\s+locked-in-memory size \((kb|kbytes)\)\s+(\S+)\s*$", re.MULTILINE)


# UCX's own report when verbs registration fails (src/uct/ib/base/ib_log.c): `UCX  ERROR mlx5_0: ibv_create_cq()
# failed: Cannot allocate memory. Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)`:
# the limit, and the verbs device the process opened (the fabric facts' `verbs_devices`).
_UCX = re.compile(r"UCX\s+ERROR\s+(\S+?):? ibv_\w+\(\).*max locked memory \(ulimit -l\).*\(current: (\d+|unlimited)"
                  r"(?: (kbytes|bytes))?\)")


def detect(text: str) -> bool:
    return bool(_BASH.search(text) or _DASH.search(text) or _UCX.search(text))


def parse(text: str) -> dict[str, Any]:
    if not (_BASH.search(text) or _DASH.search(text)) and (ucx := _UCX.search(text)):
        devices = sorted({m.group(1) for m in _UCX.finditer(text)})
        limit = ucx.group(2)
        memlock = "unlimited" if limit == "unlimited" else int(limit) * (1 if ucx.group(3) == "bytes" else 1024)
        return {"memlock": memlock, "verbs_devices": devices}
    found = _BASH.search(text) or _DASH.search(text)
    value = found.group(2) if found else ""
    if value == "unlimited":
        return {"memlock": "unlimited"}
    unit = 1 if found and found.group(1) == "bytes" else 1024
    return {"memlock": int(value) * unit} if value.isdecimal() else {}
