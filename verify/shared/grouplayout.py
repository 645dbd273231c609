"""How a distributed group was laid out, where its recorded facts cannot all be true: one rule for the nccl and the
train checks (FACTS.md, "Facts that contradict each other"), naming the two fields.

- more nodes than ranks (every node runs at least one);
- a run over NCCL (a GPU run) with `gpus` 0 or a `device_name` that names no GPU (`none`, `unknown`, ...): a
  rate or a pass would otherwise be judged against no GPU at all;
- ranks the probe spawned itself (`mode` "N local process(es)": no launcher, one process per GPU of this node)
  said to span several nodes, to number other than N, to carry a launcher's rank, a local rank of N or more, or,
  over NCCL, to number other than the node's GPUs (NCCL runs one rank per GPU: two on one is "Duplicate GPU");
- a `rank` of `world_size` or more, or verify's torchrun `mode` (`rank R of W`) naming another rank or world;
- a backend the probes would not have run: NCCL without `nccl_available`, gloo on GPUs with NCCL available, a
  train `config.device_class` "gpu" over gloo (or another over NCCL);
- over NCCL, more ranks than `nodes` x `gpus` (each rank drives cuda:<local rank> of its node; `nodes` is the
  probe's ceil(world / local world), so a group of unlike nodes is within it too);
- a whole group (every rank answered) whose local ranks on a node are not its launchers' 0..n-1 (torchrun, mpirun
  and srun number each launcher's processes from 0: a node with local ranks {0, 2} or {3} lost a rank no record
  shows), or, over NCCL, whose one launcher on rank 0's node ran a local rank past the `gpus` it saw (cuda:9 of 8).
Pure.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, TypeGuard

# the probes' own `mode` for ranks they spawned on this node, however a record respells it (" 8 Local  processes"):
# a near miss of the wording is no launcher's either, and slipped a multi-node claim past every rule below
LOCAL_MODE = re.compile(r"^\s*(\d+)\s+local\s+process", re.IGNORECASE)
NOT_A_NAME = frozenset({"", "none", "null", "unknown", "n/a", "na", "cpu"})


def _int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def contradiction(facts: Any) -> str | None:
    if not isinstance(facts, dict):
        return None
    world, nodes, gpus = facts.get("world_size"), facts.get("nodes"), facts.get("gpus")
    if _int(nodes) and _int(world) and nodes > world:
        return f"nodes {nodes} > world_size {world} (every node runs at least one rank)"
    if facts.get("backend") == "nccl":
        name = facts.get("device_name")
        if isinstance(name, str) and name.strip().lower() in NOT_A_NAME:
            return f"backend is nccl (a GPU run), but device_name is {name!r}, no GPU's name"
        if gpus == 0:
            return "backend is nccl (a GPU run), but gpus is 0"
    return _local(facts) or _beyond_gpus(facts) or _launcher(facts) or _backend(facts) or _local_ranks(facts)


def _local_ranks(facts: dict[str, Any]) -> str | None:
    """Each launcher (a torchrun agent, mpirun's or srun's tasks on a host) numbers its processes 0..n-1 on its node,
    so on every node of a whole group local rank j is held at least as often as j + 1 (two agents of 4 on one node:
    0,1,2,3 twice; any gap is a rank lost or a record made up). Over NCCL each rank drives cuda:<local rank>: with
    one launcher on rank 0's node (local rank 0 held once there), a local rank at or past the GPUs rank 0 saw drives
    no GPU at all (NCCL and the trainer fail on it)."""
    world, gpus = facts.get("world_size"), facts.get("gpus")
    ranks = [r for r in facts.get("ranks") or [] if isinstance(r, dict)]
    if facts.get("failures") or not _int(world) or len(ranks) != world \
            or len({r.get("rank") for r in ranks}) != world:
        return None
    held: dict[str, Counter[int]] = {}
    for r in ranks:
        node, local = r.get("node"), r.get("local_rank")
        if not isinstance(node, str) or not _int(local):
            return None             # unknown: another rule (or none) speaks for it
        held.setdefault(node, Counter())[local] += 1
    for node, count in sorted(held.items()):
        if gap := next((j for j in sorted(count) if j > 0 and count[j] > count.get(j - 1, 0)), None):
            return (f"node {node[:60]!r} holds local rank {gap} {count[gap]} time(s) but local rank {gap - 1} "
                    f"{count.get(gap - 1, 0)} time(s): each launcher numbers its ranks 0..n-1 on its node")
    home = next((str(r["node"]) for r in ranks if r.get("rank") == 0), "")
    mine = held.get(home)
    if facts.get("backend") == "nccl" and _int(gpus) and gpus > 0 and mine is not None and mine[0] == 1 \
            and max(mine) >= gpus:
        return (f"over NCCL, local rank {max(mine)} on rank 0's node {home[:60]!r} (one launcher), which "
                f"saw gpus {gpus}: cuda:{max(mine)} is no GPU of it (NCCL runs one rank per GPU)")
    return None


# the probes' own `mode` under torchrun (`torchrun group: rank R of W, addr:port`): R and W are RANK and WORLD_SIZE
TORCHRUN_MODE = re.compile(r"^\s*torchrun group: rank (\d+) of (\d+)\b", re.IGNORECASE)


def _launcher(facts: dict[str, Any]) -> str | None:
    """A rank is one of the world's (0 .. world_size - 1), and verify's torchrun `mode` names the rank and world
    its record holds: a rank 9 of 8, or a mode of 16 beside a world_size of 8, is no group that ran."""
    world, rank = facts.get("world_size"), facts.get("rank")
    if _int(rank) and _int(world) and rank >= world:
        return f"rank {rank} but world_size {world} (ranks are 0 to {world - 1})"
    said = TORCHRUN_MODE.match(str(facts.get("mode") or ""))
    if said and _int(world) and int(said[2]) != world:
        return f"mode {str(facts.get('mode'))[:60]!r} but world_size {world}"
    if said and _int(rank) and int(said[1]) != rank:
        return f"mode {str(facts.get('mode'))[:60]!r} but rank {rank}"
    return None


def _backend(facts: dict[str, Any]) -> str | None:
    """The probes run NCCL exactly when torch sees a GPU and has NCCL (else gloo, on CPU): a GPU run recorded as
    gloo has its rate \"not judged\" (a slow node's fault hidden), a gloo run recorded as NCCL is judged as a GPU's."""
    backend, gpus, available = facts.get("backend"), facts.get("gpus"), facts.get("nccl_available")
    if backend == "nccl" and available is False:
        return "backend is nccl, but nccl_available is false"
    if backend == "gloo" and available is True and _int(gpus) and gpus > 0:
        return f"backend is gloo, but gpus {gpus} and nccl_available true (the probe runs NCCL on a GPU it has)"
    config = facts.get("config")
    device_class = config.get("device_class") if isinstance(config, dict) else None
    if backend in ("nccl", "gloo") and isinstance(device_class, str) and (backend == "nccl") != (device_class == "gpu"):
        return f"backend is {backend}, but config.device_class is {device_class!r} (the GPU shape runs over NCCL only)"
    return None


def _beyond_gpus(facts: dict[str, Any]) -> str | None:
    world, nodes, gpus = facts.get("world_size"), facts.get("nodes"), facts.get("gpus")
    if facts.get("backend") == "nccl" and _int(nodes) and _int(gpus) and _int(world) and nodes > 0 and gpus > 0 \
            and world > nodes * gpus:
        return (f"world_size {world} over NCCL on nodes {nodes} with gpus {gpus} each: more ranks than "
                f"{nodes * gpus} GPUs (NCCL runs one rank per GPU)")
    return None


def _local(facts: dict[str, Any]) -> str | None:
    world, nodes, gpus = facts.get("world_size"), facts.get("nodes"), facts.get("gpus")
    local = LOCAL_MODE.match(str(facts.get("mode") or ""))
    if not local:
        return None
    count, mode = int(local[1]), f"mode {facts.get('mode')!r}"[:80]
    if _int(nodes) and nodes != 1:
        return f"{mode} (ranks spawned on this one node) but nodes {nodes}"
    if _int(world) and count != world:
        return f"{mode} but world_size {world}"
    if facts.get("rank") is not None:
        return f"{mode} (no launcher) but rank {facts.get('rank')} (recorded under torchrun only)"
    ranks = [r for r in facts.get("ranks") or [] if isinstance(r, dict)]
    beyond = [r.get("local_rank") for r in ranks if _int(r.get("local_rank")) and r["local_rank"] >= count]
    if beyond:
        return f"{mode} but a rank with local_rank {beyond[0]}"
    if facts.get("backend") == "nccl" and _int(gpus) and _int(world) and world != gpus:
        return f"{mode} over NCCL (one process per GPU) but gpus {gpus}"
    return None
