"""Which GPUs the application Xids of several processes make suspect (NVIDIA's Xid catalogue: a graphics engine
exception, 13, or a memory page fault, 31, is most often the program's, but the same faults under several programs
on one GPU point at the GPU: run field diagnostics). Xid 43 (a channel stopped after such a fault, or a process
killed) is each program's teardown and is not counted.

A process is not a program: a job run again and again faults under a new pid each time. Where every process's
memory page fault (Xid 31) names the same fault type at the same address within its 2 MiB region (the kernel log's
`faulted @ 0x7f75_7bd4f000. Fault is of type FAULT_PDE ...`), the faults are one program's same access repeated: an
address space laid out afresh per process (ASLR, CUDA's own reservations) only lands on the same offset again where
the same code makes the same allocations and the same bad access. A GPU whose memory or MMU is at fault does not
repeat one program's offset across processes, so those faults stay the job's; any other spread stays suspect. The
same holds for a graphics engine exception (Xid 13) that every process of one program (the same `name=`) meets at
the same class and offset: a game or job restarted into the same fault."""
from __future__ import annotations

import re
from collections.abc import Sequence

from ...facts import XidEvent
from ...shared.xidcatalog import APP, Judged

SUSPECT_XIDS = frozenset({13, 31})
SUSPECT_PROCESSES = 3
_PID = re.compile(r"\bpid=(\d+)")
# Xid 31's MMU fault as r470 and later print it: the faulting virtual address (hex, `_` between its halves) and type
_FAULT = re.compile(r"faulted @ 0x([0-9a-fA-F_]+)\.?\s+Fault is of type (\w+)")
# Xid 13's graphics exception: the engine class and the method offset that faulted (the channel differs per process)
_EXCEPTION = re.compile(r"Graphics Exception: .*?Class ([0-9a-fA-F]+), Offset ([0-9a-fA-F]+)")
_NAME = re.compile(r"\bname=([^,]+),")
REGION = 1 << 21      # 2 MiB: CUDA's large page, the alignment of its virtual address reservations


def fault_shape(text: str) -> tuple[int, str] | None:
    """A memory page fault's address within its 2 MiB region and its type; None where the line does not print them."""
    m = _FAULT.search(text)
    return (int(m.group(1).replace("_", ""), 16) % REGION, m.group(2)) if m else None


def one_program_repeated(texts: Sequence[str]) -> bool:
    """Whether the processes' faults are one program's same access: each line prints its address and type, and
    they are the same in all."""
    shapes = [fault_shape(t) for t in texts]
    if all(shapes) and len(set(shapes)) == 1:
        return True
    names = {m.group(1).strip() if (m := _NAME.search(t)) else None for t in texts}
    exceptions = {m.groups() if (m := _EXCEPTION.search(t)) else None for t in texts}
    return len(names) == 1 and None not in names and len(exceptions) == 1 and None not in exceptions


def suspect_gpus(judged: Sequence[tuple[Judged, XidEvent, str]]) -> dict[str, int]:
    """GPU key -> how many distinct processes met an application Xid 13 or 31 on it, where SUSPECT_PROCESSES or more
    and the faults are not one program's same access repeated."""
    pids: dict[str, set[str]] = {}
    texts: dict[str, list[str]] = {}
    for j, e, key in judged:
        text = str(e.get("text") or "")
        found = _PID.search(text) if j.action == APP and j.xid in SUSPECT_XIDS else None
        if found:
            pids.setdefault(key, set()).add(found.group(1))
            texts.setdefault(key, []).append(text)
    return {key: len(p) for key, p in pids.items()
            if len(p) >= SUSPECT_PROCESSES and not one_program_repeated(texts[key])}
