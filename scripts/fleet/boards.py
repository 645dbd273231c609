"""One GPU is on one node: the reports of two nodes that list one GPU's UUID cannot both be that node's now.

NVML's UUID is the board's own (burnt into its InfoROM, globally unique): the same `GPU-...` in n1's report and in
n2's is a report copied or renamed from one node to the other (a missing report "filled in" by hand, a hostname
edited), or evidence from before the GPU moved between them (an RMA swap) left in a reused folder. Either way one of
them measured no GPU of the node it names, and the fleet counted two healthy nodes on one node's evidence. Both are
listed invalid (which one is not the node's, a file cannot tell): not assessed, the fleet does not pass. A node's
several reports (a rerun, the collective's from rank 0, which holds no gpu check) are one node's, never flagged.
Identities NVML could not read ("N/A") are none (plausible.NO_UUID).
"""
from __future__ import annotations

from typing import Any

from .model import Node
from .plausible import board_uuid, node_key


def _uuids(doc: dict[str, Any]) -> dict[str, str]:
    """The gpu check's boards: each UUID as compared (board_uuid) → as written."""
    gpu = next((c for c in doc.get("checks") or [] if isinstance(c, dict) and c.get("name") == "gpu"), None)
    data = gpu.get("data") if isinstance(gpu, dict) else None
    devices = data.get("devices") if isinstance(data, dict) else None
    return {u: str(d.get("uuid")) for d in devices if isinstance(d, dict) and (u := board_uuid(d.get("uuid")))} \
        if isinstance(devices, list) else {}


def shared(nodes: list[Node], docs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """report → why it is no evidence of its node: it lists a GPU that another node's report lists too."""
    owners: dict[str, dict[str, list[Node]]] = {}      # uuid → node key → its reports
    written: dict[str, str] = {}
    for n in nodes:
        for uuid, said in _uuids(docs.get(n.report) or {}).items():
            owners.setdefault(uuid, {}).setdefault(node_key(n.node), []).append(n)
            written.setdefault(uuid, said)
    why: dict[str, str] = {}
    for uuid, held in sorted(owners.items()):
        if len(held) < 2:
            continue
        names = sorted({n.node for reports in held.values() for n in reports})
        for reports in held.values():
            for n in reports:
                why.setdefault(n.report, (
                    f"its gpu check lists the GPU {written[uuid][:48]!r} that the report(s) of "
                    f"{', '.join(x for x in names if x != n.node)[:120]} "
                    "list too: one board is on one node, so one of these reports is not its node's (a copy, or a GPU "
                    "moved since); not assessed (rerun verify on those nodes)"))
    return why
