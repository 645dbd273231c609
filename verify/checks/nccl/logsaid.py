"""What NCCL's log alone shows where no collective was recorded: the fabric in use (a network chosen, IB/RoCE
connections and how many carry GPUDirect RDMA), or ranks that reach each other inside one node. Pure."""
from __future__ import annotations

from ...facts import NcclFacts, NcclLog
from ...findings import Findings
from ...result import SKIP, CheckResult
from .efa import OFI_INIT_GAVE_UP
from .loopback import on_loopback
from .nogdr import no_gdr_by_design
from .plugfabric import plugin_fabric
from .transport import gdr_summary, rdma_shown


def within_node(facts: NcclFacts, log: NcclLog) -> str | None:
    """What NCCL's log shows of ranks that reach each other inside one node only (SHM, P2P): every connection it
    lists is intra-node, none goes through the network, and no fact says the group spans nodes. The network NCCL
    would use across nodes is then never exercised: no fall-back and no fabric to judge, only the transport chosen."""
    transports = [str(t) for t in log.get("transports") or []]
    nodes = facts.get("nodes")
    if any(t.startswith("NET/") for t in transports) or log.get("net_channels") or (isinstance(nodes, int) and nodes > 1):
        return None
    if not transports and log.get("nvls") is True and nodes == 1:
        # NVLS set up on one node (`NVLS multicast support is available on dev N`): the NVSwitches' multicast between
        # its GPUs, which the Fabric Manager set up; a network, if any, is never used between them
        return ("NCCL's log: one node, whose GPUs NCCL joins through NVLink SHARP (NVSwitch multicast available); no "
                "connection goes through the network; no collective recorded: bandwidth not assessed")
    if not transports:
        # a group recorded on one node whose log shows only NCCL's network set-up (no RDMA device, no plugin, the
        # bootstrap's socket): what it found is never used between GPUs of one node
        # aws-ofi-nccl giving up at its init (no EFA here) is the same: NCCL goes on with its own transports
        setup = log.get("ib_no_device") or log.get("plugin_missing") or log.get("interface") or log.get("networks") \
            or OFI_INIT_GAVE_UP.search(" | ".join([str(log.get("ofi_error") or ""), *(log.get("proof") or [])]))
        if nodes != 1 or not setup:
            return None
        return ("NCCL's log: one node, whose GPUs reach each other without the network NCCL set up (it is for "
                "other nodes); no collective recorded: bandwidth not assessed")
    return (f"NCCL's log: the ranks connect within one node ({', '.join(transports)}); no connection goes through "
            "the network; no collective recorded: bandwidth not assessed")


def log_said(facts: NcclFacts) -> str | None:
    """What NCCL's log alone shows when it proves the fabric in use, or ranks joined inside one node only; None when
    it proves nothing (sockets on a node whose adapters are unknown, or no network line at all)."""
    log: NcclLog = facts.get("nccl_log") or {}
    # a net plugin's own network (GPUDirect-TCPX, TCPXO) is the platform's GPU fabric too (plugfabric.py)
    kind = rdma_shown(facts, log) or plugin_fabric(log)
    # aws-ofi-nccl's `Selected Provider is efa`: the plugin NCCL's network runs through chose EFA's own provider
    efa = log.get("ofi_provider") == "efa"
    if not (log.get("networks") or gdr_summary(log)[0] or log.get("hcas") or efa) or kind is None:
        return within_node(facts, log)
    connections, gdr = gdr_summary(log)
    ranks = log.get("rank_networks") or {}
    if log.get("networks"):
        head = f"NCCL's log: network {', '.join(log.get('networks') or [])}" + (f" on {len(ranks)} rank(s)" if ranks else "")
    elif log.get("hcas"):
        head = f"NCCL's log lists RDMA device(s) {', '.join(log.get('hcas') or [])}"
    elif efa:
        head = "NCCL's log: aws-ofi-nccl selected provider efa (NCCL's network through EFA)"
    else:       # only `Channel .. via NET/<name>/<dev>` lines: the network each connection went through
        head = f"NCCL's log: connections via NET/{', NET/'.join(sorted(log.get('net_channels') or {}))}"
    said = [head]
    if connections:
        said.append(f"{connections} IB/RoCE connection(s), {gdr} with GPUDirect RDMA"
                    + (f" ({design})" if not gdr and (design := no_gdr_by_design(facts)) else ""))
    return "; ".join(said + ["no collective recorded: bandwidth not assessed"])


def one_rank_setup(facts: NcclFacts) -> bool:
    """A group of one rank whose log shows NCCL's set-up only (no connection, no NET channel): a rank has no peer to
    connect to, so whatever network it set up never carries a byte (each process of a launcher that never joined
    them prints its own `Rank 0`: batch 110); one rank, not a fabric in use."""
    log: NcclLog = facts.get("nccl_log") or {}
    return facts.get("world_size") == 1 and not log.get("transports") and not log.get("net_channels")


def _shown(facts: NcclFacts, log: NcclLog) -> str:
    """What a log that proves no fabric shows of NCCL's network: sockets on loopback, the network it chose with no
    fabric beside it (sockets on an interface: nothing to judge without the node's adapters), or no choice at all."""
    networks, interface = log.get("networks") or [], log.get("interface")
    if on_loopback(facts, log) and (networks or interface):
        return (f"NCCL's sockets ran on loopback ({interface or 'NCCL_SOCKET_IFNAME lo'}): ranks of one host, no "
                "network between nodes used")
    on = f" on {str(interface).split(':')[0]}" if interface else ""       # `eth0:10.0.0.5<0>`: the interface's name
    if networks == ["Socket"]:
        return f"NCCL's log shows its sockets (network Socket{on}) and no RDMA fabric"
    if networks:
        return f"NCCL's log shows network {', '.join(networks)}{on} and no RDMA fabric"
    return "NCCL's log (if any) shows no network choice"


def no_collective(facts: NcclFacts, found: Findings, result: CheckResult) -> CheckResult:
    """The verdict where no collective's figures or failure were recorded: what NCCL's log shows; a run of one rank
    (nothing could cross a link, whatever it printed); else nothing to judge."""
    said = None if one_rank_setup(facts) else log_said(facts)
    if found.items or said:
        return found.apply(result, said or "")
    if facts.get("world_size") == 1:
        return result.verdict(SKIP, "NCCL_SINGLE_RANK", f"{facts.get('backend')} run on 1 rank: nothing crosses a link, "
                              "so no bandwidth can be measured (busbw is 0 at world size 1); no collective's figures "
                              "recorded")
    log: NcclLog = facts.get("nccl_log") or {}
    return result.not_judged(f"no collective was recorded and {_shown(facts, log)}: nothing to judge", "Record the check with "
                             "`python -m verify --checks nccl --save-facts DIR`, or give NCCL's INFO log (NCCL_DEBUG=INFO).")
