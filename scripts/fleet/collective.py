"""A failed check of a collective across nodes is no drain of the node that wrote its report (NVSentinel's isolation
rule: a failure shared by a group names no member until a pair against known-good partners does).

`make slurm`'s nccl.json (the all-reduce across every node, from global rank 0) and `make isolate`'s pair reports
are written by one node of the group: an NCCL_WRONG_RESULT or NCCL_TIMEOUT there is a fault of one of the group's
nodes or of the links between them, not of the writer. The fleet report keeps the node not passing (no false pass),
lists no drain for it, and says which run names the node at fault: make isolate.
"""
from __future__ import annotations

from typing import Any


def group_nodes(check: dict[str, Any]) -> int | None:
    """How many nodes the check ran across (its data's `nodes`, as verify writes it), when more than one; else None."""
    data = check.get("data")
    nodes = data.get("nodes") if isinstance(data, dict) else None
    return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1 else None


def note(node: str, report: str, check: dict[str, Any], nodes: int) -> str:
    return (f"{node} ({report}): {check.get('name')} {check.get('code') or 'failed'} ran across {nodes} nodes, "
            f"written by {node}: the fault is one of those nodes or their links, not {node} by itself; no drain "
            "listed (make isolate names the node)")
