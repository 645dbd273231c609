"""The train check's probe: the ranks trainer.py runs (spawned here, or the torchrun group joined), each rank's
record collected by a deadline; rank 0's facts hold them all."""
from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import socket
import time
from typing import Any

from ...options import Options
from . import trainer

PACKAGES = {"pyarrow": "pyarrow", "numpy": "numpy"}      # import name -> pip name



def _launched_by_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _deadline(budget: float) -> float:
    """Stop waiting before the runner's kill (VERIFY_DEADLINE), keeping 10 s to report what was seen."""
    try:
        budget = max(5.0, min(budget, float(os.environ["VERIFY_DEADLINE"]) - time.time() - 10))
    except (KeyError, ValueError):
        pass
    return time.monotonic() + budget


def _collect(procs: list[Any], queue: Any, world: int, budget: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records, failures) of the spawned ranks; a rank that dies or never answers is a failure too."""
    records: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    answered: set[int] = set()
    deadline = _deadline(budget)
    while len(answered) < world and time.monotonic() < deadline:
        try:
            item = queue.get(timeout=1.0)
        except Exception:  # noqa: BLE001 - queue.Empty: look for dead ranks
            dead = [(r, p.exitcode) for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in answered]
            for rank, code in dead:
                answered.add(rank)
                failures.append({"rank": rank, "node": trainer.node_name(), "phase": "died", "type": "exit",
                                 "message": f"rank process died with exit code {code}"})
            continue
        answered.add(item["record"]["rank"] if item["ok"] else item["failure"]["rank"])
        (records if item["ok"] else failures).append(item["record"] if item["ok"] else item["failure"])
    for rank in sorted(set(range(world)) - answered):
        failures.append({"rank": rank, "node": trainer.node_name(), "phase": "timeout", "type": "timeout",
                         "message": f"no answer within {budget:.0f} s"})
    return records, failures


def _spawn(group: dict[str, Any], shape: trainer.Shape, budget: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")     # containers run with loopback only
    group = {**group, "start_method": mp.get_start_method()}
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    world = group["world"]
    procs = [ctx.Process(target=trainer.worker, args=(trainer.Group(rank=r, local_rank=r, **group), shape, queue))
             for r in range(world)]
    for p in procs:
        p.start()
    try:
        return _collect(procs, queue, world, budget)
    finally:
        stop = time.monotonic() + 10
        for p in procs:
            p.join(timeout=max(0.0, stop - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(timeout=5)


def _under_torchrun(group: dict[str, Any], shape: trainer.Shape) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """This rank's run in the launcher's group; every rank's record gathered (rank 0's facts hold them all)."""
    import torch.distributed as dist

    if os.environ["MASTER_ADDR"] in ("127.0.0.1", "localhost"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    rank = int(os.environ["RANK"])
    me = trainer.Group(rank=rank, local_rank=int(os.environ.get("LOCAL_RANK", "0")), **group)
    try:
        record = trainer.train_rank(me, shape)
        gathered: list[Any] = [None] * me.world
        try:
            dist.all_gather_object(gathered, record)
        except Exception as exc:
            raise trainer.StepError("gather", exc) from exc
        return [r for r in gathered if isinstance(r, dict)], []
    except trainer.StepError as exc:
        return [], [exc.failure(rank)]
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def probe(options: Options) -> dict[str, Any]:
    missing = [pip for mod, pip in PACKAGES.items() if importlib.util.find_spec(mod) is None]
    if missing:
        return {"missing": missing}
    import torch
    import torch.distributed as dist

    from ...environment import emulation

    facts: dict[str, Any] = {"distributed": dist.is_available()}
    if not facts["distributed"]:
        return facts
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl_ok = gpus > 0 and dist.is_nccl_available()
    emulated = bool(emulation()["emulated"])
    device_class = "gpu" if nccl_ok else ("emulated" if emulated else "cpu")
    shape = trainer.SHAPES["gpu" if nccl_ok else "cpu"]
    facts.update(gpus=gpus, backend="nccl" if nccl_ok else "gloo", emulated=emulated,
                 device_name=torch.cuda.get_device_name(0) if gpus else None,
                 config=trainer.shape_facts(shape, device_class))
    group = {"backend": facts["backend"], "timeout_s": options.nccl_timeout_s, "device_class": device_class}
    if _launched_by_torchrun():
        world = int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        mode = (f"torchrun group: rank {os.environ['RANK']} of {world}, {os.environ['MASTER_ADDR']}:"
                f"{os.environ.get('MASTER_PORT', '')}")
        records, failures = _under_torchrun({**group, "world": world, "local_world": local, "init_method": "env://"},
                                            shape)
    else:
        world = gpus if nccl_ok else options.nccl_processes
        mode = f"{world} local process(es), one per {'GPU' if nccl_ok else 'CPU worker'}"
        init = f"tcp://127.0.0.1:{_free_port()}"
        records, failures = _spawn({**group, "world": world, "local_world": world, "init_method": init}, shape,
                                   budget=options.nccl_timeout_s * 3)
    facts.update(world_size=world, mode=mode, ranks=sorted(records, key=lambda r: r["rank"]),
                 failures=sorted(failures, key=lambda f: f["rank"]),
                 nodes=len({r["node"] for r in records} | {f["node"] for f in failures}) or None)
    return facts
