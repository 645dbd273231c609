"""A socket whose peer went away, and a socket NCCL opened to an address of this host's own bridge (issue 35,
batch 208). Pure.

- Peer gone: NCCL's socket layer (src/misc/socket.cc, 2.12 to 2.30) reports a connection the other end ended:
  `Net : Connection closed by remote peer <addr>` (recv returned 0), `Call to recv from <addr> failed : Broken pipe`
  (EPIPE). The peer process (a rank, its proxy) exited or closed first;
  the reporting node's log then holds only the casualty (`Proxy Call to rank N failed (Connect)`). Where nothing
  else in this rank's failure names a cause (no CUDA failure, no completion error, no setting: the other rules read
  those first), it is no evidence against this node: the job's to read on the peer's log, never a drain.
- Own bridge: NCCL's socket list (`NET/Socket : Using [0]eth0:... [1]br-8a9e04832258:172.18.0.1<0> [2]veth...`)
  takes every interface but `docker*` and `lo` where the job names no NCCL_SOCKET_IFNAME; a Docker user bridge
  (`br-<id>`), a veth, libvirt's or a CNI's bridge holds an address that every such host has (172.18.0.1), never a
  way to another node. A socket failing to or from such an address is the job's: NCCL_SOCKET_IFNAME leaves it out.
"""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from ...result import FAIL, CheckResult

# the peer closed its end (recv returned 0: `closed by remote peer`; a write or read on it: EPIPE). A reset
# (ECONNRESET) is not read here: a path that drops (an IB link under IPoIB, a middlebox) resets as well, and the
# corpus holds such a node (nccl-2.21.5-remote-error-connection-reset-nodes-with-ib-issues: the host's)
PEER_GONE = re.compile(r"Connection closed by remote peer|Broken pipe|\bEPIPE\b", re.IGNORECASE)
# what would be a cause of this node's own, read by other rules first; present, this rule says nothing
# (a verbs completion's status in words or by name, `transport retry counter exceeded` / IBV_WC_RETRY_EXC_ERR, an
# adapter's async event, an Xid, CUDA's unhandled error: each a cause of this node's side, never a bare peer gone)
_OWN_CAUSE = re.compile(r"Cuda failure|CUDA error|ibv_\w+ failed|work completion|status=\d+|"
                        r"No route to host|Software caused connection abort|Network is unreachable|"
                        r"\bIBV_WC_\w+|retry counter exceeded|Got completion|async (?:fatal )?event|\bXid\b|"
                        r"unhandled cuda error|ncclUnhandledCudaError", re.IGNORECASE)
# interfaces of this host alone: Docker's user bridges and veths, libvirt's, CNI's and podman's bridges
_HOST_ONLY = re.compile(r"^(?:br-[0-9a-f]+|veth\w*|docker\d*|virbr\d*|cni\d*|podman\d*|cali\w+|flannel\.\d+)$")
_LISTED = re.compile(r"\[\d+\]([\w.-]+):([0-9a-fA-F.:]+)(?:%[\w.-]+)?<")
_SOCKET_LIST = re.compile(r"(?:NET/Socket|Bootstrap) ?: ?Using [^|\n]*")
# the address a socket call names: `recv from 172.18.0.1<34483>`, `Connect to 10.0.0.2<5000>`, `remote peer X<p>`
_ADDRESS = re.compile(r"(?:from|to|peer) \[?([0-9a-fA-F.:]+?)\]?<\d+>")

REMEDY = ("Read the peer rank's own log (the rank the proxy names, on the node that holds it): its exit, crash or OOM "
          "kill is the cause; judge that node by its own log before draining anything. NCCL_DEBUG=WARN on every rank "
          "shows the first failure.")


def _said(facts: NcclFacts, error: str) -> str:
    return " | ".join([error, *((facts.get("nccl_log") or {}).get("proof") or [])])


def bridge_peer(facts: NcclFacts, error: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) where a socket of the failure names an address NCCL's own list holds on a host-only
    bridge or veth; else None."""
    said = _said(facts, error)
    bridges = {addr: name for line in _SOCKET_LIST.findall(said) for name, addr in _LISTED.findall(line)
               if _HOST_ONLY.match(name)}
    hit = next((a for a in _ADDRESS.findall(error) if a in bridges), None)
    if hit is None:
        return None
    return (f"; NCCL's socket list holds {bridges[hit]}:{hit}, a bridge of this host alone (the same address on every "
            "Docker host), and the failing socket is to or from it: a connection meant for a peer node went to a "
            "local bridge", "Set NCCL_SOCKET_IFNAME in the job to the interface the nodes share (the list's first: "
            "`NCCL_SOCKET_IFNAME=eth0`, or `^docker,lo,br-,veth`); no node is at fault.", "job")


def own_cause(said: str) -> bool:
    """Whether the text names a cause of this node's own (read by the rules that judge it)."""
    return bool(_OWN_CAUSE.search(said))


def peer_gone_verdict(error: str, over: str, result: CheckResult) -> CheckResult | None:
    """FAIL NCCL_FAILED, the job's, where the failure is a socket its peer ended and names no cause of this node."""
    gone = PEER_GONE.search(error)
    if gone is None or _OWN_CAUSE.search(error):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; the peer ended "
                          f"the connection ({gone.group(0)}): its process exited or closed first, and this node's log "
                          "shows no cause of its own", REMEDY, "job")
