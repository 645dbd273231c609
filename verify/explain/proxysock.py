"""NCCL's proxy failure (`Proxy Call to rank 14 failed (Connect)`, `[Proxy Service 3] Failed to execute operation
Connect from rank 3`) read with the socket line that says why (issue 35, batch 208): NCCL's socket layer WARNs the
errno first (src/misc/socket.cc: `Net : Connection closed by remote peer 10.104.148.191<37877>`, `Net : Call to recv
from 172.18.0.1<34483> failed : Broken pipe`), then the proxy WARNs its casualty, and the explain reader's failure is
the last WARN run. The socket lines are kept beside it, as a translation quotes them, so that the judge reads the
peer that went away (verify/checks/nccl/peergone.py) and the address it was on. Pure."""
from __future__ import annotations

import re

from ..checks.nccl.peergone import PEER_GONE

_PROXY = re.compile(r"Proxy Call to rank \d+ failed|\[Proxy Service \d+\] Failed to execute operation")
_TAIL = 1 << 20
_SOCKET_WARN = re.compile(r"(?:misc/)?socket\.cc:\d+ (?:\(\w+\) )?NCCL WARN ([^\n]*)")


def with_socket_cause(error: str | None, text: str) -> str | None:
    """The error with the socket WARNs (up to two) that name a peer gone, where the error is the proxy's casualty."""
    if not error or not _PROXY.search(error) or PEER_GONE.search(error):
        return error
    # the socket's WARNs come just before the proxy's, at the failure: read in the text's last MB (a long log's first
    # MB is its start-up, and the verdict of the same failure would turn on the log's length)
    lines = list(dict.fromkeys(m.group(1).strip()[:200] for m in _SOCKET_WARN.finditer(text, max(0, len(text) - _TAIL))
                               if PEER_GONE.search(m.group(1))))[:2]
    return f"{error} ({'; '.join(lines)})" if lines else error
