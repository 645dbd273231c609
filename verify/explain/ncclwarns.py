"""NCCL's closing run of WARNs: several ranks (threads) of one process WARN the same failure, each with its failing
returns, and the excerpt ends on one of them (NVIDIA/nccl#2237, 2.30.7: `gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL
WARN DOCA failure 21`, `gin_host_gdaki.cc:683 (ncclGinGdakiCreateContext) -> 2`, then rank [1]'s same WARN). The
last WARN alone then has nothing after it; the run's first WARN, with the returns that follow it, is the failure.
Pure; read by verify/explain/nccl.py where its last WARN alone decides nothing."""
from __future__ import annotations

import re

from ..checks.nccl import ncclog
from ..checks.nccl.netinit import NO_NETWORK
from .said import printed

# net.cc's WARN that NCCL could start no network (netinit's words, as NCCL itself logs them with its tag)
_NO_NETWORK_WARN = re.compile(rf"NCCL WARN (?:{NO_NETWORK.pattern})[^\n]*", NO_NETWORK.flags)


def closing_run(text: str, warns: list[re.Match[str]], returns: re.Pattern[str]) -> tuple[re.Match[str], list[str]] | None:
    """(the first WARN of the run, the failing returns after it) where every NCCL line after that WARN is another
    WARN or a failing return (`file.cc:N -> R`, R not 0: nothing went on) and at least one return failed; else None."""
    first: re.Match[str] | None = None
    traces: list[str] = []
    for i in reversed(range(len(warns))):
        end = warns[i + 1].start() if i + 1 < len(warns) else len(text)
        said = [m for m in map(ncclog.message, text[warns[i].end():end].splitlines()) if m]
        failing = [t for t in said if (r := returns.match(t)) and r.group(1) != "0"]
        if len(failing) != len(said):
            break
        traces = failing + traces
        if traces:
            first = warns[i]
    return (first, traces) if first is not None else None


# NCCL's own prefix, `host:pid:tid [dev]`: which process printed a line
_PROCESS = re.compile(r"(?<![\w.-])([\w.-]+:\d+):\d+ \[\d+\] ")


def own_lines(after: str, warn: str) -> str:
    """What the WARN's own process printed after it: the lines of other processes interleaved below it (another
    rank's start-up after this rank's failure, batch 134) say nothing of whether this one went on. A WARN without
    NCCL's prefix, or lines without one, are kept as they are."""
    own = _PROCESS.search(warn)
    if not own:
        return after
    return "\n".join(line for line in after.splitlines()
                     if not (other := _PROCESS.search(line)) or other.group(1) == own.group(1))


def no_network_failed(text: str, returns: re.Pattern[str], closing: re.Pattern[str]) -> str | None:
    """NCCL saying it could start no network it may use, where NCCL logged nothing after it but failing returns: it
    returns ncclInvalidUsage (checks/nccl/netinit.py), the failure whether or not the program's error made it into the
    paste (batch 301: aws-ofi-nccl found no provider). One NCCL went on past (`Using network Socket`) is none."""
    if not (said := printed(_NO_NETWORK_WARN, text)):
        return None
    after = [m for m in map(ncclog.message, text[said.end():].splitlines()) if m and not closing.match(m)]
    if any(not ((r := returns.match(m)) and r.group(1) != "0") for m in after):
        return None
    return f"init: {said.group(0).strip()[:300]}"
