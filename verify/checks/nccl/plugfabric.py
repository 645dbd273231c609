"""A net plugin's own network as the platform's GPU fabric (issue 35, batch 180): GCP's GPUDirect-TCPX
(`Using network GPUDirectTCPX_v7`) and TCPXO (`Using network FasTrak`), and by extension any other vendor's plugin
(`NCCL RDMA Plugin v8`, gIB): neither NCCL's verbs transport nor EFA, yet the network the platform gives its GPUs.
Chosen by every rank, it is the fabric in use, never a fall-back to sockets. Libfabric (aws-ofi-nccl) is left out:
its provider decides whether it is EFA or TCP (transport.py). Pure."""
from __future__ import annotations

import re

from ...facts import NcclLog

# NCCL's own networks (sockets, its IB transport and the HPC-X verbs plugin named after it) and aws-ofi-nccl's
_NOT_A_PLUGIN_FABRIC = re.compile(r"^(?:Socket|IB|IBext\w*|(?:AWS )?Libfabric|OFI\w*)$")


def plugin_fabric(log: NcclLog) -> str | None:
    """The net plugin's network(s) when every rank named chose one (none on sockets, verbs or Libfabric), else None."""
    nets = [str(n) for n in log.get("networks") or ([str(log.get("network"))] if log.get("network") else [])]
    if not nets or any(_NOT_A_PLUGIN_FABRIC.match(n.strip()) for n in nets):
        return None
    if any(str(n).strip() == "Socket" for n in (log.get("rank_networks") or {}).values()):
        return None                 # a rank on NCCL's sockets: the plugin is not every rank's network
    return ", ".join(nets)
