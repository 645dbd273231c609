"""torch.distributed's rendezvous store that could not bind its port, as torchrun or a launcher prints it: c10d's
TCPStore server (`The server socket has failed to listen on any local network address. The server socket has failed
to bind to [::]:29500 (errno: 98 - Address already in use).`), its libuv store from torch 2.4 (`... port: 29500,
useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use`), and the same for an address that is not
this host's (errno 99, EADDRNOTAVAIL); a torch built without libuv asked for its libuv store (`RuntimeError:
use_libuv was requested but PyTorch was build without libuv support`); and its client that could not reach a store on a loopback address (`The client
socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).`, torch/csrc/distributed/c10d/
socket.cpp; `... has failed to connect to ...`): a store of this job on this host that was not served. The group never
formed: the nccl facts' `error`, phase init, judged by the nccl check (a port another process holds, an address
that is not the rank's: the launch's). The store's other failures (a peer that never joined) name no cause on their
own (a remote store's client timing out: a peer never started, or the network) and are not read here."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_BIND = re.compile(r"The server socket has failed to (?:listen|bind)[^\n]*?(?:Address already in use|EADDRINUSE|"
                   r"Cannot assign requested address|EADDRNOTAVAIL)[^\n]*", re.IGNORECASE)
# a torch built without libuv asked for it (the store's default from torch 2.4): settings.NO_LIBUV judges it
_NO_LIBUV = re.compile(r"RuntimeError: use_libuv was requested but PyTorch was buil[dt] without libuv support[^\n]*")
_CLIENT = re.compile(r"The client socket has (?:timed out after \d+m?s|failed to connect) while trying to connect to "
                     r"(?:\(\[?|\[)(?:127\.\d+\.\d+\.\d+|localhost|::1)\]?(?:, |:)\d+\)?[^\n]*", re.IGNORECASE)


def _line(text: str) -> str | None:
    found = printed(_BIND, text) or printed(_CLIENT, text) or printed(_NO_LIBUV, text)
    if not found:
        return None
    start = text.rfind("\n", 0, found.start()) + 1
    return text[start:found.end()].strip()[:400]


def detect(text: str) -> bool:
    return _line(text) is not None


def parse(text: str) -> dict[str, Any]:
    return {"error": f"init: {_line(text)}", "nccl_log": None}
