"""The facts of the data path's checks (shm, hdf5, arrow, vision, dataloader) and of train."""
from __future__ import annotations

from typing import Any, TypedDict

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
    workers_ok: bool | None        # None: not assessed (every read stalled under CPU emulation)
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
    sweep: list[dict[str, Any]]     # verify/shared/dataloader.py measure_one rows
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
    rank: int | None                # None: the log shows one process's failure without its rank (a traceback)
    node: str | None
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
