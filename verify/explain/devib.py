"""A container's /dev/infiniband as `ls -l /dev/infiniband` prints it (the RDMA device plugins' test pods:
`crw-rw-rw- 1 root root 231, 192 Nov 21 02:18 uverbs0`, `... 10, 57 ... rdma_cm`), or as `find /dev/infiniband`
prints it (one path a line), or as plain `ls` prints it (`issm0  rdma_cm  umad0  uverbs0`, a row of device
names and nothing else): what the container was given, into the fabric facts' `uverbs` and `rdma_cm`. Only
character devices (`ls -l`'s `c`), whole paths or rows of device names alone count, so a name quoted in an error message is not a listing."""
from __future__ import annotations

import re
from typing import Any

# `ls -l`'s character device: mode (an SELinux `.` or ACL `+` after it), links, owner, group, `major, minor`, date, name
_CHAR = re.compile(r"^c[rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+\d+,\s*\d+\s+.*?\s(\S+)$")
_PATH = re.compile(r"^/dev/infiniband/(\S+)$")
_VERBS = re.compile(r"uverbs\d+")
_RDMA_NAMES = re.compile(r"(?:uverbs|umad|issm|ucm)\d+|rdma_cm")


def _names(text: str) -> list[str]:
    names = []
    for line in text.splitlines():
        m = _CHAR.match(line.strip()) or _PATH.match(line.strip())
        if m and _RDMA_NAMES.fullmatch(m.group(1)):
            names.append(m.group(1))
        elif len(row := line.split()) >= 2 and all(_RDMA_NAMES.fullmatch(n) for n in row):
            names.extend(row)       # plain `ls /dev/infiniband`: a row of nothing but its device names (batch 95)
    return list(dict.fromkeys(names))


def detect(text: str) -> bool:
    return any(_VERBS.fullmatch(n) or n == "rdma_cm" for n in _names(text))


def parse(text: str) -> dict[str, Any]:
    names = _names(text)
    return {"uverbs": sorted((n for n in names if _VERBS.fullmatch(n)), key=lambda n: int(n[6:])),
            "rdma_cm": "rdma_cm" in names}
