"""The checks, in the order they run: one declared row each (verify/contract.py), looked up by name."""
from __future__ import annotations

from ..contract import Check
from ..facts import FabricFacts, GpuFacts, NcclFacts
from . import arrow, dataloader, fabric, gpu, hdf5, nccl, shm, train, vision

TABLE: tuple[Check, ...] = (
    Check("gpu", "NVIDIA driver and devices visible, torch sees the same, arch supported, a kernel runs", 120.0,
          gpu.probe, gpu.judge, gpu.FIGURES, GpuFacts),
    Check("nccl", "all-reduce across all GPUs (NCCL), result checked, algbw/busbw per size; gloo without GPUs", 240.0,
          nccl.probe, nccl.judge, nccl.FIGURES, NcclFacts),
    Check("fabric", "RDMA fabric (InfiniBand, RoCE, EFA): host adapters and ports, devices in the container, verbs "
          "userspace and plugins, memlock, GPUDirect RDMA, NCCL variables", 60.0, fabric.probe, fabric.judge,
          fabric.FIGURES, FabricFacts),
    Check("shm", "/dev/shm large enough for DataLoader workers: size, free, and a real allocation", 90.0,
          shm.probe, shm.judge),
    Check("hdf5", "h5py loads its libhdf5, filters, compressed round trip, reads from DataLoader workers", 120.0,
          hdf5.probe, hdf5.judge),
    Check("arrow", "Arrow IPC memory-mapped into tensors with zero copy, throughput vs memory bandwidth", 120.0,
          arrow.probe, arrow.judge),
    Check("vision", "torchvision matches torch: ops (nms) load on CPU/GPU, CUDA matches, JPEG/PNG decode, v2 "
          "augmentation", 180.0, vision.probe, vision.judge),
    Check("dataloader", "DataLoader advisor, short: num_workers/prefetch/persistent sweep, best setting, its /dev/shm "
          "need", 180.0, dataloader.probe, dataloader.judge),
    Check("train", "a small transformer trained with DDP from an Arrow file: replicas identical every step, loss falls, "
          "tokens/s and MFU", 240.0, train.probe, train.judge, train.FIGURES),
)
CHECKS: dict[str, Check] = {c.name: c for c in TABLE}
