"""A group that never formed because one of its sockets could not connect, and whose that is, from what the failure
and NCCL's log show: the address it connected to, the interface NCCL's bootstrap chose, how many nodes the ranks
span. Pure: facts in, (why, remedy, owner) out, or None where nothing here decides.

- torch's rendezvous store (c10d's TCPStore: `The client socket has timed out after 1800s while trying to connect
  to (127.0.0.1, 48391)`, `... has failed to connect to ...`) on a loopback address: the store's server is a process
  of this job on this same host (rank 0, or the launcher) that never listened there (it died first, or the ranks were
  given different ports); no network is involved, so never the node's.
- NCCL's own socket connect (src/misc/socket.cc, 2.18 to 2.30: `socketStartConnect: Connect to %s failed : %s`,
  `socketPollConnect: Connect to %s returned %d(%s) errno %d(%s)`, `connect returned %s, retrying (%d/%ld)`):
  - all ranks on one node (`nodes` 1), on an interface NCCL chose itself: the bootstrap connects to a socket of this
    same host, and the network stack refusing it (`Software caused connection abort`, `No route to host`, `Network
    is unreachable`: a firewall on the interface, an interface with no usable address) is the node's, not a choice
    of the job (a refused or timed-out connect is a peer rank that is not listening: not decided here);
  - across nodes, where the bootstrap's interface (`Bootstrap : Using <if>:<addr>`) has a link-local address
    (169.254.0.0/16, fe80::/10: the same on every such server, never routed between them), or is loopback or a
    bridge of the host alone (docker's, libvirt's, a CNI's; docker's default network 172.17.0.0/16 inside a
    container): the job's, which names the interface the nodes share (NCCL_SOCKET_IFNAME);
  - any phase (the socket transport connects at the first collective too), ranks not known to share one node, where
    a socket connect that failed dialled a link-local address, or NCCL's socket list (`NET/Socket : Using [0]... [1]
    pod-id-link0:169.254.170.23<0>`) held one beside the connect's failure: a peer's link-local interface was
    offered and dialled (never routed between nodes): the job's NCCL_SOCKET_IFNAME, which left it in;
  - across nodes, `No route to host` (EHOSTUNREACH, 113) on any other interface, or none logged: the peer's address
    is refused on the way (a firewall rejecting NCCL's ports with icmp-host-prohibited, a missing route): the nodes'
    network, the host's; so is a connect the stack aborted (`Software caused connection abort`, ECONNABORTED), the
    phase or the file that printed it (`misc/socket.cc`) aside;
  - ranks not known to share one node, a connect that dialled a loopback address (`Connect to 127.0.0.1<45069>
    failed`, batch 275): a peer offered its `lo` (NCCL_SOCKET_IFNAME, or a hostname resolving to 127.0.x.x), the
    job's, never the way between the nodes.
"""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .transport import job_env

# torch's two forms of the address: `(127.0.0.1, 29500)` and `[localhost]:29500`
_STORE = re.compile(r"client socket has (?:timed out after \S+|failed to connect)[^\n]*?to (?:\(\[?([^,\s()\]]+)\]?, "
                    r"\d+\)|\[([^\]\s]+)\]:\d+)", re.IGNORECASE)
_LOOPBACK = re.compile(r"^(?:127\.\d+\.\d+\.\d+|localhost|::1)$", re.IGNORECASE)
_CONNECT = re.compile(r"socket(?:Start|Poll)?Connect\b|\bconnect returned\b|bootstrap|socket\.cc", re.IGNORECASE)
_NO_ROUTE = re.compile(r"No route to host|EHOSTUNREACH|\b113\(", re.IGNORECASE)
# what the network stack answers when it refuses a connect (a firewall's reject, no usable address or route)
_REFUSED_BY_STACK = re.compile(r"Software caused connection abort|No route to host|Network is unreachable|"
                               r"ECONNABORTED|EHOSTUNREACH|ENETUNREACH", re.IGNORECASE)
# the stack aborting a connect (ECONNABORTED): across nodes, on an interface the nodes share, the way between them
_ABORTED = re.compile(r"Software caused connection abort|\bECONNABORTED\b", re.IGNORECASE)
_LINK_LOCAL = re.compile(r"(?<![\d.])169\.254\.\d{1,3}\.\d{1,3}|(?<!\w)fe80:", re.IGNORECASE)
# interfaces of the host alone: loopback and bridges to its own containers or VMs (a peer node is never behind them)
_LOCAL_IF = re.compile(r"^(?:lo|docker\d*|virbr\d*|br-[0-9a-f]+|cni\d*|podman\d*)[:<]|:172\.17\.\d+\.\d+<")


# a socket connect that failed, as NCCL's socket.cc prints it (with the address dialled, 2.19+), and the interface lists
# NCCL's socket transport or bootstrap offered
_CONNECT_FAILED = re.compile(r"\bsocket\w*Connect\b[^|\n]*|\bconnect(?: to \S+)? returned[^|\n]*", re.IGNORECASE)
# the address a failed connect dialled, where it is loopback (socket.cc prints `<addr><port>`)
_DIALLED_LOOPBACK = re.compile(r"(?<![\d.])127\.\d{1,3}\.\d{1,3}\.\d{1,3}<\d+>|\[?::1\]?<\d+>")
_SOCKET_LIST = re.compile(r"(?:NET/Socket|Bootstrap) ?: ?Using [^|\n]*")


def _said(facts: NcclFacts, error: str) -> str:
    return " | ".join([error, *((facts.get("nccl_log") or {}).get("proof") or [])])


def store_loopback(error: str) -> tuple[str, str, Owner] | None:
    store = _STORE.search(error)
    address = (store.group(1) or store.group(2)) if store else ""
    if not _LOOPBACK.match(address):
        return None
    return (f"; the rendezvous store's client could not reach its server on this host's loopback ({address}): "
            "no network is involved; the store's server (rank 0 or the launcher) was not listening on that port",
            "Read rank 0's own log for why it stopped before it served the store; start every rank with the same "
            "MASTER_ADDR/MASTER_PORT (or --rdzv-endpoint), and rank 0 first.", "job")


def connect_cause(facts: NcclFacts, error: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a group whose socket could not connect, where the facts show whose; else None."""
    if found := store_loopback(error):
        return found
    said = _said(facts, error)
    if not _CONNECT.search(said):
        return None
    interface = str((facts.get("nccl_log") or {}).get("interface") or "")
    if facts.get("nodes") == 1 and not job_env(facts).get("NCCL_SOCKET_IFNAME") and _REFUSED_BY_STACK.search(said):
        return ("; NCCL's bootstrap could not connect to a socket of its own node (all ranks on one host): the node's "
                "network stack refused it", "Check the node's firewall (ufw, firewalld, iptables) on the interface "
                f"NCCL chose{f' ({interface})' if interface else ''} and that the interface has a usable address "
                "(`ip -br addr`); NCCL_SOCKET_IFNAME=lo works around it for one node.", "host")
    if _LINK_LOCAL.search(interface):
        return (f"; NCCL's bootstrap chose a link-local address ({interface}): the same on every such server and never "
                "routed between nodes", "Set NCCL_SOCKET_IFNAME in the job to the interface the nodes reach each other "
                "on (`ip -br addr`), not the link-local one.", "job")
    if _LOCAL_IF.search(interface):
        return (f"; NCCL's bootstrap ran over an interface of this host alone ({interface}: loopback or a bridge to its "
                "own containers), which no peer node is behind", "Set NCCL_SOCKET_IFNAME in the job to the interface "
                "the nodes share (inside a container: `--network host`, or the pod's routable interface).", "job")
    if facts.get("nodes") != 1 and not _LINK_LOCAL.search(said) and not _loopback_dialled(said) and (
            aborted := _ABORTED.search(said)):
        # the stack aborted the connect to a peer's routable address (ECONNABORTED), as a firewall's reject does:
        # the nodes' network, whatever NCCL's network was (a fall-back to sockets aborts no connect); a link-local
        # or loopback address dialled or offered is the job's (link_local_peer)
        return (f"; the connect to a peer node was aborted by the network stack ({aborted.group(0)}) on a routable "
                "interface: the network between the nodes refuses NCCL's ports (a firewall, a security group or a "
                "network policy)", "Open the nodes' firewalls to each other (NCCL's bootstrap and proxies use "
                "ephemeral ports: allow the cluster's subnet) and check the path (`nc -vz <peer> <port>`); drain the "
                "node until it is fixed.", "host")
    if _NO_ROUTE.search(said):
        return ("; a peer node's address answered 'No route to host' (EHOSTUNREACH): the network between the nodes "
                "refuses NCCL's ports (a firewall rejecting them, icmp-host-prohibited) or has no route",
                "Open the nodes' firewalls to each other (NCCL's bootstrap and proxies use ephemeral ports: allow the "
                "cluster's subnet, `firewall-cmd --zone=trusted --add-source=<subnet>`) and check the route "
                "(`ip route get <peer>`); drain the node until it is fixed.", "host")
    return None


def _loopback_dialled(said: str) -> str | None:
    """A socket connect that failed dialling a loopback address (`Connect to 127.0.0.1<45069> failed`, `[::1]<...>`)."""
    return next((m.group(0) for m in _CONNECT_FAILED.finditer(said) if _DIALLED_LOOPBACK.search(m.group(0))), None)


def link_local_peer(facts: NcclFacts, error: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) where a socket connect that failed went to, or beside, a link-local interface, or went to
    a loopback address; else None."""
    if facts.get("nodes") == 1:
        return None
    said = _said(facts, error)
    if dialled := _loopback_dialled(said):
        return (f"; a peer's socket was dialled at a loopback address ({dialled.strip()[:160]}): a rank of another "
                "node offered its `lo`, which reaches only itself", "Set NCCL_SOCKET_IFNAME in the job to the interface "
                "the nodes reach each other on (`ip -br addr`); check the peer's hostname does not resolve to "
                "127.0.x.x (/etc/hosts) where it is used as MASTER_ADDR.", "job")
    failed = [m.group(0) for m in _CONNECT_FAILED.finditer(said)]
    listed = [m.group(0) for m in _SOCKET_LIST.finditer(said)]
    shown = next((line for line in failed if _LINK_LOCAL.search(line)), None) or \
        (next((line for line in listed if _LINK_LOCAL.search(line)), None) if failed else None)
    if not shown:
        return None
    return (f"; NCCL's sockets offered or dialled a link-local address ({shown.strip()[:160]}): the same on every such "
            "server and never routed between nodes, so the peer refused or never answered", "Set NCCL_SOCKET_IFNAME "
            "in the job to the interface the nodes reach each other on (`ip -br addr`), or exclude the link-local one "
            "(`^lo,docker,<that interface>`).", "job")
