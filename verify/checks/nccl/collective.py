"""nccl-tests' arithmetic per collective (its src/<collective>.cu: GetCollByteCount and GetBw), so that a table of
any program is checked by its own rules and only an all-reduce's busbw meets verify's baselines.

The printed `count` is the call's count parameter: for all_reduce, sendrecv, broadcast and reduce the whole
message (size = count x the type's bytes); for all_gather, reduce_scatter, alltoall, gather and scatter one rank's
share (size = count x bytes x nranks: AllGatherGetCollByteCount's `base = count/nranks`, printed as `nbytes /
wordSize`). busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, alltoall, gather, scatter),
1 (sendrecv, broadcast, reduce): nccl-tests' doc/PERFORMANCE.md, "Summary"."""
from __future__ import annotations

from typing import Any

from ...facts import NcclFacts, SizeRow
from ...findings import Findings
from ...options import human_bytes
from ...result import FAIL, CheckResult
from .bandwidth import IMPOSSIBLE_RATIO, fastest_busbw

ALL_REDUCE = "all_reduce"
# size = count x bytes (the count is the whole message)
WHOLE = frozenset({"all_reduce", "sendrecv", "broadcast", "reduce"})
# size = count x bytes x nranks (the count is one rank's share)
PER_RANK = frozenset({"all_gather", "reduce_scatter", "alltoall", "gather", "scatter"})
# every nccl-tests program (src/*.cu, without `_perf`), the only values `collective` holds: hypercube and alltoallv
# are named, their arithmetic not checked (unchecked below); any other word is no program's, refused at the door
PROGRAMS = tuple(sorted(WHOLE | PER_RANK | {"alltoallv", "hypercube"}))

# bytes per element of nccl-tests' types (its -d)
TYPE_BYTES = {"int8": 1, "char": 1, "uint8": 1, "int32": 4, "int": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2,
              "float16": 2, "float": 4, "float32": 4, "double": 8, "float64": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1}


def known(collective: Any) -> str | None:
    """The collective whose arithmetic verify knows, or None (not recorded, or another program)."""
    return collective if isinstance(collective, str) and collective in WHOLE | PER_RANK else None


def unchecked(collective: Any) -> bool:
    """A program named whose arithmetic verify does not check (hypercube_perf's algbw is size x (n-1)/n / time,
    alltoallv_perf's size its largest rank's): its rows give their wrong elements, not their figures' relations."""
    return isinstance(collective, str) and known(collective) is None


def label(collective: Any, facts: Any = None) -> str:
    """The words a verdict uses: `all-reduce` for verify's own (and a record from before the field), `collective`
    where a record says it is not known, else the program's."""
    if collective is None and isinstance(facts, dict) and "collective" in facts:
        return "collective"
    return "all-reduce" if collective in (None, ALL_REDUCE) else str(collective).replace("_", "-")


def bus_factor(collective: Any, world: int) -> float:
    """busbw / algbw (PERFORMANCE.md): an unknown collective keeps the all-reduce's, as records before the field did."""
    if world <= 0:
        return 0.0
    name = known(collective)
    if name in PER_RANK:
        return (world - 1) / world
    if name in WHOLE - {ALL_REDUCE}:
        return 1.0
    return 2 * (world - 1) / world


def count_contradiction(row: SizeRow, collective: Any, world: Any) -> str | None:
    """A row whose count and size fit no form its collective prints: the whole message for all_reduce, sendrecv,
    broadcast, reduce; one rank's share for the rest (checked only where the world size is known). A collective not
    recorded may be either, so only a size no form gives (neither count x bytes nor a whole multiple of it, nor
    count x bytes x the world size where known) contradicts."""
    width = TYPE_BYTES.get(str(row.get("type")))
    if not width:
        return None
    count, size = row["count"], row["size"]
    whole = count * width
    name = known(collective)
    said = f"{count} {row.get('type')} element(s) are {whole} bytes"
    if name in WHOLE:
        return None if whole == size else f"{said}, the row says size {size}"
    if isinstance(world, int) and world > 0:
        if name in PER_RANK:
            return (None if whole * world == size else
                    f"{said} per rank, {whole * world} bytes across {world} ranks, the row says size {size}")
        if name is None and size not in (whole, whole * world):
            return f"{said} (or {whole * world} across {world} ranks), the row says size {size}"
        return None
    # world size unknown: one rank's share times some whole number of ranks is all that can be checked
    if whole == size or (whole and size % whole == 0 and size // whole >= 2):
        return None
    return f"{said}, the row says size {size} (no whole number of ranks gives it)"


def inconsistent(rows: list[SizeRow], world: Any, collective: Any) -> str | None:
    """nccl-tests' own arithmetic: the count form, algbw = size / time, busbw = algbw x the collective's factor
    (10% and rounding allowed); the bus factor only where the world size is known (a table pasted without its ranks
    still shows its sizes, times and wrong elements)."""
    if world is not None and not isinstance(world, int):
        return f"world size {world!r} with {len(rows)} measured size(s)"
    if collective is not None and not isinstance(collective, str):
        return f"collective {collective!r}"
    if unchecked(collective):
        return None
    factor = bus_factor(collective, world) if world is not None else None
    for r in rows:
        if said := count_contradiction(r, collective, world):
            return said
        algbw = r["size"] / (r["time_us"] * 1e-6) / 1e9
        if abs(r["algbw"] - algbw) > 0.1 * algbw + 0.05:
            return f"{human_bytes(r['size'])} in {r['time_us']} us is {algbw:.2f} GB/s, the row says algbw {r['algbw']}"
        if factor is not None and abs(r["busbw"] - r["algbw"] * factor) > 0.1 * r["algbw"] * factor + 0.05:
            return (f"busbw {r['busbw']} at {human_bytes(r['size'])} is not algbw {r['algbw']} x {factor:.3f} "
                    f"({label(collective)}'s factor at world size {world})")
    # nccl-tests prints two decimals: rows whose own size / time gives under 0.005 GB/s print busbw 0.00 (a sweep of
    # tiny messages); no bus bandwidth at all is a contradiction only where some row's figures give one to print
    printable = max((r["size"] / (r["time_us"] * 1e-6) / 1e9 * (factor or 0.0) for r in rows), default=0.0) >= 0.005
    if world is not None and world > 1 and printable and max(r["busbw"] for r in rows) <= 0:
        return f"no bus bandwidth at all across {world} ranks"
    return None


def other_collective(collective: Any) -> bool:
    """A table of a collective other than the all-reduce (a record that names none is judged as an all-reduce's)."""
    return collective is not None and collective != ALL_REDUCE


def plausibility(facts: NcclFacts, rows: list[SizeRow], verified: str, result: CheckResult,
                 found: Findings) -> str:
    """Another collective's bandwidth: only whether any GPU could move it. nccl-tests' doc/PERFORMANCE.md defines
    each collective's busbw by its own formula so that it "can compare it with the hardware peak bandwidth,
    independently of the number of ranks"; it does not define it as an all-reduce's figure, and verify's baselines
    are all-reduce busbw (ring, NVLS's in-switch reduction, the inter-node floor): no baseline is applied."""
    peak = max(r["busbw"] for r in rows)
    summary = f"{verified}; peak busbw {peak:.1f} GB/s"
    if (facts.get("nodes") or 1) == 1 and peak > IMPOSSIBLE_RATIO * (fastest := fastest_busbw()):
        found.add(FAIL, "MEASUREMENT_INVALID", f"{summary} on one node is over {IMPOSSIBLE_RATIO:g}x the fastest "
                  f"one-node figure verify knows ({fastest:g} GB/s: verify/baselines.json, NVLink5): no GPU moves "
                  "that much, physically impossible", "Record the check again.", "host")
        return f"{summary}: over {IMPOSSIBLE_RATIO:g}x any GPU's baseline, impossible"
    why = f"verify's busbw baselines are all-reduce figures, not {label(facts.get('collective'))}'s"
    result.details.append(f"{why}: bandwidth not assessed")
    return f"{summary}; bandwidth not assessed ({why})"
