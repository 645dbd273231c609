"""Each node's history of what torchimages did to it: STATE/history/<node>.jsonl, one JSON object a line.

A line (schema 1): {"schema": 1, "time": "2026-11-25T19:40:00Z", "epoch": 1795635600.0, "node": "n2",
"event": <EVENTS>, "code": "CHECK_TIMEOUT" | null, "detail": "one line"}, and on a drain what return to service must
prove (`gpus`: the GPUs the node should have, `boot_id`: the boot it was drained in, `action`: "reset" or
"reboot" when NVIDIA's Xid catalog asks for one, `kernel_log`: the code of the kernel-log evidence it stood on); every event the prolog writes carries the `boot_id` it ran in (a
hang streak ends at a reboot), its /proc/uptime at the end and start of its run (`uptime`, `started_up`: runs of one
boot are ordered by them, whatever the wall clock did), and an `id` of its own. Appended with one write() to a file opened
O_APPEND|O_NOFOLLOW, under a lock (STATE/history/.<node>.lock) that rotation shares: past MAX_BYTES the file is
rewritten (temp file, then rename) with its last KEEP_LINES lines, after the last drains, resumes and inspections of
the lines dropped (a busy node's passes never rotate away what return to service reads). A writer that waited LOCK_WAIT_S in vain appends
anyway, and no rotation running meanwhile loses its line (_rotate carries over what it finds appended to the old
file, the writer appends again what neither file kept; a line kept twice is read once). A reader takes at most READ_CAP bytes from the tail, refuses a symlink,
a FIFO or a device with one line, and names every line it cannot parse (a garbled history is not a clean one).
The fleet report reads these files (scripts/fleet/history.py: the same schema, extra fields ignored).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import strictjson
from . import gpuset, statefile

SCHEMA = 1
EVENTS = ("pass", "fault", "not-assessed", "drain", "drain-refused", "resume", "resume-refused", "inspect")
FLAP_WINDOW_S = 7 * 86400.0
MAX_BYTES = 1 << 20             # past this the file is rotated (about 4,000 events: years of a node's life)
KEEP_LINES = 2000               # what rotation keeps
READ_CAP = 4 << 20              # the most a reader takes, from the tail (a larger file is cut, and says so)
UNLOCKED_TRIES = 20             # a lockless writer's appends, each checked: a line is lost only to that many rotations
LOCK_WAIT_S = 5.0
# fcntl's record locks belong to the process: two threads of one process both "hold" one, and closing either's fd
# releases both; appends and rotation of one process are serialised by this lock first
THREADS = threading.Lock()
OVERLAP_SLACK_S = 0.01          # stamps are kept to the millisecond: a run ended this close to the next one's start did not overlap it
FIELD_MAX = 200                 # characters of a line's code, check, boot id, ... (the detail: 1,000)
# what rotation keeps ahead of the tail, of the lines it drops: the events return to service reads (NVSentinel's flap
# rule: the resume before the last drain), the last MILESTONES_KEPT of them in at most an eighth of MAX_BYTES
MILESTONES = ("drain", "resume", "inspect")
MILESTONES_KEPT = 100


def path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "history", f"{node}.jsonl")


def _lock_path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "history", f".{node}.lock")


def _entry(node: str, event: str, code: str | None, detail: str, now: float,
           extra: dict[str, Any] | None) -> bytes:
    if event not in EVENTS:
        raise ValueError(f"unknown history event {event!r}")
    if not node or "/" in node or node.startswith("."):
        raise ValueError(f"node name {node!r} cannot name a history file")
    entry = {"schema": SCHEMA, "time": datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "epoch": round(now, 3), "node": node, "event": event, "code": code if code is None else code[:FIELD_MAX],
             "detail": detail[:1000], "id": secrets.token_hex(8)}
    # every field bounded, so a line stays a few KiB: one line past half of MAX_BYTES would leave rotation nothing
    # to keep (a check name of 5 MiB erased the whole history, its drain included)
    entry.update({k: v[:FIELD_MAX] if isinstance(v, str) else v for k, v in (extra or {}).items()
                  if k not in entry and v is not None})
    return (json.dumps(entry, ensure_ascii=True, allow_nan=False) + "\n").encode()


def record(state_dir: str, node: str, event: str, code: str | None, detail: str, now: float | None = None,
           extra: dict[str, Any] | None = None, max_bytes: int = MAX_BYTES, keep_lines: int = KEEP_LINES) -> str | None:
    """Append one event (rotating the file past max_bytes); None, or why it could not be appended."""
    data = _entry(node, event, code, detail, time.time() if now is None else now, extra)
    target, lock = path(state_dir, node), _lock_path(state_dir, node)
    # POSIX locks are the process's: threads of one process are kept apart here first, waited for as the file's
    # lock is (a holder stopped by a signal mid-way never leaves the next writer waiting for good)
    had = THREADS.acquire(timeout=LOCK_WAIT_S)
    try:
        return _record(state_dir, node, target, lock, data, max_bytes, keep_lines)
    finally:
        if had:
            THREADS.release()


def _record(state_dir: str, node: str, target: str, lock: str, data: bytes, max_bytes: int,
            keep_lines: int) -> str | None:
    try:
        statefile.folder(os.path.dirname(target))
        try:
            with statefile.locked(lock, LOCK_WAIT_S):
                if statefile.append(target, data) > max_bytes:
                    _rotate(target, keep_lines, max_bytes)
        except statefile.LockBusy:
            _append_unlocked(state_dir, node, target, data)   # the line matters more than the rotation: that waits
        except statefile.Refused as exc:
            if lock not in str(exc.strerror):
                raise
            # a link or a FIFO planted where the lock belongs: refused, never followed, and the event still kept
            _append_unlocked(state_dir, node, target, data)
            # and rotated all the same: no lock is to be had on this file system (NFS without its lock manager), so
            # waiting for one never rotates, and the history grew past what a reader takes (READ_CAP: the flap rule's
            # resume cut off, a flapping node returned). A writer meanwhile checks its line was kept (_append_unlocked)
            with contextlib.suppress(OSError):         # the line is kept: a rotation that fails waits for the next
                if os.stat(target, follow_symlinks=False).st_size > max_bytes:
                    _rotate(target, keep_lines, max_bytes)
            fix = "" if isinstance(exc, statefile.LockUnavailable) else "; remove it"
            return f"the history's lock {statefile.problem(exc, lock)}: the event was appended without it{fix}"
    except OSError as exc:
        return f"cannot append to the history {target}: {statefile.problem(exc, target)}"
    return None


def _append_unlocked(state_dir: str, node: str, target: str, data: bytes) -> None:
    """Append without the lock (its holder is slow), then make sure a rotation running meanwhile kept the line: one
    that renamed a new file over the one written to, after it carried over what it found there (_rotate), lost it;
    then it is appended again, and checked again (the next rotation may replace that file too: a plain second append
    lost a line in CI45). Each line is unique (its `id`), so a repeat where it was kept is read once (parse)."""
    for _ in range(UNLOCKED_TRIES):
        held = statefile.append_to(target, data)   # held open while checked: its inode number is not reused meanwhile
        try:
            if _settled(state_dir, node, target, data, os.fstat(held)):
                return
        finally:
            os.close(held)


def _settled(state_dir: str, node: str, target: str, data: bytes, wrote: os.stat_result) -> bool:
    """Whether the line written to `wrote` is kept: looked at under the lock once the rotation is done (appended
    again there if not, where no rotation can replace the file), else as it stands (False: to be written again)."""
    def kept() -> bool:
        try:
            now = os.stat(target, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if (now.st_dev, now.st_ino) == (wrote.st_dev, wrote.st_ino):
            return True               # still the file written to: a rotation to come reads it, the line with it
        return data in statefile.read_tail(target, READ_CAP).text.encode()
    try:
        with statefile.locked(_lock_path(state_dir, node), LOCK_WAIT_S):
            if not kept():
                statefile.append(target, data)
            return True
    except (statefile.LockBusy, statefile.Refused):      # the lock busy, or no lock to be had (refused): as it stands
        return kept()


def _milestones(older: list[bytes], most: int, budget: int) -> list[bytes]:
    """The last `most` drains, resumes and inspections among the lines rotation drops (at most `budget` bytes), in
    their order: what return to service reads (the flap rule's resume before the last drain, the drain's facts)."""
    found: list[bytes] = []
    size = 0
    for line in reversed(older):
        if not any(b'"' + e.encode() + b'"' in line for e in MILESTONES):
            continue
        try:
            entry = strictjson.loads(line.decode(errors="replace"), non_finite=True)
        except (ValueError, RecursionError):
            continue
        if not _valid(entry) or entry["event"] not in MILESTONES:
            continue
        if len(found) >= most or size + len(line) > budget:
            break
        found.append(line if line.endswith(b"\n") else line + b"\n")
        size += len(line)
    return found[::-1]


def _rotate(target: str, keep_lines: int, max_bytes: int) -> None:
    """Keep the last keep_lines lines (and at most half of max_bytes), after the last drains, resumes and inspections
    of the lines dropped (a busy node's passes never rotate away the resume the flap rule reads): temp file, then
    rename. Called under the lock; a writer that found the lock busy may append to the old file meanwhile: what it
    wrote there before the rename, and up to the last look after it, is carried over into the new file (the writer
    itself checks the rest)."""
    fd = statefile.open_read(target)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - READ_CAP)
        data = os.pread(fd, size - start, start)
        # a size read while a line is being written may cut it (a write past a page boundary grows the file page by
        # page): the new file ends at the last whole line and the rest is carried over as written late. Kept with
        # its first part, a lockless writer's line appended to the new file meanwhile joined the two halves: two
        # lines garbled, both lost (a CI run lost one)
        data = data[:data.rfind(b"\n") + 1]
        end = start + len(data)
        if start:
            data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
        lines = data.splitlines(keepends=True)
        tail: list[bytes] = []
        size = 0
        for line in reversed(lines):
            if len(tail) >= keep_lines or size + len(line) > max(1, max_bytes // 2):
                break
            tail.append(line)
            size += len(line)
        older = lines[:len(lines) - len(tail)]
        kept = _milestones(older, MILESTONES_KEPT, max(1, max_bytes // 8)) + tail[::-1]
        statefile.replace(target, b"".join(kept))
        late = os.fstat(fd).st_size - end
        if late > 0:                  # bounded as a read of the history is: a flood is not carried whole
            extra = os.pread(fd, min(late, READ_CAP), end)
            statefile.append(target, extra[:extra.rfind(b"\n") + 1])
    finally:
        os.close(fd)


@dataclass
class History:
    events: list[dict[str, Any]]
    skipped: int                  # lines that were not a schema-1 event
    error: str | None = None      # why the file could not be read (its events are then unknown, not none)
    bad_lines: list[int] = field(default_factory=list)   # their 1-based numbers (in what was read)
    cut: bool = False             # only the file's tail was read
    numbers: list[int] = field(default_factory=list)     # each event's 1-based line number (in what was read)

    def after_garbled(self) -> list[dict[str, Any]]:
        """The events after the last garbled line: what a run in a row may count (history.streak). A line that
        cannot be read may have been a pass or a reboot's run, which ends a streak: evidence is never counted
        across a line whose event is unknown (no drain on missing facts)."""
        if not self.bad_lines:
            return self.events
        if len(self.numbers) != len(self.events):
            return []                 # where each event stood is unknown: nothing counts as after the garbled line
        last = max(self.bad_lines)
        return [e for e, n in zip(self.events, self.numbers, strict=True) if n > last]

    @property
    def garbled(self) -> str | None:
        """One line naming the lines that are not events, or None when every line is one."""
        if not self.bad_lines:
            return None
        shown = ", ".join(map(str, self.bad_lines[:5])) + (" ..." if len(self.bad_lines) > 5 else "")
        return f"{len(self.bad_lines)} garbled line(s) in the history (line {shown})"


# the type of each field a reader acts on: a line with any of them of another JSON type (a list where a code belongs)
# is no event but a garbled line (a reader would crash on it, or match a list against a code)
_OPTIONAL_STR = ("code", "boot_id", "action", "check", "kernel_log")


def _valid(entry: Any, node: str | None = None) -> bool:
    if not isinstance(entry, dict) or type(entry.get("schema")) is not int or entry.get("schema") != SCHEMA:
        return False
    if not isinstance(entry.get("event"), str) or entry["event"] not in EVENTS:
        return False
    epoch = entry.get("epoch")
    return isinstance(epoch, (int, float)) and not isinstance(epoch, bool) and math.isfinite(epoch) \
        and isinstance(entry.get("time"), str) and isinstance(entry.get("node", ""), str) \
        and (node is None or entry.get("node", node) == node) \
        and isinstance(entry.get("detail", ""), str) and statefile.count_or_none(entry.get("gpus")) \
        and all(entry.get(k) is None or isinstance(entry[k], str) for k in _OPTIONAL_STR) \
        and _proof_typed(entry)


def _proof_typed(entry: dict[str, Any]) -> bool:
    """What return to service reads of a drain, of the types the prolog writes: `faulted` a list of texts (the GPUs
    whose reset it asks for), `reboot_only` a bool. One of another type (`"faulted": "0000:13:00"`, `"reboot_only":
    "yes"`) was read as absent: any GPU's reset, or a reset at all, stood for the repair (hunt102). A garbled line."""
    faulted, reboot = entry.get("faulted"), entry.get("reboot_only")
    return (faulted is None or (isinstance(faulted, list) and all(isinstance(g, str) for g in faulted))) \
        and (reboot is None or isinstance(reboot, bool))


def parse(text: str, node: str | None = None) -> tuple[list[dict[str, Any]], list[int]]:
    """(the events, the numbers of the lines that are not one); a blank line is neither. Given `node`, a line that
    names another node is not one of its events (a file copied from another node's history): garbled."""
    events, _, bad = _parse(text, node)
    return events, bad


def _parse(text: str, node: str | None = None) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """As parse, with each event's line number too."""
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    bad: list[int] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line in seen:          # one write kept twice (a writer without the lock that checked during a rotation)
            continue
        seen.add(line)
        try:
            entry = strictjson.loads(line, non_finite=True)
        except (ValueError, RecursionError):
            entry = None
        if _valid(entry, node):
            events.append(entry)
            numbers.append(number)
        else:
            bad.append(number)
    return events, numbers, bad


def read(state_dir: str, node: str, cap: int = READ_CAP) -> History:
    """The node's events in file order; no file is an empty history, an unreadable or refused one says why."""
    target = path(state_dir, node)
    try:
        tail = statefile.read_own(target, cap)
    except FileNotFoundError:
        return History([], 0)
    except OSError as exc:
        return History([], 0, f"cannot read the history {target}: {statefile.problem(exc, target)}")
    if why := statefile.not_ours(target):   # a job could have forged a hang streak or a drain record: not evidence
        return History([], 0, f"the history is not believed: {why}")
    events, numbers, bad = _parse(tail.text, node)
    return History(events, len(bad), None, bad, tail.cut, numbers)


def failed_again_after_resume(events: list[dict[str, Any]], window_s: float = FLAP_WINDOW_S,
                              now: float | None = None, skew_s: float = 300.0) -> str | None:
    """Why the node needs hardware inspection, or None: its last drain came within window_s of a resume before it.
    "Before" is the file's order (append-only: the order things happened), never the stamps: a resume stamped in the
    future (its clock ahead, then stepped back) is still the resume before a drain logged after it, and a drain
    stamped before its resume is within the window as far as the clocks can tell. A resume stamped before an event
    logged ahead of it (its clock behind: a node resumed after its repair reboot, before its clock was set) happened
    after that event: its time is taken as the latest of theirs, never a stamp that puts the next drain past the
    window."""
    last_at = next((i for i in range(len(events) - 1, -1, -1) if events[i]["event"] == "drain"), None)
    if last_at is None:
        return None
    last = events[last_at]
    at = next((i for i in range(last_at - 1, -1, -1) if events[i]["event"] == "resume"), None)
    if at is None:
        return None
    resume = events[at]
    # (an event stamped after the last drain itself had a clock ahead: its stamp says nothing of the resume's)
    ahead = max((e["epoch"] for e in events[:at] if e["epoch"] <= last["epoch"]), default=resume["epoch"])
    if ahead > resume["epoch"] and last["epoch"] - ahead <= window_s:
        return (f"drained again ({last.get('code')}) after it was resumed on {resume['time']}, a resume stamped "
                f"{(ahead - resume['epoch']) / 3600:.1f} h before an event logged ahead of it (its clock behind): "
                f"within {window_s / 86400:.0f} d as far as its clocks tell; a fault that comes back needs hardware "
                "inspection")
    gap = last["epoch"] - resume["epoch"]
    if now is not None and last["epoch"] > now + skew_s and gap > window_s:
        # a drain stamped past now (its clock ahead, since set right) puts itself past the window on a time no clock
        # has reached: evidence from the future tells nothing of the gap, and a fault that came back is not hidden
        return (f"drained again ({last.get('code')}) after it was resumed on {resume['time']}, though stamped "
                f"{(last['epoch'] - now) / 3600:.1f} h in the future (a clock ahead): within {window_s / 86400:.0f} d "
                "as far as its clocks tell; a fault that comes back needs hardware inspection")
    if gap > window_s:
        return None
    if gap < 0:
        return (f"drained again ({last.get('code')}) after it was resumed on {resume['time']}, though stamped "
                f"{-gap / 3600:.1f} h before that resume (a clock stepped back): within {window_s / 86400:.0f} d as far "
                "as its clocks tell; a fault that comes back needs hardware inspection")
    return (f"drained again ({last.get('code')}) {gap / 3600:.1f} h after it was resumed on {resume['time']}: "
            f"a fault that comes back within {window_s / 86400:.0f} d needs hardware inspection")


# runs that say nothing of the node's checker, neither a hang nor a run that ended: our own trouble (a crash, a signal
# to the prolog or to verify, a setting, the backstop; a budget too small to confirm still ends one). They neither count nor
# end a hang streak (NVSentinel's checker rule counts the checker's runs): a user's scancel during every third
# prolog of a node whose GPU stalls each preflight reset the count, and the node stayed in service for good.
STREAK_NEUTRAL = frozenset({"PROLOG_CRASHED", "PROLOG_INTERRUPTED", "PREFLIGHT_INTERRUPTED", "CONFIG_ERROR",
                            "PROLOG_OVERRAN", "KERNEL_LOG_UNREAD"})


def streak(events: list[dict[str, Any]], codes: frozenset[str], boot_id: str = "", booted: float | None = None,
           now: float | None = None, window_s: float = FLAP_WINDOW_S, skew_s: float = 300.0,
           started: float | None = None, uptime: float | None = None, started_up: float | None = None,
           gpus: gpuset.Seen = None) -> int:
    """How many of the last runs in a row ended with one of `codes` (not assessed, or the fault they became): a pass,
    another cause, a drain or a resume ends the streak; a drain the breaker refused does not, nor does a run of our
    own trouble (STREAK_NEUTRAL), which is not counted either. So does a run of
    another boot (a reboot by hand re-probes the GPUs: no record of it is needed): its boot id when both are known,
    else its time before this boot's (`booted`, /proc/stat btime), as return to service tells a reboot (repair.py).
    Given `now`, so does a run stamped more than window_s before it (a hang months ago says nothing of the GPU now)
    or more than skew_s after it (a clock stepped back: evidence from the future is none).
    Runs in a row, not at once: given this run's start (`started`), a run that ended after the start of the run
    counted after it overlapped that run (prologs of jobs starting together on one node, each slowed by the others:
    a busy host, not a hung GPU) and is not counted again; a run's start is its `started`, else its stamp.
    A run of this boot (same boot id) that kept its /proc/uptime (`uptime`, `started_up`: CLOCK_BOOTTIME, which no
    step of the wall clock moves) is placed by those instead: a clock stepped back (NTP's first sync, an operator's
    `date -s`) neither makes the runs before it "the future" nor overlaps them, so it never delays a hang drain.
    A run of this boot that saw only other GPUs than this one (`gpus`: a job's first step sees the job's alone;
    gpuset.py) does not end it: it says nothing of the GPUs that hung here; it ends it at an earlier hang of only
    GPUs such runs saw."""
    n = 0
    later, later_up = started, started_up      # the start of the run counted last (this one's)
    cleared: set[int] = set()                  # the GPUs runs skipped below saw end: a hang of them ends the streak
    for e in reversed(events):
        if (e["event"] == "not-assessed" and e.get("code") in STREAK_NEUTRAL) or \
                (e["event"] == "pass" and e.get("stalled") is True):
            # whatever its stamp (our trace keeps no uptime: a clock stepped back made it "the future"); a pass whose
            # check stalled past its budget, ending only alone, confirmed no hang and showed no health either
            continue
        up = _uptime(e, "uptime") if uptime is not None and same_boot(e, boot_id) else None
        if up is not None and uptime is not None:
            if not uptime - window_s <= up <= uptime + OVERLAP_SLACK_S:
                break
        elif now is not None and not now - window_s <= e["epoch"] <= now + skew_s:
            break
        if e["event"] in ("drain-refused", "inspect", "resume-refused"):
            continue
        if e["event"] in ("not-assessed", "fault") and e.get("code") in codes and not _other_boot(e, boot_id, booted):
            if (hung := gpuset.kept(e)) is not None and hung <= cleared:
                break         # a later run saw every GPU this hang saw, and ended: it is not in a row
            if up is not None and later_up is not None:
                if up > later_up + OVERLAP_SLACK_S:
                    continue      # it ran while the later run did: one moment's evidence, counted once
            elif later is not None and e["epoch"] > later + OVERLAP_SLACK_S:
                continue
            n += 1
            began = e.get("started")
            later = began if isinstance(began, (int, float)) and not isinstance(began, bool) and \
                math.isfinite(began) and began <= e["epoch"] else e["epoch"]
            began_up = _uptime(e, "started_up")
            later_up = began_up if up is not None and began_up is not None and began_up <= up else up
            continue
        if e["event"] in ("pass", "not-assessed", "fault") and not gpuset.covers(e, gpus) \
                and not _other_boot(e, boot_id, booted):
            cleared |= gpuset.kept(e) or set()
            continue          # a shared node's other job's run: it tested none (or not all) of the GPUs that hung
        break
    return n


def _uptime(event: dict[str, Any], key: str) -> float | None:
    """A kept /proc/uptime figure (seconds since boot), or None: a bool, NaN, a negative or a string is none."""
    value = event.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def same_boot(event: dict[str, Any], boot_id: str) -> bool:
    """The event was written in the boot `boot_id` names (both known; compared as the kernel writes them)."""
    kept = event.get("boot_id")
    return bool(isinstance(kept, str) and kept.strip() and boot_id and kept.strip().lower() == boot_id.strip().lower())


def _other_boot(event: dict[str, Any], boot_id: str, booted: float | None) -> bool:
    if event.get("boot_id") and boot_id:            # compared as the kernel writes them (kernlog.boot_key)
        return event["boot_id"].strip().lower() != boot_id.strip().lower()
    return booted is not None and event["epoch"] < booted


def in_service(event: dict[str, Any], since: float | None = None) -> bool:
    """The event marks the node back in service: a resume, or a pass not recorded while Slurm held it drained (a job
    step that began before the drain passes on a drained node: it returns nothing to service). A pass the prolog
    recorded after a drain says what sinfo showed (`in_service` false: drained, or its state unread, `slurm_state`);
    one without the field came with no drain before it. Given the drain before it (`since`), a pass of a run that
    began before that drain ran beside it (another job's prolog, its line written after the drain's) and is none."""
    if event["event"] == "resume":
        return True
    if event["event"] != "pass" or event.get("in_service", True) is not True:
        return False
    began = event.get("started")
    began = began if isinstance(began, (int, float)) and not isinstance(began, bool) and math.isfinite(began) \
        else event["epoch"]
    return since is None or began >= since


def last_in_service(events: list[dict[str, Any]]) -> int:
    """The index of the last event that put the node back in service (in_service), -1 when none did."""
    at, drained = -1, None
    for i, e in enumerate(events):
        if e["event"] == "drain":
            drained = e["epoch"]
        elif in_service(e, drained):
            at = i
    return at


def stands_drained(events: list[dict[str, Any]]) -> bool:
    """The history's last drain has no return to service after it (in_service)."""
    return any(e["event"] == "drain" for e in events[last_in_service(events) + 1:])


def current_drains(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The drains since the node was last in service (last_in_service): the faults its drain stands on."""
    return [e for e in events[last_in_service(events) + 1:] if e["event"] == "drain"]


def last_drain(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e for e in reversed(events) if e["event"] == "drain"), None)


def counts(events: list[dict[str, Any]]) -> dict[str, int]:
    found = dict.fromkeys(EVENTS, 0)
    for e in events:
        found[e["event"]] += 1
    return found
