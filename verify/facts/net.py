"""The facts of the checks that read the network: nccl (the sweep, NCCL's own log) and fabric (adapters, ports)."""
from __future__ import annotations

from typing import TypedDict

# ------------------------------------------------------------------------------------------------ nccl


class SizeRow(TypedDict, total=False):
    """One nccl-tests row: message size, elements, time, bandwidths in GB/s, wrong elements."""
    size: int
    count: int
    type: str | None
    redop: str | None
    time_us: float
    algbw: float
    busbw: float
    wrong: int


class NetChannels(TypedDict, total=False):
    """Connections over one NCCL network (`Channel .. via NET/<name>/<dev>[/GDRDMA]`), and how many used GDR."""
    connections: int
    gdr: int


class NcclLog(TypedDict, total=False):
    """What NCCL's own INFO log says it chose (verify/checks/nccl/ncclog.py reads it; FACTS.md, "fabric facts")."""
    network: str | None
    networks: list[str]
    interface: str | None
    nvls: bool | None
    ib_error: str | None
    transports: list[str] | None
    net_channels: dict[str, NetChannels]
    hcas: list[str] | None
    verbs_missing: str | None
    ib_no_device: bool
    plugin_missing: str | None
    plugin_loaded: str | None
    ofi_provider: str | None
    ofi_error: str | None
    hca_gdr: dict[str, bool]
    env: dict[str, str]
    rank_networks: dict[str, str]
    proof: list[str]


class NcclFacts(TypedDict, total=False):
    """What the nccl check's probe records (verify/FACTS.md, "nccl facts")."""
    distributed: bool | None
    nccl_available: bool | None
    backend: str | None
    nccl_version: str | None
    device_name: str | None
    gpus: int | None
    timeout_s: float | None
    world_size: int | None
    nodes: int | None
    mode: str | None
    rank: int | None
    init_s: float | None
    sizes: list[SizeRow] | None
    collective: str | None
    error: str | None
    nccl_env: dict[str, str] | None
    gloo_socket_ifname: str | None
    shm_bytes: int | None
    memlock_bytes: int | str | None
    infiniband: bool | None
    efa: bool | None
    nvswitch: bool | None
    nccl_log: NcclLog | None
    adapters: list[Adapter] | None
    uverbs: list[str] | None
    verbs_loads: bool | None


# ---------------------------------------------------------------------------------------------- fabric


class Port(TypedDict, total=False):
    """/sys/class/infiniband/<adapter>/ports/<n>: state and phys_state by name, rate split from `400 Gb/sec (4X NDR)`."""
    port: int | None
    state: str | None
    phys_state: str | None
    rate_gbps: float | None
    width: int | None
    speed: str | None
    link_layer: str | None


class Adapter(TypedDict, total=False):
    """One /sys/class/infiniband/<name>: its kernel driver (mlx5_core, efa, ...), hca_type (MT4129) and ports."""
    name: str
    driver: str | None
    hca_type: str | None
    pci_device: str | None
    ports: list[Port]


class FabricFacts(TypedDict, total=False):
    """What the fabric check's probe records (verify/FACTS.md, "fabric facts")."""
    root: str
    adapters: list[Adapter] | None
    uverbs: list[str] | None
    rdma_cm: bool | None
    libraries: dict[str, str]
    providers: list[str] | None
    verbs_devices: list[str] | None
    verbs_error: str | None
    memlock: int | str | None
    memlock_error: str | None
    peermem: bool | None
    gpu_module: str | None
    kernel: str | None
    net_plugins: list[str] | None
    nccl_env: dict[str, str]
    ofi_providers: list[str] | None
    ofi_query: str | None
    instance_type: str | None
