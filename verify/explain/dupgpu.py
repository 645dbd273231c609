"""Two ranks of one communicator on one GPU, as NCCL's `Init START` lines show it (issue 35, batch 103).

Each rank logs `host:pid:tid [cudaDev] NCCL INFO [ncclCommInitRank ]comm %p rank %d nranks %d cudaDev %d nvmlDev %d
busId %lx commId 0x%llx - Init START` (2.17+; commId names the communicator across its processes). NCCL refuses two
ranks of one communicator on one host's same GPU (init.cc: `Duplicate GPU detected : rank 0 and rank 2 both on CUDA
device 31000`, ncclInvalidUsage): where the excerpt shows the placement but is cut before that refusal, the
placement is the job's failure. Only the same commId counts (a GPU in several communicators is normal), and a rank
that logged `Init COMPLETE` shows NCCL took it (nothing is inferred then). The host is NCCL's own prefix: containers on
different machines given one hostname would read as one host (NCCL tells them apart by boot id), a limit of any log."""
from __future__ import annotations

import re

# the words between NCCL's prefix and `comm 0x` are a function's name at most (`ncclCommInitRankConfig`): bounded, as
# an unbounded lazy run re-reads the rest of a line from every prefix on it (a paste of joined lines: quadratic)
_START = re.compile(r"(?<![\w.-])([\w.-]+):(\d+):\d+ \[\d+\] NCCL INFO [^\n]{0,200}?\bcomm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks \d+ "
                    r"cudaDev \d+(?: nvmlDev \d+)? busId ([0-9a-fA-F]+) commId (0x[0-9a-fA-F]+) - Init (START|COMPLETE)")


def duplicate(text: str) -> str | None:
    """`init: ...` naming two ranks of one communicator that NCCL's lines put on one GPU of one host, or None."""
    started: dict[tuple[str, str, str], set[int]] = {}
    completed: set[tuple[str, int]] = set()
    for m in _START.finditer(text, 0, 1 << 22):
        host, rank, bus, comm = m.group(1), int(m.group(3)), m.group(4).lower().lstrip("0") or "0", m.group(5).lower()
        if m.group(6) == "COMPLETE":
            completed.add((comm, rank))
        else:
            started.setdefault((comm, host, bus), set()).add(rank)
    for (comm, host, bus), ranks in started.items():
        both = sorted(r for r in ranks if (comm, r) not in completed)
        if len(both) >= 2 and len(both) == len(ranks):
            return (f"init: NCCL's Init START lines put rank {both[0]} and rank {both[1]} of communicator {comm} on one "
                    f"GPU (host {host}, busId {bus}), which NCCL refuses at init as invalid usage: Duplicate GPU detected")
    return None
