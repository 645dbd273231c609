"""A passing train, shm or nccl check whose own figures or data say it cannot pass (tests/test_cluster_hunt81.py).

verify's train check (verify/checks/train/verdict.py) fails a loss that did not fall to 0.7x its first step's over
more than 3 steps (TRAIN_LOSS_NOT_FALLING) and replicas whose loss or checksum differ at any step
(TRAIN_REPLICA_MISMATCH); it lists each rank's last step in `data.replicas` (one a rank of `world_size`, on the
`nodes` it names) and its MFU as a share of the GPU's dense peak. A pass that says otherwise (replicas disagreeing, a
loss that rose, 15.4 "x" of the peak: a percent, 2 replicas of a world of 1, a negative cross-entropy) is no report
verify writes. Nor is an shm pass whose /dev/shm (`size`, a tmpfs's hard limit) is smaller than the `required` bytes
it allocated and touched, or that has more `free` than its size (statvfs gives neither): it hid SHM_TOO_SMALL, the
host's. Nor is an nccl pass whose bus bandwidth is not its algorithm bandwidth times the collective's factor (nccl-tests'
arithmetic: 2(n-1)/n for all-reduce, (n-1)/n or 1 for the others, so 0.5x to 2x; a busbw ten times it is a slow link
read fast), or whose `world_size` figure and data disagree (verify writes both from one count). Each refused, never
a pass and never a drain.
scripts/fleet/passfacts.py holds the same rule on the host side (the host side never imports verify;
tests/test_cluster_hunt81.py keeps the two alike).
"""
from __future__ import annotations

import math
from typing import Any, TypeGuard

FALL_TO = 0.7           # verify/checks/train/verdict.py: the last steps' mean loss at most this x the first step's
LAST = 3                # the last steps that mean is over: a run of LAST steps or fewer fails
SLACK = 1e-6            # verify writes a figure rounded to 6 decimals


def _figure(check: dict[str, Any], name: str) -> float | None:
    raw = check.get("metrics")
    m = raw.get(name) if isinstance(raw, dict) else None
    v = m.get("value") if isinstance(m, dict) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _count(value: Any) -> TypeGuard[int]:
    return type(value) is int and value >= 0


def pass_problem(checks: list[dict[str, Any]], hosts: tuple[Any, ...] = ()) -> str | None:
    """Why a report's passing (or warning) train or shm check cannot be true by its own facts, or None. `hosts`: the
    names the report gives its own node (its environment's hostname and scheduler node)."""
    return _train_problem(checks, hosts) or _shm_problem(checks) or _nccl_problem(checks)


BUS_FACTOR = (0.5, 2.0)         # busbw / algbw of any collective on 2 ranks or more (verify/checks/nccl/collective.py)


def _nccl_problem(checks: list[dict[str, Any]]) -> str | None:
    nccl = next((c for c in checks if c.get("name") == "nccl" and c.get("status") in ("pass", "warn")), None)
    if nccl is None:
        return None
    does = "passes" if nccl.get("status") == "pass" else "warns"
    raw = nccl.get("data")
    counted, said = _figure(nccl, "world_size"), raw.get("world_size") if isinstance(raw, dict) else None
    if counted is not None and _count(said) and counted != said:
        return f"its nccl check {does} with world_size {counted:g} in its figures and {said} in its data: one count"
    rows = raw.get("sizes") if isinstance(raw, dict) else None
    for row in rows if isinstance(rows, list) else []:
        wrong = row.get("wrong") if isinstance(row, dict) else None
        if isinstance(wrong, (int, float)) and not isinstance(wrong, bool) and wrong > 0:
            # its `wrong` figure is these rows' sum, and any wrong element fails the all-reduce (the rule on the
            # figure: CANNOT_PASS): a row of wrong elements under a pass is an all-reduce that returned wrong values
            # (hunt103)
            return (f"its nccl check {does} while its data lists {wrong:g} wrong element(s) at "
                    f"{str(row.get('size'))[:20]} bytes: wrong elements in an all-reduce fail it")
    bus, alg = _figure(nccl, "busbw_max"), _figure(nccl, "algbw_max")
    low, high = BUS_FACTOR
    if bus is not None and alg is not None and alg > 0 and bus > 0 and \
            not low * alg - 2 * SLACK * 1e3 <= bus <= high * alg + 2 * SLACK * 1e3:
        return (f"its nccl check {does} with busbw {bus:g} GB/s over an algbw of {alg:g}: no collective's factor "
                f"({low:g}x to {high:g}x) gives that")
    return None


def _shm_problem(checks: list[dict[str, Any]]) -> str | None:
    shm = next((c for c in checks if c.get("name") == "shm" and c.get("status") in ("pass", "warn")), None)
    if shm is None:
        return None
    size, free, need = (_figure(shm, k) for k in ("size", "free", "required"))
    if size == 0:
        # a tmpfs mounted size=0 has no limit, and statfs gives it 0 blocks and 0 free (mm/shmem.c shmem_statfs):
        # verify passes the 1 GiB it touched there, and a refusal withheld the report's other checks (hunt84)
        return None
    if size is not None and need is not None and size < need:
        return (f"its shm check passes on a /dev/shm of {size:.0f} bytes, smaller than the {need:.0f} it allocated and "
                "touched: verify fails that (SHM_TOO_SMALL)")
    if size is not None and free is not None and free > size:
        return f"its shm check passes with {free:.0f} bytes free of a /dev/shm of {size:.0f}: no file system has"
    return None


def _train_problem(checks: list[dict[str, Any]], hosts: tuple[Any, ...] = ()) -> str | None:
    """Why a report's passing (or warning) train check cannot be true by its own figures and data, or None."""
    train = next((c for c in checks if c.get("name") == "train" and c.get("status") in ("pass", "warn")), None)
    if train is None:
        return None
    does = "passes" if train.get("status") == "pass" else "warns"
    first, last = _figure(train, "loss_first"), _figure(train, "loss_last")
    if any(v is not None and v < 0 for v in (first, last)):
        return f"its train check {does} with a negative loss: a cross-entropy is 0 or more"
    if any(v is not None and not (math.isfinite(v) and v <= LOSS_MOST) for v in (first, last)):
        # verify records a loss of 0 to LOSS_MOST (a loss_first of 1e308 "fell" to any last: hunt105)
        return (f"its train check {does} with the loss {first if first is not None else '-'} -> "
                f"{last if last is not None else '-'}: verify records a loss of 0 to {LOSS_MOST:g}")
    if first is not None and last is not None and last > FALL_TO * first * (1 + SLACK) + SLACK:
        return (f"its train check {does} with the loss {first:g} -> {last:g}: verify fails a loss that did not fall to "
                f"{FALL_TO:g}x the first (TRAIN_LOSS_NOT_FALLING)")
    if (took := _figure(train, "first_step_s")) is not None and took < 0:
        return f"its train check {does} with first_step_s {took:g}: no time is negative"
    if (mfu := _figure(train, "mfu")) is not None and not 0 <= mfu <= 1:
        return f"its train check {does} with mfu {mfu:g}: a share of the GPU's peak is 0 to 1"
    data = train.get("data")
    if not isinstance(data, dict):
        return None
    world, steps, nodes, replicas = (data.get(k) for k in ("world_size", "steps", "nodes", "replicas"))
    for key, value in (("world_size", world), ("steps", steps)):
        if value is not None and not _count(value):
            return f"its train check's data {key} = {str(value)[:20]!r} is no count verify writes (an integer)"
    if _count(steps) and steps <= LAST:
        return f"its train check {does} on {steps} step(s): verify fails a run of {LAST} or fewer"
    if not isinstance(replicas, list) or not all(isinstance(r, dict) for r in replicas):
        return None if replicas is None else "its train check's data replicas is no list of ranks"
    # verify lists every rank's last step; a pass is every replica agreeing (TRAIN_REPLICA_MISMATCH otherwise)
    ranks = [r.get("rank") for r in replicas]
    if not all(_count(r) for r in ranks) or len(set(ranks)) != len(ranks):
        return f"its train check {does} with replicas whose ranks are no distinct ranks ({str(ranks)[:60]})"
    if _count(world) and len(replicas) != world:
        return f"its train check {does} with world_size {world} and {len(replicas)} replica(s) listed: one a rank"
    return _replica_problem(replicas, steps, does) or _agreement_problem(replicas, nodes, does) \
        or _gpus_problem(checks, data, replicas, does, hosts)


def _short(name: Any) -> str:
    """One host however it is spelt (N1, n1., n1.cluster.local): the replicas' node (TORCHIMAGES_NODE, Slurm's node
    name, else the host name) and the report's hostname may be the short and the long form of one name."""
    return str(name).lower().rstrip(".").split(".")[0]


def _gpus_problem(checks: list[dict[str, Any]], data: dict[str, Any], replicas: list[dict[str, Any]],
                  does: str, hosts: tuple[Any, ...] = ()) -> str | None:
    """Why a passing train check over NCCL ran more ranks on its one node than the GPUs the report's own gpu check
    counted there, or None. Each rank drives a GPU of its own (cuda:<local rank>; two ranks on one GPU: NCCL's
    "Duplicate GPU detected"), as the nccl check's rule holds (verify/prolog/ranks.py, scripts/fleet/ranks.py): 16
    replicas on one node of 8 GPUs (or 2 on a node of 1) passing is no run verify saw (hunt103). Across several nodes
    the same holds of the report's own node (`hosts`), the one whose GPUs its gpu check counted: 16 of 17 replicas on
    it beside 8 GPUs was believed (hunt104; another node's GPUs are not counted here, so its replicas are not held)."""
    nodes = data.get("nodes")
    if data.get("backend") != "nccl":
        return None
    gpu = next((c for c in checks if c.get("name") == "gpu" and c.get("status") in ("pass", "warn")), None)
    counted = [n for k in ("nvml_devices", "torch_devices") if gpu is not None and (n := _figure(gpu, k)) is not None
               and n >= 1]
    if not counted:
        return None
    if len({str(r.get("node")) for r in replicas}) == 1 and not (isinstance(nodes, list)
                                                                 and len({str(n) for n in nodes}) > 1):
        if len(replicas) > max(counted):
            return (f"its train check {does} on {len(replicas)} ranks over NCCL on one node, where its gpu check "
                    f"counted {max(counted):g} GPU(s): NCCL runs one rank per GPU")
        return None
    mine = {_short(h) for h in hosts if isinstance(h, str) and h.strip()}
    here = sum(1 for r in replicas if _short(r.get("node")) in mine)
    if here > max(counted):
        return (f"its train check {does} with {here} of its {len(replicas)} ranks over NCCL on this report's own node, "
                f"where its gpu check counted {max(counted):g} GPU(s): NCCL runs one rank per GPU")
    return None


def _agreement_problem(replicas: list[dict[str, Any]], nodes: Any, does: str) -> str | None:
    """Why the replicas of a passing train check disagree with each other or with its `nodes`, or None."""
    if len({(str(r.get("loss")), str(r.get("checksum"))) for r in replicas}) > 1:
        return (f"its train check {does} while its replicas' last steps disagree (loss or checksum): verify fails "
                "replicas that differ (TRAIN_REPLICA_MISMATCH)")
    if isinstance(nodes, list) and replicas and {str(r.get("node")) for r in replicas} != {str(n) for n in nodes}:
        return f"its train check {does} across nodes {str(nodes)[:60]} that are not its replicas' nodes"
    return None


LOSS_MOST = 1e4         # verify/checks/train/verdict.py LOSS: a recorded loss is a number, 0 to 1e4


def _replica_problem(replicas: list[dict[str, Any]], steps: Any, does: str) -> str | None:
    """Why a replica's last step (verify lists each rank's: its step, global loss, checksum) cannot stand beside a pass,
    or None. verify passes only ranks that recorded the same steps, 1 to `steps` (unequal counts: MEASUREMENT_INVALID),
    and only a global loss that is a number at every step (a "nan" or "inf" fails TRAIN_LOSS_NOT_FINITE, the host's);
    a replica at step 5 of 30, or at a loss of NaN, beside a pass hid that failure (hunt99)."""
    for r in replicas:
        loss = r.get("loss", 0.0)
        if isinstance(loss, bool) or not isinstance(loss, (int, float)) or not math.isfinite(loss) \
                or not 0 <= loss <= LOSS_MOST:
            return (f"its train check {does} with rank {str(r.get('rank'))[:12]}'s last loss {str(loss)[:20]!r}: "
                    "verify fails a loss that is no finite number (TRAIN_LOSS_NOT_FINITE)")
        step = r.get("step", steps)
        if _count(steps) and step != steps:
            return (f"its train check {does} on {steps} step(s) with rank {str(r.get('rank'))[:12]}'s last step "
                    f"{str(step)[:20]}: verify passes only ranks that recorded every step alike")
    return None
