"""A bus error in NCCL's own threads, as the crash's catcher printed it (issue 35, batch 142): UCX's handler
`[host:pid :0:tid] Caught signal 7 (Bus error: nonexistent physical address)` above `==== backtrace (tid: N) ====`
and NCCL's frames (`ncclGroupEnd()`, `ncclGetUniqueId()`, `libnccl.so.2`). Read into the nccl facts' `error`, judged
by the nccl check (verify/checks/nccl/shmbus.py: NCCL's /dev/shm segment the container could not back, the job's).
A bus error whose backtrace names none of NCCL's frames is not read here: whose mapping it was the text does not say."""
from __future__ import annotations

import re
from typing import Any

from ..checks.nccl.crash import DRIVER_FRAME, NCCL_FRAME
from . import nccl
from .said import printed

_BUS = re.compile(r"Caught signal 7 \(Bus error[^\n]*")
_FRAMES_AFTER = 40


def _crash(text: str) -> tuple[str, list[str]] | None:
    found = printed(_BUS, text)
    if not found:
        return None
    shown = "\n".join(text[found.start():].splitlines()[:_FRAMES_AFTER])
    if DRIVER_FRAME.search(shown):
        return None
    frames = list(dict.fromkeys(m.group(0) for m in NCCL_FRAME.finditer(shown)))
    return (found.group(0).strip()[:200], frames) if frames else None


def detect(text: str) -> bool:
    return _crash(text) is not None


def parse(text: str) -> dict[str, Any]:
    facts = nccl.parse(text)
    crash, frames = _crash(text) or ("", [])
    said = f"{crash}; frames in NCCL: {', '.join(frames[:6])}"
    facts["error"] = f"{facts['error']} | {said}" if facts.get("error") else said
    facts["backend"] = facts.get("backend") or "nccl"
    return facts
