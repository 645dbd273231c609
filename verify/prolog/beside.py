"""What a verdict becomes beside what else the run shows: a host fault proven beside a timeout no second run settled,
and a figure measured while another prolog of this node ran.

NVSentinel's checker rule believes a stall only once it recurs alone; the same holds for a slow figure: eight jobs
starting together on a node (shared GPUs: gres/shard, MPS) run eight preflights whose all-reduces share the same
links, and each one's bus bandwidth is a fraction of the node's. A figure measured beside another prolog of the node
is the busy host's, not the node's (not assessed, PREFLIGHT_BUSY, which no hang streak counts).
And whatever stays unjudged, a host fault beside it that needs no second run (a wrong all-reduce, a /dev/shm too
small) is judged: the project's first rule, a fault the evidence shows is judged whatever else is missing. Pure.
"""
from __future__ import annotations

from typing import Any

from .verdict import FAULT, NOT_ASSESSED, TIMEOUT_CODES, UNJUDGED_CODES, Verdict, _rank, not_assessed

# host-owned figures below their baseline that a preflight measures (verify --preflight: the nccl check's all-reduce)
SLOW_CODES = frozenset({"BANDWIDTH_LOW", "FABRIC_BANDWIDTH_LOW"})


def proven_host_fault(report: dict[str, Any]) -> Verdict | None:
    """The report's first host fault that needs no second run and no quiet host (any but a host-owned timeout, a slow
    figure, a measurement gone wrong or an owner missing), or None."""
    failed = sorted((c for c in report["checks"] if c["status"] == "fail"), key=_rank)
    c = next((c for c in failed if c.get("owner") == "host" and c.get("code") and str(c["code"]) not in
              TIMEOUT_CODES | SLOW_CODES | UNJUDGED_CODES), None)
    return None if c is None else Verdict(FAULT, str(c["code"]), "host", str(c.get("summary") or ""), c["name"])


def busy_figure(verdict: Verdict, beside: str) -> Verdict:
    """A slow figure's drain measured while `beside` (another prolog of this node ran): not assessed."""
    return not_assessed("PREFLIGHT_BUSY", f"{verdict.code} in {verdict.check}, but {beside}: a figure measured "
                        f"beside another preflight of this node is a busy host's, not the node's ({verdict.summary})",
                        verdict.check)


def with_proven(verdict: Verdict, report: dict[str, Any], unsettled: str) -> Verdict:
    """`verdict`, or where it is not assessed, the host fault proven beside what stayed `unsettled`."""
    if verdict.kind != NOT_ASSESSED or (proven := proven_host_fault(report)) is None:
        return verdict
    return Verdict(FAULT, proven.code, "host", f"{proven.summary} (beside it {unsettled}, unconfirmed: {verdict.code})",
                   proven.check)
