"""The facts each check's probe records and its judge reads, as types (verify/FACTS.md, facts schema 3).

Schema 3 gives each value one meaning: null (or an absent key) is "unknown: not read, or not in the source"
and nothing else; "none", "unset" and "unlimited" are values of their own (NONE, UNSET, UNLIMITED below).
Every TypedDict is total=False (a translated record holds what its source had) and a judge reads fields with
.get(). verify/factschema.py refuses a key these types do not declare and reads schema-1/-2 records as
schema 3; verify/figures.py gates every figure. tests/test_facts_contract.py holds FACTS.md's tables and
these types together, field for field.
"""
from __future__ import annotations

from typing import Any, TypedDict

NONE = "none"              # no error; a CPU build (torch_cuda); no recovery action
UNSET = "unset"            # an environment variable that is not set (cuda_visible_devices)
UNLIMITED = "unlimited"    # a limit that is not limited (memlock_bytes)
XID_SOURCES = ("nvml", "kernel_log")

# ------------------------------------------------------------------------------------------------- gpu


class RowRemap(TypedDict, total=False):
    correctable: int | None
    uncorrectable: int | None
    pending: int | None
    failed: int | None


class NvlinkErrors(TypedDict, total=False):
    """Counter deltas over the run."""
    crc: int | None
    replay: int | None
    recovery: int | None


class Sample(TypedDict, total=False):
    """A re-read of what comes and goes, idle or under load."""
    phase: str | None
    throttle_reasons: int | None
    nvlink: list[bool | None] | None
    gen: int | None
    width: int | None


class MigDevice(TypedDict, total=False):
    """One MIG device: NVML's slice, or a row of nvidia-smi's "MIG devices" table."""
    uuid: str | None
    profile: str | None
    slices: int | None
    total_slices: int | None
    gpu_instance: int | None
    compute_instance: int | None
    mig_index: int | None
    memory_bytes: int | None
    sm_count: int | None


class FabricHealth(TypedDict, total=False):
    """NVML's GPU fabric health mask (nvmlGpuFabricInfo_v2_t.healthMask; nvidia-smi -q "Fabric", "Health")."""
    summary: str | None
    degraded_bandwidth: bool | None
    route_recovery: bool | None
    route_unhealthy: bool | None
    access_timeout_recovery: bool | None
    incorrect_configuration: bool | None


class GpuFabric(TypedDict, total=False):
    """The GPU's registration with the NVLink fabric (nvmlDeviceGetGpuFabricInfoV; nvidia-smi -q "Fabric")."""
    state: str | None
    status: str | None
    clique_id: int | None
    cluster_uuid: str | None
    health: FabricHealth | None


class CorrectableGrowth(TypedDict, total=False):
    """Volatile correctable ECC errors counted between the check's two reads."""
    count: int
    seconds: float


class NvmlDevice(TypedDict, total=False):
    """One NVML device (`devices[i]`): identity and every health field NVML gave."""
    index: int | None
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    lost: bool | None
    nvml_errors: dict[str, str] | None
    unsupported: dict[str, str] | None
    memory_bytes: int | None
    cc: str | None
    persistence: bool | None
    mig: list[bool | None] | None
    mig_devices: list[MigDevice] | None
    ecc: list[bool | None] | None
    ecc_volatile_uncorrectable: int | None
    ecc_aggregate_uncorrectable: int | None
    ecc_sram_uncorrectable: int | None
    ecc_dram_uncorrectable: int | None
    retired_pages_pending: bool | None
    row_remap: RowRemap | None
    recovery_action: str | None
    throttle_reasons: int | None
    throttle_reasons_read: int | None
    samples: list[Sample] | None
    pcie_gen: int | None
    pcie_width: int | None
    pcie_gen_max: int | None
    pcie_width_max: int | None
    pcie_gen_gpu_max: int | None
    pcie_width_gpu_max: int | None
    nvlink: list[bool | None] | None
    nvlink_errors: NvlinkErrors | None
    nvswitch: bool | None
    fabric: GpuFabric | None
    ecc_volatile_correctable: int | None
    ecc_aggregate_correctable: int | None
    ecc_correctable_growth: CorrectableGrowth | None
    temperature_c: float | None
    temperature_slowdown_c: float | None
    temperature_tlimit_c: float | None
    temperature_slowdown_tlimit_c: float | None
    memory_temperature_c: float | None
    memory_temperature_max_c: float | None
    sm_clock_mhz: int | None
    sm_clock_max_mhz: int | None
    power_w: float | None
    power_limit_w: float | None
    power_default_limit_w: float | None
    numa_node: int | None


class TorchMapEntry(TypedDict, total=False):
    """One torch device and the NVML device it was matched to."""
    torch_index: int | None
    uuid: str | None
    pci_bus_id: str | None
    name: str | None
    mig_uuid: str | None
    nvml_index: int | None
    matched_by: str | None


class Kernel(TypedDict, total=False):
    """A 256² fp32 matmul on one torch device against float64 on the CPU."""
    index: int
    max_abs_error: float | None
    error: str | None


class PcieUnderLoad(TypedDict, total=False):
    gen: int | None
    width: int | None
    throttle_reasons: int | None


class Perf(TypedDict, total=False):
    """Bandwidth and compute figures of one torch device."""
    index: int
    d2d_GBps: float | None
    h2d_GBps: float | None
    d2h_GBps: float | None
    bf16_TFLOPs: float | None
    pcie_under_load: PcieUnderLoad | None
    throttle_under_load: int | None
    nvlink_under_load: list[bool | None] | None
    numa_node: int | None
    pinned_on_numa: bool | None


class Sdc(TypedDict, total=False):
    """The silent-data-corruption canary of one torch device: a digest per repeat."""
    index: int
    name: str | None
    sm_count: int | None
    digests: list[str]


class XidEvent(TypedDict, total=False):
    """An Xid: raised while verify ran (NVML's event set) or found in the kernel log (`NVRM: Xid (PCI:...)`)."""
    xid: int
    index: int | None
    uuid: str | None
    pci_bus_id: str | None
    text: str | None
    time: str | None
    source: str | None


class SxidEvent(TypedDict, total=False):
    """An NVSwitch SXid in the kernel log (`nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, ...`): the switch's."""
    sxid: int
    pci_bus_id: str | None
    text: str | None
    time: str | None
    source: str | None


class GpuFacts(TypedDict, total=False):
    """What the gpu check's probe records (verify/FACTS.md, "gpu facts")."""
    torch: str | None
    torch_cuda: str | None
    driver_min_env: str | None
    cuda_visible_devices: str | None
    device_nodes: bool | None
    nvml_library: bool | None
    nvml_error: str | None
    nvml_shutdown_error: str | None
    driver: str | None
    cuda_driver: str | None
    devices: list[NvmlDevice] | None
    cuda_available: bool | None
    cuda_init_error: str | None
    torch_devices: int | None
    arch_list: list[str] | None
    capabilities: list[str] | None
    torch_map: list[TorchMapEntry] | None
    kernels: list[Kernel] | None
    perf: list[Perf] | None
    sdc: list[Sdc] | None
    xid_events: list[XidEvent] | None
    sxid_events: list[SxidEvent] | None


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
    """What NCCL's own INFO log says it chose (verify/ncclog.py reads it; FACTS.md, "fabric facts")."""
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
    peermem: bool | None
    gpu_module: str | None
    kernel: str | None
    net_plugins: list[str] | None
    nccl_env: dict[str, str]


# ------------------------------------------------------------------------------------------------- shm


class ShmFacts(TypedDict, total=False):
    """/dev/shm (or VERIFY_SHM_PATH): size, free, and two real allocations of `required` bytes."""
    path: str
    exists: bool
    required: int
    size: int
    free: int
    raw_ok: bool
    raw_msg: str
    torch_ok: bool
    torch_msg: str


# ------------------------------------------------------------------------------------------------ hdf5


class H5pyImportFailure(TypedDict, total=False):
    """What can be read about an h5py that does not import."""
    type: str
    text: str
    version: str | None
    libs_dir: str | None
    bundled: list[str] | None


class Hdf5Facts(TypedDict, total=False):
    missing: list[str]
    import_error: H5pyImportFailure
    h5py: str
    hdf5_built: str
    hdf5_loaded: str
    filters: dict[str, bool]
    datasets: list[str]
    corrupted: list[str]
    write_MBps: float
    read_MBps: float
    workers_ok: bool
    workers_msg: str


# ----------------------------------------------------------------------------------------------- arrow


class ArrowFacts(TypedDict, total=False):
    """Throughputs in bytes/s; `inside` of `batches` tensors point into the mapping (zero copy)."""
    missing: list[str]
    pyarrow: str
    torch: str
    emulated: bool
    rows: int
    batches: int
    inside: int
    mapped_bytes: int
    mapped_Bps: float
    memory_Bps: float
    nodes_zero_copy: bool
    nodes_Bps: float
    nodes_same_sum: bool
    lz4_batches: int
    lz4_inside: int
    lz4_Bps: float


# ---------------------------------------------------------------------------------------------- vision


class VisionFacts(TypedDict, total=False):
    """Versions, then per device: ops.nms, image decode and a transforms.v2 pipeline, each {"ok", ...} or an error."""
    torch_dist: str | None
    torchvision_dist: str | None
    torch_error: str
    torch: str
    torch_cuda: str | None
    gpu_visible: bool
    import_error: str
    import_traceback: list[str]
    torchvision: str
    torchvision_cuda: str | int | None
    nms: dict[str, dict[str, Any]]
    decode: dict[str, dict[str, Any]]
    augment: dict[str, dict[str, Any]]


# ------------------------------------------------------------------------------------------ dataloader


class DataloaderFacts(TypedDict, total=False):
    """The advisor's sweep: host facts, the per-sample backend, and one measurement row per setting."""
    cpus: dict[str, Any]
    shm: dict[str, Any]
    gpu: bool
    backend: str
    torch: str
    sizes: dict[str, int]
    sample_shape: list[int]
    sample_bytes: int
    batch_bytes: int
    measurements: list[dict[str, Any]]
    main_process_torch_threads: int
    emulated: bool
    recommendation: dict[str, Any]


# ----------------------------------------------------------------------------------------------- train


class TrainStep(TypedDict, total=False):
    """One optimizer step as one rank saw it: the all-reduced (global) loss and its parameters' checksum."""
    step: int
    loss: float | str               # a number, or the explicit "nan", "inf", "-inf"
    checksum: str                   # 16 hex digits: the parameters' bits, summed mod 2^64 with position weights


class TrainLoader(TypedDict, total=False):
    """The data path of one rank: the Arrow token file, zero copy, and the DataLoader advisor's short sweep."""
    file_bytes: int
    samples: int
    zero_copy: bool
    setting: dict[str, Any] | None  # num_workers, prefetch_factor, persistent_workers, pin_memory
    sweep: list[dict[str, Any]]     # verify/dataloader.py measure_one rows
    shm: dict[str, Any]
    cpu_share: int


class TrainRank(TypedDict, total=False):
    rank: int
    local_rank: int
    node: str
    steps: list[TrainStep]
    bf16: bool
    init_s: float
    data_s: float
    first_step_s: float
    planned_steps: int
    timed_steps: int
    timed_s: float
    wall_s: float
    loader: TrainLoader


class TrainFailure(TypedDict, total=False):
    rank: int
    node: str
    phase: str                      # init, data, train, gather, timeout, died
    type: str
    message: str
    shm_error: str                  # present only where the message is a known /dev/shm exhaustion


class TrainConfig(TypedDict, total=False):
    vocab: int
    d_model: int
    layers: int
    heads: int
    seq_len: int
    batch_per_rank: int
    lr: float
    seed: int
    device_class: str               # cpu, gpu, emulated
    params: int
    flops_per_token: float
    warmup_steps: int
    min_steps: int
    max_steps: int
    step_budget_s: float
    noise: float


class TrainFacts(TypedDict, total=False):
    """Rank 0's record of the whole group: every rank's steps, the configuration, and any rank's failure."""
    missing: list[str]
    distributed: bool
    gpus: int
    backend: str
    emulated: bool
    device_name: str | None
    config: TrainConfig
    world_size: int
    nodes: int | None
    mode: str
    ranks: list[TrainRank]
    failures: list[TrainFailure]
