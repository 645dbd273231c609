"""The nccl check's probe: what a GPU engineer reads first (the NCCL version, the NCCL_* environment, /dev/shm, the
memlock limit, the host's adapters, NVSwitch) and the sweep's rows, with NCCL's own INFO log read back (ncclog.py)."""
from __future__ import annotations

import glob
import os
import resource
import tempfile
import time
from typing import Any

from ...facts import NONE, UNLIMITED
from ...options import Options
from ...shared import nvlink, rdma
from . import ncclog
from .spawn import ALL_REDUCE, INIT, device_of, join, message_sizes, spawn, sweep, sweep_cap

GLOO_MAX_BYTES = 16 << 20


def _launched_by_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def _nccl_log(directory: str) -> dict[str, Any]:
    """What NCCL's own INFO log says it chose (verify/checks/nccl/ncclog.py): network per channel, HCAs, GDR, plugin, errors."""
    text = ""
    for path in glob.glob(os.path.join(directory, "nccl.*.log")):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text += fh.read(1 << 20)
        except OSError:
            pass
    return ncclog.parse(text)


def _environment_facts() -> dict[str, Any]:
    try:
        st = os.statvfs("/dev/shm")
        shm = st.f_blocks * st.f_frsize
    except OSError:
        shm = None
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return {"nccl_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
            "gloo_socket_ifname": os.environ.get("GLOO_SOCKET_IFNAME"),
            "shm_bytes": shm, "memlock_bytes": UNLIMITED if soft == resource.RLIM_INFINITY else soft,
            **_fabric_facts(), "nodes": _nodes()}


def _fabric_facts() -> dict[str, Any]:
    """The host's adapters, the container's uverbs nodes and whether libibverbs loads (verify/shared/rdma.py): what decides
    who owns a fall-back to sockets, and what the links carry across nodes."""
    base = rdma.root()
    adapters = rdma.adapters(base)
    uverbs, _ = rdma.device_nodes(base)
    lib, _ = rdma.load("libibverbs.so.1")
    return {"infiniband": bool(adapters) or bool(uverbs), "efa": any(a.get("driver") == "efa" for a in adapters or []),
            "adapters": adapters, "uverbs": uverbs, "verbs_loads": lib is not None}


def _nodes() -> int | None:
    """Nodes of the group: WORLD_SIZE / LOCAL_WORLD_SIZE under torchrun, rounded up (12 ranks, 8 here: a second
    node holds the other 4; rounded down it read as one node, and more ranks than that node's GPUs), 1 without a
    launcher (local ranks); None (unknown) under a launcher that does not say its local world size."""
    if not _launched_by_torchrun():
        return 1
    world, local = os.environ.get("WORLD_SIZE", ""), os.environ.get("LOCAL_WORLD_SIZE", "")
    if world.isdecimal() and local.isdecimal() and int(local) > 0:
        return max(1, -(-int(world) // int(local)))
    return None


def _nvswitch() -> bool | None:
    """Whether GPU 0's NVLinks end in NVSwitches (NVLS needs them): False without links, None when NVML cannot say."""
    try:
        import pynvml as nvml
        nvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML: unknown
        return None
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(0)
        found = nvlink.links(nvml, h)
        return nvlink.nvswitch(nvml, h, len(found)) if found else False
    except Exception:  # noqa: BLE001
        return None
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def probe(options: Options) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    facts: dict[str, Any] = {"distributed": dist.is_available(), **_environment_facts()}
    if not facts["distributed"]:
        return facts
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl_ok = gpus > 0 and dist.is_nccl_available()
    backend = "nccl" if nccl_ok else "gloo"
    facts.update(gpus=gpus, nccl_available=bool(dist.is_nccl_available()), backend=backend,
                 nccl_version=".".join(map(str, torch.cuda.nccl.version())) if nccl_ok else None,
                 device_name=torch.cuda.get_device_name(0) if gpus else None, timeout_s=options.nccl_timeout_s,
                 nvswitch=_nvswitch() if nccl_ok else None)
    max_bytes = (sweep_cap(torch.cuda.get_device_properties(0).total_memory, options.nccl_max_bytes) if nccl_ok
                 else min(options.nccl_max_bytes, GLOO_MAX_BYTES))
    sizes = message_sizes(options.nccl_min_bytes, max_bytes)
    log_dir = tempfile.mkdtemp(prefix="nccl-log-")       # inside the check's scratch dir (TMPDIR)
    if nccl_ok and "NCCL_DEBUG" not in os.environ:
        os.environ.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET",
                          NCCL_DEBUG_FILE=os.path.join(log_dir, "nccl.%h.%p.log"))
    if _launched_by_torchrun():
        if os.environ["MASTER_ADDR"] in ("127.0.0.1", "localhost"):
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        mode = f"torchrun group: rank {rank} of {world} (local rank {local_rank}), {os.environ['MASTER_ADDR']}:{os.environ.get('MASTER_PORT', '')}"
        phase = INIT
        try:
            started = time.monotonic()
            join(backend, rank, world, "env://", options.nccl_timeout_s)
            facts["init_s"] = round(time.monotonic() - started, 3)
            phase = ALL_REDUCE
            rows, error = sweep(rank, world, device_of(backend, local_rank), sizes), None
            dist.destroy_process_group()
        except Exception as exc:  # noqa: BLE001
            rows, error = None, f"{phase}: {type(exc).__name__}: {exc}"
        facts["rank"] = rank
    else:
        world = gpus if nccl_ok else options.nccl_processes
        mode = f"{world} local process(es), one per {'GPU' if nccl_ok else 'CPU worker'}"
        rows, error, facts["init_s"] = spawn(backend, world, sizes, options.nccl_timeout_s)
    facts.update(world_size=world, mode=mode, sizes=rows or [], collective="all_reduce", error=error or NONE,
                 nccl_log=_nccl_log(log_dir), gloo_socket_ifname=os.environ.get("GLOO_SOCKET_IFNAME"))
    return facts
