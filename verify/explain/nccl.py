"""NCCL's INFO log (NCCL_DEBUG=INFO), as any launcher prints it: read by verify/ncclog.py into the nccl facts'
`nccl_log`, with the version NCCL prints and the error a failing rank logs."""
from __future__ import annotations

import re
from typing import Any

from .. import ncclog

_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout.*|.*[Tt]imed? ?out.*(?:NCCL|collective).*")
# what torch raises or NCCL returns when a collective fails (a WARN line alone is no failure: the verbs message is one)
_ERROR = re.compile(r"NCCL error[^\n]*|(?:ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclInvalidUsage|"
                    r"ncclRemoteError)[^\n]*")


# NCCL's trace of a failing call, `bootstrap.cc:270 -> 2` (file:line -> ncclResult_t), printed up the stack
_TRACE = re.compile(r"\b([\w/]+\.(?:cc|c|cpp)):\d+ -> (\d+)")
_INIT = re.compile(r"bootstrap|init\.cc|socket\.cc")
# an IB work completion with an error status (ibv_wc_status: 12 retry exceeded, 5 flushed): the link, not the job
_COMPLETION = re.compile(r"NET/IB ?: ?Got completion.*?(?:with (?:error|status=)\s*\d+)[^\n]*")


# NCCL's WARN (`[host:pid:tid [dev]] file.cc:line NCCL WARN <message>`, the prefix may be missing) that reports a
# failure: a call that failed or returned what it should not. Not the WARNs that are no failure of the job: the
# verbs library or net plugin not found, aws-ofi-nccl's provider search (those are the log's causes, read by
# verify/ncclog.py), NCCL's advice about the kernel command line, IB async events, a path it could not resolve.
_WARN = re.compile(r"(?:\S+\.(?:cc|c|cpp|h):\d+\s+)?NCCL WARN\s+(.*)$")
_FAILURE = re.compile(r"\b(?:fail(?:ed|ure)?|wrong|error|refused|reset|timed? ?out|abort(?:ed|ing)?|mismatch|unexpected|"
                      r"invalid|closed|unreachable|unable|cannot|could not)\b", re.IGNORECASE)
_BENIGN = re.compile(r"libibverbs|NET/Plugin|NET/OFI|iommu|async event|real path|No device found", re.IGNORECASE)


def _warned(text: str) -> str | None:
    """The first NCCL WARN line that reports a failure, from its source location on (the launcher's prefix off)."""
    for line in text.splitlines():
        hit = _WARN.search(re.sub(r"\s*\[repeated \d+x across cluster\]\s*$", "", line))
        if hit and _FAILURE.search(hit.group(1)) and not _BENIGN.search(hit.group(1)):
            return hit.group(0).strip()[:300]
    return None


def detect(text: str) -> bool:
    log = ncclog.parse(text)
    return bool(log and (log.get("proof") or log.get("net_channels") or log.get("transports") or log.get("ofi_error")
                         or _COMPLETION.search(text) or ("NCCL" in text and _TRACE.search(text))))


def _error(text: str) -> str | None:
    """The failure a rank logged: a watchdog timeout, an IB completion error, torch's `NCCL error`, NCCL's WARN of a
    failing call, or NCCL's own trace of one (init phase when it runs through the bootstrap or its sockets)."""
    if timeout := _TIMEOUT.search(text):
        return f"all_reduce: {timeout.group(0).strip()[:300]}"
    if completion := _COMPLETION.search(text):
        return f"all_reduce: {completion.group(0).strip()[:300]}"
    if failed := _ERROR.search(text):
        return f"all_reduce: {failed.group(0).strip()[:300]}"
    if warned := _warned(text):
        return f"{'init' if _INIT.search(warned) else 'all_reduce'}: {warned}"
    traces = list(dict.fromkeys(m.group(0) for m in _TRACE.finditer(text)))
    if not any(_INIT.search(t) for t in traces):
        return None                    # a trace elsewhere need not end the job: only a failed bootstrap is read
    return f"init: {'; '.join(traces[:4])}"


def detect_any(text: str) -> bool:
    """Any line NCCL printed, under any launcher's prefixes (Ray's `(EngineCore_DP0 pid=..) (RayWorkerWrapper pid=..,
    ip=..)` stacked): tried last, so a log that only sets up a communicator is an NCCL log with nothing to judge."""
    return bool(ncclog.parse(text))


# src/init.cc: `comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d` (2.19 on; `nranks` before,
# without nNodes): the communicator's size and how many nodes it spans (the largest communicator of the log)
_COMM = re.compile(r"\bcomm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks (\d+)(?: nNodes (\d+))?")


def _sizes(text: str) -> tuple[int | None, int | None]:
    comms = [(int(m.group(1)), int(m.group(2)) if m.group(2) else None) for m in _COMM.finditer(text)]
    if not comms:
        return None, None
    nodes = [n for _, n in comms if n is not None]
    return max(r for r, _ in comms), max(nodes) if nodes else None


def parse(text: str) -> dict[str, Any]:
    version = _VERSION.search(text)
    error = _error(text)
    world, nodes = _sizes(text)
    return {"backend": "nccl", "nccl_version": version.group(1) if version else None, "sizes": None, "error": error,
            "world_size": world, "nodes": nodes, "nccl_log": ncclog.parse(text)}
