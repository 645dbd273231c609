"""Libfabric's providers under aws-ofi-nccl besides EFA (issue 35, batches 190/191): `Selected Provider is cxi`
(HPE Slingshot 11 on Perlmutter, Polaris, Frontier), `verbs;ofi_rxm` (InfiniBand/RoCE), `psm3`/`opx`/`psm2`
(Intel/Cornelis Omni-Path) drive the platform's RDMA NICs as `efa` does: the fabric in use, never a fall-back.
Only the providers over the kernel's IP stack (`tcp`, `sockets`, `udp`) are sockets under a Libfabric name.
A provider in neither list proves nothing either way (it is judged as before: not a fabric). Pure."""
from __future__ import annotations

from typing import Any

# libfabric's core providers over IP (fi_tcp(7), fi_sockets(7), fi_udp(7)); ofi_rxm/ofi_rxd are utility layers
# over a core one and decide nothing on their own
_SOCKETS = frozenset({"tcp", "sockets", "udp"})
# libfabric's providers of RDMA NICs (fi_cxi(7), fi_verbs(7), fi_psm3(7), fi_opx(7), fi_psm2(7), fi_ucx(7))
_RDMA = {"cxi": "HPE Slingshot", "verbs": "InfiniBand/RoCE", "psm3": "Omni-Path/RoCE", "opx": "Omni-Path",
         "psm2": "Omni-Path", "ucx": "InfiniBand/RoCE"}


def _names(provider: Any) -> list[str]:
    """`verbs;ofi_rxm` is `verbs` and `ofi_rxm`."""
    return [p.strip().lower() for p in str(provider or "").split(";") if p.strip()]


def ofi_rdma(provider: Any) -> str | None:
    """The RDMA fabric a non-EFA libfabric provider drives (`HPE Slingshot (libfabric cxi)`), None for efa, for a
    provider over IP or for one not known."""
    names = _names(provider)
    if not names or "efa" in names or any(n in _SOCKETS for n in names):
        return None
    core = next((n for n in names if n in _RDMA), None)
    return f"{_RDMA[core]} (libfabric {core})" if core else None


# providers whose NICs are not verbs devices (fi_cxi(7): /dev/cxi*; opx and psm2: /dev/hfi1_*): a container without
# /dev/infiniband still reaches them
_NOT_UVERBS = frozenset({"cxi", "opx", "psm2"})


def beyond_uverbs(provider: Any) -> bool:
    """Whether the RDMA fabric this provider drives is reached through devices other than /dev/infiniband."""
    return ofi_rdma(provider) is not None and any(n in _NOT_UVERBS for n in _names(provider))
