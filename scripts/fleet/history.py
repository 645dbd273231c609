"""The prolog's per-node drain history, read on the host side (`make fleet-report STATE_DIR=...`).

The prolog (verify/prolog/history.py, which the host side never imports) appends STATE/history/<node>.jsonl, one
JSON object a line: {"schema": 1, "time", "epoch", "node", "event", "code", "detail"}. This reader takes the same
format: a line that is not a schema-1 event is skipped and counted (with its line numbers), never a traceback.
Per node: the last event, the drains and resumes within WINDOW_S, and whether it is flagged for hardware
inspection (the prolog wrote `inspect` after its last resume, or it was drained again within WINDOW_S of a resume).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import TooLarge, read_bounded
from . import jsonrecord
from .plausible import node_key

SCHEMA = 1
EVENTS = ("pass", "fault", "not-assessed", "drain", "drain-refused", "resume", "resume-refused", "inspect")
WINDOW_S = 7 * 86400.0          # the prolog's flap window (--flap-days, default 7)
MAX_BYTES = 16 << 20            # years of events; a larger file is not a history
CLOCK_SKEW_S = 300.0            # model.CLOCK_SKEW_S (model imports this module): a stamp this far ahead is believed
MAX_NAMES = 100_000             # names in STATE/history: one file (and a lock) per node of the largest cluster


@dataclass
class NodeHistory:
    node: str
    file: str                                   # relative to the state folder
    events: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)     # 1-based numbers of the lines skipped
    error: str | None = None                    # why the file could not be read: its events are unknown, not none
    window: dict[str, int] = field(default_factory=dict)   # event → count within WINDOW_S
    inspect: str | None = None                  # why the node needs hardware inspection
    future: int = 0                             # events stamped past now + CLOCK_SKEW: in no window count

    @property
    def last(self) -> dict[str, Any] | None:
        return self.events[-1] if self.events else None

    @property
    def awaiting(self) -> bool:
        """Flagged, and not back in service since: no preflight passed and no resume after its last drain or flag
        (an operator who inspected it and resumed it by hand, `--revalidate` refusing a flagged node, sees it pass
        its next prolog: then it no longer holds the fleet)."""
        if not self.inspect:
            return False
        marks = [i for i, e in enumerate(self.events) if e["event"] in ("drain", "inspect")]
        if not marks:
            return True
        flagged_at = self.events[marks[-1]]["epoch"]
        # a prolog that started before the drain was written (another job's, on a shared node) ran beside it: its
        # pass is no return to service
        return not any(_back(e, flagged_at) for e in self.events[marks[-1] + 1:])

    @property
    def drained(self) -> dict[str, Any] | None:
        """The last drain when nothing returned the node to service after it (a resume, or a pass of a run that began
        after it while Slurm had it in service), else None: a fault on record that no report of the node's hides."""
        at = max((i for i, e in enumerate(self.events) if e["event"] == "drain"), default=None)
        if at is None:
            return None
        drain = self.events[at]
        return None if any(_back(e, drain["epoch"]) for e in self.events[at + 1:]) else drain


def _back(event: dict[str, Any], since: float) -> bool:
    """The event returned the node to service after `since`: a resume, or a pass the prolog did not record while Slurm
    held the node drained (its `in_service`, the prolog's history.in_service) of a run that began after `since` (one
    that began before it ran beside the drain)."""
    return event["event"] == "resume" or (event["event"] == "pass" and event.get("in_service", True) is True
                                          and _began(event) >= since)


def _began(event: dict[str, Any]) -> float:
    """When the run that wrote the event started (the prolog records `started`), else the event's own stamp."""
    started = event.get("started")
    if isinstance(started, (int, float)) and not isinstance(started, bool) and math.isfinite(started):
        return float(started)
    return float(event["epoch"])


_OPTIONAL_STR = ("code", "boot_id", "action", "check", "kernel_log")   # as the prolog's reader (a list is garbled)


def _valid(entry: Any, node: str) -> bool:
    if not isinstance(entry, dict) or type(entry.get("schema")) is not int or entry.get("schema") != SCHEMA:
        return False
    if not isinstance(entry.get("event"), str) or entry["event"] not in EVENTS:
        return False
    epoch, gpus = entry.get("epoch"), entry.get("gpus")
    return isinstance(epoch, (int, float)) and not isinstance(epoch, bool) and math.isfinite(epoch) \
        and isinstance(entry.get("time"), str) and isinstance(entry.get("node", ""), str) \
        and entry.get("node", node) == node \
        and isinstance(entry.get("detail", ""), str) \
        and (gpus is None or (isinstance(gpus, int) and not isinstance(gpus, bool) and gpus >= 0)) \
        and all(entry.get(k) is None or isinstance(entry[k], str) for k in _OPTIONAL_STR)


def parse(node: str, file: str, text: str) -> NodeHistory:
    """The node's events in file order; each line that is not a schema-1 event is named by its number."""
    found = NodeHistory(node, file)
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line in seen:    # a repeat is one write kept twice (the prolog's reader agrees)
            continue
        seen.add(line)
        try:
            entry = jsonrecord.loads(line)
        except (ValueError, RecursionError):
            entry = None
        if _valid(entry, node):     # another node's line in this node's file is garbled, as the prolog reads it
            found.events.append(entry)
        else:
            found.bad_lines.append(number)
    return found


def _inspect(events: list[dict[str, Any]], window_s: float, now: float | None = None,
             skew_s: float = CLOCK_SKEW_S) -> str | None:
    """Why the node needs hardware inspection: the prolog said so after the last resume, or the last drain came
    within window_s of a resume before it (the prolog's rule, re-read here). "After" and "before" are the file's
    order (append-only), never the stamps: a clock stepped back must not hide a fault that came back."""
    resumed = max((i for i, e in enumerate(events) if e["event"] == "resume"), default=-1)
    said = [e for e in events[resumed + 1:] if e["event"] == "inspect"]
    if said:
        return f"flagged by the prolog on {said[-1]['time']}: {str(said[-1].get('detail') or '')[:200]}".rstrip(": ")
    last_at = max((i for i, e in enumerate(events) if e["event"] == "drain"), default=None)
    at = max((i for i, e in enumerate(events[:last_at]) if e["event"] == "resume"), default=None) \
        if last_at is not None else None
    if last_at is None or at is None:
        return None
    before = [events[at]]
    # a resume stamped before an event logged ahead of it (its clock behind) happened after it (the prolog's rule)
    ahead = max((e["epoch"] for e in events[:at] if e["epoch"] <= events[last_at]["epoch"]),
                default=before[-1]["epoch"])
    if ahead > before[-1]["epoch"] and events[last_at]["epoch"] - ahead <= window_s:
        return (f"drained again ({events[last_at].get('code')}) after it was resumed on {before[-1]['time']}, a resume "
                "stamped before an event logged ahead of it (its clock behind)")
    if now is not None and events[last_at]["epoch"] > now + skew_s and \
            events[last_at]["epoch"] - before[-1]["epoch"] > window_s:
        # a drain stamped past now (its clock ahead) is past the window on a time no clock has reached (the prolog's
        # rule): evidence from the future hides no fault that came back
        return (f"drained again ({events[last_at].get('code')}) after it was resumed on {before[-1]['time']}, though "
                "stamped in the future (a clock ahead)")
    if events[last_at]["epoch"] - before[-1]["epoch"] > window_s:
        return None
    drain, gap = events[last_at], events[last_at]["epoch"] - before[-1]["epoch"]
    if gap < 0:
        return (f"drained again ({drain.get('code')}) after it was resumed on {before[-1]['time']}, though stamped "
                "before that resume (a clock stepped back)")
    return (f"drained again ({drain.get('code')}) {gap / 3600:.1f} h after it was resumed on "
            f"{before[-1]['time']}")


def judge(history: NodeHistory, now: float, window_s: float = WINDOW_S, skew_s: float = CLOCK_SKEW_S) -> NodeHistory:
    history.window = dict.fromkeys(EVENTS, 0)
    history.future = 0
    for e in history.events:
        if e["epoch"] > now + skew_s:     # evidence from the future is in no "last 7 d" (a clock ahead; hunt105)
            history.future += 1
        elif now - e["epoch"] <= window_s:
            history.window[e["event"]] += 1
    history.inspect = _inspect(history.events, window_s, now, skew_s)
    return history


def read_one(state: Path, node: str, now: float, window_s: float = WINDOW_S,
             skew_s: float = CLOCK_SKEW_S) -> NodeHistory:
    """STATE/history/<node>.jsonl; no file is an empty history, an unreadable one says why."""
    file = f"history/{node}.jsonl"
    path = state / file
    try:      # hostile: a link, a FIFO or /dev/zero in its place is refused, never followed, waited on or read whole
        text = read_bounded(path, MAX_BYTES, "history").decode("utf-8", errors="replace")
    except TooLarge as exc:
        return NodeHistory(node, file, error=str(exc.strerror))
    except FileNotFoundError:
        return judge(NodeHistory(node, file), now, window_s, skew_s)
    except OSError as exc:
        return NodeHistory(node, file, error=f"cannot read it ({exc.strerror or exc})")
    return judge(parse(node, file, text), now, window_s, skew_s)


def _listed(state: Path, folder: Path) -> list[str]:
    """The node of each history file, bounded: a folder that cannot be listed is said (Path.glob returned nothing
    for it, and every node that has only a history vanished from the report), as is one past MAX_NAMES names (each
    would be read whole: the listing, the reads and their events had no bound)."""
    names: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries, 1):
                if count > MAX_NAMES:
                    raise UserError(f"STATE_DIR={state}: more than {MAX_NAMES:,} names in its history folder, more "
                                    "than one a node of any cluster: not the prolog's history; give its --state-dir")
                if entry.name.endswith(".jsonl") and not entry.name.startswith("."):
                    names.append(entry.name[:-len(".jsonl")])
    except OSError as exc:
        raise UserError(f"STATE_DIR={state}: its history folder cannot be listed ({exc.strerror or exc}): run it as "
                        "a user who may read it, or leave STATE_DIR empty to skip the drain history") from None
    return sorted(names)


def read_state(state: Path, nodes: list[str], now: float | None = None,
               window_s: float = WINDOW_S, skew_s: float = CLOCK_SKEW_S) -> dict[str, NodeHistory]:
    """node → its history, for the given nodes and every node with a history file; UserError when STATE_DIR is no
    folder (a typo would otherwise read as 'no history anywhere')."""
    if not state.is_dir():
        raise UserError(f"STATE_DIR={state} is not a folder: give the prolog's --state-dir (default "
                        f"/var/lib/torchimages), or leave STATE_DIR empty to skip the drain history")
    now = time.time() if now is None else now
    folder = state / "history"
    if os.path.islink(folder) or (os.path.lexists(folder) and not folder.is_dir()):
        # the prolog makes its history folder itself and refuses a link in its place (statefile.folder): a link (one
        # to nothing read every history as empty, and the fleet passed) or a file there is no history of the prolog's
        what = "a symbolic link (the prolog refuses one there)" if folder.is_symlink() else "not a folder"
        raise UserError(f"STATE_DIR={state}: its history is {what}: not the prolog's drain history; give the "
                        "prolog's --state-dir, or leave STATE_DIR empty to skip the drain history")
    listed = _listed(state, folder) if folder.is_dir() else []
    # one host however it is spelt (DNS names are case-insensitive): a report's n1 reads the prolog's N1.jsonl, and
    # N1 beside n1 is one row, named as the reports spell it
    spelt: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    for n in [*nodes, *listed]:
        if n and "/" not in n and not n.startswith(".") and os.sep not in n:
            spelt.setdefault(node_key(n), n)
    for stem in listed:
        files.setdefault(node_key(stem), []).append(stem)
    found = {}
    for key, name in spelt.items():
        stems = files.get(key) or [name]
        h = read_one(state, stems[0], now, window_s, skew_s)
        h.node = name
        if len(stems) > 1 and not h.error:   # its events split over two files: neither alone is its history
            h.error = (f"{len(stems)} history files name this one node ({', '.join(s + '.jsonl' for s in stems)}: "
                       "host names are case-insensitive); merge them into one")
        found[name] = h
    return found


def history_lines(histories: dict[str, NodeHistory]) -> list[str]:
    """The history table of the fleet report, the nodes to inspect, and the bad lines named."""
    if not histories:
        return ["drain history: no node has one"]
    width = max([4, *(len(n) for n in histories)])
    lines = [f"drain history (last {WINDOW_S / 86400:.0f} d):",
             f"  {'NODE':<{width}}  {'LAST EVENT':<16}  {'WHEN':<20}  DRAINS  RESUMES  INSPECT"]
    for name, h in histories.items():
        last = h.last
        event = "unreadable" if h.error else (f"{last['event']}" + (f" {last['code']}" if last.get("code") else "")
                                              if last else "none")
        lines.append(f"  {name:<{width}}  {event[:16]:<16}  {(last or {}).get('time', '-')[:20]:<20}  "
                     f"{h.window.get('drain', 0):>6}  {h.window.get('resume', 0):>7}  {'YES' if h.inspect else '-'}")
    flagged = {n: h.inspect for n, h in histories.items() if h.inspect}
    if flagged:
        lines.append("hardware inspection (failed again after a resume):")
        lines += [f"  {n}: {why}" for n, why in flagged.items()]
    held = {n: h.drained for n, h in histories.items() if not h.error and h.drained is not None}
    if held:
        lines.append("drained, not back in service since (no resume, no pass while in service):")
        lines += [f"  {n}: {d.get('code') or 'drain'} on {d.get('time')}" for n, d in held.items() if d]
    troubled = [h for h in histories.values() if h.error or h.bad_lines or h.future]
    if troubled:
        lines.append("history files with trouble:")
    for h in troubled:
        if h.error:
            lines.append(f"  {h.file}: {h.error}: its events are unknown")
        if h.bad_lines:
            shown = ", ".join(map(str, h.bad_lines[:10])) + (" ..." if len(h.bad_lines) > 10 else "")
            lines.append(f"  {h.file}: {len(h.bad_lines)} bad line(s) skipped (line {shown}): not a schema-1 event")
        if h.future and not h.error:
            lines.append(f"  {h.file}: {h.future} event(s) stamped in the future (past now + CLOCK_SKEW: a clock "
                         f"ahead): not counted in the last {WINDOW_S / 86400:.0f} d")
    return lines


def history_json(histories: dict[str, NodeHistory]) -> list[dict[str, Any]]:
    return [{"node": n, "file": h.file, "last_event": h.last, "window_s": WINDOW_S, "in_window": h.window,
             "inspect": h.inspect, "drained": None if h.error else h.drained, "bad_lines": h.bad_lines,
             "future_events": h.future, "error": h.error} for n, h in histories.items()]
