"""The gpu check's facts: NVML's devices, torch's view, kernels, figures, the canary, Xid events."""
from __future__ import annotations

from typing import TypedDict


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
    compute_mode: str | None
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
    power_requested_limit_w: float | None
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


class PcieAerEvent(TypedDict, total=False):
    """A PCIe AER event of the kernel log (`pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received`), one per
    reporting address and severity, its repeats counted."""
    severity: str
    port: str | None
    driver: str | None
    device_id: str | None
    errors: list[str] | None
    gpu: bool | None
    recovered: bool | None
    link_reset: bool | None
    count: int | None
    text: str | None
    time: str | None


class CudaError(TypedDict, total=False):
    """A CUDA error a running program met, as it printed it (torch's `CUDA error: uncorrectable ECC error
    encountered`, `cudaErrorECCUncorrectable`): recorded from a program's output (`verify explain`, a translated log);
    verify's own run records none."""
    index: int | None
    text: str


class DriverError(TypedDict, total=False):
    """A status line of the driver's resource manager in the kernel log (`NVRM: ... [NV_ERR_RESET_REQUIRED]`)."""
    status: str
    code: int | None
    text: str | None
    time: str | None
    source: str | None


class FabricManager(TypedDict, total=False):
    """The node's NVIDIA Fabric Manager service (`systemctl status nvidia-fabricmanager`, its journal)."""
    state: str | None
    result: str | None
    error: str | None
    nvswitches: bool | None


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
    pcie_aer_events: list[PcieAerEvent] | None
    driver_errors: list[DriverError] | None
    cuda_errors: list[CudaError] | None
    fabric_manager: FabricManager | None
