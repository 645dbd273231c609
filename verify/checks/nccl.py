"""nccl: an all-reduce whose result is checked, with algbw/busbw per size as nccl-tests reports them.

One process per visible GPU with NCCL. With fewer than one GPU the same code runs across processes with
gloo, and the result says so. Started by torchrun (RANK, WORLD_SIZE, MASTER_ADDR set), it joins the
launcher's group instead, so it spans nodes; rank 0's result is the report.

probe() records what a GPU engineer reads first: the NCCL version, the NCCL_* environment, the network and
interface NCCL chose (from its own INFO log), /dev/shm size and the memlock limit. judge() is pure.
"""
from __future__ import annotations

import glob
import multiprocessing as mp
import os
import re
import resource
import socket
import tempfile
import time
from typing import Any

from .. import baselines, gpuprobe, ncclog, rdma
from ..codes import Owner
from ..distgroup import init_group
from ..facts import NONE, UNLIMITED, NcclFacts, NcclLog, SizeRow
from ..figures import (
    BOOL,
    BYTES,
    COUNT,
    LIST,
    MICROSECONDS,
    NET_GBPS,
    NODES,
    OBJECT,
    RANKS,
    STR,
    Each,
    Either,
    Figure,
    Kind,
    Required,
    Rule,
    Unique,
    Unless,
)
from ..gpuhealth import Findings
from ..options import Options, human_bytes
from ..result import FAIL, PASS, SKIP, WARN, CheckResult

# The facts' `error` is "<phase>: <exception>" (FACTS.md): the phase is a field of that format, read by error_phase.
INIT, ALL_REDUCE = "init", "all_reduce"
GLOO_MAX_BYTES = 16 << 20
SHM_LOW = 512 << 20          # below this NCCL's shared-memory transport is likely starved
ADVICE = ("Rerun with NCCL_DEBUG=INFO to see the transport and where it stops; give the container "
          "--shm-size=2g or --ipc=host (NCCL uses /dev/shm); try NCCL_P2P_DISABLE=1 (broken peer-to-peer) "
          "or NCCL_IB_DISABLE=1; across nodes check NCCL_SOCKET_IFNAME and the firewall.")


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


def _init(backend: str, rank: int, world: int, init_method: str, timeout_s: float) -> None:
    init_group(backend, rank, world, init_method, timeout_s, "nccl")


def _device(backend: str, local_rank: int):
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
        _init(backend, rank, world, init_method, timeout_s)
        init_s = round(time.monotonic() - started, 3)
        import torch.distributed as dist
        phase = ALL_REDUCE
        rows = sweep(rank, world, _device(backend, rank), sizes)
        dist.destroy_process_group()
        queue.put((rank, rows, None, init_s))
    except Exception as exc:  # noqa: BLE001 - reported by the parent
        queue.put((rank, None, f"{phase}: {type(exc).__name__}: {exc}", None))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(backend: str, world: int, sizes: list[int], timeout_s: float) -> tuple[list | None, str | None, float | None]:
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


def _table(rows: list[SizeRow]) -> list[str]:
    lines = [f"{'size':>12} {'count':>10} {'type':>6} {'redop':>6} {'time(us)':>10} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12} {'#wrong':>7}"]
    lines += [f"{r['size']:>12} {r['count']:>10} {r['type']:>6} {r['redop']:>6} {r['time_us']:>10} {r['algbw']:>12} {r['busbw']:>12} {r['wrong']:>7}" for r in rows]
    return lines


def _launched_by_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def _nccl_log(directory: str) -> dict[str, Any]:
    """What NCCL's own INFO log says it chose (verify/ncclog.py): network per channel, HCAs, GDR, plugin, errors."""
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
    """The host's adapters, the container's uverbs nodes and whether libibverbs loads (verify/rdma.py): what decides
    who owns a fall-back to sockets, and what the links carry across nodes."""
    base = rdma.root()
    adapters = rdma.adapters(base)
    uverbs, _ = rdma.device_nodes(base)
    lib, _ = rdma.load("libibverbs.so.1")
    return {"infiniband": bool(adapters) or bool(uverbs), "efa": any(a.get("driver") == "efa" for a in adapters or []),
            "adapters": adapters, "uverbs": uverbs, "verbs_loads": lib is not None}


def _nodes() -> int | None:
    """Nodes of the group: WORLD_SIZE / LOCAL_WORLD_SIZE under torchrun, 1 without a launcher (local ranks);
    None (unknown) under a launcher that does not say its local world size."""
    if not _launched_by_torchrun():
        return 1
    world, local = os.environ.get("WORLD_SIZE", ""), os.environ.get("LOCAL_WORLD_SIZE", "")
    if world.isdecimal() and local.isdecimal() and int(local) > 0:
        return max(1, int(world) // int(local))
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
        found = gpuprobe.links(nvml, h)
        return gpuprobe.nvswitch(nvml, h, len(found)) if found else False
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
            _init(backend, rank, world, "env://", options.nccl_timeout_s)
            facts["init_s"] = round(time.monotonic() - started, 3)
            phase = ALL_REDUCE
            rows, error = sweep(rank, world, _device(backend, local_rank), sizes), None
            dist.destroy_process_group()
        except Exception as exc:  # noqa: BLE001
            rows, error = None, f"{phase}: {type(exc).__name__}: {exc}"
        facts["rank"] = rank
    else:
        world = gpus if nccl_ok else options.nccl_processes
        mode = f"{world} local process(es), one per {'GPU' if nccl_ok else 'CPU worker'}"
        rows, error, facts["init_s"] = _spawn(backend, world, sizes, options.nccl_timeout_s)
    facts.update(world_size=world, mode=mode, sizes=rows or [], error=error or NONE, nccl_log=_nccl_log(log_dir),
                 gloo_socket_ifname=os.environ.get("GLOO_SOCKET_IFNAME"))
    return facts


def error_phase(error: str) -> str | None:
    head, sep, _ = error.partition(": ")
    return head if sep and head in (INIT, ALL_REDUCE) else None


def is_timeout(error: str) -> bool:
    return bool(re.search(r"timed? ?out|timeout|watchdog", error, re.IGNORECASE))


def timeout_advice(facts: NcclFacts) -> str:
    """Advice for a hang, from what was seen: phase, world, network, /dev/shm, memlock."""
    error, world = facts.get("error") or "", facts.get("world_size") or 0
    log = facts.get("nccl_log") or {}
    tips = []
    if error_phase(error) == INIT:
        tips.append("The group never formed: check that every rank can reach MASTER_ADDR:MASTER_PORT, that all "
                    "ranks were started, and the firewall.")
    multi_node = "RANK" in (facts.get("mode") or "") or facts.get("rank") is not None
    if multi_node and log.get("network") in (None, "Socket") and not (facts.get("nccl_env") or {}).get("NCCL_SOCKET_IFNAME"):
        interface = log.get("interface")
        tips.append(f"NCCL chose {'interface ' + interface if interface else 'its interface itself'}: "
                    "set NCCL_SOCKET_IFNAME to the interface the nodes share.")
    shm = facts.get("shm_bytes")
    if shm is not None and shm < SHM_LOW and world > 1:
        tips.append(f"/dev/shm is only {human_bytes(shm)}: NCCL's shared-memory transport needs more "
                    "(--shm-size=2g or --ipc=host).")
    memlock = facts.get("memlock_bytes")
    if facts.get("infiniband") and isinstance(memlock, int) and memlock < (1 << 30):
        tips.append(f"memlock limit is {human_bytes(memlock)}: InfiniBand needs it unlimited "
                    "(`--ulimit memlock=-1`, or the pod's limits).")
    if not tips or facts.get("backend") == "nccl":
        tips.append("Rerun with NCCL_DEBUG=INFO to see where it stops; try NCCL_P2P_DISABLE=1 (broken peer-to-peer) "
                    "or NCCL_IB_DISABLE=1 to isolate the transport.")
    return " ".join(tips)


NVLS_FROM = (2, 17)           # NCCL 2.17 added NVLink SHARP (NVLS)
COLLAPSE_BELOW = 0.5          # busbw at the largest message below this x the peak: the fabric collapses under load
COLLAPSE_FROM = 64 << 20

ROW_KEYS = ("size", "count", "time_us", "algbw", "busbw", "wrong")
FIGURES: tuple[tuple[str, Rule], ...] = (
    ("sizes", LIST), ("sizes", Unique("size")), ("sizes[]", Required(ROW_KEYS)),
    ("sizes[].size", Figure("B", 1, 2 ** 50, integer=True)), ("sizes[].count", COUNT), ("sizes[].time_us", MICROSECONDS),
    ("sizes[].algbw", Unless("world_size", 1, NET_GBPS)), ("sizes[].busbw", NET_GBPS), ("sizes[].wrong", COUNT), ("world_size", RANKS),
    ("nodes", NODES), ("shm_bytes", BYTES), ("gpus", COUNT),
    ("memlock_bytes", Either(BYTES, Kind(str, (UNLIMITED,)))), ("timeout_s", Figure("s", 0, 86400, lo_open=True)),
    ("init_s", Figure("s", 0, 1e7)), ("nccl_log.transports", Each(STR)), ("gloo_socket_ifname", STR), ("nccl_env", OBJECT),
    ("nccl_log", OBJECT), ("rank", Figure("", 0, 1 << 24, integer=True)), ("backend", Kind(str, ("nccl", "gloo"))),
    ("distributed", BOOL), ("nccl_available", BOOL), ("infiniband", BOOL), ("efa", BOOL), ("nvswitch", BOOL),
    ("nccl_log.nvls", BOOL), ("nccl_log.network", STR), ("nccl_log.interface", STR), ("nccl_log.ib_error", STR),
    ("nccl_version", STR), ("device_name", STR), ("error", STR), ("mode", STR), ("verbs_loads", BOOL),
    ("adapters", LIST), ("adapters[]", OBJECT), ("adapters[].ports", LIST), ("adapters[].ports[]", OBJECT),
    ("adapters[].ports[].rate_gbps", Figure("Gb/s", 0, 10_000)), ("uverbs", LIST), ("nccl_log.networks", LIST),
    ("nccl_log.hcas", LIST), ("nccl_log.proof", LIST), ("nccl_log.net_channels", OBJECT),
    ("nccl_log.env", OBJECT), ("nccl_log.rank_networks", OBJECT),
)


def _version_at_least(text: Any, floor: tuple[int, int]) -> bool:
    parts = [int(p) for p in str(text or "").split(".")[:2] if p.isdecimal()]
    return len(parts) == 2 and (parts[0], parts[1]) >= floor


def nvls_expected(facts: NcclFacts) -> bool:
    """NVLS is NCCL's default all-reduce on one NVSwitch node from NCCL 2.17 (Hopper and later)."""
    return (facts.get("nvswitch") is True and _version_at_least(facts.get("nccl_version"), NVLS_FROM)
            and facts.get("nodes") == 1 and (facts.get("world_size") or 0) > 1)


def _busbw_baseline(facts: NcclFacts, use_nvls: bool) -> tuple[dict[str, Any] | None, str]:
    model = baselines.load().model(facts.get("device_name"))
    if model is None:
        return None, ""
    nodes = facts.get("nodes")
    if nodes is not None and nodes > 1:
        return model.internode, "inter-node"
    world = facts.get("world_size") or 0
    per_world = model.busbw.get(world) or {}
    key = "nvls" if use_nvls and "nvls" in per_world else "ring"
    if key not in per_world:
        return _nvswitch_ring(facts, model, world)
    return per_world.get(key), key if nodes is not None else f"one-node {key} (nodes not recorded)"


NVSWITCH_RANKS = range(2, 9)     # the GPUs of one NVSwitch node (HGX/DGX: up to 8)


def _nvswitch_ring(facts: NcclFacts, model: baselines.Model, world: int) -> tuple[dict[str, Any] | None, str]:
    """On one NVSwitch node every GPU drives all its NVLinks into the switches whatever the number of peers, so ring
    busbw (nccl-tests' rank-independent figure) is the same from 2 to 8 GPUs: H100 SXM rings 365-370 GB/s at every
    count (NVIDIA/nccl#1455), a DGX A100 gives 235 GB/s on 4 GPUs (tests/data/real-world) against the maintainer's
    230 GB/s on 8. The model's ring figure at another world size applies then; NVLS does not (it grows with ranks)."""
    if facts.get("nvswitch") is not True or facts.get("nodes") != 1 or world not in NVSWITCH_RANKS:
        return None, ""
    rings = {w: algos["ring"] for w, algos in model.busbw.items() if "ring" in algos and w in NVSWITCH_RANKS}
    if not rings:
        return None, ""
    size = max(rings)
    return rings[size], f"{size}-rank NVSwitch ring (rank-independent on one NVSwitch node)"


def _excludes(value: Any, wanted: set[str]) -> bool:
    """Whether an NCCL_ALGO / NCCL_PROTO value ("Ring,Tree", "^NVLS", "allreduce:tree;broadcast:ring") leaves the
    all-reduce none of `wanted`."""
    text = str(value or "").strip().lower()
    parts = [p.split(":", 1)[1] for p in text.split(";") if p.startswith("allreduce:")] if ":" in text else [text]
    if not parts or not parts[0]:
        return False
    names = {n.strip() for n in parts[0].lstrip("^").split(",")}
    return bool(wanted & names) if parts[0].startswith("^") else not wanted & names


def job_env(facts: NcclFacts) -> dict[str, str]:
    """The job's NCCL_* variables: as recorded, else as NCCL's log says it read them (`... set by environment to`)."""
    return {**((facts.get("nccl_log") or {}).get("env") or {}), **(facts.get("nccl_env") or {})}


def job_explains(facts: NcclFacts, algo: str) -> list[str]:
    """The job's own NCCL_* variables that explain a low busbw, each with what it does (NCCL's environment
    documentation): a figure measured with them is the job's transport, not what the host can give."""
    env, world, nodes = job_env(facts), facts.get("world_size"), facts.get("nodes")
    paired = nodes is None or not isinstance(world, int) or world > nodes      # some ranks share a node
    across = nodes is None or nodes > 1
    p2p_off = env.get("NCCL_P2P_DISABLE") == "1" or str(env.get("NCCL_P2P_LEVEL", "")).upper() in ("LOC", "0")
    found = []
    if paired and p2p_off:
        found += [f"{k}={env[k]} turns off peer-to-peer (NVLink/PCIe) between the node's GPUs"
                  for k in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL") if k in env]
    if paired and env.get("NCCL_SHM_DISABLE") == "1" and (p2p_off or facts.get("nvswitch") is not True):
        found.append("NCCL_SHM_DISABLE=1 turns off shared memory, so GPUs without peer-to-peer go through the network")
    if across and str(env.get("NCCL_NET", "")).lower() == "socket":
        found.append(f"NCCL_NET={env['NCCL_NET']} forces TCP sockets between the nodes")
    if across and env.get("NCCL_IB_DISABLE") == "1" and facts.get("infiniband") is not False:
        found.append("NCCL_IB_DISABLE=1 turns off InfiniBand/RoCE between the nodes")
    wanted = {"ring", "tree"} if algo == "inter-node" else {"nvls" if "nvls" in algo else "ring"}
    if _excludes(env.get("NCCL_ALGO"), wanted):
        found.append(f"NCCL_ALGO={env['NCCL_ALGO']} forces an algorithm other than the {'/'.join(sorted(wanted))} "
                     "the baseline measures")
    if _excludes(env.get("NCCL_PROTO"), {"simple"}):
        found.append(f"NCCL_PROTO={env['NCCL_PROTO']} excludes Simple, the protocol that carries large messages at "
                     "full bandwidth")
    return found


def _owner_of_low(facts: NcclFacts, algo: str, host_remedy: str) -> tuple[str, str, Owner]:
    """(why, remedy, owner) of a low busbw: the job's where its own variables explain it, else the host's."""
    explained = job_explains(facts, algo)
    if not explained:
        return "", host_remedy, "host"
    names = ", ".join(dict.fromkeys(e.split("=", 1)[0] for e in explained))
    return (f"; the job's own settings explain it: {'; '.join(explained)}",
            f"Unset {names} in the job and rerun: the figure measures the transport these variables force, not "
            "what the node gives; if it stays low without them, the host is at fault.", "job")


def _unknown_nodes(facts: NcclFacts, peak: float, verdict: str) -> str:
    """Nodes unknown, judged against the one-node baseline: a low figure fails only where it is also below the
    inter-node floor (low however the ranks were spread); otherwise it warns."""
    if facts.get("nodes") is not None or verdict != FAIL:
        return verdict
    model = baselines.load().model(facts.get("device_name"))
    inter = model.internode if model else None
    return FAIL if inter and baselines.judge_ratio(peak, float(inter["value"]))[0] == FAIL else WARN


def _quoted(log: NcclLog) -> str:
    lines = log.get("proof") or []
    return (": NCCL logged " + " | ".join(f"`{line}`" for line in lines[:4])) if lines else ""


def _efa_cause(facts: NcclFacts, log: NcclLog) -> tuple[Owner, str] | None:
    """On EFA the net plugin is the way to the fabric: missing, it is the image's; found but on provider tcp, the
    container's devices (job) or the image's libfabric."""
    if log.get("plugin_missing") or not (log.get("plugin_loaded") or log.get("ofi_provider")):
        return "image", "no aws-ofi-nccl net plugin (libnccl-net.so) in the image" + _quoted(log)
    if log.get("ofi_provider") not in (None, "efa"):
        if facts.get("uverbs"):
            return "image", f"aws-ofi-nccl chose provider {log.get('ofi_provider')}, not efa, although the container " \
                            "has /dev/infiniband: the image's libfabric has no usable efa provider" + _quoted(log)
        given = "has no /dev/infiniband" if facts.get("uverbs") == [] else "was not shown to have /dev/infiniband"
        return "job", f"aws-ofi-nccl chose provider {log.get('ofi_provider')}, not efa: the container {given} " \
                      "(`--device /dev/infiniband/uverbs0 ...`)" + _quoted(log)
    return None


def _fallback_cause(facts: NcclFacts, log: NcclLog) -> tuple[Owner, str]:
    """Who owns NCCL's fall-back to sockets: the job's variables, the image's userspace, the job's devices, or
    (only when verbs load and the devices are there) the host."""
    env = job_env(facts)
    if env.get("NCCL_IB_DISABLE") == "1" or str(env.get("NCCL_NET", "")).lower() == "socket":
        return "job", "the job disabled it (" + ", ".join(f"{k}={env[k]}" for k in ("NCCL_IB_DISABLE", "NCCL_NET")
                                                           if k in env) + ")"
    hca, names = env.get("NCCL_IB_HCA"), [str(a.get("name")) for a in facts.get("adapters") or []]
    if hca and names and not rdma.hca_matches(str(hca), names):
        return "job", f"NCCL_IB_HCA={hca} matches none of the adapters ({', '.join(names)})"
    # on EFA the plugin comes first, verbs after; aws-ofi-nccl's own provider line shows the node is meant for EFA
    efa = _efa_cause(facts, log) if facts.get("efa") or log.get("ofi_provider") else None
    if efa:
        return efa
    if log.get("verbs_missing") or facts.get("verbs_loads") is False:
        return "image", "the image lacks libibverbs (install libibverbs1, ibverbs-providers)" + _quoted(log)
    if facts.get("uverbs") == []:
        return "job", "the container was given no /dev/infiniband (`--device /dev/infiniband`)" + _quoted(log)
    ports = [p for a in facts.get("adapters") or [] for p in a.get("ports") or []]
    if ports and not any(str(p.get("state") or "").upper().endswith("ACTIVE") for p in ports):
        # src/transport/net_ib.cc (v2.24.3-1 l.605) skips ports not IBV_PORT_ACTIVE: all down reads "No device found"
        return "host", f"none of the host's {len(ports)} RDMA port(s) is ACTIVE" + _quoted(log)
    if log.get("ib_no_device") and facts.get("uverbs"):
        return "image", f"the container has {', '.join(facts.get('uverbs') or [])} but NCCL found no IB device: the " \
                        "image lacks the adapter's verbs provider (ibverbs-providers)" + _quoted(log)
    if log.get("ib_no_device"):
        # libibverbs loaded (no "Failed to open" line) yet lists no device beside a host with adapters: most often
        # the container was not given /dev/infiniband; a missing provider is the other cause (`--checks fabric`).
        return "job", "libibverbs loaded but NCCL found no IB device: the container was not shown to have " \
                      "/dev/infiniband (or the image lacks the adapter's provider; `--checks fabric` tells)" + _quoted(log)
    return "host", ("libibverbs loads and the container has the devices, yet NCCL chose sockets"
                    if facts.get("verbs_loads") and facts.get("uverbs") else "NCCL did not find a usable HCA") + _quoted(log)


def _fell_back(log: NcclLog) -> str | None:
    """`Socket` when any rank chose it; `Libfabric over <provider>` when aws-ofi-nccl runs on a provider not efa."""
    if "Socket" in (log.get("networks") or [log.get("network") or ""]) or "Socket" in (log.get("net_channels") or {}):
        return "NET/Socket"             # the choice, or (no `Using network` line) the connections themselves
    if log.get("ofi_provider") not in (None, "efa"):
        return f"{log.get('network') or 'Libfabric'} over provider {log['ofi_provider']} (TCP)"
    return None


def gdr_summary(log: NcclLog) -> tuple[int, int]:
    """(connections over NCCL's IB transport or the HPC-X IBext plugin, how many of them carry /GDRDMA)."""
    rows = [row for name, row in (log.get("net_channels") or {}).items() if _verbs_net(name)]
    return sum(int(r.get("connections") or 0) for r in rows), sum(int(r.get("gdr") or 0) for r in rows)


def _verbs_net(name: str) -> bool:
    """NCCL's internal IB transport ("IB") or the verbs plugins named after it ("IBext", "IBext_v8")."""
    return name == "IB" or name.startswith("IBext")


GDR_OFF_LEVELS = ("LOC", "0")


def _gdr_unused(facts: NcclFacts, found: Findings) -> None:
    """NCCL over IB/RoCE with not one connection on GPUDirect RDMA: every byte is staged through host memory
    (NVIDIA/nccl#1412: enabling it took 33 to 93 GB/s). One GPU far from every NIC can explain it: a warning."""
    log: NcclLog = facts.get("nccl_log") or {}
    connections, gdr = gdr_summary(log)
    hcas = log.get("hca_gdr") or {}
    if hcas and not any(hcas.values()) and any(_verbs_net(n) for n in (log.get("networks") or [log.get("network") or ""])):
        why = f"NCCL found GPUDirect RDMA disabled for every HCA ({', '.join(sorted(hcas))})"
    elif connections and not gdr:
        why = f"none of NCCL's {connections} IB/RoCE connection(s) used GPUDirect RDMA (no /GDRDMA on any `via NET/IB` line)"
    else:
        return
    level = str(job_env(facts).get("NCCL_NET_GDR_LEVEL", "")).upper()
    if level in GDR_OFF_LEVELS:      # NCCL's environment documentation: LOC (0) never uses GPUDirect RDMA
        found.add(WARN, "FABRIC_GDR_OFF", f"{why}: the job's NCCL_NET_GDR_LEVEL={level} turns it off",
                  "Unset NCCL_NET_GDR_LEVEL (or set it to PHB/SYS) in the job.", "job")
        return
    found.add(WARN, "FABRIC_GDR_OFF", why, "Load nvidia_peermem on the host (or use dma-buf: open GPU kernel module, "
              "kernel 5.12+), check ACS is off on bare metal and NCCL_NET_GDR_LEVEL; `--checks fabric` says which is "
              "missing.", "host")


# IPoIB netdevs are named ib<N> or, by systemd's predictable names, ibo<index>, ibs<slot>[f<fn>], ibp<bus>s<slot>
# (ibs85f0, ibp12s0): an InfiniBand adapter
IPOIB = re.compile(r"^ib(?:\d+|[ops]\d+)")
IPOIB_SHOWN = "InfiniBand (NCCL's interface is IPoIB)"


def rdma_shown(facts: NcclFacts, log: NcclLog) -> str | None:
    """Which RDMA fabric the facts or NCCL's own log show on this node (or cluster), or None when neither does: an
    adapter NCCL listed, a rank on a verbs network, or aws-ofi-nccl on provider efa."""
    if facts.get("efa") or log.get("ofi_provider") == "efa":
        return "EFA"
    used = [n for n in log.get("networks") or [] if _verbs_net(n)]
    if facts.get("infiniband") or log.get("hcas") or used or gdr_summary(log)[0]:
        return "InfiniBand/RoCE"
    if IPOIB.match(str(log.get("interface") or "")):
        return IPOIB_SHOWN
    return None


FALLBACK_REMEDY = ("Check the HCAs (`ibstat`), that the container gets /dev/infiniband and libibverbs (the aws-ofi-nccl "
                   "plugin for EFA), and that NCCL_IB_DISABLE / NCCL_NET do not force sockets; `--checks fabric` names "
                   "the missing piece.")


def _net_fallback(facts: NcclFacts, found: Findings) -> None:
    """IB/EFA present but NCCL's network is Socket (or OFI over tcp): across nodes that is 10-100x slower. Where the
    node's adapters are unknown, the log's own reason (no verbs, no device, a disabled transport, no plugin) warns,
    owned by that reason: on a node without adapters sockets are right."""
    log: NcclLog = facts.get("nccl_log") or {}
    used = _fell_back(log)
    kind = rdma_shown(facts, log)
    if not used or (kind is None and (facts.get("infiniband") is False or facts.get("efa") is False)):
        return
    owner, why = _fallback_cause(facts, log)
    if owner == "host" and kind == IPOIB_SHOWN:
        # an IPoIB interface proves InfiniBand for a cause the log itself shows (the job's, the image's); never on
        # its own against the host: an excerpt may leave the reason out (no false drain)
        kind = None
    env = job_env(facts)
    disabled = env.get("NCCL_IB_DISABLE") == "1" or str(env.get("NCCL_NET", "")).lower() == "socket"
    code = "FABRIC_NCCL_FORCED_SOCKET" if disabled else "NCCL_NET_FALLBACK"    # the job's variables did it
    if kind is None:
        if owner != "host":
            found.add(WARN, code, f"NCCL used {used}: {why}; whether this node has InfiniBand or EFA "
                      "adapters was not recorded (without them sockets are expected)", FALLBACK_REMEDY, owner)
        return
    nodes = facts.get("nodes")
    status = WARN if nodes == 1 else FAIL
    found.add(status, code, f"{kind} devices are present but NCCL used {used}"
              f"{' across ' + str(nodes) + ' nodes' if nodes and nodes > 1 else ''} "
              f"(interface {log.get('interface') or '?'}): {why}", FALLBACK_REMEDY, owner)


MEMLOCK_RDMA = 1 << 30      # NCCL registers GiB of buffers per rank (the fabric check's MEMLOCK_FAIL)


def _memlock(facts: NcclFacts, found: Findings) -> None:
    """A memlock limit below what RDMA registration needs, where the fabric is in use (or NCCL's log shows it)."""
    limit = facts.get("memlock_bytes")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit >= MEMLOCK_RDMA:
        return
    if rdma_shown(facts, facts.get("nccl_log") or {}) is None and not facts.get("uverbs"):
        return
    found.add(FAIL, "FABRIC_MEMLOCK_LOW", f"memlock limit is {human_bytes(limit)} in the container while RDMA is in "
              "use: registering NCCL's buffers fails below about 1 GiB", "Run the container with `--ulimit "
              "memlock=-1` (Slurm: PropagateResourceLimits; Kubernetes: the runtime's default ulimits).", "job")


def _not_passed(facts: NcclFacts, found: Findings) -> None:
    """The node has InfiniBand or EFA but the container was given no /dev/infiniband: NCCL cannot reach the fabric
    whatever the image holds (aws-ofi-nccl's `fi_getinfo() ... No data available`, verbs listing no device)."""
    if facts.get("uverbs") != [] or any(f.code in ("NCCL_NET_FALLBACK", "FABRIC_NCCL_FORCED_SOCKET") for f in found.items):
        return
    kind = rdma_shown(facts, facts.get("nccl_log") or {}) or ("RDMA" if facts.get("adapters") else None)
    if kind is None:
        return
    found.add(WARN if facts.get("nodes") == 1 else FAIL, "FABRIC_NOT_PASSED", f"the node has {kind} but the container "
              "was given no /dev/infiniband/uverbs*: NCCL cannot use the fabric" + _quoted(facts.get("nccl_log") or {}),
              "Start the container with the devices: `--device /dev/infiniband` (EFA: every /dev/infiniband/uverbs*), "
              "`--ulimit memlock=-1`; Kubernetes: the RDMA/EFA device plugin's resource.", "job")


BOOTSTRAP = re.compile(r"bootstrap|socket\.cc", re.IGNORECASE)


def _bootstrap_owner(facts: NcclFacts, error: str) -> tuple[str, str] | None:
    """An init that died in NCCL's bootstrap (TCP between the ranks) with no NCCL_SOCKET_IFNAME: NCCL picked the
    interface itself (often IPoIB or a docker bridge the nodes do not share); the job names the right one."""
    if error_phase(error) != INIT or not BOOTSTRAP.search(error) or job_env(facts).get("NCCL_SOCKET_IFNAME"):
        return None
    return ("; the bootstrap (TCP between the ranks) failed on an interface NCCL chose itself: NCCL_SOCKET_IFNAME "
            "is not set", "Set NCCL_SOCKET_IFNAME in the job to the interface every node shares (the Ethernet NIC, "
            "not IPoIB or a docker bridge); check the firewall between the nodes.")


def _describe(facts: NcclFacts, result: CheckResult) -> None:
    env = facts.get("nccl_env") or {}
    log = facts.get("nccl_log") or {}
    if facts.get("nccl_version"):
        result.details.append(f"NCCL {facts['nccl_version']}")
    shm, memlock = facts.get("shm_bytes"), facts.get("memlock_bytes")
    result.details.append("environment: " + (" ".join(f"{k}={v}" for k, v in env.items()) or "no NCCL_* variables")
                          + f"; /dev/shm {human_bytes(shm) if shm is not None else '?'}"
                          + f"; memlock {memlock if memlock in (None, UNLIMITED) else human_bytes(int(memlock))}")
    if log:
        result.details.append(f"NCCL chose network {log.get('network') or '?'}, interface {log.get('interface') or '?'}"
                              + (", NVLS" if log.get("nvls") else "")
                              + (f", transports {' '.join(log.get('transports') or [])}" if log.get("transports") else "")
                              + "".join(f"; NET/{name} {row.get('connections')} connection(s), {row.get('gdr')} with GDR"
                                        for name, row in (log.get("net_channels") or {}).items())
                              + (f"; HCAs {' '.join(log.get('hcas') or [])}" if log.get("hcas") else ""))
    elif facts.get("backend") == "gloo":
        result.details.append(f"gloo interface {facts.get('gloo_socket_ifname') or 'default'}")
    if facts.get("rank") is not None:
        result.data.update(rank=facts["rank"])
    result.data.update(backend=facts.get("backend"), world_size=facts.get("world_size"), mode=facts.get("mode"),
                       sizes=facts.get("sizes") or [])
    result.metric("world_size", facts.get("world_size") or 0, "ranks")
    result.details.append(f"backend {facts.get('backend')}, world size {facts.get('world_size')}: {facts.get('mode')}")


def _figures(facts: NcclFacts, rows: list[SizeRow], verified: str, result: CheckResult,
             found: Findings) -> str:
    """Peak busbw against the baseline (NVLS where it is expected), the NVLS choice, and a collapse at size."""
    peak_row = max(rows, key=lambda r: r["busbw"])
    peak = peak_row["busbw"]
    summary = f"{verified}; peak busbw {peak:.1f} GB/s"
    log = facts.get("nccl_log") or {}
    expected = nvls_expected(facts)
    if expected and log.get("nvls") is False:
        env = facts.get("nccl_env") or {}
        off = env.get("NCCL_NVLS_ENABLE") == "0" or ("NCCL_ALGO" in env and "nvls" not in str(env["NCCL_ALGO"]).lower())
        found.add(WARN, "NVLS_NOT_USED", f"NVLS (NVLink SHARP) is expected on this NVSwitch node with NCCL "
                  f"{facts.get('nccl_version')} but was not used" + (" (the job's NCCL_* settings exclude it)" if off else ""),
                  "Check the fabric manager and multicast support (`nvidia-smi -q | grep -i -A2 fabric`), and that "
                  "NCCL_NVLS_ENABLE / NCCL_ALGO do not exclude NVLS.", "job" if off else "host")
    last = rows[-1]
    if last["size"] >= COLLAPSE_FROM and last is not peak_row and last["busbw"] < COLLAPSE_BELOW * peak:
        found.add(FAIL, "BANDWIDTH_LOW", f"busbw collapses at large messages: {last['busbw']:.1f} GB/s at "
                  f"{human_bytes(last['size'])} against a peak of {peak:.1f} GB/s at {human_bytes(peak_row['size'])}",
                  "A fabric that slows under load: check the links and switches (`ibstat`, counters of errors and "
                  "congestion), PFC/ECN on RoCE, and rerun with NCCL_DEBUG=INFO.", "host")
    _against_links(facts, peak, result, found)
    env = facts.get("nccl_env") or {}
    excluded = _excludes(env.get("NCCL_ALGO"), {"nvls"}) or env.get("NCCL_NVLS_ENABLE") == "0"
    baseline, algo = _busbw_baseline(facts, (bool(log.get("nvls")) or expected) and not excluded)
    if baseline is None:
        missing = (f"no busbw baseline for {facts.get('device_name')} at world size {facts.get('world_size')}"
                   f"{' across ' + str(facts['nodes']) + ' nodes' if (facts.get('nodes') or 1) > 1 else ''}")
        result.details.append(f"{missing} in verify/baselines.json: bandwidth not assessed")
        return f"{summary}; bandwidth not assessed ({missing})"
    verdict, ratio = baselines.judge_ratio(peak, float(baseline["value"]))
    verdict = _unknown_nodes(facts, peak, verdict)
    result.metric("busbw_ratio", ratio, "x")
    result.details.append(f"peak busbw {peak:.1f} GB/s = {ratio:.2f}x the {algo} baseline {baseline['value']} GB/s "
                          f"({baseline['source']})")
    if verdict != PASS:
        why, remedy, owner = _owner_of_low(facts, algo, "Compare with another node; check NVLink state (gpu check), "
                                           "NCCL_ALGO/NCCL_PROTO overrides, and rerun with NCCL_DEBUG=INFO for the "
                                           "transport chosen.")
        found.add(WARN if verdict == WARN else FAIL, "BANDWIDTH_LOW", f"{verified}; peak busbw {peak:.1f} GB/s is "
                  f"{ratio:.2f}x the {algo} baseline {baseline['value']} GB/s{why}", remedy, owner)
    return f"{summary} = {ratio:.2f}x the {algo} baseline"


LINKS_WARN, LINKS_FAIL = 0.5, 0.25      # busbw / what the node's links carry


def _local_ranks(facts: NcclFacts) -> int | None:
    world, nodes = facts.get("world_size"), facts.get("nodes")
    if isinstance(world, int) and isinstance(nodes, int) and nodes > 0 and world >= nodes:
        return world // nodes
    return facts.get("gpus") or None


def link_capacity(facts: NcclFacts) -> tuple[float, str] | None:
    """What one node's RDMA links carry for this all-reduce (GB/s) and where the figure comes from.

    The active ports NCCL listed (`NET/IB : Using`), else every active port, their rates from
    /sys/class/infiniband/*/ports/*/rate; a node's ranks drive at most one port's rate each (rail-optimised: one NIC
    per GPU, and a GPU's PCIe x16 link is about one NIC's rate), so 1 GPU beside 4 NICs expects one NIC
    (NVIDIA/nccl-tests#232). Ring busbw across nodes reaches about this: a DGX A100's 8x200 Gb/s gives 192 GB/s
    (AddyLaddy, NVIDIA/nccl#812, quoted in #1576)."""
    listed = {h.split("/")[0] for h in (facts.get("nccl_log") or {}).get("hcas") or []}
    ports = [(a.get("name"), p) for a in facts.get("adapters") or [] for p in a.get("ports") or []
             if str(p.get("state") or "").upper() == "ACTIVE" and p.get("rate_gbps")]
    used = [(n, p) for n, p in ports if f"{n}:{p.get('port')}" in listed] or ports
    if not used:
        return None
    each_rate = sorted((float(p.get("rate_gbps") or 0.0) for _, p in used), reverse=True)
    ranks = _local_ranks(facts)
    driven = each_rate[:ranks] if ranks else each_rate
    gbps = sum(driven)
    rates = sorted(set(each_rate))
    each = f"{rates[0]:g} Gb/s" if len(rates) == 1 else "/".join(f"{r:g}" for r in rates) + " Gb/s"
    which = "listed by NCCL (NET/IB : Using)" if len(used) < len(ports) or listed else "active"
    capped = f", {len(driven)} driven by {ranks} rank(s) per node" if len(driven) < len(each_rate) else ""
    return gbps / 8, (f"{len(used)} {which} port(s) x {each}{capped} = {gbps:g} Gb/s per node "
                      "(/sys/class/infiniband/*/ports/*/rate)")


def _against_links(facts: NcclFacts, peak: float, result: CheckResult, found: Findings) -> None:
    """Item 6: across nodes an all-reduce's busbw approaches what each node's links carry (nccl-tests' busbw is the
    per-rank figure that ring all-reduce drives through the NICs); far below it, the fabric is not delivering."""
    capacity = link_capacity(facts) if (facts.get("nodes") or 1) > 1 else None
    if capacity is None:
        return
    expected, source = capacity
    ratio = peak / expected if expected else 0.0
    result.metric("busbw_vs_links", ratio, "x")
    result.details.append(f"peak busbw {peak:.1f} GB/s = {ratio:.2f}x the {expected:.1f} GB/s the links carry: {source}")
    if ratio < LINKS_WARN:
        why, remedy, owner = _owner_of_low(facts, "inter-node", "Read the network NCCL used (NET/IB, NET/Socket) and GDR "
                                           "in the details; check the links (`ibstat`), NCCL_IB_HCA and `ib_write_bw` "
                                           "between the nodes.")
        found.add(FAIL if ratio < LINKS_FAIL else WARN, "FABRIC_BANDWIDTH_LOW",
                  f"across {facts.get('nodes')} nodes peak busbw {peak:.1f} GB/s is {ratio:.2f}x the {expected:.1f} GB/s "
                  f"the node's links carry ({source}){why}", remedy, owner)


def _inconsistent(rows: list[SizeRow], world: Any) -> str | None:
    """nccl-tests' own arithmetic: algbw = size / time, busbw = algbw x 2(n-1)/n (10% and rounding allowed)."""
    if not isinstance(world, int):
        return f"world size {world!r} with {len(rows)} measured size(s)"
    factor = bus_factor(world)
    for r in rows:
        algbw = r["size"] / (r["time_us"] * 1e-6) / 1e9
        if abs(r["algbw"] - algbw) > 0.1 * algbw + 0.05:
            return f"{human_bytes(r['size'])} in {r['time_us']} us is {algbw:.2f} GB/s, the row says algbw {r['algbw']}"
        if abs(r["busbw"] - r["algbw"] * factor) > 0.1 * r["algbw"] * factor + 0.05:
            return (f"busbw {r['busbw']} at {human_bytes(r['size'])} is not algbw {r['algbw']} x {factor:.3f} "
                    f"(2(n-1)/n at world size {world})")
    if world > 1 and max(r["busbw"] for r in rows) <= 0:
        return f"no bus bandwidth at all across {world} ranks"
    return None


LOCAL_MODE = re.compile(r"^(\d+) local process")     # the probe's own `mode` for ranks it spawned on this node


def group_contradiction(facts: NcclFacts) -> str | None:
    """How the group was laid out, where its facts cannot all be true (naming the two fields): more nodes than
    ranks; and ranks the probe spawned itself (`mode` "N local process(es)": no launcher, one process per GPU of this
    node) said to span several nodes, to number other than N, to carry a launcher's rank, or, over NCCL, to number
    other than the node's GPUs (NCCL runs one rank per GPU)."""
    world, nodes, gpus = facts.get("world_size"), facts.get("nodes"), facts.get("gpus")
    if isinstance(nodes, int) and isinstance(world, int) and nodes > world:
        return f"nodes {nodes} > world_size {world} (every node runs at least one rank)"
    local = LOCAL_MODE.match(str(facts.get("mode") or ""))
    if not local:
        return None
    mode = f"mode {facts.get('mode')!r}"[:80]
    if isinstance(nodes, int) and nodes != 1:
        return f"{mode} (ranks spawned on this one node) but nodes {nodes}"
    if isinstance(world, int) and int(local[1]) != world:
        return f"{mode} but world_size {world}"
    if facts.get("rank") is not None:
        return f"{mode} (no launcher) but rank {facts.get('rank')} (recorded under torchrun only)"
    if facts.get("backend") == "nccl" and isinstance(gpus, int) and isinstance(world, int) and world != gpus:
        return f"{mode} over NCCL (one process per GPU) but gpus {gpus}"
    return None


def _log_said(facts: NcclFacts) -> str | None:
    """What NCCL's log alone shows when it proves the fabric in use; None when it proves nothing (sockets on a node
    whose adapters are unknown, or no network line at all)."""
    log: NcclLog = facts.get("nccl_log") or {}
    kind = rdma_shown(facts, log)
    if not (log.get("networks") or gdr_summary(log)[0] or log.get("hcas")) or kind is None:
        return None
    connections, gdr = gdr_summary(log)
    ranks = log.get("rank_networks") or {}
    said = [f"NCCL's log: network {', '.join(log.get('networks') or [])}" + (f" on {len(ranks)} rank(s)" if ranks else "")
            if log.get("networks") else f"NCCL's log lists RDMA device(s) {', '.join(log.get('hcas') or [])}"]
    if connections:
        said.append(f"{connections} IB/RoCE connection(s), {gdr} with GPUDirect RDMA")
    return "; ".join(said + ["no collective recorded: bandwidth not assessed"])


CAUSES = ("NCCL_NET_FALLBACK", "FABRIC_NCCL_FORCED_SOCKET", "FABRIC_NOT_PASSED")


def _failed(facts: NcclFacts, error: str, found: Findings, result: CheckResult) -> CheckResult:
    """A collective that failed or hung: where NCCL's log shows why it left the fabric, that cause owns it."""
    backend = facts.get("backend")
    cause = next((f for f in found.items if f.owner != "host" and f.code in CAUSES), None)
    shown = f"; NCCL's log shows the cause: {cause.text}" if cause else ""
    owner = cause.owner if cause else None
    rails = rdma.mixed_rails(facts.get("adapters"), roce=True) if not cause and not job_env(facts).get("NCCL_IB_HCA") else None
    if rails and is_timeout(error):
        return result.verdict(FAIL, "NCCL_TIMEOUT", f"all-reduce over {backend} hung: {error}; the node has "
                              f"RDMA rails ({', '.join(rails)}) beside adapters of another rate or link layer and the "
                              "job sets no NCCL_IB_HCA: NCCL pairs devices that do not reach each other",
                              f"Set NCCL_IB_HCA to the rails (`NCCL_IB_HCA={','.join(rails)}`). "
                              + timeout_advice(facts), "job")
    bootstrap = _bootstrap_owner(facts, error) if not cause else None
    if bootstrap:
        return result.verdict(FAIL, "NCCL_FAILED", f"all-reduce over {backend} failed: {error}{bootstrap[0]}",
                              bootstrap[1], "job")
    if is_timeout(error):
        remedy = timeout_advice(facts)
        return result.verdict(FAIL, "NCCL_TIMEOUT", f"all-reduce over {backend} hung: {error}{shown}",
                              f"{cause.remedy} {remedy}" if cause else remedy, owner)
    return result.verdict(FAIL, "NCCL_FAILED", f"all-reduce over {backend} failed: {error}{shown}",
                          f"{cause.remedy} {ADVICE}" if cause else ADVICE, owner)


def judge(facts: NcclFacts, options: Options) -> CheckResult:
    result = CheckResult("nccl", PASS, "")
    if facts.get("distributed") is False:
        return result.verdict(FAIL, "DISTRIBUTED_UNAVAILABLE", "torch.distributed is not available in this build",
                              "Use an official torch wheel (built with distributed support).")
    backend, world, rows = facts.get("backend"), facts.get("world_size"), facts.get("sizes")
    _describe(facts, result)
    found = Findings()
    _net_fallback(facts, found)
    _not_passed(facts, found)
    _memlock(facts, found)
    _gdr_unused(facts, found)
    error = facts.get("error") if facts.get("error") != NONE else None
    contradiction = group_contradiction(facts)
    if contradiction:
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the facts contradict each other: {contradiction}",
                              "Record the check again.")
    if rows is None and not error:
        said = _log_said(facts)
        if found.items or said:
            return found.apply(result, said or "")
        return result.not_judged("no collective was recorded and NCCL's log (if any) shows no network choice: "
                                 "nothing to judge", "Record the check with `python -m verify --checks nccl "
                                 "--save-facts DIR`, or give NCCL's INFO log (NCCL_DEBUG=INFO).")
    if error or not rows:
        return _failed(facts, error or "no result", found, result)
    rows = sorted(rows, key=lambda r: r["size"])
    inconsistent = _inconsistent(rows, world)
    if inconsistent:
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the collective's figures contradict each other: {inconsistent}",
                              "Rerun the check; figures that do not add up are no measurement.")
    wrong = sum(r["wrong"] for r in rows)
    result.details += _table(rows)
    result.metric("wrong", wrong, "elements")
    if world != 1:           # one rank moves nothing: its "algbw" is size over a kernel launch, no bandwidth
        result.metric("busbw_max", max(r["busbw"] for r in rows), "GB/s")
        result.metric("algbw_max", max(r["algbw"] for r in rows), "GB/s")
    lo, hi = rows[0]["size"], rows[-1]["size"]
    span = f"{lo >> 20}-{hi >> 20} MiB" if lo >= 1 << 20 else f"{human_bytes(lo)}-{human_bytes(hi)}"
    verified = f"all-reduce verified over {backend}, world size {world}, {len(rows)} sizes {span}"
    if wrong:
        return result.verdict(FAIL, "NCCL_WRONG_RESULT", f"all-reduce over {backend} returned {wrong} wrong element(s)",
                              "Rerun with NCCL_P2P_DISABLE=1, then NCCL_IB_DISABLE=1, to find the broken transport; "
                              "drain the node. " + ADVICE)
    if world == 1:
        init = facts.get("init_s")
        return result.verdict(SKIP, "NCCL_SINGLE_RANK", f"{backend} initialised"
                              f"{f' in {init:g} s' if isinstance(init, (int, float)) else ''} and the all-reduce on "
                              f"1 rank returned the right values over {len(rows)} sizes {span}; nothing crossed a link, "
                              "so no bandwidth was measured (busbw is 0 at world size 1)")
    if backend != "nccl":
        gpus = facts.get("gpus") or 0
        no_gpu = "no GPU visible" if gpus == 0 else "NCCL is not available in this torch build"
        status = FAIL if options.expect_gpus > 0 else SKIP
        return result.verdict(status, "NCCL_NOT_EXERCISED" if gpus == 0 else "DISTRIBUTED_UNAVAILABLE",
                              f"{no_gpu}: NCCL not exercised; {verified}",
                              "Run on a GPU node (`docker run --gpus all`); the gpu check says why none is visible.",
                              "job" if gpus == 0 else "image")
    return found.apply(result, _figures(facts, rows, verified, result, found))
