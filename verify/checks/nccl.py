"""nccl: an all-reduce whose result is checked, with algbw/busbw per size as nccl-tests reports them.

One process per visible GPU with NCCL. With fewer than one GPU the same code runs across processes with
gloo, and the result says so. Started by torchrun (RANK, WORLD_SIZE, MASTER_ADDR set), it joins the
launcher's group instead, so it spans nodes; rank 0's result is the report.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import socket
import time
from datetime import timedelta
from typing import Any

from ..options import Options
from ..result import FAIL, PASS, SKIP, CheckResult

GLOO_MAX_BYTES = 16 << 20
ADVICE = ("Rerun with NCCL_DEBUG=INFO to see the transport and where it stops; give the container "
          "--shm-size=2g or --ipc=host (NCCL uses /dev/shm); try NCCL_P2P_DISABLE=1 (broken peer-to-peer) "
          "or NCCL_IB_DISABLE=1; across nodes check NCCL_SOCKET_IFNAME and the firewall.")


def message_sizes(lo: int, hi: int) -> list[int]:
    sizes, size = [], max(lo, 4)
    while size <= hi:
        sizes.append(size)
        size *= 4
    return sizes or [lo]


def bus_factor(world: int) -> float:
    """nccl-tests' all-reduce bus bandwidth factor 2(n-1)/n."""
    return 2 * (world - 1) / world if world > 1 else 1.0


def sweep(rank: int, world: int, device: Any, sizes: list[int], iters: int = 10) -> list[dict[str, Any]]:
    """All-reduce sum over each size: time, algbw, busbw and the number of wrong elements (all ranks)."""
    import torch
    import torch.distributed as dist

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    rows = []
    expected = world * (world + 1) / 2
    for size in sizes:
        count = size // 4
        t = torch.full((count,), float(rank + 1), dtype=torch.float32, device=device)
        dist.all_reduce(t)
        wrong = (t != expected).sum()
        dist.all_reduce(wrong)                   # every rank's wrong elements, counted once on each
        for _ in range(2):                       # warm-up
            dist.all_reduce(t)
        sync()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        sync()
        seconds = (time.perf_counter() - start) / iters
        algbw = size / seconds / 1e9
        rows.append({"size": size, "count": count, "type": "float", "redop": "sum", "time_us": round(seconds * 1e6, 1),
                     "algbw": round(algbw, 3), "busbw": round(algbw * bus_factor(world), 3), "wrong": int(wrong.item())})
    return rows


def _init(backend: str, rank: int, world: int, init_method: str, timeout_s: float) -> None:
    import torch.distributed as dist
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world,
                            timeout=timedelta(seconds=timeout_s))


def _device(backend: str, local_rank: int):
    import torch
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def _worker(rank: int, world: int, init_method: str, backend: str, sizes: list[int], timeout_s: float, queue) -> None:
    try:
        _init(backend, rank, world, init_method, timeout_s)
        import torch.distributed as dist
        rows = sweep(rank, world, _device(backend, rank), sizes)
        dist.destroy_process_group()
        queue.put((rank, rows, None))
    except Exception as exc:  # noqa: BLE001 - reported by the parent
        queue.put((rank, None, f"{type(exc).__name__}: {exc}"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(backend: str, world: int, sizes: list[int], timeout_s: float) -> tuple[list | None, str | None]:
    """Run `world` local ranks; (rank 0's rows, error)."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")     # containers run with loopback only
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    init = f"tcp://127.0.0.1:{_free_port()}"
    procs = [ctx.Process(target=_worker, args=(r, world, init, backend, sizes, timeout_s, queue)) for r in range(world)]
    for p in procs:
        p.start()
    results, deadline = {}, time.monotonic() + timeout_s * (len(sizes) + 2)
    error = None
    while len(results) < world and time.monotonic() < deadline:
        try:
            rank, rows, err = queue.get(timeout=1.0)
        except Exception:  # noqa: BLE001 - queue.Empty: check for dead ranks
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                error = f"rank process died with exit code {dead[0].exitcode}"
                break
            continue
        results[rank] = rows
        error = error or err
    if len(results) < world and not error:
        error = f"timed out after {timeout_s * (len(sizes) + 2):.0f} s waiting for {world - len(results)} rank(s)"
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    return results.get(0), error


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'size':>12} {'count':>10} {'type':>6} {'redop':>6} {'time(us)':>10} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12} {'#wrong':>7}"]
    lines += [f"{r['size']:>12} {r['count']:>10} {r['type']:>6} {r['redop']:>6} {r['time_us']:>10} {r['algbw']:>12} {r['busbw']:>12} {r['wrong']:>7}" for r in rows]
    return lines


def _launched_by_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def run(options: Options) -> CheckResult:
    result = CheckResult("nccl", PASS, "")
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        result.status, result.summary = FAIL, "torch.distributed is not available in this build"
        result.remedy = "Use an official torch wheel (built with distributed support)."
        return result
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl_ok = gpus > 0 and dist.is_nccl_available()
    backend = "nccl" if nccl_ok else "gloo"
    if nccl_ok:
        result.details.append(f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}")
    max_bytes = options.nccl_max_bytes if nccl_ok else min(options.nccl_max_bytes, GLOO_MAX_BYTES)
    sizes = message_sizes(options.nccl_min_bytes, max_bytes)

    if _launched_by_torchrun():
        if os.environ["MASTER_ADDR"] in ("127.0.0.1", "localhost"):
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        mode = f"torchrun group: rank {rank} of {world} (local rank {local_rank}), {os.environ['MASTER_ADDR']}:{os.environ.get('MASTER_PORT', '')}"
        try:
            _init(backend, rank, world, "env://", options.nccl_timeout_s)
            rows, error = sweep(rank, world, _device(backend, local_rank), sizes), None
            dist.destroy_process_group()
        except Exception as exc:  # noqa: BLE001
            rows, error = None, f"{type(exc).__name__}: {exc}"
        result.data.update(rank=rank)
    else:
        world = gpus if nccl_ok else options.nccl_processes
        mode = f"{world} local process(es), one per {'GPU' if nccl_ok else 'CPU worker'}"
        rows, error = _spawn(backend, world, sizes, options.nccl_timeout_s)

    result.data.update(backend=backend, world_size=world, mode=mode, sizes=rows or [])
    result.metric("world_size", world, "ranks")
    result.details.append(f"backend {backend}, world size {world}: {mode}")
    if error or rows is None:
        result.status = FAIL
        result.summary = f"all-reduce over {backend} failed: {error}"
        result.remedy = ADVICE
        return result
    wrong = sum(r["wrong"] for r in rows)
    result.details += _table(rows)
    result.metric("wrong", wrong, "elements")
    result.metric("busbw_max", max(r["busbw"] for r in rows), "GB/s")
    result.metric("algbw_max", max(r["algbw"] for r in rows), "GB/s")
    verified = f"all-reduce verified over {backend}, world size {world}, {len(rows)} sizes {rows[0]['size'] >> 20}-{rows[-1]['size'] >> 20} MiB"
    if wrong:
        result.status, result.remedy = FAIL, ADVICE
        result.summary = f"all-reduce over {backend} returned {wrong} wrong element(s)"
    elif not nccl_ok:
        no_gpu = "no GPU visible" if gpus == 0 else "NCCL is not available in this torch build"
        result.status = FAIL if options.expect_gpus > 0 else SKIP
        result.summary = f"{no_gpu}: NCCL not exercised; {verified}"
        result.remedy = "Run on a GPU node (`docker run --gpus all`); the gpu check says why none is visible."
    else:
        result.summary = f"{verified}; peak busbw {max(r['busbw'] for r in rows):.1f} GB/s"
    return result
