"""A socket to a peer that the network stack or the peer ended (aborted, reset, refused, closed) is no consequence of
NCCL's network being sockets: a fall-back from InfiniBand or EFA makes a job slow, and a slow job may time out, but
it never makes a TCP connect abort or a peer close its end. Such a failure is not owned by the fall-back its log also
shows (the fall-back is still said); the connection's own rules decide (verify/checks/nccl/connect.py), else no
cause is named. Pure.

NCCL's words (src/misc/socket.cc, 2.18 to 2.30): `socketStartConnect: Connect to %s failed : %s` and
`socketPollConnect: ... returned %s` with the errno's text (`Software caused connection abort`, ECONNABORTED;
`Connection reset by peer`, ECONNRESET; `Connection refused`, ECONNREFUSED), `socketProgress: Connection closed by
remote peer %s`, `socketProgressOpt: Call to recv from %s failed : Connection reset by peer`; src/proxy.cc's
`Socket recv failed while polling for opId=%p` on a proxy connection its peer closed."""
from __future__ import annotations

import re

from ...findings import Finding, Findings
from ...result import CheckResult

PEER_ENDED = re.compile(r"Software caused connection abort|Connection reset by peer|Connection refused|"
                        r"Connection closed by remote peer|Socket recv failed while polling|Broken pipe|\bEPIPE\b|"
                        r"\bE(?:CONNABORTED|CONNRESET|CONNREFUSED)\b", re.IGNORECASE)


def fallback_cause(found: Findings, causes: tuple[str, ...], error: str, result: CheckResult) -> Finding | None:
    """The fall-back finding that owns a failure, or None where the failure (its error, not a line its log quotes:
    a connect NCCL retried and got is no failure) is a socket its peer or the stack ended; the fall-back is then
    said in the details."""
    cause = next((f for f in found.items if f.owner != "host" and f.code in causes), None)
    if cause is None or not PEER_ENDED.search(error):
        return cause
    result.details.append(f"NCCL's log also shows ({cause.code}, {cause.owner}'s): {cause.text}; not this failure's "
                          "cause: a socket its peer or the network ended is no consequence of using sockets")
    return None
