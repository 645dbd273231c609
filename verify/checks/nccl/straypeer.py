"""A connection that is not NCCL's accepted on NCCL's own listen socket (issue 35, batch 238). Pure.

NCCL's sockets open with an 8-byte magic (src/misc/socket.cc, socketFinalizeAccept); an accepted connection whose
first bytes are not it is refused with `NCCL WARN socketFinalizeAccept: wrong magic <got> != <want>`. Where the bytes
it got read as text (`74656d2f20544547` is `GET /met`, little-endian: an HTTP request, a metrics scraper or a port
scanner that found NCCL's ephemeral port), the peer was no rank of any job. NCCL before 2.30u1 could leave its proxy
service waiting on such a connection (NVIDIA/nccl#1808, fixed by #1834): the hang is the image's NCCL, and the node's
network is not at fault. Other bytes (another job's rank, a different NCCL release's magic) say nothing here. A cause
of the node's own in the same log decides first."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult
from .peergone import own_cause

WRONG_MAGIC = re.compile(r"wrong magic ([0-9a-fA-F]{16}) != [0-9a-fA-F]{16}")


def stray_text(said: str) -> str | None:
    """The text a refused connection sent first, where it reads as printable ASCII; else None."""
    hit = WRONG_MAGIC.search(said)
    if hit is None:
        return None
    sent = bytes.fromhex(hit.group(1))[::-1]          # the magic is printed as a little-endian uint64
    return sent.decode("ascii") if all(0x20 <= b < 0x7f for b in sent) else None


def stray_verdict(said: str, failed: str, timeout: bool, result: CheckResult) -> CheckResult | None:
    sent = stray_text(said)
    if sent is None or own_cause(said):
        return None
    return result.verdict(FAIL, "NCCL_TIMEOUT" if timeout else "NCCL_FAILED", f"{failed}; a program that is not "
                          f"NCCL connected to NCCL's own listen socket (its first bytes read `{sent}`: an HTTP "
                          "scraper or a port scanner), and NCCL's proxy service before 2.30u1 can wait on such a "
                          "connection for ever (NVIDIA/nccl#1808): the image's NCCL, not the node's network",
                          "Run NCCL 2.30u1 or later in the image; keep scrapers and scanners off the ports the job's "
                          "ranks listen on (NCCL's are ephemeral unless NCCL_SOCKET_PORT_RANGE pins them). No node "
                          "is at fault.", "image")
