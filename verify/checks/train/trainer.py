"""The `train` check's probe side: a small decoder-only transformer trained with DDP on tokens from an Arrow file.

The path a training job takes, end to end: token sequences written to an uncompressed Arrow IPC file, memory-mapped
and read through a DataLoader (num_workers as the DataLoader advisor chooses from a short sweep of this very
dataset, verify/shared/dataloader.py), forward and backward under bf16 autocast on GPUs that support it, gradients
all-reduced by DDP, an AdamW step. After every step each rank records the all-reduced (global) loss and a checksum
of its parameters' bits: replicas that applied the same all-reduced gradients hold the same bits, on every rank and
node, so a difference is model-level silent data corruption.

The step count is sized to a time budget: WARMUP steps run first, their slowest rank's step time (all-reduced MAX)
divides STEP_BUDGET_S, and the result, clamped to [MIN_STEPS, MAX_STEPS], is the run's fixed count, the same on
every rank. The model's shape is chosen per device class (CPU or GPU) so that the count lands inside the clamp.
"""
from __future__ import annotations

import math
import os
import socket
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any

from ...shared import dataloader as dl
from ...shared.distgroup import init_group
from ...shared.shmem import recognise as recognise_shm

WARMUP = 3                  # steps before the count is fixed; the first pays the loader's and kernels' start-up
MIN_STEPS = 24              # enough for the loss to fall by a clear margin on the synthetic data
MAX_STEPS = 120
STEP_BUDGET_S = {"cpu": 3.0, "gpu": 15.0, "emulated": 20.0}
SAMPLES = {"cpu": 2048, "gpu": 8192}           # sequences in the Arrow file (epochs repeat it)
SWEEP_BATCHES = 8                              # batches per setting of the advisor's short sweep
SWEEP_MAX_WORKERS = 4                          # token rows need no decoding: more workers than this never pay
NOISE = 0.1                                    # share of tokens drawn at random instead of from the rule
CHECKSUM_MOD = (1 << 64)


@dataclass(frozen=True)
class Shape:
    """The model and the batch: a GPT-style decoder (pre-norm blocks, causal attention, untied head)."""
    vocab: int
    d_model: int
    layers: int
    heads: int
    seq_len: int
    batch_per_rank: int
    lr: float
    seed: int = 1234


SHAPES = {
    "cpu": Shape(vocab=128, d_model=64, layers=2, heads=4, seq_len=64, batch_per_rank=8, lr=3e-3),
    "gpu": Shape(vocab=1024, d_model=1024, layers=8, heads=16, seq_len=1024, batch_per_rank=8, lr=1e-3),
}


def parameter_count(shape: Shape) -> int:
    """Exactly what TinyGPT holds: embeddings, per block 2 LayerNorms + qkv + proj + 4x MLP, final norm, head."""
    d, v = shape.d_model, shape.vocab
    block = 2 * (2 * d) + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return v * d + shape.seq_len * d + shape.layers * block + 2 * d + (d * v + v)


def flops_per_token(shape: Shape) -> float:
    """Model FLOPs of one training token (forward + backward): 6 x the matmul parameters plus causal attention's
    12 x layers x d_model x seq_len (PaLM's appendix B count; embeddings are lookups, not matmuls)."""
    matmul_params = parameter_count(shape) - shape.vocab * shape.d_model - shape.seq_len * shape.d_model
    return 6.0 * matmul_params + 12.0 * shape.layers * shape.d_model * shape.seq_len


def node_name() -> str:
    """The launcher's name for this node (Slurm's), else the host name."""
    return os.environ.get("TORCHIMAGES_NODE") or os.environ.get("SLURMD_NODENAME") or socket.gethostname()


# ------------------------------------------------------------------------------------------------ data

def write_tokens(path: str, shape: Shape, samples: int) -> int:
    """Sequences of seq_len + 1 int32 tokens following a fixed successor rule with NOISE random tokens (learnable,
    from the seed), as a FixedSizeList<int32> column of an uncompressed IPC file; returns the file's bytes."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(shape.seed)
    successor = rng.permutation(shape.vocab).astype(np.int32)
    width = shape.seq_len + 1
    tokens = np.empty((samples, width), dtype=np.int32)
    tokens[:, 0] = rng.integers(0, shape.vocab, samples)
    noise = rng.random((samples, width)) < NOISE
    random_tokens = rng.integers(0, shape.vocab, (samples, width), dtype=np.int32)
    for t in range(1, width):
        tokens[:, t] = np.where(noise[:, t], random_tokens[:, t], successor[tokens[:, t - 1]])
    schema = pa.schema([("tokens", pa.list_(pa.int32(), width))])
    column = pa.FixedSizeListArray.from_arrays(pa.array(tokens.reshape(-1)), width)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema,
                                                       options=pa.ipc.IpcWriteOptions(compression=None)) as writer:
        writer.write_batch(pa.record_batch([column], schema=schema))
    return os.path.getsize(path)


class TokenFile:
    """A map-style dataset over the mapped file: sample i is a view into the mapping (no copy in this process).

    The mapping is opened lazily in each process that reads it, so the dataset pickles for any worker start method.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._view: Any = None
        self._base = self._size = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_view": None, "_base": 0, "_size": 0}

    def _open(self) -> Any:
        if self._view is None:
            import numpy as np
            import pyarrow as pa
            import torch

            source = pa.memory_map(self.path, "r")
            self._size = source.size()
            self._base = source.read_buffer(self._size).address
            source.seek(0)
            column = pa.ipc.open_file(source).get_batch(0).column(0)
            if column.null_count or column.values.null_count:
                raise ValueError("token file holds nulls: a raw-buffer view would be wrong")
            width = column.type.list_size
            flat = np.frombuffer(column.values.buffers()[1], dtype=np.int32, count=len(column) * width,
                                 offset=(column.offset * width + column.values.offset) * 4)
            with warnings.catch_warnings():      # Arrow's buffers are read-only; they are never written here
                warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
                self._view = torch.from_numpy(flat).view(len(column), width)
        return self._view

    def __len__(self) -> int:
        return int(self._open().shape[0])

    def __getitem__(self, index: int) -> Any:
        return self._open()[index]

    def zero_copy(self) -> bool:
        """Whether sample 0 lies inside the mapping (proof by data pointer, as the arrow check does)."""
        sample = self[0]
        start = sample.data_ptr()
        return self._base <= start and start + sample.numel() * sample.element_size() <= self._base + self._size


def advisor_setting(dataset: Any, batch: int, local_world: int, gpu: bool) -> dict[str, Any]:
    """The DataLoader advisor's choice for this dataset: a short sweep of num_workers from 0 to this rank's share
    of the CPU quota (at most SWEEP_MAX_WORKERS), judged by dl.recommend. {"setting", "sweep", "shm"}."""
    import torch
    from torch.utils.data import Subset

    cpus = dl.cpu_quota()
    share = max(0, cpus["usable"] // max(1, local_world))
    subset: Any = Subset(dataset, range(min(len(dataset), SWEEP_BATCHES * batch)))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)        # as the advisor measures: one thread per process
    try:
        rows = [dl.measure_one(subset, dl.setting(w, pin=gpu), batch, 1, gpu)
                for w in dl.worker_counts(share, SWEEP_MAX_WORKERS)]
    finally:
        torch.set_num_threads(threads)
    sample = dataset[0]
    facts = {"measurements": rows, "batch_bytes": int(sample.numel() * sample.element_size()) * batch,
             "shm": dl.shm_space(), "cpus": cpus}
    return {"setting": dl.recommend(facts).get("setting"), "sweep": rows, "shm": facts["shm"], "cpu_share": share}


def loader(dataset: Any, setting: dict[str, Any], shape: Shape, rank: int, world: int) -> Any:
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler

    sampler: Any = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=shape.seed, drop_last=True)
    kwargs: dict[str, Any] = {"batch_size": shape.batch_per_rank, "sampler": sampler, "drop_last": True,
                              "num_workers": setting["num_workers"], "pin_memory": setting["pin_memory"]}
    if setting["num_workers"]:
        kwargs.update(prefetch_factor=setting["prefetch_factor"], persistent_workers=setting["persistent_workers"],
                      timeout=120)
    return sampler, DataLoader(dataset, **kwargs)


def batches(sampler: Any, data: Any) -> Any:
    """Batches forever, one epoch after another (the sampler reshuffles by epoch, the same way on every rank)."""
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        yield from data
        epoch += 1


# ------------------------------------------------------------------------------------------------ model

def build_model(shape: Shape) -> Any:
    """TinyGPT from the seed (no download): the same weights on every rank before DDP even broadcasts them."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d = shape.d_model
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x: Any) -> Any:
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, shape.heads, d // shape.heads).permute(2, 0, 3, 1, 4)
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(attn)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class TinyGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(shape.vocab, shape.d_model), nn.Embedding(shape.seq_len, shape.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(shape.layers))
            self.ln, self.head = nn.LayerNorm(shape.d_model), nn.Linear(shape.d_model, shape.vocab)

        def forward(self, idx: Any) -> Any:
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    torch.manual_seed(shape.seed)
    return TinyGPT()


def checksum(model: Any) -> str:
    """The parameters' bits as one 64-bit sum, each 32-bit word weighted by its position (mod 2^64: the same
    bits give the same sum whatever the reduction order; one flipped bit changes it)."""
    import torch

    total = 0
    with torch.no_grad():
        for index, p in enumerate(model.parameters()):
            words = p.detach().contiguous().view(-1).view(torch.int32).to(torch.int64)
            key = (index, words.numel(), str(words.device))
            if key not in _WEIGHTS:          # made once per run: the per-step cost is one pass over the bits
                _WEIGHTS[key] = torch.arange(1, words.numel() + 1, device=words.device, dtype=torch.int64) % 65521 + index + 1
            total = (total + int((words * _WEIGHTS[key]).sum().item())) % CHECKSUM_MOD
    return f"{total:016x}"


_WEIGHTS: dict[tuple[int, int, str], Any] = {}


def loss_value(value: float) -> float | str:
    """A loss as facts hold it: a number when finite, else the explicit "nan", "inf" or "-inf" (JSON has no NaN)."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


# ------------------------------------------------------------------------------------------------ one rank

@dataclass
class Group:
    rank: int
    world: int
    local_rank: int
    local_world: int
    backend: str
    init_method: str
    timeout_s: float
    device_class: str           # cpu, gpu or emulated
    start_method: str = "fork"  # the launcher's multiprocessing start method, which the DataLoader's workers use


class StepError(Exception):
    """A failure in a named phase of the run: data, init, train or gather."""

    def __init__(self, phase: str, exc: BaseException) -> None:
        super().__init__(f"{phase}: {type(exc).__name__}: {exc}")
        self.phase, self.kind, self.text = phase, type(exc).__name__, str(exc)[:2000]

    def failure(self, rank: int) -> dict[str, Any]:
        """As the facts' `failures[]` hold it; `shm_error` only where the text is a known /dev/shm exhaustion."""
        found = {"rank": rank, "node": node_name(), "phase": self.phase, "type": self.kind, "message": self.text}
        shm = recognise_shm(self.text)
        return {**found, "shm_error": shm} if shm else found


def _prepare_data(group: Group, shape: Shape, gpu: bool) -> tuple[Any, dict[str, Any]]:
    path = os.path.join(tempfile.mkdtemp(prefix="verify-train-"), "tokens.arrow")
    file_bytes = write_tokens(path, shape, SAMPLES["gpu" if gpu else "cpu"])
    dataset = TokenFile(path)
    advice = advisor_setting(dataset, shape.batch_per_rank, group.local_world, gpu)
    info = {"file_bytes": file_bytes, "samples": len(dataset), "zero_copy": dataset.zero_copy(), **advice}
    if advice["setting"] is None:
        failed: dict[str, Any] = next((r for r in advice["sweep"] if not r["ok"]), {})
        raise RuntimeError(f"no DataLoader setting delivered batches: {failed.get('error') or 'nothing measured'}")
    sampler, data = loader(dataset, advice["setting"], shape, group.rank, group.world)
    return batches(sampler, data), info


def _step_count(step_s: float, budget_s: float, device: Any) -> int:
    """The fixed step count: the budget over the slowest rank's warm step time, clamped, the same on every rank."""
    import torch
    import torch.distributed as dist

    slowest = torch.tensor([step_s], dtype=torch.float64, device=device)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return max(MIN_STEPS, min(MAX_STEPS, int(budget_s / max(float(slowest.item()), 1e-6))))


def _run_steps(group: Group, shape: Shape, stream: Any, device: Any, record: dict[str, Any], since: float) -> None:
    """Train until the fixed count; every step's global loss and checksum go into record["steps"]; the first step's
    end is timed from `since` (the process group formed)."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    gpu = device.type == "cuda"
    bf16 = gpu and torch.cuda.is_bf16_supported()
    record["bf16"] = bf16
    model = build_model(shape).to(device)
    ddp = DDP(model, device_ids=[device.index] if gpu else None)
    opt = torch.optim.AdamW(ddp.parameters(), lr=shape.lr, weight_decay=0.0)
    steps, planned, times = record["steps"], MAX_STEPS, []
    timed_from = time.monotonic()
    while len(steps) < planned:
        began = time.monotonic()
        tokens = next(stream).to(device, non_blocking=True).long()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            logits = ddp(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, shape.vocab), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total = loss.detach().reshape(1).double()
        dist.all_reduce(total)                   # SUM (gloo has no AVG): the same bits on every rank
        value = float(total.item()) / group.world
        steps.append({"step": len(steps) + 1, "loss": loss_value(value), "checksum": checksum(model)})
        times.append(time.monotonic() - began)
        if len(steps) == 1:
            record["first_step_s"] = round(time.monotonic() - since, 4)
        if not math.isfinite(value):
            break                                # every rank sees the same global loss: all stop at this step
        if len(steps) == WARMUP:
            planned = _step_count(sum(times[1:]) / (WARMUP - 1), STEP_BUDGET_S[group.device_class], device)
            timed_from = time.monotonic()
    record["planned_steps"] = planned
    if len(steps) > WARMUP:
        record["timed_steps"], record["timed_s"] = len(steps) - WARMUP, round(time.monotonic() - timed_from, 6)


def train_rank(group: Group, shape: Shape) -> dict[str, Any]:
    """One rank's run: its record (steps, loader, timings), or a StepError naming the phase that broke."""
    import torch

    record: dict[str, Any] = {"rank": group.rank, "local_rank": group.local_rank, "node": node_name(), "steps": []}
    gpu = group.backend == "nccl"
    device = torch.device("cuda", group.local_rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(max(1, dl.cpu_quota()["usable"] // max(1, group.local_world)))
    started = time.monotonic()
    try:
        init_group(group.backend, group.rank, group.world, group.init_method, group.timeout_s, "train")
    except Exception as exc:
        raise StepError("init", exc) from exc
    record["init_s"] = round(time.monotonic() - started, 4)
    try:
        ready = time.monotonic()
        try:
            stream, record["loader"] = _prepare_data(group, shape, gpu)
            record["data_s"] = round(time.monotonic() - ready, 4)
        except Exception as exc:
            raise StepError("data", exc) from exc
        try:
            _run_steps(group, shape, stream, device, record, ready)
        except Exception as exc:
            raise StepError("train", exc) from exc
    finally:
        record["wall_s"] = round(time.monotonic() - started, 4)
    return record


def shape_facts(shape: Shape, device_class: str) -> dict[str, Any]:
    return {**asdict(shape), "device_class": device_class, "params": parameter_count(shape),
            "flops_per_token": flops_per_token(shape), "warmup_steps": WARMUP, "min_steps": MIN_STEPS,
            "max_steps": MAX_STEPS, "step_budget_s": STEP_BUDGET_S[device_class], "noise": NOISE}


def worker(group: Group, shape: Shape, queue: Any) -> None:
    """A spawned local rank: its record, or its error, onto the parent's queue. A spawned child inherits "spawn" as
    its start method; DataLoader workers get the launcher's own (fork on Linux), as under torchrun."""
    import multiprocessing

    multiprocessing.set_start_method(group.start_method, force=True)
    try:
        queue.put({"ok": True, "record": train_rank(group, shape)})
    except StepError as exc:
        queue.put({"ok": False, "failure": exc.failure(group.rank)})
    finally:
        try:
            import torch.distributed as dist
            if dist.is_initialized():
                dist.destroy_process_group()
        except Exception:  # noqa: BLE001 - the process ends anyway
            pass
