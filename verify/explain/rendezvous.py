"""torch.distributed's rendezvous store that could not bind its port, as torchrun or a launcher prints it: c10d's
TCPStore server (`The server socket has failed to listen on any local network address. The server socket has failed
to bind to [::]:29500 (errno: 98 - Address already in use).`), its libuv store from torch 2.4 (`... port: 29500,
useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use`), and the same for an address that is not
this host's (errno 99, EADDRNOTAVAIL). The group never formed: the nccl facts' `error`, phase init, judged by the
nccl check (a port another process holds, an address that is not the rank's: the launch's). The store's other
failures (a peer that never joined) name no cause on their own and are not read here."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_BIND = re.compile(r"The server socket has failed to (?:listen|bind)[^\n]*?(?:Address already in use|EADDRINUSE|"
                   r"Cannot assign requested address|EADDRNOTAVAIL)[^\n]*", re.IGNORECASE)


def _line(text: str) -> str | None:
    found = printed(_BIND, text)
    if not found:
        return None
    start = text.rfind("\n", 0, found.start()) + 1
    return text[start:found.end()].strip()[:400]


def detect(text: str) -> bool:
    return _line(text) is not None


def parse(text: str) -> dict[str, Any]:
    return {"error": f"init: {_line(text)}", "nccl_log": None}
