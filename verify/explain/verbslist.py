"""What libibverbs itself listed, beside another tool's lines (issue 35, batch 95).

`ibv_devices` (rdma-core libibverbs/examples/device_list.c) prints `    device                 node GUID`, a rule of
dashes, then one `name  guid` row per device ibv_get_device_list() returned: the fabric facts' `verbs_devices`
(FACTS.md), read so that `verify explain` judges the same record its translation does.

libibverbs warning `couldn't open config directory '/etc/libibverbs.d'` (verbs/init.c, read_config) finds no provider
configured at all; with `ibv_devinfo`'s `No IB devices found` after it, the image lists no provider and opens no
device: `providers` [] and `verbs_devices` [] (whether the node has adapters is not shown)."""
from __future__ import annotations

import re
from typing import Any

# a line's own blanks before it: `^\s*` ran over every blank line below each line start (quadratic: peermem.py reads
# this in the journal's view, which keeps blank lines)
_HEADER = re.compile(r"^[ \t]*device\s+node GUID\s*\n\s*-+\s+-+\s*\n((?:\s*\S+\s+[0-9a-fA-F]{16}\s*\n?)+)", re.MULTILINE)
_NO_CONFIG = re.compile(r"libibverbs: Warning: couldn't open config directory '[^'\n]*libibverbs\.d'")
_NO_DEVICES = re.compile(r"^[ \t]*No IB devices found\s*$", re.MULTILINE)


def listed(text: str) -> dict[str, Any]:
    """`verbs_devices` from an `ibv_devices` listing in the text, or nothing."""
    m = _HEADER.search(text)
    return {"verbs_devices": [row.split()[0] for row in m.group(1).splitlines() if row.strip()]} if m else {}


def detect(text: str) -> bool:
    """libibverbs with no provider configured, then no device listed."""
    warned = _NO_CONFIG.search(text)
    return bool(warned and _NO_DEVICES.search(text, warned.end()))


def parse(text: str) -> dict[str, Any]:
    return {"providers": [], "verbs_devices": []}
