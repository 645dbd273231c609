"""Counts a report's checks cannot hold, and an all-reduce its own gpu check contradicts (tests/test_cluster_hunt73.py).

verify writes a count (its unit "count", "ranks" or "elements": devices, an all-reduce's ranks, its wrong elements)
as len() or a sum of whole numbers, and bytes as a size: never below 0, a count never a fraction. And NCCL runs one
rank per GPU (two ranks on one device are refused: "Duplicate GPU detected"), so an all-reduce over NCCL on one node
with more ranks than the GPUs the report's own gpu check counted is no run of verify's: a pass that claims 16 ranks
on an 8-GPU node is refused (verify's own nccl judge refuses such facts: MEASUREMENT_INVALID). Its data's `nodes`
and `world_size` are integers as verify writes them: the string "2" or the float 2.0 read as no count let a group's
run pass as this node's, and a collective's failure list a drain of the node that wrote it.
scripts/fleet/plausible.py holds the same rule on the host side (tests/test_report_plausible.py).
"""
from __future__ import annotations

import math
import re
from typing import Any

COUNT_UNITS = frozenset({"count", "ranks", "elements"})     # whole, 0 or more
SIZE_UNITS = frozenset({"bytes"})                           # 0 or more


def count_problem(name: str, key: str, m: dict[str, Any], value: float) -> str | None:
    """Why a figure of a count or size unit is none verify writes (below 0; a count not whole), or None."""
    unit = str(m.get("unit"))
    if unit in COUNT_UNITS | SIZE_UNITS and value < 0:
        return f"its {name} check's {key[:40]} = {value:g} {unit} is negative: no count or size is"
    if unit in COUNT_UNITS and value != math.floor(value):
        return f"its {name} check's {key[:40]} = {value:g} {unit} is no whole number: a count is"
    return None


def _train_layout_problem(checks: list[dict[str, Any]]) -> str | None:
    """Why a train check's group (any status) is none verify writes, or None. verify/checks/train/verdict.py writes
    `nodes` as the distinct names of its ranks' nodes, sorted (a blank one included), and lists each answering rank
    of its `world_size` in `replicas`: a node named twice, a `nodes` that is no list ("vm,vm2", 3.5: read as no group,
    a failure across two nodes listed its writer to drain; scripts/fleet/collective.py) or a rank past the world
    (rank 9 of 8, or 2**70 of 1, beside a pass) is no group that ran (hunt103)."""
    train = next((c for c in checks if c.get("name") == "train"), None)
    data = train.get("data") if train is not None else None
    if not isinstance(data, dict):
        return None
    nodes, world, replicas = data.get("nodes"), data.get("world_size"), data.get("replicas")
    if nodes is not None and (not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes)
                              or len(set(nodes)) != len(nodes)):
        return (f"its train check's data nodes = {str(nodes)[:40]!r} is no list verify writes (the distinct names of "
                "its ranks' nodes)")
    if type(world) is int and isinstance(replicas, list):
        past = next((r["rank"] for r in replicas if isinstance(r, dict) and type(r.get("rank")) is int
                     and not 0 <= r["rank"] < world), None)
        if past is not None:
            return f"its train check lists rank {str(past)[:24]} in a world of {world}: ranks are 0 to {world - 1}"
    return None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or value < 0:
        return None
    return int(value)


def _does(check: dict[str, Any]) -> str:
    return "passes" if check.get("status") == "pass" else "warns"


def ranks_problem(checks: list[dict[str, Any]]) -> str | None:
    """Why a report's nccl check cannot be true beside its own gpu check, or None (see the module's docstring)."""
    if train := _train_layout_problem(checks):
        return train
    nccl = next((c for c in checks if c.get("name") == "nccl"), None)
    data = nccl.get("data") if nccl is not None else None
    if not isinstance(data, dict):
        return None
    for key in ("nodes", "world_size"):
        if data.get(key) is not None and (type(data[key]) is not int or data[key] < 0):
            # verify's facts contract holds them ints (verify/figures.py RANKS, NODES): 2.0 nodes read as one node
            return f"its nccl check's data {key} = {str(data[key])[:20]!r} is no count verify writes (an integer)"
    if nccl is None or nccl.get("status") not in ("pass", "warn"):
        return None
    raw = nccl.get("metrics")
    metric = raw.get("world_size") if isinstance(raw, dict) else None
    world = _whole(data.get("world_size")) or _whole(metric.get("value") if isinstance(metric, dict) else None)
    nodes = _whole(data.get("nodes"))
    if world and nodes and nodes > world:      # verify's grouplayout: every node runs at least one rank
        return f"its nccl check {_does(nccl)} on {world} rank(s) across {nodes} nodes: every node runs at least one"
    backend = data.get("backend")
    if nccl.get("status") == "pass" and backend is not None and backend != "nccl":
        # verify/checks/nccl/verdict.py passes an all-reduce only over NCCL: over gloo it skips (NCCL_NOT_EXERCISED,
        # no GPU) or fails (--expect-gpus), so NCCL on this node's GPUs was never tested (hunt95, issue 36 class 6)
        return (f"its nccl check passes over {str(backend)[:20]!r}: verify passes an all-reduce only over NCCL "
                "(over gloo it skips or fails), so NCCL was never exercised")
    if spawned := _spawned_problem(nccl, data, checks):
        return spawned
    if group := _group_problem(nccl, data, checks):
        return group
    if data.get("backend") != "nccl" or nodes != 1:
        return None
    gpu = next((c for c in checks if c.get("name") == "gpu" and c.get("status") in ("pass", "warn")), None)
    raw = gpu.get("metrics") if gpu is not None else None
    counted = [n for k in ("nvml_devices", "torch_devices") if isinstance(raw, dict) and isinstance(raw.get(k), dict)
               and (n := _whole(raw[k].get("value")))]
    if world and counted and world > max(counted):
        return (f"its nccl check {_does(nccl)} on {world} ranks over NCCL on one node, where its gpu check counted "
                f"{max(counted)} GPU(s): NCCL runs one rank per GPU")
    return None


# verify's own all-reduce (verify/checks/nccl/probing.py, verdict.py): without a launcher (no `rank`; `nodes` 1) it
# spawns one rank per GPU torch sees over NCCL (its `mode` "N local process(es)"), and it passes no all-reduce on one
# rank (NCCL_SINGLE_RANK: nothing crossed a link). A pass on 4 ranks beside 8 GPUs torch saw, or on one rank, is no
# run of verify's: the GPUs it left out were never all-reduced over (hunt95)
_LOCAL = re.compile(r"^(\d{1,7}) local process\(es\)")
# however a report respells verify's own mode (" 8 Local  processes": verify/shared/grouplayout.py LOCAL_MODE)
_SPAWNED = re.compile(r"^\s*\d+\s+local\s+process", re.IGNORECASE)


def _spawned_problem(nccl: dict[str, Any], data: dict[str, Any], checks: list[dict[str, Any]]) -> str | None:
    raw = nccl.get("metrics")
    metric = raw.get("world_size") if isinstance(raw, dict) else None
    said = data.get("world_size")
    world = said if type(said) is int else _whole(metric.get("value") if isinstance(metric, dict) else None)
    mode, nodes = data.get("mode"), data.get("nodes")
    if nccl.get("status") in ("pass", "warn") and isinstance(mode, str) and _SPAWNED.match(mode) and (
            (type(nodes) is int and nodes > 1) or data.get("rank") is not None):
        # ranks verify spawned itself run on the node that spawned them: "across 2 nodes" (or a launcher's rank) beside
        # them is no run of verify's (its facts contract refuses it: grouplayout._local), and a pass claimed the
        # fabric between nodes was crossed where nothing left the node (hunt99; issue 36 class 6's record, as a report)
        where = f"across {nodes} nodes" if type(nodes) is int and nodes > 1 else "with a launcher's rank"
        return (f"its nccl check {_does(nccl)} {where}, where its mode {mode[:40]!r} says verify spawned its ranks on "
                "this node: ranks spawned on one node run on that node alone")
    if world is None or data.get("rank") is not None or type(data.get("nodes")) is not int or data["nodes"] != 1:
        return None                 # a launcher's group (its rank), or nodes unsaid: its world is the group's
    if nccl.get("status") == "pass" and type(said) is int and said < 2:
        return (f"its nccl check passes on {said} rank(s): verify skips an all-reduce on one rank (NCCL_SINGLE_RANK: "
                "nothing crossed a link)")
    if data.get("backend") != "nccl":
        return None
    mode = data.get("mode")
    spawned = _LOCAL.match(mode) if isinstance(mode, str) else None
    if spawned and int(spawned.group(1)) != world:
        return (f"its nccl check {_does(nccl)} on {world} rank(s), where its mode says verify spawned "
                f"{spawned.group(1)}: one count")
    gpu = next((c for c in checks if c.get("name") == "gpu" and c.get("status") in ("pass", "warn")), None)
    gm = gpu.get("metrics") if gpu is not None else None
    torch = _whole(gm["torch_devices"].get("value")) if isinstance(gm, dict) and isinstance(
        gm.get("torch_devices"), dict) else None
    if torch and world != torch:
        return (f"its nccl check {_does(nccl)} on {world} local rank(s) over NCCL, where its gpu check counted {torch} "
                "GPU(s) torch sees: verify spawns one rank per GPU, so the others were never all-reduced over")
    return None


# verify's torchrun `mode` (verify/shared/grouplayout.py TORCHRUN_MODE): the rank and world its record holds
_TORCHRUN = re.compile(r"^\s*torchrun group: rank (\d+) of (\d+)\b", re.IGNORECASE)


def _group_problem(nccl: dict[str, Any], data: dict[str, Any], checks: list[dict[str, Any]]) -> str | None:
    """Why a passing (or warning) all-reduce's group, as its data lays it out, is none verify's judge lets pass, or
    None. verify/checks/nccl/verdict.py refuses such facts (grouplayout.contradiction: MEASUREMENT_INVALID, a
    failure) before it judges, so a pass carrying them is no report of verify's: a group on 0 nodes; a rank at or past
    its world (rank 8 of 8); a torchrun `mode` naming another rank or world than its data; and, over NCCL, more ranks
    than `nodes` x the GPUs this node's gpu check counted (32 ranks on 2 nodes of 8: NCCL runs one rank per GPU, and
    `nodes` is ceil(world / local world), so this node ran 16 ranks on 8 GPUs). Each a multi-node record the one-node
    rules above never reached (hunt104)."""
    if nccl.get("status") not in ("pass", "warn"):
        return None
    world, nodes, rank, mode = data.get("world_size"), data.get("nodes"), data.get("rank"), data.get("mode")
    does = _does(nccl)
    if nodes == 0 and type(nodes) is int and type(world) is int and world > 0:
        return f"its nccl check {does} on {world} rank(s) across 0 nodes: every rank runs on a node"
    if type(rank) is int and type(world) is int and not 0 <= rank < world:
        return f"its nccl check {does} as rank {str(rank)[:24]} of a world of {world}: ranks are 0 to {world - 1}"
    said = _TORCHRUN.match(mode) if isinstance(mode, str) else None
    if said is not None and type(world) is int and int(said[2]) != world:
        return f"its nccl check {does} with mode {str(mode)[:60]!r} beside world_size {world}: one count"
    if said is not None and type(rank) is int and int(said[1]) != rank:
        return f"its nccl check {does} with mode {str(mode)[:60]!r} beside rank {rank}: one rank"
    if data.get("backend") != "nccl" or type(world) is not int or type(nodes) is not int or nodes < 1:
        return None
    gpu = next((c for c in checks if c.get("name") == "gpu" and c.get("status") in ("pass", "warn")), None)
    raw = gpu.get("metrics") if gpu is not None else None
    counted = [n for k in ("nvml_devices", "torch_devices") if isinstance(raw, dict) and isinstance(raw.get(k), dict)
               and (n := _whole(raw[k].get("value")))]
    if counted and world > nodes * max(counted):
        return (f"its nccl check {does} on {world} ranks over NCCL across {nodes} node(s), where its gpu check counted "
                f"{max(counted)} GPU(s): more ranks than {nodes * max(counted)} GPUs (NCCL runs one rank per GPU)")
    return None
