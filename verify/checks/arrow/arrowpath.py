"""The Arrow zero-copy data path, shared by the `arrow` check and `verify bench`.

Samples are rows of a FixedSizeList<float32>[SAMPLE_FLOATS] column in an Arrow IPC file. Mapped with
pa.memory_map, each record batch's values buffer becomes a torch tensor without a copy; the proof is the
tensor's data pointer lying inside the mapped region, not `to_numpy(zero_copy_only=True)` succeeding.
"""
from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import torch

SAMPLE_FLOATS = 1024            # 4 KiB samples
BATCH_ROWS = 256                # samples per training batch: a view into a record batch
RECORD_BATCH_ROWS = 8192        # samples per IPC record batch (32 MiB): decoding cost paid once per 32 batches


def write_ipc(path: str, total_bytes: int, compression: str | None = None, seed: int = 0) -> int:
    """Write ~total_bytes of float32 samples in record batches of up to RECORD_BATCH_ROWS; returns the sample count."""
    rows = max(BATCH_ROWS, total_bytes // (SAMPLE_FLOATS * 4) // BATCH_ROWS * BATCH_ROWS)
    per_batch = min(rows, RECORD_BATCH_ROWS)
    schema = pa.schema([("x", pa.list_(pa.float32(), SAMPLE_FLOATS))])
    options = pa.ipc.IpcWriteOptions(compression=compression)
    rng = np.random.default_rng(seed)
    block = rng.standard_normal(per_batch * SAMPLE_FLOATS + 7 * SAMPLE_FLOATS, dtype=np.float32)  # reused: cheap to write
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema, options=options) as writer:
        for index, first in enumerate(range(0, rows, per_batch)):
            count = min(per_batch, rows - first)
            start = (index % 8) * SAMPLE_FLOATS
            values = pa.array(block[start:start + count * SAMPLE_FLOATS])
            column = pa.FixedSizeListArray.from_arrays(values, SAMPLE_FLOATS)
            writer.write_batch(pa.record_batch([column], schema=schema))
    return rows


@dataclass
class Mapped:
    """An IPC file mapped into memory: the region's bounds and the reader over it."""

    source: pa.MemoryMappedFile
    reader: pa.ipc.RecordBatchFileReader
    base: int
    size: int

    def contains(self, tensor: torch.Tensor) -> bool:
        start = tensor.data_ptr()
        return self.base <= start and start + tensor.numel() * tensor.element_size() <= self.base + self.size

    def close(self) -> None:
        self.source.close()


def open_mapped(path: str) -> Mapped:
    source = pa.memory_map(path, "r")
    size = source.size()
    base = source.read_buffer(size).address      # a slice of the mapping itself: its start address
    source.seek(0)
    return Mapped(source, pa.ipc.open_file(source), base, size)


def batch_tensor(batch: pa.RecordBatch) -> torch.Tensor:
    """The batch's samples as a (rows, SAMPLE_FLOATS) tensor over Arrow's own buffer (no copy when possible).

    Slice offsets are honoured by hand: `.values` ignores the list array's offset, and `flatten()` costs
    ~0.8 ms a batch. A compressed file's buffers are heap copies, which `Mapped.contains` shows.
    """
    column = batch.column(0)
    values = column.values
    if column.null_count or values.null_count:
        raise ValueError("nulls: a validity bitmap makes a raw-buffer view wrong; zero copy needs null-free data")
    first = column.offset * SAMPLE_FLOATS + values.offset
    flat = np.frombuffer(values.buffers()[1], dtype=np.float32, count=len(column) * SAMPLE_FLOATS, offset=first * 4)
    # Arrow's buffers are read-only and torch warns on every view of one; they are never written here (a filter set
    # at import time is reset by a caller's own, pytest's among them: this one holds where the view is made)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The given NumPy array is not writable", UserWarning)
        return torch.from_numpy(flat).view(-1, SAMPLE_FLOATS)


def iter_tensors(mapped: Mapped) -> Iterator[torch.Tensor]:
    """Training batches of BATCH_ROWS samples: views into each record batch's buffer."""
    for index in range(mapped.reader.num_record_batches):
        yield from batch_tensor(mapped.reader.get_batch(index)).split(BATCH_ROWS)


def consume(tensors: Iterator[torch.Tensor]) -> tuple[float, int]:
    """Read every byte (a sum, as a training step's first touch would); (checksum, bytes)."""
    total, nbytes = 0.0, 0
    for t in tensors:
        total += float(t.sum())
        nbytes += t.numel() * t.element_size()
    return total, nbytes


def best_throughput(fn: Callable[[], int], repeats: int) -> float:
    """Best-of-N bytes per second of `fn` (which returns the bytes it read)."""
    return best_in_turns([fn], repeats)[0]


def best_in_turns(readers: list[Callable[[], int]], repeats: int) -> list[float]:
    """Best-of-N bytes per second of each reader, the readers measured in turns, so a burst of load from a neighbour
    (a shared CI host, a noisy node) lands on every side of their ratio instead of on one."""
    best = [0.0] * len(readers)
    for _ in range(repeats):
        for i, fn in enumerate(readers):
            start = time.perf_counter()
            nbytes = fn()
            best[i] = max(best[i], nbytes / (time.perf_counter() - start))
    return best


def memory_bandwidth(nbytes: int, repeats: int) -> float:
    """Read bandwidth of ordinary process memory with the same reduction, in batch-sized pieces, bytes/s."""
    return best_throughput(memory_reader(nbytes), repeats)


def memory_reader(nbytes: int) -> Callable[[], int]:
    """One read of ordinary process memory with the same reduction, in batch-sized pieces (returns the bytes)."""
    ram = torch.ones(nbytes // 4, dtype=torch.float32)
    pieces = list(ram.view(-1, BATCH_ROWS * SAMPLE_FLOATS))
    return lambda: consume(iter(pieces))[1]


def nodes_pipeline(mapped: Mapped):
    """The same batches through a torchdata.nodes pipeline (IterableWrapper → Mapper → Loader)."""
    from torchdata.nodes import IterableWrapper, Loader, Mapper

    starts = [(i, row) for i in range(mapped.reader.num_record_batches)
              for row in range(0, mapped.reader.get_batch(i).num_rows, BATCH_ROWS)]
    node = IterableWrapper(starts)
    record_batch = functools.lru_cache(maxsize=2)(lambda i: batch_tensor(mapped.reader.get_batch(i)))
    node = Mapper(node, lambda at: record_batch(at[0])[at[1]:at[1] + BATCH_ROWS])
    return Loader(node)
