"""An Ethernet port switched off beside InfiniBand rails that are all up. On a RoCE port the physical state Disabled
is its netdev taken down (`ip link set ... down`, or never brought up): a setting, where a broken link trains
(Polling). With every InfiniBand port of the node ACTIVE, NCCL has its fabric; the Ethernet function that is off is
no fault (a800-slurm-ibstatus-two-hdr-ib-rails-...-second-roce-port-disabled). An InfiniBand port Disabled beside its
active twin stays a lost rail (cx6-hdr-port-disabled)."""
from __future__ import annotations

from ...facts import Port


def _word(value: object) -> str:
    return str(value).rsplit(":", 1)[-1].strip().lower() if value is not None else ""


def ethernet_off_beside_ib(port: Port, ports: list[Port]) -> bool:
    """The port is Ethernet and Disabled, and the node has InfiniBand ports, every one ACTIVE/LinkUp."""
    if port.get("link_layer") != "Ethernet" or _word(port.get("phys_state")) != "disabled":
        return False
    ib = [p for p in ports if p.get("link_layer") == "InfiniBand"]
    return bool(ib) and all(_word(p.get("state")) == "active" and _word(p.get("phys_state")) == "linkup" for p in ib)
