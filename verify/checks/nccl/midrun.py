"""A collective that failed mid-run for a reason on the job's side, named by the words of the failure itself: a peer
process that went away in an orderly way, or ranks that called different collectives. Pure: the nccl judge asks it
after the host's own evidence (a work completion's error, an adapter's event) has had its say."""
from __future__ import annotations

import re

# NCCL's socket layer when the peer closed the connection in order (misc/socket.cc: `socketProgress: Connection closed
# by remote peer <addr>`), under torch's `remote process exited or there was a network error` (ncclRemoteError), and
# gloo's `Connection closed by peer [10.0.0.2]:22617` alike. A connection closed in order is the peer's kernel closing
# the sockets of a process that exited (killed, crashed, or done), and the network delivering that close: the rank of
# another node that died first leaves every other rank this line. A link that fails, or a node that dies, resets or
# times out instead, and is not read here.
PEER_CLOSED = re.compile(r"Connection closed by (?:remote )?peer[^|\n]{0,80}", re.IGNORECASE)
# the bootstrap, where an early close is the group never forming (a stray connection, a rank not started): not mid-run
_FORMING = re.compile(r"\bbootstrap|^init: ", re.IGNORECASE)
# torch's check of the ranks' collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL, ProcessGroupWrapper): `Detected mismatch
# between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(...), but Rank 2 is running ...`,
# `Collectives differ in the following aspects`: the program asked its ranks for different collectives, shapes or
# dtypes, found before any byte crossed a link
MISMATCH = re.compile(r"Detected mismatch between collectives on ranks|Collectives differ in the following aspects")


def job_side(said: str) -> tuple[str, str] | None:
    """(why, remedy) where the failure's own words (its error first, then NCCL's lines kept as proof) put it on the
    job's side, or None."""
    if MISMATCH.search(said):
        return ("torch found the ranks running different collectives (their operation, shape or dtype differ): the "
                "program's, before NCCL moved anything", "Make every rank issue the same collectives with the same "
                "shapes and dtypes in the same order: pad a dimension the ranks split unevenly (or gather with "
                "per-rank sizes), and check branches that only some ranks take.")
    closed = PEER_CLOSED.search(said)
    if closed and not _FORMING.search(said):
        return (f"a peer rank's process closed its connection mid-run ({closed.group(0).strip()}): it exited, and the "
                "network delivered its close; nothing recorded shows this node at fault", "Read the log of the rank "
                "behind that address for why it exited (an exception, out of memory, a kill, a restart of an elastic "
                "agent) and that node's kernel log for an Xid or the OOM killer; run `verify` there if it shows one.")
    return None
