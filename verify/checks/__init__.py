"""The checks, in the order they run: name → (what it finds out, default timeout in seconds)."""
CHECKS: dict[str, tuple[str, float]] = {
    "gpu": ("NVIDIA driver and devices visible, torch sees the same, arch supported, a kernel runs", 120.0),
    "nccl": ("all-reduce across all GPUs (NCCL), result checked, algbw/busbw per size; gloo without GPUs", 240.0),
    "shm": ("/dev/shm large enough for DataLoader workers: size, free, and a real allocation", 90.0),
    "hdf5": ("h5py loads its libhdf5, filters, compressed round trip, reads from DataLoader workers", 120.0),
    "arrow": ("Arrow IPC memory-mapped into tensors with zero copy, throughput vs memory bandwidth", 120.0),
    "vision": ("torchvision matches torch: ops (nms) load on CPU/GPU, CUDA matches, JPEG/PNG decode, v2 augmentation", 180.0),
    "dataloader": ("DataLoader advisor, short: num_workers/prefetch/persistent sweep, best setting, its /dev/shm need", 180.0),
}
