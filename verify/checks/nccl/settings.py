"""A failure NCCL's log pins on one of NCCL's settings, and whose setting it is: the socket interface (named by the
job's NCCL_SOCKET_IFNAME, or chosen by NCCL where the job names none), or a topology or graph file NCCL was given
(the image's: its /etc/nccl.conf, its net plugin). Such a failure is never the host's: the node is not broken, the
setting does not fit it. Pure: facts in, (why, remedy, owner) out.

The signatures are NCCL's own messages (github.com/NVIDIA/nccl, 2.18 to 2.30):
- no interface: src/bootstrap.cc `Bootstrap : no socket interface found` and `NET/Socket : No usable listening
  interface found`, src/transport/net_socket.cc `NET/Socket : no interface found`, and src/misc/socket.cc's
  `ncclSocketInit: connecting to address %s with family %d is neither AF_INET(%d) nor AF_INET6(%d)`: an address
  never filled because NCCL_SOCKET_IFNAME matched no interface (NVIDIA/nccl#1837, 2.27.7).
- a file: src/graph/topo.cc reads NCCL_TOPO_FILE (`NCCL_TOPO_FILE set by environment to %s`, else the hypervisor's
  /var/run/nvidia-topologyd/virtualTopology.xml), src/graph/search.cc NCCL_GRAPH_FILE (`XML Import Channel : dev
  %ld not found.`), src/graph/xml.cc/xml.h parse them (`XML Parse ...`, `XML Mismatch`, `Attribute %s of node %s
  not found`: an attribute NCCL fills itself on what it detects, so missing only from a file). NCCL also reads
  /etc/nccl.conf into its environment, and aws-ofi-nccl before 1.11 set NCCL_TOPO_FILE to its own static XML
  (/opt/amazon/efa/share/aws-ofi-nccl/xml/p5.48xl-topo.xml, aws/aws-ofi-nccl#785): both print `set by environment`
  as the job's variables do. Who set it: the recorded process environment (`nccl_env`) holding the variable shows
  the job started with it; otherwise (not recorded, or recorded without it) it came from the image.
- no interface, the variable not recorded: NCCL's ncclFindInterfaces (src/misc/socket.cc) falls back, where the job
  names no NCCL_SOCKET_IFNAME, to any interface but docker and lo, then docker, then lo, which every network namespace
  has: "found none" follows only a selection the environment made (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY), never the
  node's network.
- a port in use: the rendezvous or bootstrap socket could not bind its port, EADDRINUSE (torch's c10d: `The server
  socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)`, its libuv store `code: -98, name:
  EADDRINUSE`; NCCL: `Call to bind failed : Address already in use`): another process on this host holds the port
  the launch names (a second job's MASTER_PORT, torchrun's default 29500): the launch's to change.
- a setting the node's policy refuses: a net plugin's configuration check (GCP's `config_checker_shim`, its 'Guest
  Config Checker' layer in front of TCPX/TCPXO) compares the job's NCCL_* variables with the values the node's image
  enforces, `NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)`, and fails the plugin's init
  (ncclInvalidArgument): the job's variable against the platform's tuning, the node not broken. A line whose value
  equals the one expected refuses nothing: no setting to change, no cause shown (the job's to read, never a drain).
- a software RDMA device: src/transport/net_ib.cc `Could not find real path of rxe0 (/sys/class/infiniband/rxe0/device)`:
  the device has no PCI function behind it (the kernel's Soft-RoCE rxe, soft-iWARP siw), so NCCL can neither place it
  in the topology nor register GPU memory with it. Where the job's NCCL_IB_HCA names that device, what follows is the
  job's choice of device, not the node's adapters.
"""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .connect import connect_cause, link_local_peer
from .peergone import bridge_peer
from .refused import refused_cause
from .spawn import INIT, LEADING_PHASE
from .transport import job_env

NO_INTERFACE = re.compile(r"no socket interface found|No usable listening interface found|NET/Socket : no interface "
                          r"found|is neither AF_INET", re.IGNORECASE)
# a socket that could not bind its port because another process holds it (errno 98): torch's and NCCL's wordings
ADDRESS_IN_USE = re.compile(r"Address already in use|\bEADDRINUSE\b|errno:? 98\b", re.IGNORECASE)
# torch's rendezvous store asked for its libuv backend (torch 2.4 made it the default) by a torch built without it
# (torch/csrc/distributed/c10d/TCPStore.cpp: "use_libuv was requested but PyTorch was build without libuv support";
# the Windows wheels, pytorch/pytorch#139990): the torch build the image ships, never the node
NO_LIBUV = re.compile(r"use_libuv was requested but PyTorch was buil[dt] without libuv")
GRAPH_XML = re.compile(r"XML Import Channel|ncclTopoGetXmlGraphFromFile|GraphFromXml")
TOPO_XML = re.compile(r"graph/xml\.(?:cc|h)\b|XML (?:Parse|Mismatch)|XML Topology has wrong version|"
                      r"Attribute \S+ of node \S+ not found")
# the bootstrap, named by its file or, where the file is not quoted, by the socket layer's send/receive on a socket
# already connected (src/misc/socket.cc: `socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection
# reset by peer`): in init, the ranks' own exchange; a connect that failed (`socketStartConnect: Connect to ...`) may be
# the network transport's and is judged by connect.py
BOOTSTRAP = re.compile(r"bootstrap|socket\.cc|\bsocket(?:ProgressOpt|Progress|Wait): Call to (?:send|recv)", re.IGNORECASE)
ENFORCED = re.compile(r"mismatch enforced: (NCCL_\w+)=(\S*) \(expected ([^)\n]*)\)")
# the parts of an error beside the refusal that still leave it the refusal: NCCL's failing returns after it
_FAILING_RETURN = re.compile(r"-> [1-9]\d*(?: \[[^\]\n]*\])?$")
NO_REAL_PATH = re.compile(r"Could not find real path of (\S+)")
FILES = ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE")
HYPERVISOR_TOPOLOGY = "/var/run/nvidia-topologyd/virtualTopology.xml"


def _said(facts: NcclFacts, error: str) -> str:
    """The failure and the lines NCCL logged about it: where a signature may be."""
    return " | ".join([error, *((facts.get("nccl_log") or {}).get("proof") or [])])


def _file(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    graph = bool(GRAPH_XML.search(said))
    if not graph and not TOPO_XML.search(said):
        return None
    env = job_env(facts)
    variable = FILES[graph]                     # the file the failing code reads; else whichever one NCCL was given
    if not env.get(variable):
        variable = next((k for k in FILES if env.get(k)), variable)
    path = env.get(variable)
    kind = ("topology", "graph")[FILES.index(variable)]
    if path and variable in (facts.get("nccl_env") or {}):
        return (f"; NCCL could not use the {kind} file the job's {variable}={path} names: it does not describe this "
                "machine", f"Unset {variable} in the job, or point it at a file written for this node's GPUs and "
                "NICs (NCCL detects the topology itself when none is given).", "job")
    if path:
        named, fix = (f"{variable}={path}, which the job did not set (the image's /etc/nccl.conf or its net plugin)",
                      f"drop {variable} from the image's nccl.conf (or point it at a file written for this node)")
    else:
        named, fix = ("a topology file NCCL loaded (a net plugin's static topology, such as aws-ofi-nccl's before "
                      "1.11, or a nccl.conf's NCCL_TOPO_FILE)", "update the image's net plugin (aws-ofi-nccl 1.11+ "
                      "generates the topology) or drop the NCCL_TOPO_FILE its nccl.conf sets")
    return (f"; NCCL could not use {named}: the {kind} file the image ships does not describe this machine (a "
            "different VM size, or fewer GPUs than it lists)", f"Fix the image: {fix}; the host is not at fault "
            f"(only {HYPERVISOR_TOPOLOGY}, read when no file is named, is the platform's).", "image")


def _software_device(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """The job's NCCL_IB_HCA naming a device NCCL found no PCI function behind (a software RDMA device)."""
    hca = str(job_env(facts).get("NCCL_IB_HCA") or "")
    named = {d.split(":")[0].strip() for d in hca.lstrip("=").split(",")} if not hca.startswith("^") else set()
    text = " | ".join([said, str((facts.get("nccl_log") or {}).get("ib_error") or "")])
    device = next((m.group(1) for m in NO_REAL_PATH.finditer(text) if m.group(1) in named - {""}), None)
    if device is None:
        return None
    return (f"; the job's NCCL_IB_HCA={hca} pins NCCL to {device}, which NCCL found no device behind (`Could not find "
            f"real path of {device}`): a software RDMA device (Soft-RoCE, soft-iWARP), no adapter NCCL can drive",
            f"Drop {device} from NCCL_IB_HCA (NCCL_IB_DISABLE=1 runs over sockets on the Ethernet port under it), or "
            "run on the nodes' real RDMA adapters (`ibv_devices`, `rdma link` list them).", "job")


def _policy_lines(error: str) -> list[re.Match[str]]:
    """The net plugin's policy lines where they are all the error says (they and their failing returns): a failure
    said beside them (a completion error, a device missing, a hang) is another's, never the job's setting's."""
    parts = [p.strip() for p in re.split(r" \| |; ", LEADING_PHASE.sub("", error, count=1)) if p.strip()]
    refusals = [m for p in parts if (m := ENFORCED.search(p))]
    if refusals and all(ENFORCED.search(p) or _FAILING_RETURN.search(p) for p in parts):
        return refusals
    return []


def _differs(line: re.Match[str]) -> bool:
    """A refusal names a value other than the one expected: a line naming the expected value itself refuses nothing."""
    return line.group(2).strip().strip("'\"") != line.group(3).strip().strip("'\"")


def setting_cause(facts: NcclFacts, error: str, phase: str | None) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a failure NCCL's log pins on one of its settings, or None."""
    said = _said(facts, error)
    ifname = job_env(facts).get("NCCL_SOCKET_IFNAME")
    if ifname and NO_INTERFACE.search(said):
        return (f"; NCCL_SOCKET_IFNAME={ifname} matches no interface of this host: NCCL found none to bootstrap on",
                "Set NCCL_SOCKET_IFNAME in the job to an interface the node has (`ip -br link`; `^docker,lo` "
                "excludes instead), or unset it.", "job")
    if NO_INTERFACE.search(said):
        return ("; NCCL found no network interface its socket selection allows (NCCL_SOCKET_IFNAME or "
                "NCCL_SOCKET_FAMILY in the job's environment: without them NCCL falls back to any interface, lo last)",
                "Set NCCL_SOCKET_IFNAME in the job to the interface the nodes reach each other on (`ip -br addr`; "
                "an exclusion list such as `^docker,lo` must leave only routable ones), or unset it.", "job")
    if ADDRESS_IN_USE.search(said):
        return ("; the rendezvous port is already in use on this host (EADDRINUSE): another process, often a "
                "second job on the same node, holds the port the launch names", "Give each job on a node its own "
                "port (MASTER_PORT, torchrun --master-port or --rdzv-endpoint host:0 for a free one), or end the "
                "process that still holds it (`ss -ltnp`).", "job")
    if NO_LIBUV.search(said):
        return ("; torch's rendezvous store was asked for its libuv backend (torch 2.4's default), and this torch "
                "was built without libuv (pytorch/pytorch#139990: the Windows wheels)", "Set USE_LIBUV=0 in the "
                "job's environment (or `?use_libuv=0` in the rendezvous endpoint), or install a torch built with "
                "libuv in the image.", "image")
    policy = _policy_lines(error)
    if enforced := next((line for line in policy if _differs(line)), None):
        name, value, expected = enforced.groups()
        return (f"; the node's NCCL policy (its net plugin's configuration check) refuses the job's {name}={value}: "
                f"it enforces {expected}", f"Set {name} to the value the node enforces ({expected}) or leave it "
                "unset: the platform's image carries its tuned NCCL settings (GCP's A3 nodes: "
                "/usr/local/nvidia/lib64/nccl-env-profile.sh). No node is at fault.", "job")
    if policy:
        # every line names the value expected: no refusal, no setting to change, and nothing else said names a cause
        # (a bare failure, barefail.py: the job's to read, never a drain)
        name, value, _ = policy[0].groups()
        return (f"; the net plugin's configuration check prints {name}={value}, the value it expects: no refusal, "
                "and nothing else said shows a cause", "Nothing in the job's NCCL settings to change: read the net "
                "plugin's and the other ranks' logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET) for the cause.",
                "job")
    found = _software_device(facts, said) or _file(facts, said)
    if found:
        return found
    if phase == INIT and (connected := connect_cause(facts, error)):
        return connected
    if peer := link_local_peer(facts, error) or bridge_peer(facts, error):
        return peer                 # a link-local or host-only bridge address offered to the peers: the job's
    if refused := refused_cause(error):
        return refused              # a peer host answered that nothing listens there: the job's, not the network's
    if phase == INIT and not ifname and BOOTSTRAP.search(error):
        # the bootstrap (TCP between the ranks) died on an interface NCCL chose itself (often IPoIB or a docker
        # bridge the nodes do not share): the job names the right one
        return ("; the bootstrap (TCP between the ranks) failed on an interface NCCL chose itself: NCCL_SOCKET_IFNAME "
                "is not set", "Set NCCL_SOCKET_IFNAME in the job to the interface every node shares (the Ethernet NIC, "
                "not IPoIB or a docker bridge); check the firewall between the nodes.", "job")
    return None


# NCCL's retry budget for an InfiniBand/RoCE send (NCCL's environment variables): NCCL_IB_TIMEOUT is 4.096 us x
# 2^value per try (every release's default 14 or more: 14 before 2.14, then 18, 20 from 2.23) and NCCL_IB_RETRY_CNT the
# tries (default 7). A work completion that ran out of those retries (12: transport retry counter exceeded) under a
# budget the job cut below every release's default is the job's setting, not evidence against the link (batch 264:
# NCCL_IB_TIMEOUT=1 and NCCL_IB_RETRY_CNT=0 beside an ib_write_bw flow). Not 13 (RNR retry counter exceeded): NCCL sets
# the QP's rnr_retry to 7, infinite, whatever the job's variables (ncclIbRtsQp), so neither variable bounds those
# retries (hunt 91). Not NCCL_IB_TIMEOUT=0: the IB spec's 0 disables the ACK timer (infinite), a budget raised, not cut.
_RETRY_FLOORS = {"NCCL_IB_TIMEOUT": 14, "NCCL_IB_RETRY_CNT": 7}
_RETRIES_EXCEEDED = (12,)
_UNBOUNDED = {"NCCL_IB_TIMEOUT": 0}


def retry_budget_cut(facts: NcclFacts, status: int) -> tuple[str, str, Owner] | None:
    """(the cause's words, the remedy, owner job) where retries ran out under the job's own cut budget; else None."""
    env = job_env(facts)
    cut = [f"{name}={env[name]}" for name, floor in _RETRY_FLOORS.items()
           if re.fullmatch(r"\d{1,3}", str(env.get(name, "")).strip())
           and int(env[name]) < floor and int(env[name]) != _UNBOUNDED.get(name)]
    if status not in _RETRIES_EXCEEDED or not cut:
        return None
    return (f" (its retries ran out) under the job's own {', '.join(cut)}, below NCCL's defaults (NCCL_IB_TIMEOUT 14 "
            "or more, NCCL_IB_RETRY_CNT 7): the job cut the retry budget, a congested or busy link then fails a send",
            f"Unset {' and '.join(c.split('=')[0] for c in cut)} (NCCL's defaults); if the error recurs with them, "
            "check the link between the two nodes (`ibstat`, the switch ports' error counters, PFC/ECN on RoCE).", "job")
