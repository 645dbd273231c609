"""perftest's port check (`ib_write_bw`, `ib_read_lat`, ... of linux-rdma/perftest): before it opens a connection it
asks libibverbs for the port (`ibv_query_port`) and stops on a port that is not active, printing ` Port number 1
state is Down` (its `portStates` names: Nop, Down, Init, Armed). That is the port state ibv_devinfo prints, read by
the same call: into the fabric facts' adapter and port, the adapter named by the command's `-d`/`--ib-dev` (or, with
no device named, by the one device `ibdev2netdev` lists beside it). A port check with no adapter it can be tied to
is not read: which adapter perftest opened by default is not shown."""
from __future__ import annotations

import re
from typing import Any

# at a line's start, or after a shell's prompt (a command run in the background prints over the next prompt)
_CHECK = re.compile(r"^(?:\S*[#$]\s)?\s*Port number (\d+) state is (Nop|Down|Init|Armed)\s*$",
                    re.MULTILINE | re.IGNORECASE)
# the perftest command itself, with the device it was given
_COMMAND = re.compile(r"\b(?:ib|raw_ethernet)_(?:write|read|send|atomic)_(?:bw|lat)\b([^\n]*)")
_DEVICE = re.compile(r"(?:\s-d\s*|\s--ib-dev[=\s])(\S+)")
# `ibdev2netdev`: `mlx5_18 port 1 ==> net1 (Down)`
_IBDEV2NETDEV = re.compile(r"^[^\S\n]*(\S+) port \d+ ==> \S+ \((?:Up|Down)\)\s*$", re.MULTILINE)


def _adapter(text: str) -> str | None:
    named = {m.group(1) for c in _COMMAND.finditer(text) for m in _DEVICE.finditer(c.group(1))}
    if len(named) == 1:
        return named.pop()
    listed = set(_IBDEV2NETDEV.findall(text))
    return listed.pop() if not named and len(listed) == 1 else None


def detect(text: str) -> bool:
    return bool(_CHECK.search(text)) and _adapter(text) is not None


def parse(text: str) -> dict[str, Any]:
    ports: dict[int, dict[str, Any]] = {}
    for m in _CHECK.finditer(text):
        ports[int(m.group(1))] = {"port": int(m.group(1)), "state": m.group(2).upper()}
    return {"adapters": [{"name": _adapter(text), "driver": None, "hca_type": None, "ports": list(ports.values())}]}
