"""torch.distributed.elastic's failure summary as users paste it (issue 35, batch 142): torchrun's agent

    ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 1 (pid: 5621) of binary: ...
    torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
    Failures:
      <NO_OTHER_FAILURES>
    Root Cause (first observed failure):
    [0]:
      time      : 2025-05-21_15:43:03
      host      : node-7
      rank      : 0 (local_rank: 0)
      exitcode  : -9 (pid: 14750)
      error_file: <N/A>
      traceback : Signal 9 (SIGKILL) received by PID 14750

and its rendezvous that never formed (`RendezvousConnectionError: The connection to the C10d store has failed`,
`RendezvousTimeoutError`, `DistStoreError`). Into the train facts' `failures` (FACTS.md: `rank` and `node` as the table
prints them, null where not shown; `phase` `died` for a worker that ended, `init` for the rendezvous; `type` the
signal's name for a negative exit code, else the launcher's exception; `message` what the table or line says), judged
by the train check (verify/checks/train/launcher.py: the job's, never a drain; a CUDA error a traceback names by the
catalog). The table's root cause first, then the other failures it lists."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
_TABLE = re.compile(r"^[^\S\n]*Root Cause \(first observed failure\):|^[^\S\n]*Failures:\s*$", re.MULTILINE)
_ENTRY = re.compile(r"^[^\S\n]*\[(\d+)\]:\s*$", re.MULTILINE)
_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*((?:.*\S)?)\s*$")
_AGENT = re.compile(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\) of binary: [^\n]*")
_RENDEZVOUS = re.compile(r"\b(Rendezvous(?:Connection|Timeout|Closed)Error|DistStoreError): ([^\n]*)")
_CHILD = re.compile(r"\bChildFailedError\b[^\n]*")
# a launcher above torchrun (accelerate, deepspeed's runner) reporting its child killed: `subprocess.CalledProcessError:
# Command '[...]' died with <Signals.SIGKILL: 9>.`
_DIED = re.compile(r"CalledProcessError: Command [^\n]* died with <Signals\.(SIG[A-Z]+): (\d+)>")
# the table's own rows pasted without its `Root Cause` header or `[N]:` mark (issue 35, batch 206): torch's `rank : 0
# (local_rank: 0)` and `exitcode : -11 (pid: N)` rows together name one failed worker
_BARE_RANK = re.compile(r"^[^\S\n]*rank\s*:\s*\d+ \(local_rank: \d+\)\s*$", re.MULTILINE)
_BARE_EXIT = re.compile(r"^[^\S\n]*exitcode\s*:\s*-?\d+ \(pid: \d+\)\s*$", re.MULTILINE)


def _entries(text: str) -> list[dict[str, str]]:
    """The table's `[N]:` blocks, the root cause's first (torch prints `Failures:` above it)."""
    cause = text.find("Root Cause (first observed failure):")
    found: list[tuple[bool, dict[str, str]]] = []
    marks = list(_ENTRY.finditer(text))
    for n, mark in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        fields: dict[str, str] = {}
        for line in text[mark.end():end].splitlines():
            if m := _FIELD.match(line):
                fields.setdefault(m.group(1), m.group(2))
            elif line.strip().startswith("="):
                break
        if fields:
            found.append((cause < 0 or mark.start() < cause, fields))
    return [f for _, f in sorted(found, key=lambda e: e[0])]


def _failure(rank: int | None, node: str | None, code: int | None, message: str) -> dict[str, Any]:
    signal = _SIGNALS.get(-code) if code is not None and code < 0 else None
    return {"rank": rank, "node": node, "phase": "died", "type": signal or "ChildFailedError", "message": message[:400]}


def _from_table(fields: dict[str, str]) -> dict[str, Any]:
    rank = re.match(r"(\d+)", fields.get("rank", ""))
    code = re.match(r"(-?\d+)", fields.get("exitcode", ""))
    host = fields.get("host", "").strip()
    host = "" if host.upper() in ("<N/A>", "N/A") else host       # torch's word for a field it did not fill
    traceback = fields.get("traceback", "")
    said = [f"exitcode: {fields['exitcode']}"] if "exitcode" in fields else []
    if traceback and not traceback.startswith("To enable traceback"):
        said.append(traceback)                 # torch's hint when no error file was written names no cause
    return _failure(int(rank.group(1)) if rank else None, host or None, int(code.group(1)) if code else None,
                    "; ".join(said) or "ChildFailedError")


def _bare(text: str) -> bool:
    return bool(printed(_BARE_RANK, text) and printed(_BARE_EXIT, text))


def _bare_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if m := _FIELD.match(line):
            fields.setdefault(m.group(1), m.group(2))
    return fields


def detect(text: str) -> bool:
    return bool(printed(_AGENT, text) or printed(_RENDEZVOUS, text) or printed(_CHILD, text) or printed(_DIED, text)
                or _bare(text))


def parse(text: str) -> dict[str, Any]:
    failures = [_from_table(f) for f in _entries(text)] if _TABLE.search(text) else []
    if not failures and not _TABLE.search(text) and _bare(text):
        failures = [_from_table(_bare_fields(text))]
    if not failures and (agent := printed(_AGENT, text)):
        failures = [_failure(None, None, int(agent.group(1)), agent.group(0))]
    if not failures and (store := printed(_RENDEZVOUS, text)):
        failures = [{"rank": None, "node": None, "phase": "init", "type": store.group(1),
                     "message": store.group(2).strip()[:400]}]
    if not failures and (died := printed(_DIED, text)):
        failures = [_failure(None, None, -int(died.group(2)), died.group(0)[-200:])]
    if not failures and (child := printed(_CHILD, text)):
        failures = [{"rank": None, "node": None, "phase": "died", "type": "ChildFailedError",
                     "message": child.group(0).strip()[:400]}]
    return {"failures": failures}
