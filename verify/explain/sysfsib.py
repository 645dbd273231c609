"""A dump of /sys/class/infiniband as `grep . /sys/class/infiniband/*/ports/*/state` and kin print it
(`/sys/class/infiniband/mlx5_0/ports/1/rate:400 Gb/sec (4X NDR)`), or as `head` over the files or a ttar archive of
them (procfs's fixtures) prints them, read by the probe's own sysfs reader (verify/shared/rdma.py) from the same files
laid out again in a private folder: one reading of sysfs, whoever printed it. Only the attributes the probe reads are kept, under names that are plain words (a hostile path is
skipped, never followed)."""
from __future__ import annotations

import os
import re
import tempfile
from typing import Any

from ..shared import rdma

_LINE = re.compile(r"^(?:\S+:)?/sys/class/infiniband/([\w.-]+)/(hca_type|fw_ver|node_desc|device/device|"
                   r"ports/(\d{1,3})/(state|phys_state|rate|link_layer)):(.*)$")
MAX_LINES = 4096


# a ttar archive of the same files (prometheus/procfs's sysfs fixtures: `Path: fixtures/sys/class/infiniband/hfi1_0/
# ports/1/state`, `Lines: 1`, the value), read as the grep dump's `path:value`
_TTAR = re.compile(r"^Path: \S*?(/sys/class/infiniband/\S+)\nLines: 1\n([^\n]*)$", re.MULTILINE)
# `head /sys/class/infiniband/*/ports/*/state`: each file's name between `==> <==`, its value under it
_HEAD = re.compile(r"^==> (/sys/class/infiniband/\S+) <==\n([^\n]*)$", re.MULTILINE)


def _entries(text: str) -> list[tuple[str, str, str]]:
    out = []
    lines = text.splitlines()[:1 << 20] + [f"{m.group(1)}:{m.group(2)}" for p in (_TTAR, _HEAD)
                                                   for m in p.finditer(text)]
    for line in lines:
        if (m := _LINE.match(line.strip())) and m.group(1) not in (".", ".."):
            out.append((m.group(1), m.group(2), m.group(5).strip()))
            if len(out) >= MAX_LINES:
                break
    return out


def detect(text: str) -> bool:
    return any(attr.startswith("ports/") and attr.endswith("/state") for _, attr, _ in _entries(text))


def parse(text: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="verify-sysfs-") as root:
        for name, attr, value in _entries(text):
            path = os.path.join(root, "sys/class/infiniband", name, attr)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(value + "\n")
        return {"adapters": rdma.adapters(root)}
