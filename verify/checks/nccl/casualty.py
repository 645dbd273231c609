"""A rank's NCCL failure that only reports a peer's: the casualty, not the cause (issue 35, batch 88).

While NCCL sets up its transports, a rank's proxy waits on its peers; when another rank's process fails there, this
rank's error (torch's `unhandled system error` or, in 2.18, `internal error`) carries only the proxy's view of it:
`Socket recv failed while polling for opId=...` (src/proxy.cc) or `[Service thread] Error encountered progressing
operation=Connect, res=3, closing connection` (2.19+). Nothing in it names a node, a fabric, an image or a setting:
the failure is judged (fail), owned by the job (the cause is in another rank's log), and the node is not drained on
it (FACTS.md: drain only on evidence that the host is at fault). A cause shown beside it (a CUDA error, a verbs call, a setting) is read first."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult
from .barrier import PEER_FAILED

CASUALTY = re.compile(r"Socket recv failed while polling for opId|"
                      r"Error encountered progressing operation=\w+, res=\d+, closing connection")

# the same line under torch's `Last error:`, for `verify explain` (its own `Last error` reader wants a `name:` prefix)
LAST = re.compile(r"Last error:[ \t]*\n[ \t]*((?:\[[^\]\n]*\] )?(?:" + CASUALTY.pattern + r")[^\n]*)")

# aws-ofi-nccl's EFA completion error 4126 (libfabric's FI_EFA_ERR_UNRESP_REMOTE, issue 35, batch 94): the peer's
# EFA device answered (the fabric path works) but no endpoint completed the handshake, the peer's process gone or not
# listening (`Peer host id: N/A`); torch says `remote process exited or there was a network error`. The plugin prints
# it as its own WARN, so OTHER's `NCCL WARN` does not veto it.
EFA_UNRESPONSIVE = re.compile(r"Error: 4126 \(Unresponsive receiver \(reachable by EFA device but handshake failed\)|"
                              r"Unresponsive receiver \(reachable by EFA device but handshake failed\)")
# libfabric's EFA completion status 9, REMOTE_ERROR_BAD_DEST_QPN (prov/efa/src/efa_strerror.c: "Invalid receiver
# queue pair number (QPN). This error is typically caused by a crashed peer"): the peer's device answered that no such
# queue pair exists, its process gone (an OOM kill, a crash); the job's, as 4126 (issue 35, batch 106)
EFA_PEER_QP_GONE = re.compile(r"Invalid receiver queue pair number \(QPN\)")
_CUDA = re.compile(r"Cuda failure|CUDA error")

# what else an error may name: a WARN or a CUDA failure of its own (then that is the cause, read elsewhere)
OTHER = re.compile(r"NCCL WARN|Cuda failure|CUDA error")

REMEDY = ("Rerun with NCCL_DEBUG=WARN on every rank: the rank that failed first prints the call that failed (a verbs or "
          "socket call, an allocation); judge that rank's node by its own log before draining anything.")


def peer_casualty(error: str) -> str | None:
    """The proxy's line under torch's `Last error:` that shows this rank lost a peer during setup, where the error
    itself names nothing else (no WARN of its own, no CUDA failure): NCCL's log lines alone are no such proof."""
    # torch's monitored barrier whose send/recv with a peer failed names that rank, no cause of its own (barrier.py)
    gone = EFA_UNRESPONSIVE.search(error) or EFA_PEER_QP_GONE.search(error) or PEER_FAILED.search(error)
    if gone and not _CUDA.search(error):
        return gone.group(0)
    hit = CASUALTY.search(error)
    if not hit or OTHER.search(error):
        return None
    return hit.group(0)


# torch's c10d store client losing its server (TCPStore: `recvValueWithTimeout failed on SocketImpl(...): Failed to
# recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?`, issue 35, batch 155):
# the server lives in rank 0's process (or the launcher's); this rank only saw it go. Nothing names this node, a
# fabric or a setting: the job's to read (the store host's own log says why it went), never a drain
STORE_LOST = re.compile(r"Connection was likely closed\. Did the remote server shutdown or crash\?")


def store_verdict(error: str, over: str, result: CheckResult) -> CheckResult | None:
    """FAIL NCCL_FAILED, the job's, where the error is this rank losing the c10d store and names nothing else."""
    if not (lost := STORE_LOST.search(error)) or OTHER.search(error):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; this rank lost "
                          f"the c10d store's server ({lost.group(0)}): the process that held it (rank 0, or the "
                          "launcher) went first, and its own log says why",
                          "Read the log of the rank (or launcher) that hosted MASTER_ADDR:MASTER_PORT: its crash, OOM "
                          "kill or exit is the cause; judge that node by its own log before draining anything.", "job")
