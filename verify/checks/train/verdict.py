"""The train check's judge: a training step as a check, the path a job really takes (trainer.py runs it).

A small decoder-only transformer trained with DDP: one process per visible GPU with NCCL (bf16 autocast where the
GPU supports it), 2 processes with gloo on a CPU host, and the launcher's group under torchrun (across nodes). The
judge is pure: the replicas agree bit for bit after every step (the parameters' checksum and the all-reduced loss,
on every rank and node: a difference is model-level silent data corruption, named by step, rank and node), the
loss is finite at every step and falls by a clear margin, tokens/s, and on GPUs the model FLOP utilisation (MFU)
against the SKU's dense BF16 peak and its floor (verify/baselines.json); on a CPU the figures are reported, not
judged. Rank 0's facts hold every rank's record.
"""
from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from ... import baselines
from ...facts import TrainFacts, TrainFailure, TrainRank
from ...figures import BOOL, COUNT, LIST, OBJECT, RANKS, STR, Figure, Holds, Kind, Required, Rule, Unique
from ...options import Options, human_bytes
from ...result import FAIL, PASS, SKIP, WARN, CheckResult
from ...shared import grouplayout
from ...shared.cuda_errors import named_without_driver
from . import imagefault, launcher, pyxis, slurmend, trainer

NAME = "train"


FALL_TO = 0.7               # the mean loss of the last LAST steps must be at most this x the first step's


LAST = 3


CPU_TFLOPS_CEILING = 100.0  # model TFLOP/s one CPU process cannot reach (a whole AMX socket is well below it)


# a failure of these Python types in the run is this tool's own bug, never the node's
OWN_BUGS = frozenset({"TypeError", "AttributeError", "NameError", "KeyError", "IndexError", "AssertionError",
                      "ImportError", "ModuleNotFoundError", "UnboundLocalError", "ZeroDivisionError"})
PHASES = ("init", "data", "train", "gather", "timeout", "died")


LOSS_WORDS = ("nan", "inf", "-inf")


def rates(facts: TrainFacts) -> dict[str, float] | None:
    """tokens/s of the whole group over the timed steps (the slowest rank's clock), model TFLOP/s per rank; None
    when the facts hold no timed steps."""
    config = facts.get("config") or {}
    ranks = facts.get("ranks") or []
    timed = [(r.get("timed_steps"), r.get("timed_s")) for r in ranks]
    if not ranks or any(n is None or s is None for n, s in timed) or not config:
        return None
    steps = min(n for n, _ in timed if n is not None)
    seconds = max(s for _, s in timed if s is not None)
    world = len(ranks)
    tokens_per_s = steps * config["batch_per_rank"] * config["seq_len"] * world / seconds
    return {"tokens_per_s": tokens_per_s, "tflops_per_rank": tokens_per_s * trainer_flops(config) / world / 1e12,
            "steps": float(steps), "seconds": float(seconds)}


def trainer_flops(config: Any) -> float:
    """Model FLOPs per token from the recorded shape (never a recorded figure: the shape decides it)."""
    keys = ("vocab", "d_model", "layers", "heads", "seq_len", "batch_per_rank", "lr")
    return trainer.flops_per_token(trainer.Shape(**{k: config[k] for k in keys}))


def peak_tflops(device_name: str | None) -> tuple[float | None, str]:
    """The SKU's dense BF16 peak (verify/baselines.json) and its source; None for an unknown SKU."""
    model = baselines.load().model(device_name)
    figure = model.figures.get("bf16_peak_TFLOPs") if model else None
    return (float(figure["value"]), str(figure["source"])) if figure else (None, "")


def _physically_possible(facts: Any) -> str | None:
    """The gate's rule for the run as a whole: no rate above what the device can do (the SKU's dense BF16 peak on a
    GPU, CPU_TFLOPS_CEILING for a CPU process), and a shape that yields one."""
    try:
        found = rates(facts)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        return f"holds a shape or timing the rates cannot be computed from ({type(exc).__name__}: {exc})"
    if found is None:
        return None
    if facts.get("backend") == "nccl":
        ceiling, what = baselines.load().tensor_ceiling(facts.get("device_name"))
        if what.startswith("the fastest dense"):       # a GPU baselines.json does not know
            what += f" (a GPU it does not know, {facts.get('device_name')!r}, is held to that)"
    else:
        ceiling, what = CPU_TFLOPS_CEILING, "a CPU process"
    if found["tflops_per_rank"] > ceiling:
        return (f"claims {found['tflops_per_rank']:.1f} model TFLOP/s per rank ({found['tokens_per_s']:,.0f} "
                f"tokens/s), above {ceiling:g} TFLOP/s, {what}: physically impossible")
    return None


def _consistent(facts: Any) -> str | None:
    """The gate's rule for facts that cannot all be true (FACTS.md, "Facts that contradict each other"), naming the
    two fields: every rank of world_size answered or failed, `nodes` is the count of node names the ranks give, and
    a run over NCCL ran on a named GPU."""
    if not isinstance(facts, dict):
        return None
    world, nodes = facts.get("world_size"), facts.get("nodes")
    ranks = [r for r in facts.get("ranks") or [] if isinstance(r, dict)]
    failures = [f for f in facts.get("failures") or [] if isinstance(f, dict)]
    seen = {r.get("rank") for r in ranks} | {f.get("rank") for f in failures}
    if isinstance(world, int) and not isinstance(world, bool):
        beyond = sorted(n for n in seen if isinstance(n, int) and n >= world)
        if beyond:
            return f"ranks/failures name rank {beyond[0]}, but world_size is {world} (ranks 0..{world - 1})"
        if not failures and len({r.get("rank") for r in ranks}) < world:     # no rank at all included
            return (f"world_size is {world}, but ranks holds {len(ranks)} rank(s) and failures none: "
                    f"{world - len({r.get('rank') for r in ranks})} rank(s) neither answered nor failed")
        if isinstance(nodes, int) and nodes > world:
            return f"nodes {nodes} > world_size {world} (every node runs at least one rank)"
    raw = facts.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    low, high = config.get("min_steps"), config.get("max_steps")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        return f"config.min_steps {low} > config.max_steps {high}"
    if any(isinstance(r.get("node"), str) and not r["node"].strip() for r in ranks):
        return "a rank names node '' (a blank node name): the ranks' nodes cannot be counted"
    if why := _timed_beyond(ranks, config):
        return why
    named = {r.get("node") for r in ranks} | {f.get("node") for f in failures}
    if isinstance(nodes, int) and ranks and None not in named:
        whole = not failures and isinstance(world, int) and len(ranks) == world
        if (nodes != len(named)) if whole else (nodes < len(named)):
            return (f"nodes is {nodes}, but the ranks/failures name {len(named)} node(s) "
                    f"({', '.join(sorted(map(str, named)))[:80]})")
    return grouplayout.contradiction(facts)


def _timed_beyond(ranks: list[Any], config: dict[str, Any]) -> str | None:
    """A rank's timed steps are its recorded steps after the warm-up (trainer.py: len(steps) - WARMUP), within its
    whole run's wall time: more timed steps than it recorded, or a timed span longer than the run, is no record the
    trainer writes, and the rates read those two (500 timed of 120 steps made a slow node's MFU 0.15 read 0.66)."""
    warmup = config.get("warmup_steps")
    warmup = warmup if isinstance(warmup, int) and not isinstance(warmup, bool) and warmup >= 0 else 0
    for r in ranks:
        timed, steps, took, wall = (r.get(k) for k in ("timed_steps", "steps", "timed_s", "wall_s"))
        if _is_number(timed) and isinstance(steps, list) and steps and timed + warmup > len(steps):
            return (f"rank {r.get('rank')} timed {timed} step(s) after a warm-up of {warmup}, but recorded "
                    f"{len(steps)} step(s)")
        if _is_number(took) and _is_number(wall) and wall + 0.01 < took:     # 0.01: their roundings (4 and 6 places)
            return f"rank {r.get('rank')}'s timed steps took {took:g} s, longer than its whole run (wall_s {wall:g} s)"
    return None


LOSS = Holds(lambda v: None if (isinstance(v, str) and v in LOSS_WORDS) else Figure("", 0, 1e4).problem(v))


SECONDS = Figure("s", 0, 1e6)


FIGURES: tuple[tuple[str, Rule], ...] = (
    ("", Holds(_consistent)), ("", Holds(_physically_possible)),
    ("ranks", LIST), ("ranks", Unique("rank")), ("ranks[]", Required(("rank", "node", "steps"))),
    ("ranks[].rank", Figure("", 0, 1 << 24, integer=True)), ("ranks[].local_rank", Figure("", 0, 4096, integer=True)),
    ("ranks[].node", STR), ("ranks[].steps", LIST), ("ranks[].steps[]", Required(("step", "loss", "checksum"))),
    ("ranks[].steps[].step", Figure("", 1, 1 << 24, integer=True)), ("ranks[].steps[].loss", LOSS),
    ("ranks[].steps[].checksum", Kind(str, pattern="[0-9a-f]{16}")),
    ("ranks[].timed_steps", Figure("steps", 1, 1 << 24, integer=True)),
    ("ranks[].timed_s", Figure("s", 0, 1e6, lo_open=True)), ("ranks[].first_step_s", SECONDS),
    ("ranks[].init_s", SECONDS), ("ranks[].wall_s", SECONDS), ("ranks[].data_s", SECONDS), ("ranks[].bf16", BOOL),
    ("ranks[].planned_steps", Figure("steps", 1, 1 << 24, integer=True)), ("ranks[].loader", OBJECT),
    ("ranks[].loader.zero_copy", BOOL), ("ranks[].loader.sweep", LIST),
    ("ranks[].loader.file_bytes", Figure("B", 1, 2 ** 50, integer=True)),
    ("failures", LIST), ("failures[]", Required(("phase",))), ("failures[].phase", Kind(str, PHASES)),
    ("failures[].type", STR), ("failures[].message", STR), ("failures[].node", STR), ("failures[].shm_error", STR),
    ("config", OBJECT), ("config", Required(("vocab", "d_model", "layers", "heads", "seq_len", "batch_per_rank"))),
    ("config.vocab", Figure("", 2, 1 << 24, integer=True)), ("config.d_model", Figure("", 1, 1 << 20, integer=True)),
    ("config.layers", Figure("", 1, 4096, integer=True)), ("config.heads", Figure("", 1, 4096, integer=True)),
    ("config.seq_len", Figure("", 1, 1 << 24, integer=True)),
    ("config.batch_per_rank", Figure("", 1, 1 << 24, integer=True)), ("config.lr", Figure("", 0, 10, lo_open=True)),
    # recorded beside the shape (the rates read the shape, never these): present, they are plausible all the same
    ("config.params", Figure("", 1, 1 << 44, integer=True)),
    ("config.flops_per_token", Figure("FLOP", 0, 1e16, lo_open=True)),
    ("config.warmup_steps", Figure("steps", 0, 1 << 24, integer=True)),
    ("config.min_steps", Figure("steps", 1, 1 << 24, integer=True)),
    ("config.max_steps", Figure("steps", 1, 1 << 24, integer=True)),
    ("config.step_budget_s", Figure("s", 0, 1e6, lo_open=True)), ("config.noise", Figure("", 0, 100)),
    ("config.device_class", Kind(str, ("cpu", "gpu", "emulated"))),
    ("world_size", RANKS), ("nodes", Figure("nodes", 1, 1 << 20, integer=True)), ("gpus", COUNT),
    ("backend", Kind(str, ("nccl", "gloo"))), ("distributed", BOOL), ("emulated", BOOL), ("device_name", STR),
    ("mode", STR), ("missing", LIST),
)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _who(failure: TrainFailure) -> str:
    """The failed process as the record names it: a rank or node it does not show is not said (a program's one
    traceback names neither: "rank None" would be a word the output never printed)."""
    rank = f"rank {failure.get('rank')}" if failure.get("rank") is not None else "a process"
    return f"{rank} on node {failure.get('node') or '?'}"


def _failure(facts: TrainFacts, result: CheckResult) -> CheckResult | None:
    """A rank that failed: the data path's by the loader's rules (job or image), the run's the host's, this tool's
    own bug the image's (never the node's)."""
    failures = facts.get("failures") or []
    if not failures:
        return None
    first = failures[0]
    text = f"{_who(first)}, phase {first.get('phase')}: {first.get('type')}: {first.get('message')}"
    result.details += [f"{_who(f)} {f.get('phase')}: {f.get('type')}: {f.get('message')}"[:400] for f in failures]
    # /dev/shm's exhaustion shown (`shm_error`) is the container's whatever the phase; a worker the launcher reports
    # killed by a signal is judged by the signal (launcher.py), not as the loader's
    if first.get("shm_error"):
        return result.verdict(FAIL, "SHM_TOO_SMALL", f"the training data path ran out of /dev/shm: {text}"[:600])
    # Slurm's own account of the end (a time limit, a cancel, a cgroup OOM kill) before the loader's rule and the
    # CUDA catalog: its "Out Of Memory" is the job's host memory, never a GPU's (slurmend.py)
    if end := slurmend.ended(first):
        return result.verdict(FAIL, "TRAIN_FAILED", f"the training run was ended: {text}"[:500] + f"; {end.why}",
                              end.fix, end.owner)
    if first.get("phase") == "data" and not launcher.killed(first):
        return result.verdict(FAIL, "LOADER_FAILED", f"the training data path failed: {text}"[:600])
    # a library or native operator the image's packages should hold (imagefault.py): the image's, before the own-bug
    # rule (an ImportError of the dynamic linker is the package set's, not verify's)
    if cause := imagefault.image_fault(first):
        return result.verdict(FAIL, "TRAIN_FAILED", f"the training run failed: {text}"[:500] + f"; {cause}",
                              imagefault.REMEDY, "image")
    if first.get("type") in OWN_BUGS:
        return result.verdict(FAIL, "CHECK_CRASHED", f"the train check itself broke: {text}"[:600],
                              "This is verify's own bug, not the node's: report it with the details above.")
    # a CUDA error the one catalog names (out of memory, a build without the GPU's code, 802) has the catalog's code
    # and owner, as in the gpu and nccl checks: a job's out of memory drains no node; one that is the gpu check's
    # finding (a kernel's fault, the GPU's ECC error, a GPU index the process lacks) fails the run (TRAIN_FAILED)
    # with the cause's owner
    cuda = named_without_driver(said := f"{first.get('type')}: {first.get('message')}")
    if cuda:
        return result.verdict(FAIL, "TRAIN_FAILED" if cuda.gpu_finding else cuda.code, f"the training run failed on a CUDA error: {text}"[:500] + f"; {cuda.cause_in(said)}",
                              cuda.fix, cuda.owner)
    # a segfault in native code is the image's software stack, never a drain (launcher.py)
    if crash := launcher.native_crash(first):
        return result.verdict(FAIL, "TRAIN_FAILED", f"the training run failed: {text}"[:500] + f"; {crash[0]}",
                              crash[1], "image")
    if shown := launcher.launcher_failure(first):
        return result.verdict(FAIL, "TRAIN_FAILED", f"the training run failed: {text}"[:500] + f"; {shown[0]}",
                              shown[1], "job")
    # a container pyxis/enroot could not start (pyxis.py): the node's, the job's or the image's by its words; an
    # unknown one never the host's
    if start := pyxis.started(first):
        return result.verdict(FAIL, "TRAIN_FAILED", f"the container did not start: {text}"[:500] + f"; {start.why}",
                              start.fix, start.owner)
    return result.verdict(FAIL, "TRAIN_FAILED", f"the training run failed: {text}"[:600])


def _steps_by_rank(ranks: list[TrainRank]) -> str | None:
    """Facts that contradict themselves: ranks not 0..n-1, or steps not 1..k on each, or unequal step counts."""
    numbers = sorted(r["rank"] for r in ranks)
    if numbers != list(range(len(ranks))):
        return f"ranks {numbers} are not 0..{len(ranks) - 1}"
    counts = {r["rank"]: len(r["steps"]) for r in ranks}
    for r in ranks:
        if [s["step"] for s in r["steps"]] != list(range(1, len(r["steps"]) + 1)):
            return f"rank {r['rank']}'s steps are not numbered 1..{len(r['steps'])}"
    if len(set(counts.values())) > 1:
        return f"the ranks recorded different step counts: {counts}"
    return None


def divergence(ranks: list[TrainRank]) -> dict[str, Any] | None:
    """The first step where a rank's (global loss, checksum) differs from the majority's (ties: rank 0's side):
    {"step", "ranks": [(rank, node, what)], "expected"}; None when every rank agrees at every step."""
    for index, row in enumerate(ranks[0]["steps"]):
        seen = [(str(r["steps"][index]["loss"]), r["steps"][index]["checksum"]) for r in ranks]
        counts = Counter(seen)
        top = max(counts.values())
        expected = next(v for v in seen if counts[v] == top)          # the first (lowest rank) of the majority
        odd = [(r["rank"], r["node"], v) for r, v in zip(ranks, seen, strict=True) if v != expected]
        if odd:
            return {"step": row["step"], "ranks": odd, "expected": expected}
    return None


def _describe_divergence(found: dict[str, Any]) -> str:
    loss, checksum = found["expected"]
    parts = []
    for rank, node, (odd_loss, odd_sum) in found["ranks"]:
        what = [f"checksum {odd_sum} (others {checksum})"] if odd_sum != checksum else []
        what += [f"global loss {odd_loss} (others {loss})"] if odd_loss != loss else []
        parts.append(f"rank {rank} on node {node}: {', '.join(what)}")
    return f"replicas diverged at step {found['step']}: " + "; ".join(parts)


def _global_losses(ranks: list[TrainRank]) -> list[Any]:
    return [s["loss"] for s in ranks[0]["steps"]]


def _loss_verdict(losses: list[Any], result: CheckResult) -> CheckResult | None:
    bad = next((i for i, v in enumerate(losses) if not _is_number(v)), None)
    if bad is not None:
        return result.verdict(FAIL, "TRAIN_LOSS_NOT_FINITE", f"the global loss is {losses[bad]} at step {bad + 1} "
                              f"(after {losses[bad - 1] if bad else 'none'} at the step before)")
    first, last = losses[0], statistics.fmean(losses[-LAST:])
    result.metric("loss_first", first, "nats")
    result.metric("loss_last", last, "nats")
    result.details.append("global loss per step: " + " ".join(f"{v:.3f}" for v in losses))
    if len(losses) <= LAST or last > FALL_TO * first:
        return result.verdict(FAIL, "TRAIN_LOSS_NOT_FALLING", f"the loss did not fall by a clear margin: {first:.3f} at "
                              f"step 1, {last:.3f} over the last {LAST} of {len(losses)} steps (needed at most "
                              f"{FALL_TO:g}x the first)")
    return None


def _throughput(facts: TrainFacts, result: CheckResult) -> str:
    """tokens/s always; on GPUs the MFU against the SKU's dense BF16 peak and its floor; on CPU reported only."""
    found = rates(facts)
    if found is None:
        result.details.append("no timed steps: throughput not measured")
        return "throughput not measured"
    nodes = facts.get("nodes") or 1
    # a node's own figure for the fleet report; across nodes the group's rate is not one node's
    result.metric("tokens_per_s" if nodes == 1 else "group_tokens_per_s", found["tokens_per_s"], "tokens/s")
    result.metric("model_TFLOPs_per_rank", found["tflops_per_rank"], "TFLOP/s")
    words = f"{found['tokens_per_s']:,.0f} tokens/s"
    if facts.get("backend") != "nccl":
        why = "under CPU emulation" if facts.get("emulated") else "on CPU"
        result.details.append(f"{words} ({found['tflops_per_rank'] * 1e3:.2f} model GFLOP/s per rank) {why}: "
                              "reported, not judged")
        return f"{words} {why}, not judged"
    peak, source = peak_tflops(facts.get("device_name"))
    model = baselines.load().model(facts.get("device_name"))
    floor = (model.figures.get("train_mfu_floor") if model else None) or None
    if peak is None or floor is None:
        result.details.append(f"no BF16 peak or MFU floor for {facts.get('device_name')} in verify/baselines.json: "
                              "MFU not judged")
        return f"{words} (no baseline)"
    mfu = found["tflops_per_rank"] / peak
    result.metric("mfu", mfu, "x")
    verdict, ratio = baselines.judge_ratio(mfu, float(floor["value"]))
    result.details.append(f"MFU {mfu:.3f} = {found['tflops_per_rank']:.1f} model TFLOP/s per GPU of the dense BF16 "
                          f"peak {peak:g} ({source}); floor {floor['value']} ({floor['basis']})")
    if verdict != PASS:
        result.verdict(WARN if verdict == WARN else FAIL, "TRAIN_SLOW", f"MFU {mfu:.3f} is {ratio:.2f}x the "
                       f"{facts.get('device_name')} floor {floor['value']} ({words})")
    return f"{words}, MFU {mfu:.2f}"


def _describe(facts: TrainFacts, ranks: list[TrainRank], result: CheckResult) -> None:
    config = facts.get("config") or {}
    result.details.append(
        f"TinyGPT: vocab {config.get('vocab')}, d_model {config.get('d_model')}, {config.get('layers')} layers, "
        f"{config.get('heads')} heads, seq {config.get('seq_len')}, batch {config.get('batch_per_rank')} per rank, "
        f"{config.get('params')} parameters; AdamW lr {config.get('lr')}; "
        f"{'bf16 autocast' if ranks and ranks[0].get('bf16') else 'fp32'}")
    result.details.append(f"backend {facts.get('backend')}, world size {facts.get('world_size')} on "
                          f"{facts.get('nodes') or '?'} node(s): {facts.get('mode')}")
    loader = ranks[0].get("loader") or {} if ranks else {}
    setting = loader.get("setting") or {}
    result.details.append(
        f"data: {human_bytes(loader.get('file_bytes') or 0)} Arrow IPC file memory-mapped, zero copy "
        f"{'yes' if loader.get('zero_copy') else 'NO'}; DataLoader num_workers={setting.get('num_workers')} "
        f"(the advisor's choice over {len(loader.get('sweep') or [])} setting(s), up to {loader.get('cpu_share')} per rank)")
    first = ranks[0].get("first_step_s") if ranks else None
    if first is not None:
        result.metric("first_step_s", first, "s")
        result.details.append(f"time to first step {first:.2f} s after the process group formed (in "
                              f"{ranks[0].get('init_s')} s): the data path's set-up ({ranks[0].get('data_s')} s), the "
                              "model, the first batch, forward, backward, all-reduce, optimizer step")
    # each replica's last step as it saw it: a reader (or a test) sees the agreement without the facts
    result.data.update(steps=len(ranks[0]["steps"]) if ranks else 0, world_size=facts.get("world_size"),
                       nodes=sorted({r["node"] for r in ranks}), backend=facts.get("backend"),
                       replicas=[{"rank": r["rank"], "node": r["node"], **r["steps"][-1]} for r in ranks if r["steps"]])


def _data_path(ranks: list[TrainRank], result: CheckResult) -> CheckResult | None:
    copied = [r["rank"] for r in ranks if (r.get("loader") or {}).get("zero_copy") is False]
    if copied:
        return result.verdict(FAIL, "ARROW_COPIED", f"the token file is copied on its way into tensors (rank "
                              f"{copied[0]}): zero copy lost on the training data path")
    return None


def _shm_warning(ranks: list[TrainRank], result: CheckResult) -> None:
    failed = [row for r in ranks for row in (r.get("loader") or {}).get("sweep") or [] if row.get("shm_error")]
    if failed:
        result.verdict(WARN, "SHM_TOO_SMALL_FOR_LOADER", f"{result.summary}; but /dev/shm ran out for a DataLoader "
                       f"setting of the advisor's sweep: {failed[0]['shm_error']}")


def judge(facts: TrainFacts, options: Options) -> CheckResult:
    result = CheckResult(NAME, PASS, "")
    if facts.get("missing"):
        pkgs = facts["missing"]
        return result.verdict(SKIP, "PACKAGE_MISSING", f"{', '.join(pkgs)} not installed in this image: the training "
                              "step not checked", f"pip install {' '.join(pkgs)}")
    if facts.get("distributed") is False:
        return result.verdict(FAIL, "DISTRIBUTED_UNAVAILABLE", "torch.distributed is not available in this build")
    ranks: list[TrainRank] = facts.get("ranks") or []
    decided = _failure(facts, result)
    if decided:
        return decided
    if not ranks:
        return result.not_judged("no training step was recorded: nothing to judge",
                              "Record the check with `python -m verify --checks train --save-facts DIR`.")
    if not any(r["steps"] for r in ranks):
        # ranks that answered without a step and no failure: an empty result, as `"kernels": []` (FACTS.md)
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"{len(ranks)} rank(s) answered without a training step "
                              "and no rank failed: an empty result, no measurement", "Record the check again.")
    contradiction = _steps_by_rank(ranks)
    if contradiction:
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the run's records contradict each other: {contradiction}")
    _describe(facts, ranks, result)
    diverged = divergence(ranks)
    if diverged:
        result.data["divergence"] = {"step": diverged["step"], "ranks": [r for r, _, _ in diverged["ranks"]],
                                     "nodes": [n for _, n, _ in diverged["ranks"]]}
        return result.verdict(FAIL, "TRAIN_REPLICA_MISMATCH", _describe_divergence(diverged))
    decided = _loss_verdict(_global_losses(ranks), result) or _data_path(ranks, result)
    if decided:
        return decided
    steps, world = len(ranks[0]["steps"]), len(ranks)
    result.summary = (f"{steps} DDP steps over {facts.get('backend')}, world size {world} on "
                      f"{facts.get('nodes') or 1} node(s): replicas identical at every step; loss "
                      f"{result.metrics['loss_first'].value:.2f} -> {result.metrics['loss_last'].value:.2f}; ")
    result.summary += _throughput(facts, result)
    if result.status == PASS:
        _shm_warning(ranks, result)
    if facts.get("backend") != "nccl" and options.expect_gpus > 0 and result.status != FAIL:
        return result.verdict(FAIL, "GPU_NOT_VISIBLE", f"no GPU visible: trained over gloo on CPU; {result.summary}")
    if facts.get("backend") != "nccl" and result.status == PASS:
        result.summary = "no GPU: " + result.summary
    return result
