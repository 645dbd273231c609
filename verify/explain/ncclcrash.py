"""A segmentation fault inside NCCL or its net plugin, as the crash's catcher printed it with its backtrace: UCX's
handler (`Caught signal 11 (Segmentation fault: ...)` above `==== backtrace (tid: N) ====` and frames ` 1 0x...
pncclRedOpDestroy()  ???:0`), gdb's `bt` of the core (`#0  0x0000000000000000 in ?? ()`, `#1 ... in nccl_p2p_ib_init
(...) at p2p_plugin.c:315`), a shell's `Segmentation fault (core dumped)` above the frames. Read into the nccl facts'
`error` (with whatever NCCL's own log beside it says, verify/explain/nccl.py), judged by the nccl check
(verify/checks/nccl/crash.py). A crash whose backtrace names none of NCCL's frames is not read: whose it is the text
does not say."""
from __future__ import annotations

import re
from typing import Any

from ..checks.nccl import opname
from ..checks.nccl.crash import SEGV, driver_crash, nccl_crash
from . import nccl
from .said import printed

FRAMES_AFTER = 60             # the backtrace's lines read after the crash's own line
# a frame that forms the communicator (its init, the net plugin's init, the bootstrap): the crash was at init
_INIT_FRAME = re.compile(r"Init|_init\b|commAlloc|[Bb]ootstrap")


def _backtrace(text: str) -> str | None:
    """The crash's line and the lines after it, where the text prints a segmentation fault (not one prose mentions)."""
    crash = printed(SEGV, text)
    if not crash:
        return None
    start = text.rfind("\n", 0, crash.start()) + 1
    return "\n".join(text[start:].splitlines()[:FRAMES_AFTER])


def detect(text: str) -> bool:
    shown = _backtrace(text)
    return bool(shown and (nccl_crash(shown) or driver_crash(shown)))


def parse(text: str) -> dict[str, Any]:
    """The nccl facts of NCCL's log beside the crash (if any), with the crash as the failure: NCCL's own error first
    where its log names one (a cause the judge reads before the crash), then the crash and NCCL's frames."""
    facts = nccl.parse(text)
    shown = _backtrace(text) or ""
    crash = shown.splitlines()[0].strip() if shown else ""
    frames = (nccl_crash(shown) or ("", []))[1]
    # a crash in a collective names which only where the log shows it (opname.py), never an all-reduce assumed
    phase = "init" if any(_INIT_FRAME.search(f) for f in frames) else (opname.shown(text) or "collective")
    said = f"{crash[:200]}; frames in NCCL: {', '.join(frames[:6])}"
    if (driver := driver_crash(shown)) and not frames:
        said = f"{crash[:200]}; in the driver: {driver}"
    elif driver:
        said = f"{said}\n{shown}"          # the frames as printed: the driver's innermost one decides (crash.py)
    facts["error"] = f"{facts['error']} | {said}" if facts.get("error") else f"{phase}: {said}"
    return facts
