"""`ibdev2netdev -v` (MLNX_OFED's script): one line per RDMA port with the port's own state, read by the same
verbs query as ibv_devinfo, beside the netdev bound to it and that netdev's state:
`0002:00:02.0 mlx4_0 (MT4100 - NA)  fw 2.43.7008 port 1 (ACTIVE) ==> ib0 (Down)`.
The port's state is the fabric's; the netdev's (`(Down)` after `==>`: IPoIB or the Ethernet interface) is not the
port's and is not read as it. Plain `ibdev2netdev` (no `-v`) prints only the netdev's state: nothing to judge, so it
is not read here."""
from __future__ import annotations

import re
from typing import Any

# the -v line: [PCI address] device (type - board id) [description] fw <version> port <n> (<STATE>) ==> netdev (state)
_LINE = re.compile(r"^\s*(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\s+)?([\w.-]+) \(([^)\n]*)\)[^\n]*?"
                   r"\bport (\d{1,3}) \((ACTIVE|DOWN|INIT|ARMED|ACTIVE_DEFER|NOP)\) ==> \S+ \((?:Up|Down)\)\s*$",
                   re.MULTILINE)
_TYPE = re.compile(r"^(MT\d+)\b")


def detect(text: str) -> bool:
    return bool(_LINE.search(text))


def parse(text: str) -> dict[str, Any]:
    adapters: dict[str, dict[str, Any]] = {}
    for m in _LINE.finditer(text):
        kind = _TYPE.match(m.group(2).strip())
        adapter = adapters.setdefault(m.group(1), {"name": m.group(1), "driver": None,
                                                   "hca_type": kind.group(1) if kind else None, "ports": []})
        port = int(m.group(3))
        if all(p["port"] != port for p in adapter["ports"]):
            adapter["ports"].append({"port": port, "state": m.group(4)})
    return {"adapters": list(adapters.values())}
