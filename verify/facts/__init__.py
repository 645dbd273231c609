"""The facts each check's probe records and its judge reads, as types (verify/FACTS.md, facts schema 3).

Schema 3 gives each value one meaning: null (or an absent key) is "unknown: not read, or not in the source"
and nothing else; "none", "unset" and "unlimited" are values of their own (NONE, UNSET, UNLIMITED below).
Every TypedDict is total=False (a translated record holds what its source had) and a judge reads fields with
.get(). verify/factschema.py refuses a key these types do not declare and reads schema-1/-2 records as
schema 3; verify/figures.py gates every figure. tests/test_facts_contract.py holds FACTS.md's tables and
these types together, field for field.
"""
from __future__ import annotations

from .data import (
    ArrowFacts,
    DataloaderFacts,
    H5pyImportFailure,
    Hdf5Facts,
    ShmFacts,
    TrainConfig,
    TrainFacts,
    TrainFailure,
    TrainLoader,
    TrainRank,
    TrainStep,
    VisionFacts,
)
from .gpu import (
    CorrectableGrowth,
    CudaError,
    DriverError,
    FabricHealth,
    FabricManager,
    GpuFabric,
    GpuFacts,
    Kernel,
    MigDevice,
    NvlinkErrors,
    NvmlDevice,
    PcieAerEvent,
    PcieUnderLoad,
    Perf,
    RowRemap,
    Sample,
    Sdc,
    SxidEvent,
    TorchMapEntry,
    XidEvent,
)
from .net import (
    Adapter,
    FabricFacts,
    NcclFacts,
    NcclLog,
    NetChannels,
    Port,
    SizeRow,
)

NONE = "none"              # no error; a CPU build (torch_cuda); no recovery action
UNSET = "unset"            # an environment variable that is not set (cuda_visible_devices)
UNLIMITED = "unlimited"    # a limit that is not limited (memlock_bytes)
XID_SOURCES = ("nvml", "kernel_log")
# an SXid is also logged by the Fabric Manager (`detected NVSwitch non-fatal error 12028 ... pci bus id ...`)
SXID_SOURCES = (*XID_SOURCES, "fabric_manager")

__all__ = [
    "NONE",
    "SXID_SOURCES",
    "UNLIMITED",
    "UNSET",
    "XID_SOURCES",
    "Adapter",
    "ArrowFacts",
    "CorrectableGrowth",
    "CudaError",
    "DataloaderFacts",
    "DriverError",
    "FabricFacts",
    "FabricHealth",
    "FabricManager",
    "GpuFabric",
    "GpuFacts",
    "H5pyImportFailure",
    "Hdf5Facts",
    "Kernel",
    "MigDevice",
    "NcclFacts",
    "NcclLog",
    "NetChannels",
    "NvlinkErrors",
    "NvmlDevice",
    "PcieAerEvent",
    "PcieUnderLoad",
    "Perf",
    "Port",
    "RowRemap",
    "Sample",
    "Sdc",
    "ShmFacts",
    "SizeRow",
    "SxidEvent",
    "TorchMapEntry",
    "TrainConfig",
    "TrainFacts",
    "TrainFailure",
    "TrainLoader",
    "TrainRank",
    "TrainStep",
    "VisionFacts",
    "XidEvent",
]
