"""A group that could not form because a connect was refused (ECONNREFUSED), and whose that is (issue 35, batch 107).

A refusal is an answer: the peer's host is up, its network delivered the SYN and its kernel replied with a reset
because no process listens on that port. NCCL publishes an address only once its listener is up (the root's
ncclUniqueId after bootstrapCreateRoot listens; each rank's bootstrap and proxy addresses after theirs), and torch's
store client dials the MASTER_ADDR:MASTER_PORT the launch gave. A refused connect is then a peer process that exited
or was restarted (an elastic restart whose ranks dial the previous round's address), never started, or listens on
another port: the job's, and no drain. A firewall's REJECT answers the same (iptables' default icmp-port-unreachable,
ufw's tcp-reset), but nothing recorded tells it from a listener gone, and a node is drained only on evidence (FACTS.md);
a network that fails drops or aborts instead (`No route to host`, `Software caused connection abort`, a timeout:
connect.py). Pure.

The words (src/misc/socket.cc, 2.18 to 2.30): `socketPollConnect: connect to 10.0.0.4<52333> returned Connection
refused, retrying (21/34) after sleep for 2100 msec`, `socketPollConnect: Connect to %s returned 111(Connection
refused) errno 115(...)`, `socketStartConnect: Connect to %s failed : Connection refused`, 2.18's `Call to connect
returned Connection refused, retrying`; torch's c10d store, `(errno: 111 - Connection refused)`. Where the failure
said is a hang (a timeout), the refusals are what NCCL retried on its way and the hang's own rules decide."""
from __future__ import annotations

import re

from ...codes import Owner
from .hang import is_timeout

REFUSED = re.compile(r"Connection refused|\bECONNREFUSED\b", re.IGNORECASE)
# the address the refused connect dialled, as NCCL (`10.0.0.4<52333>`) and torch's store (`[node1]:29500`) print it
_ADDRESS = re.compile(r"[Cc]onnect(?:ing)? to (\S+?<\d+>|\[[^\]\s]+\]:\d+|\(\S+, \d+\))")


def refused_cause(error: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) where the failure itself is a connect its peer refused; else None."""
    if not REFUSED.search(error) or is_timeout(error):
        return None
    address = _ADDRESS.search(error)
    at = f" at {address.group(1)}" if address else ""
    return (f"; the connect to a peer{at} was refused (ECONNREFUSED): its host answered and no process listens on that "
            "port (the peer rank exited or was restarted, never started, or listens elsewhere); nothing shows this "
            "node at fault",
            f"Read the log of the process that should listen{at or ' there'}: why it exited or restarted (an elastic "
            "restart's ranks must all join the new round; a stale NCCL_COMM_ID or store address dials the old one), or "
            "start every rank with the same MASTER_ADDR/MASTER_PORT; `ss -ltn` on that host shows what listens. A "
            "firewall's REJECT answers the same: where the port listens, `nc -vz <peer> <port>` from this node tells.",
            "job")
