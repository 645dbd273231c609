"""Sockets on the loopback interface prove one host: `lo` (127.0.0.0/8, ::1) reaches no other machine, so NCCL's
ranks that meet over it share one node, where NCCL's network carries nothing between GPUs (P2P and SHM do) and a
fall-back from InfiniBand or EFA to it costs nothing. Pure.

Proof is the interface NCCL's socket transport or bootstrap used (`NET/Socket : Using [0]lo:127.0.0.1<0>`, the
nccl_log `interface`), or, where none is recorded, the job's NCCL_SOCKET_IFNAME naming only loopback (`lo`, `=lo`:
NCCL's ncclFindInterfaces takes that prefix, src/misc/socket.cc). A group recorded on several nodes is no such
proof (its sockets on `lo` would fail to connect: verify/checks/nccl/connect.py judges that)."""
from __future__ import annotations

import re

from ...facts import NcclFacts, NcclLog

# `lo:127.0.0.1<0>`, `lo:::1<0>`, `lo:[::1]<0>`, or any interface holding a loopback address
_LOOPBACK_IF = re.compile(r"^lo\d*(?:[:<]|$)|:127(?:\.\d{1,3}){3}<|:\[?::1\]?<")
_LOOPBACK_NAME = re.compile(r"^lo\d*$")


def on_loopback(facts: NcclFacts, log: NcclLog) -> bool:
    """Whether NCCL's sockets ran over loopback only, on a group not recorded across nodes."""
    nodes = facts.get("nodes")
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1:
        return False
    interface = str(log.get("interface") or "")
    if interface:
        return bool(_LOOPBACK_IF.search(interface))
    # the job's variable as recorded, else as NCCL's log says it read it (transport.job_env's rule; imported there)
    env = {**(log.get("env") or {}), **(facts.get("nccl_env") or {})}
    ifname = str(env.get("NCCL_SOCKET_IFNAME") or "").strip().lstrip("=")
    names = [n.strip() for n in ifname.split(",")]
    return bool(ifname) and not ifname.startswith("^") and all(_LOOPBACK_NAME.match(n) for n in names)
