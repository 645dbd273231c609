"""`verify bench`: the data path measured side by side in one run, on the same data (default 1 GiB).

Zero-copy Arrow from a warm mapping, ordinary memory, LZ4 and ZSTD IPC files, an h5py chunked read, and
the baseline most code starts with: a per-sample Dataset through DataLoader (batch 256, 0 and 2 workers).
Prints GB/s, samples/s and ratios; writes them as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from ..checks.arrow import arrowpath as ap
from ..options import human_bytes, parse_size
from ..report import one_line

GB = 1e9
LOADER_0 = "DataLoader per-sample, 0 workers"
LOADER_2 = "DataLoader per-sample, 2 workers"
SAMPLE_BYTES = ap.SAMPLE_FLOATS * 4


class ArrowPerSample:
    """The baseline: the usual map-style Dataset over the same Arrow file, one sample per __getitem__.

    Each worker maps the file itself (opened lazily, after the fork).
    """

    def __init__(self, path: str, samples: int) -> None:
        self.path, self.samples = path, samples
        self.column: Any = None

    def __len__(self) -> int:
        return self.samples

    def __getitem__(self, index: int):
        import torch
        if self.column is None:
            self.column = ap.open_mapped(self.path).reader.read_all().column(0)
        return torch.from_numpy(self.column[index].values.to_numpy())


class RamPerSample:
    """A reference, not the baseline: the same per-sample Dataset over data already in process memory."""

    def __init__(self, array) -> None:
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index: int):
        import torch
        return torch.from_numpy(self.array[index])


def _row(name: str, bytes_per_s: float) -> dict[str, Any]:
    return {"path": name, "gb_per_s": round(bytes_per_s / GB, 3), "samples_per_s": round(bytes_per_s / SAMPLE_BYTES)}


def _arrow_file(tmp: str, name: str, nbytes: int, compression: str | None) -> Callable[[], int]:
    path = os.path.join(tmp, f"{name}.arrow")
    ap.write_ipc(path, nbytes, compression=compression)
    mapped = ap.open_mapped(path)
    return lambda: ap.consume(ap.iter_tensors(mapped))[1]


def _h5py_chunked(tmp: str, array) -> Callable[[], int]:
    import h5py
    path = os.path.join(tmp, "chunked.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=array, chunks=(ap.BATCH_ROWS, ap.SAMPLE_FLOATS))
    import torch

    def read() -> int:
        with h5py.File(path, "r") as f:
            ds = f["x"]
            return ap.consume(torch.from_numpy(ds[start:start + ap.BATCH_ROWS])
                              for start in range(0, ds.shape[0], ap.BATCH_ROWS))[1]
    return read


def _dataloader(dataset, workers: int) -> Callable[[], int]:
    from torch.utils.data import DataLoader

    return lambda: ap.consume(iter(DataLoader(dataset, batch_size=ap.BATCH_ROWS, num_workers=workers)))[1]


def run_bench(size: int, repeats: int, workdir: str | None) -> dict[str, Any]:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="verify-bench-", dir=workdir) as tmp:
        plain = os.path.join(tmp, "plain.arrow")
        samples = ap.write_ipc(plain, size)
        mapped = ap.open_mapped(plain)
        tensors = list(ap.iter_tensors(mapped))
        zero_copy = all(mapped.contains(t) for t in tensors)
        ap.consume(iter(tensors))        # warm: page tables of the mapping filled before timing
        del tensors
        nbytes = samples * SAMPLE_BYTES
        print(f"bench: {human_bytes(nbytes)} ({samples} samples of {SAMPLE_BYTES} B), best of {repeats}", flush=True)
        array = np.random.default_rng(0).standard_normal((samples, ap.SAMPLE_FLOATS), dtype=np.float32)
        steps: list[tuple[str, Callable[[], Callable[[], int]]]] = [
            ("arrow zero-copy (mmap, warm)", lambda: lambda: ap.consume(ap.iter_tensors(mapped))[1]),
            ("arrow IPC lz4 (copy)", lambda: _arrow_file(tmp, "lz4", size, "lz4")),
            ("arrow IPC zstd (copy)", lambda: _arrow_file(tmp, "zstd", size, "zstd")),
            ("h5py chunked read", lambda: _h5py_chunked(tmp, array)),
            (LOADER_0, lambda: _dataloader(ArrowPerSample(plain, samples), 0)),
            (LOADER_2, lambda: _dataloader(ArrowPerSample(plain, samples), 2)),
            ("ref: DataLoader per-sample from RAM, 0 workers", lambda: _dataloader(RamPerSample(array), 0)),
        ]
        print("  memory read bandwidth ...", flush=True)
        rows.append(_row("memory read bandwidth", ap.memory_bandwidth(nbytes, repeats)))
        for name, make in steps:
            print(f"  {name} ...", flush=True)
            rows.append(_row(name, ap.best_throughput(make(), repeats)))
        mapped.close()
    by = {r["path"]: r["gb_per_s"] for r in rows}
    zc, mem = by["arrow zero-copy (mmap, warm)"], by["memory read bandwidth"]
    best_loader = max(by[LOADER_0], by[LOADER_2])
    for r in rows:
        r["vs_zero_copy"] = round(r["gb_per_s"] / zc, 3)
    return {
        "bytes": nbytes, "samples": samples, "sample_bytes": SAMPLE_BYTES, "batch": ap.BATCH_ROWS, "repeats": repeats,
        "zero_copy_proven": zero_copy, "host": platform.node(), "cpus": os.cpu_count(), "torch_threads": 1,
        "results": rows,
        "ratios": {"zero_copy_vs_memory": round(zc / mem, 3), "zero_copy_vs_best_dataloader": round(zc / best_loader, 2),
                   "zero_copy_vs_ram_dataloader": round(zc / by["ref: DataLoader per-sample from RAM, 0 workers"], 2)},
    }


def format_table(bench: dict[str, Any]) -> str:
    lines = [f"{'path':<48} {'GB/s':>8} {'samples/s':>12} {'x zero-copy':>12}"]
    lines += [f"{r['path']:<48} {r['gb_per_s']:>8.2f} {r['samples_per_s']:>12,} {r['vs_zero_copy']:>12.3f}" for r in bench["results"]]
    ratios = bench["ratios"]
    lines += ["", f"zero copy proven by data pointers: {'yes' if bench['zero_copy_proven'] else 'NO'}",
              f"zero-copy / memory read bandwidth:   {ratios['zero_copy_vs_memory']:.3f}",
              f"zero-copy / best per-sample DataLoader over the file: {ratios['zero_copy_vs_best_dataloader']:.1f}x",
              f"zero-copy / per-sample DataLoader over data in RAM (reference): {ratios['zero_copy_vs_ram_dataloader']:.1f}x"]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import math

    if "--dataloader" in argv:
        from .advisor import main as dataloader_main
        return dataloader_main([a for a in argv if a != "--dataloader"])

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):
            raise ValueError(message)

    p = Parser(prog="verify bench", description=__doc__.splitlines()[0])
    p.add_argument("--dataloader", action="store_true",
                   help="instead: the DataLoader advisor (see `verify bench --dataloader --help`)")
    p.add_argument("--size", default="1g", help="data size (default 1g)")
    p.add_argument("--repeats", default="3", help="best of N passes (default 3)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--dir", help="where to write the data files (default: the temp dir)")
    try:
        args = p.parse_args(argv)
        size = parse_size(args.size)
        if not 1 <= size <= 1 << 42:
            raise ValueError(f"--size {args.size!r} is out of range (1 byte to 4t)")
        repeats = float(args.repeats) if args.repeats.strip().lower() not in ("nan", "inf", "-inf") else math.nan
        if not repeats.is_integer() or not 1 <= repeats <= 1000:
            raise ValueError(f"--repeats {args.repeats!r} must be a whole number from 1 to 1000")
        if args.dir and not os.path.isdir(args.dir):
            raise ValueError(f"--dir {args.dir}: no such folder")
        from ..report import check_writable
        problem = check_writable(args.json) if args.json else None
        if problem:
            raise ValueError(f"--json {args.json}: {problem}")
    except ValueError as exc:
        print(f"verify bench: {one_line(exc)}", file=sys.stderr)
        return 2
    bench = run_bench(size, int(repeats), args.dir)
    print(format_table(bench))
    if args.json:
        from ..atomic import write_atomic
        write_atomic(args.json, json.dumps(bench, indent=2) + "\n")
        print(f"JSON: {args.json}")
    return 0
