"""A DataLoader that ran out of /dev/shm, as torch prints it in a training job's log (torch/utils/data/_utils/
signal_handling.py and the worker's shared-memory manager):

    ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
    RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.
    RuntimeError: unable to allocate shared memory(shm) for file </torch_123_456_0>: No space left on device (28)

Into the train facts' one failure in the data phase with its `shm_error` (verify/shared/shmem.py's own reading of the
same words, as verify's train check records its own run): the judge's SHM_TOO_SMALL, owner job (the container's
/dev/shm, `--shm-size` / `--ipc=host`). A program's log names no rank and no node: the failure is the process that
printed it, its rank and node null (FACTS.md's TrainFailure: not shown). Its `type` is the exception the line prints
(`RuntimeError: DataLoader worker ...`), else the signal the line names (`Bus error`: the worker's handler prints no
exception). A line that quotes the words in prose (verify/explain/said.py) is none."""
from __future__ import annotations

import re
from typing import Any

from ..shared.shmem import recognise as recognise_shm
from .said import printed

# torch's own lines: the parent's error for a worker killed by SIGBUS, the worker's handler,
# and the shared-memory manager refusing a segment; a space that a terminal's wrap joined away (`Bus` + `error`,
# verify/explain/wrap.py cannot tell a cut at a blank from one inside a word) is not asked for
_LOADER = re.compile(r"DataLoader worker \(pid \d+\) is killed by signal: ?Bus ?error"
                     r"|Unexpected bus error encountered in worker\b[^\n]*shared memory"
                     r"|unable to allocate shared memory\(shm\)|unable to write to file </torch_")
# a worker killed by another signal (`is killed by signal: Killed.`: SIGKILL, the OOM killer reclaiming host RAM;
# `Segmentation fault`, `Aborted`): a failure of the data phase with no /dev/shm exhaustion shown (batch 241)
_KILLED = re.compile(r"DataLoader worker \(pid \d+\) is killed by signal: ?(?!Bus ?error)\w[^\n]*")
_TYPE = re.compile(r"(\w+(?:Error|Exception)): [^\n]*$")
# the signal a line names where it prints no exception: `is killed by signal: Killed.`, the handler's `bus error`
_SIGNAL = re.compile(r"killed by signal: ?(\w[\w ]*?)\.?\s*$|\b(bus error)\b", re.IGNORECASE)
_REFLOW = 3                 # lines a reflowed message spans at most (torch's parent line: about 190 characters)


def _unwrapped(text: str) -> str:
    """A post's soft wrap undone: torch's message broken at word boundaries (`... by signal: Bus` / `error. It is ...`,
    a mail or a forum reflowing it) is joined back where the joined lines, and not the first alone, hold it."""
    lines, out = text.splitlines(), []
    while lines:
        line = lines.pop(0)
        more = _rest(line, lines)
        out.append(" ".join([line.rstrip(), *(rest.strip() for rest in lines[:more])]) if more else line)
        del lines[:more]
    return "\n".join(out)


def _rest(line: str, after: list[str]) -> int:
    """How many of the lines after `line` are the rest of a message of torch's that starts on it (0: none)."""
    if _LOADER.search(line) or not line.strip():
        return 0
    for more in range(1, min(_REFLOW, len(after)) + 1):
        found = _LOADER.search(" ".join([line.rstrip(), *(rest.strip() for rest in after[:more])]))
        if found:
            return more if found.start() < len(line.rstrip()) else 0
    return 0


def _lines(text: str) -> list[str]:
    return [line.strip() for line in _unwrapped(text).splitlines() if _LOADER.search(line)]


def detect(text: str) -> bool:
    if not ("DataLoader" in text or "shared memory" in text):
        return False
    return printed(_LOADER, _unwrapped(text)) is not None or printed(_KILLED, text) is not None


def parse(text: str) -> dict[str, Any]:
    lines = _lines(text)
    if not lines:
        killed = printed(_KILLED, text)
        assert killed is not None       # detect() chose this parser
        line = text[text.rfind("\n", 0, killed.start()) + 1:killed.end()]
        named = _TYPE.search(line)
        return {"failures": [{"rank": None, "node": None, "phase": "data", "type": _kind(named, line),
                              "message": killed.group(0).strip()[:400]}]}
    # the parent's line (what the job raised) where printed, else the worker's own
    raised = next((line for line in lines if "is killed by signal" in line or _TYPE.search(line)), lines[0])
    named = _TYPE.search(raised)
    return {"failures": [{"rank": None, "node": None, "phase": "data", "type": _kind(named, raised),
                          "message": (raised[named.end(1) + 2:] if named else raised)[:400],
                          "shm_error": recognise_shm("\n".join(lines)) or lines[0][:300]}]}


def _kind(named: re.Match[str] | None, line: str) -> str:
    """The failure's type as the line shows it: the exception it prints, else the signal it names (capitalised as
    the signal's name is written: `Bus error`), never an exception type it does not print."""
    if named:
        return named.group(1)
    signal = _SIGNAL.search(line)
    word = (signal.group(1) or signal.group(2)) if signal else "killed by a signal"
    return word[:1].upper() + word[1:]
