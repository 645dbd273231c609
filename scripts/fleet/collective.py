"""A failed check of a collective across nodes is no drain of the node that wrote its report (NVSentinel's isolation
rule: a failure shared by a group names no member until a pair against known-good partners does).

`make slurm`'s nccl.json (the all-reduce across every node, from global rank 0) and `make isolate`'s pair reports
are written by one node of the group: an NCCL_WRONG_RESULT or NCCL_TIMEOUT there is a fault of one of the group's
nodes or of the links between them, not of the writer. The fleet report keeps the node not passing (no false pass),
lists no drain for it, and says which run names the node at fault: make isolate.
"""
from __future__ import annotations

from typing import Any

# the checks verify runs as one group across nodes (`make slurm`'s nccl.json from global rank 0: --checks nccl,train);
# every other check judges the node it ran on alone, whatever its data says
ACROSS = frozenset({"nccl", "train"})


def group_nodes(check: dict[str, Any]) -> int | None:
    """How many nodes the check ran across, when more than one; else None. verify writes the nccl check's `nodes` as a
    count and the train check's as the sorted names of its ranks' nodes (verify/checks/train/verdict.py): a train
    failure across two nodes, read as no group, listed its writer (rank 0, the majority's replica) to drain for a
    replica another node diverged (hunt99). A `nodes` in any other check's data is none verify writes: that check
    judged the node that wrote it, and its host fault is that node's."""
    if check.get("name") not in ACROSS:
        return None
    data = check.get("data")
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if isinstance(nodes, list):
        nodes = len({str(n) for n in nodes})
    return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1 else None


def note(node: str, report: str, check: dict[str, Any], nodes: int) -> str:
    return (f"{node} ({report}): {check.get('name')} {check.get('code') or 'failed'} ran across {nodes} nodes, "
            f"written by {node}: the fault is one of those nodes or their links, not {node} by itself; no drain "
            "listed (make isolate names the node)")
