"""What no real node or report can show, held once for the fleet report and `make isolate`'s runner (standard
library only: the runner starts inside the allocation with the host's python3)."""
from __future__ import annotations

import re

# GB/s of bus bandwidth above any link (NVLink5: 900 GB/s per GPU): a figure past it is no measurement
BUSBW_MAX_GBPS = 10_000.0
# one host or Slurm node name (a DNS name of at most 253 characters): a hostlist (n[1-4], a,b), a newline, a space or
# a path is none, nor a name a drain line or srun may be given
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")


def node_key(name: str) -> str:
    """One host however it is spelt: DNS names are case-insensitive (RFC 4343) and a trailing dot is the root's, so
    N1, n1 and n1. are one node (its reports, its history, its drain), never two."""
    return name.lower().rstrip(".")

# verify codes that say the measurement, not the node, went wrong (verify/prolog/verdict.py's UNJUDGED_CODES, which the
# host side does not import: tests/test_fleet_hostile.py keeps the two equal): never a node to drain
UNJUDGED_CODES = frozenset({"MEASUREMENT_INVALID", "FACTS_INVALID", "FACTS_INCOMPLETE", "INTERRUPTED"})
# Every code verify writes: verify/codes.py's CODES, which only grows (codes never change meaning), copied because the
# host side never imports verify (tests/test_layout.py); tests/test_fleet_codes.py keeps the two equal. A report
# carrying another code is a report no verify wrote: not assessed, never a node to drain.
VERIFY_CODES = frozenset({
    "ARCH_NOT_IN_BUILD", "ARCH_PTX_JIT", "ARROW_COPIED", "ARROW_SLOW", "BANDWIDTH_LOW", "CHECK_CRASHED",
    "CHECK_TIMEOUT", "COMPUTE_LOW", "CUDA_KERNEL_FAULT", "DEVICE_COUNT_MISMATCH", "DISK_FULL",
    "DISTRIBUTED_UNAVAILABLE", "DRIVER_ERROR", "DRIVER_TOO_OLD", "ECC_UNCORRECTABLE", "FABRIC_BANDWIDTH_LOW",
    "FABRIC_EFA_PLUGIN_MISSING", "FABRIC_GDR_OFF", "FABRIC_MEMLOCK_LOW", "FABRIC_MIXED_ADAPTERS",
    "FABRIC_NCCL_FORCED_SOCKET", "FABRIC_NONE", "FABRIC_NOT_PASSED", "FABRIC_PORT_DOWN", "FABRIC_RATE_DEGRADED",
    "FABRIC_USERSPACE_MISSING", "FACTS_INCOMPLETE", "FACTS_INVALID", "GPU_LOST", "GPU_NOT_VISIBLE",
    "GPU_OUT_OF_MEMORY", "GPU_RESET_REQUIRED", "HDF5_BROKEN", "HDF5_MISMATCH", "HEALTH_NOT_ASSESSED",
    "IMAGE_DECODE_FAILED", "IMAGE_DECODE_WRONG", "INTERRUPTED", "KERNEL_FAILED", "LOADER_FAILED",
    "MEASUREMENT_INVALID", "NCCL_FAILED", "NCCL_NET_FALLBACK", "NCCL_NOT_EXERCISED", "NCCL_SINGLE_RANK",
    "NCCL_TIMEOUT", "NCCL_WRONG_RESULT", "NVLINK_DOWN", "NVLINK_ERRORS", "NVLS_NOT_USED", "PACKAGE_MISSING",
    "PCIE_DOWNGRADED", "PREFLIGHT_HUNG", "RETIREMENT_PENDING", "ROW_REMAP_FAILED", "SDC_MISMATCH", "SHM_TOO_SMALL",
    "SHM_TOO_SMALL_FOR_LOADER", "THROTTLED", "TORCHVISION_CUDA_MISMATCH", "TORCHVISION_IMPORT_FAILED",
    "TORCHVISION_MISMATCH", "TORCHVISION_OPS_MISSING", "TORCHVISION_OPS_WRONG", "TORCH_IMPORT_FAILED", "TRAIN_FAILED",
    "TRAIN_LOSS_NOT_FALLING", "TRAIN_LOSS_NOT_FINITE", "TRAIN_REPLICA_MISMATCH", "TRAIN_SLOW", "TRANSFORMS_FAILED",
    "TRANSFORMS_WRONG", "XID_ERROR"})
