"""Each node's history of what torchimages did to it: STATE/history/<node>.jsonl, one JSON object a line.

A line (schema 1): {"schema": 1, "time": "2026-11-25T19:40:00Z", "epoch": 1795635600.0, "node": "n2",
"event": <EVENTS>, "code": "CHECK_TIMEOUT" | null, "detail": "one line"}. Appended with one write() to a file
opened O_APPEND, so a line is never interleaved with another writer's or left half-written by this one; a reader
skips a line it cannot parse and says how many it skipped. The fleet report reads these files.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

SCHEMA = 1
EVENTS = ("pass", "fault", "not-assessed", "drain", "drain-refused", "resume", "resume-refused", "inspect")
FLAP_WINDOW_S = 7 * 86400.0


def path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "history", f"{node}.jsonl")


def record(state_dir: str, node: str, event: str, code: str | None, detail: str,
           now: float | None = None) -> str | None:
    """Append one event; None, or why it could not be appended (the caller says it; nothing is half-written)."""
    if event not in EVENTS:
        raise ValueError(f"unknown history event {event!r}")
    if not node or "/" in node or node.startswith("."):
        raise ValueError(f"node name {node!r} cannot name a history file")
    now = time.time() if now is None else now
    entry = {"schema": SCHEMA, "time": datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "epoch": round(now, 3), "node": node, "event": event, "code": code, "detail": detail[:1000]}
    data = (json.dumps(entry, ensure_ascii=True, allow_nan=False) + "\n").encode()
    target = path(state_dir, node)
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"cannot append to the history {target}: {exc.strerror or exc}"
    return None if written == len(data) else f"short write to the history {target}"


@dataclass
class History:
    events: list[dict[str, Any]]
    skipped: int                  # lines that were not a schema-1 event
    error: str | None = None      # why the file could not be read (its events are then unknown, not none)


def _valid(entry: Any) -> bool:
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("event") not in EVENTS:
        return False
    epoch = entry.get("epoch")
    return isinstance(epoch, (int, float)) and not isinstance(epoch, bool) and math.isfinite(epoch) \
        and isinstance(entry.get("time"), str)


def read(state_dir: str, node: str) -> History:
    """The node's events in file order; no file is an empty history, an unreadable one says why."""
    events: list[dict[str, Any]] = []
    skipped = 0
    try:
        with open(path(state_dir, node), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return History([], 0)
    except OSError as exc:
        return History([], 0, f"cannot read the history {path(state_dir, node)}: {exc.strerror or exc}")
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        ok = _valid(entry)
        if ok:
            events.append(entry)
        else:
            skipped += 1
    return History(events, skipped)


def failed_again_after_resume(events: list[dict[str, Any]], window_s: float = FLAP_WINDOW_S) -> str | None:
    """Why the node needs hardware inspection, or None: its last drain came within window_s of a resume before it."""
    drains = [e for e in events if e["event"] == "drain"]
    if not drains:
        return None
    last = drains[-1]
    resumes = [e for e in events if e["event"] == "resume" and e["epoch"] <= last["epoch"]]
    if not resumes:
        return None
    gap = last["epoch"] - resumes[-1]["epoch"]
    if gap > window_s:
        return None
    return (f"drained again ({last.get('code')}) {gap / 3600:.1f} h after it was resumed on {resumes[-1]['time']}: "
            f"a fault that comes back within {window_s / 86400:.0f} d needs hardware inspection")


def counts(events: list[dict[str, Any]]) -> dict[str, int]:
    found = dict.fromkeys(EVENTS, 0)
    for e in events:
        found[e["event"]] += 1
    return found
