"""The all-reduce sweep and how its ranks start: one process per GPU (or gloo workers without one) spawned here, or
the torchrun group joined; message sizes, the sweep's cap by GPU memory, and nccl-tests' bus factor."""
from __future__ import annotations

import multiprocessing as mp
import os
import re
import socket
import time
from typing import Any

from ...shared.distgroup import init_group

# The facts' `error` is "<phase>: <exception>" (FACTS.md): the phase is a field of that format, read by error_phase.
INIT, ALL_REDUCE = "init", "all_reduce"
# the collective or phase a recorded error names first (`init: `, `all_reduce: `, a translation's `collective: `)
LEADING_PHASE = re.compile(r"^[a-z_]+: ")


def message_sizes(lo: int, hi: int) -> list[int]:
    """x4 steps from lo, and hi itself as the last point (the peak is reached at the largest messages)."""
    sizes, size = [], max(lo, 4)
    while size <= hi:
        sizes.append(size)
        size *= 4
    if sizes and sizes[-1] < hi:
        sizes.append(hi)
    return sizes or [lo]


def sweep_cap(total_memory: int, requested: int) -> int:
    """The largest message a GPU can sweep: an eighth of its memory (the tensor, the check's own copies and
    NCCL's buffers fit), floor 64 MiB."""
    return max(64 << 20, min(requested, total_memory // 8))


def bus_factor(world: int) -> float:
    """nccl-tests' all-reduce bus bandwidth factor 2(n-1)/n: 0 at world size 1 (nothing crosses a bus)."""
    return 2 * (world - 1) / world if world > 0 else 0.0


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


def join(backend: str, rank: int, world: int, init_method: str, timeout_s: float) -> None:
    init_group(backend, rank, world, init_method, timeout_s, "nccl")


def device_of(backend: str, local_rank: int):
    import torch
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def _worker(rank: int, world: int, init_method: str, backend: str, sizes: list[int], timeout_s: float, queue) -> None:
    phase = INIT
    if rank == world - 1 and "nccl-last-rank" in os.environ.get("VERIFY_TEST_HANG", "").split(","):
        time.sleep(3600)            # test hook: the last rank never joins, as a dead node would
    try:
        started = time.monotonic()
        join(backend, rank, world, init_method, timeout_s)
        init_s = round(time.monotonic() - started, 3)
        import torch.distributed as dist
        phase = ALL_REDUCE
        rows = sweep(rank, world, device_of(backend, rank), sizes)
        dist.destroy_process_group()
        queue.put((rank, rows, None, init_s))
    except Exception as exc:  # noqa: BLE001 - reported by the parent
        queue.put((rank, None, f"{phase}: {type(exc).__name__}: {exc}", None))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(backend: str, world: int, sizes: list[int], timeout_s: float) -> tuple[list | None, str | None, float | None]:
    """Run `world` local ranks; (rank 0's rows, error)."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")     # containers run with loopback only
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    init = f"tcp://127.0.0.1:{_free_port()}"
    procs = [ctx.Process(target=_worker, args=(r, world, init, backend, sizes, timeout_s, queue)) for r in range(world)]
    for p in procs:
        p.start()
    init0: float | None = None
    results: dict[int, Any] = {}
    budget = timeout_s * (len(sizes) + 2)
    try:       # stop before the runner's kill (VERIFY_DEADLINE), keeping a fifth of what is left (at most 10 s,
        # at least 2 s) to report what was seen: a fixed 10 s left a 15 s preflight share 5 s to start two ranks
        left = float(os.environ["VERIFY_DEADLINE"]) - time.time()
        budget = max(5.0, min(budget, left - min(10.0, max(2.0, 0.2 * left))))
    except (KeyError, ValueError):
        pass
    deadline = time.monotonic() + budget
    error = None
    while len(results) < world and time.monotonic() < deadline:
        try:
            rank, rows, err, init_s = queue.get(timeout=1.0)
        except Exception:  # noqa: BLE001 - queue.Empty: check for dead ranks
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                error = f"rank process died with exit code {dead[0].exitcode}"
                break
            continue
        results[rank] = rows
        if rank == 0:
            init0 = init_s
        error = error or err
    if len(results) < world and not error:
        error = f"timed out after {budget:.0f} s waiting for {world - len(results)} rank(s) (no error reported)"
    stop = time.monotonic() + (0 if error else 5)       # after a failure, hung ranks are not waited for
    for p in procs:
        p.join(timeout=max(0.0, stop - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(timeout=5)
    return results.get(0), error, init0
