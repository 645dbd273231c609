"""The collective a failure names, in a verdict's words: the one the log shows, never an all-reduce assumed.

A job's log names the operation that failed in torch's and NCCL's own words: torch's work descriptor
(`WorkNCCL(SeqNum=1, OpType=BROADCAST, ...)`, c10d's OpType enum: BROADCAST, ALLREDUCE, ALLREDUCE_COALESCED, REDUCE,
ALLGATHER, _ALLGATHER_BASE, ALLGATHER_COALESCED, GATHER, SCATTER, REDUCE_SCATTER, ALLTOALL_BASE, ALLTOALL, SEND, RECV,
RECVANYSOURCE, BARRIER, _REDUCE_SCATTER_BASE, COALESCED, _ALLREDUCE_SPARSE), its flight recorder's profiling name
(`nccl:all_reduce`, `nccl:_allgather_base`), NCCL's own (`ncclBroadcast(`, its COLL trace `AllGather: opCount 3`),
nccl-tests' program (`all_gather_perf`), or the error's leading phase as a record writes it (`broadcast: ...`,
FACTS.md). Verify's own probe runs an all-reduce: its records say so where nothing else is named; a record of a
job's log that shows no operation says "a collective"."""
from __future__ import annotations

import re
from typing import Any

from ...shared import grouplayout
from .collective import label
from .spawn import LEADING_PHASE

# any spelling (letters only, lower case) -> the name a record's `error` leads with (torch's Python API's)
_KEYS = {
    "allreduce": "all_reduce", "allreducecoalesced": "all_reduce", "allreducesparse": "all_reduce",
    "broadcast": "broadcast", "reduce": "reduce", "gather": "gather", "scatter": "scatter",
    "allgather": "all_gather", "allgatherbase": "all_gather", "allgathercoalesced": "all_gather",
    "allgatherintotensor": "all_gather", "allgatherintotensorcoalesced": "all_gather",
    "reducescatter": "reduce_scatter", "reducescatterbase": "reduce_scatter", "reducescattertensor": "reduce_scatter",
    "reducescattertensorcoalesced": "reduce_scatter",
    "alltoall": "all_to_all", "alltoallbase": "all_to_all", "alltoallsingle": "all_to_all", "alltoallv": "all_to_all",
    "send": "send", "isend": "send", "recv": "recv", "irecv": "recv", "recvanysource": "recv",
    "sendrecv": "sendrecv", "batchisendirecv": "sendrecv", "barrier": "barrier", "monitoredbarrier": "barrier",
    "coalesced": "coalesced",
}
_WORDS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
          "all_to_all": "all-to-all", "recv": "receive", "sendrecv": "send/receive", "coalesced": "coalesced collectives"}

# where each kind of log names it, most telling first: torch's descriptor of the failed work, then the others; each
# with a literal every match holds (searched over whole logs: a pattern led by `\b` or an alternation is tried at
# every position, a second on 30 MB; one led by a literal is found by a scan for it, and a name only key() knows counts)
_SHOWN = (
    ("OpType", re.compile(r"OpType ?[=:] ?(_?[A-Z][A-Z_]*)")),
    ("nccl:", re.compile(r"nccl:(_?[a-z][a-z_]*)")),
    ("nccl", re.compile(r"nccl(AllReduce|Broadcast|ReduceScatter|Reduce|AllGather|AlltoAll|Gather|Scatter|Send|Recv)\(")),
    (": opCount", re.compile(r"\b(AllReduce|Broadcast|ReduceScatter|Reduce|AllGather|AlltoAll|Gather|Scatter|SendRecv|"
                             r"Send|Recv): opCount\b")),
    ("_perf", re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoallv?|sendrecv|broadcast|reduce|gather|scatter)"
                         r"_perf\b")),
)


def key(name: str) -> str | None:
    """The record's name of a collective in any spelling torch or NCCL prints it; None for no collective's."""
    return _KEYS.get(re.sub(r"[^a-z]", "", name.lower()))


def shown(text: str) -> str | None:
    """The collective the text shows (the record's name of it), by the most telling kind of line; None if none."""
    for literal, pattern in _SHOWN:
        if literal in text and (name := next((k for m in pattern.finditer(text) if (k := key(m.group(1)))), None)):
            return name
    return None


def leading(error: str) -> str | None:
    """The collective an error's leading phase names (`broadcast: ...`); None for a phase (`init`, `collective`)."""
    head = LEADING_PHASE.match(error)
    return key(head.group(0)[:-2]) if head else None


def words(name: str) -> str:
    return _WORDS.get(name, name)


def what_failed(facts: Any, said: list[str], own: bool) -> str:
    """The words for the operation that failed: the one the error or NCCL's proof lines show, then the error's
    leading phase, the nccl-tests program recorded, verify's own all-reduce (`own`), else "a collective"."""
    text = " | ".join(said)
    if name := shown(text) or leading(said[0] if said else ""):
        return words(name)
    if facts.get("collective"):
        return label(facts["collective"])
    return "all-reduce" if own else "a collective"


# the `mode` this verify's own probes record (FACTS.md): its local ranks as grouplayout reads them (one rule), its
# torchrun group, and FACTS.md's bare words for them (`local processes`, `torchrun`); any other is how a job formed
# its group, its log a job's
_OWN_GROUP = re.compile(r"^torchrun group: rank \d+ of \d+|^(?:local processes|torchrun)$")


def own_mode(mode: Any) -> bool:
    text = str(mode or "")
    return bool(grouplayout.LOCAL_MODE.match(text) or _OWN_GROUP.match(text))


def over(facts: Any, said: list[str]) -> str:
    """`broadcast over nccl`: the start of a failed collective's summary, all-reduce only for this verify's own."""
    return f"{what_failed(facts, said, own_mode(facts.get('mode')))} over {facts.get('backend') or 'NCCL'}"


def named(error: str | None, text: str) -> str | None:
    """A log reader's error with its generic collective phase (`all_reduce: `, where a reader knew only that a
    collective failed) replaced by the collective the error or the log shows, else `collective: `."""
    phase, _, rest = (error or "").partition(": ")
    if phase != "all_reduce" or not rest:
        return error
    return f"{shown(error or '') or shown(text) or 'collective'}: {rest}"
