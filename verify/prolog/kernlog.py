"""The kernel log's Xid evidence on this node: read once, kept until acted on, and only for the current boot.

Read: `journalctl -k -b -o short-monotonic` (the current boot's kernel messages), else `dmesg --kernel` (the ring buffer);
both stamp each line with seconds since boot (`[ 1234.567890] ...`), which a wall-clock step does not move. Where
neither can be read (no permission: kernel.dmesg_restrict) the result says so: the kernel log is then unknown, not
clean. The state (STATE/kernlog/<node>.json, rewritten whole: temp file, then rename; read as a hostile file):
- a cursor: the boot id (/proc/sys/kernel/random/boot_id) and the last stamp read, so each line is read once even
  when the clock is stepped back, and a new boot starts afresh (an Xid of before the repair reboot is no evidence);
  across a reader's switch between the kernel's stamps and the wall clock's, the words of the last read's last lines
  say where it ended (kernformat.py: NVIDIA's "3 on one device" counts each Xid once, and none is skipped);
- the events still held: drain-worthy ones not yet acted on (the breaker held the drain: they stay for the next
  run) and watched ones within the lookback (NVIDIA's "3 on one device" counts across runs). A drain done on them
  settles them (`settle`).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from .. import strictjson
from ..shared import clockskew
from . import kernfit, kernformat, kernshape, statefile, xid
from .kernformat import message as _message

TIMEOUT_S = 20.0
STATE_CAP = 1 << 20
HELD_MAX = 500                   # events held at most (the newest kept)
LINE_MAX = 1024                  # characters of a held line (printk's own limit on a record is about this)
OUTPUT_CAP = 32 << 20            # bytes of kernel log taken at most (its newest)
RESCUE_CAP = 4 << 20             # bytes of the driver's lines kept from what was dropped before them
PROC = "/proc"
# the stamp formats (kernformat.py), named here as before the split
consumed, mono, wall, _digest, said = kernformat.consumed, kernformat.mono, kernformat.wall, kernformat.digest, \
    kernformat.said


@dataclass(frozen=True)
class Clock:
    boot_id: str                 # "" where it cannot be read
    uptime: float | None         # seconds since boot
    booted: float | None = None  # wall-clock boot time (/proc/stat btime), for lines stamped in wall time
    now: float | None = None


def host_clock(proc: str = PROC) -> Clock:
    def _read(rel: str) -> str:
        try:
            return statefile.read_tail(os.path.join(proc, rel), 4096).text
        except OSError:
            return ""
    uptime = _read("uptime").split()
    try:
        up = float(uptime[0]) if uptime else None
    except ValueError:
        up = None
    return Clock(_read("sys/kernel/random/boot_id").strip(), up, boot_time(proc), time.time())


def boot_key(boot_id: object) -> str:
    """A boot id as the kernel writes it (lowercase, no spaces), for comparing: a kept one that differs only in its
    case or spaces names this boot, never another ("" for none)."""
    return boot_id.strip().lower() if isinstance(boot_id, str) else ""


def boot_time(proc: str = PROC) -> float | None:
    """The wall-clock time this host booted (/proc/stat btime), or None."""
    try:
        text = statefile.read_tail(os.path.join(proc, "stat"), 1 << 20).text
    except OSError:
        return None
    m = re.search(r"^btime\s+(\d+)\s*$", text, re.M)
    return float(m.group(1)) if m else None


@dataclass
class KernelLog:
    lines: list[str] | None      # None: not read
    source: str                  # the command that gave them, or why none did


def journalctl_argv() -> list[str]:
    return [shutil.which("journalctl") or "journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"]


def dmesg_argv() -> list[str]:
    return [shutil.which("dmesg") or "dmesg", "--kernel"]


class _Rescue:
    """The driver's lines (NVRM, nvidia-nvswitch) of the output dropped past OUTPUT_CAP, its newest RESCUE_CAP
    bytes: a flood of other kernel lines after an Xid 79 pushed it out of the newest 32 MiB, never read."""

    def __init__(self) -> None:
        self.carry = b""                 # the start of the line the kept output begins inside
        self.lines: list[bytes] = []
        self.size = 0

    def __call__(self, dropped: bytes) -> None:
        parts = (self.carry + dropped).split(b"\n")
        self.carry = parts.pop()[-LINE_MAX * 4:]
        for line in parts:
            if b"NVRM" in line or b"nvidia-nvswitch" in line:
                self.lines.append(line[:LINE_MAX * 4])
                self.size += len(self.lines[-1])
        while self.size > RESCUE_CAP:
            self.size -= len(self.lines.pop(0))


def _run(argv: list[str], timeout: float = TIMEOUT_S) -> tuple[list[str] | None, str]:
    rescue = _Rescue()
    try:
        # its newest OUTPUT_CAP bytes, never all in memory, and the driver's lines of what was dropped before them
        proc = statefile.run_tail(argv, timeout, OUTPUT_CAP, rescue)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{os.path.basename(argv[0])}: {exc}"
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[-160:]
        return None, f"{os.path.basename(argv[0])} exited {proc.returncode}: {err}"
    lines = proc.stdout.decode(errors="replace").splitlines()
    if not proc.cut:
        return lines, " ".join(argv)
    # a cut output's first line is a partial one: whole again with its dropped start, else left out
    first = (rescue.carry + proc.stdout.split(b"\n", 1)[0]).decode(errors="replace")
    whole = [first] if len(rescue.carry) < LINE_MAX * 4 else []
    return [x.decode(errors="replace") for x in rescue.lines] + whole + lines[1:], " ".join(argv)


def read(timeout: float = TIMEOUT_S) -> KernelLog:
    """The current boot's kernel log; each command waited for at most `timeout`. A running kernel's log is never empty,
    so no line from either is no read (a job's user gets nothing from `journalctl -k -q`, and dmesg is refused under
    kernel.dmesg_restrict: that was read as a clean log)."""
    lines, source = _run(journalctl_argv(), timeout)
    if lines:
        return KernelLog(lines, source)
    raw, dsource = _run(dmesg_argv(), timeout)
    if raw:
        return KernelLog(raw, dsource)
    return KernelLog(None, f"{source}; {dsource}: no kernel line (a user outside the adm or systemd-journal group, "
                     "or under kernel.dmesg_restrict, sees none)")


def future(line: str, clock: Clock, skew_s: float = clockskew.DEFAULT_S) -> bool:
    """A line stamped past this boot's uptime, or in wall time over skew_s past now: no evidence (none wrote it yet)."""
    t = wall(line)
    return ahead(mono(line), clock) or (t is not None and clock.now is not None and t > clock.now + skew_s)


def believable(held: list[dict[str, Any]], clock: Clock, skew_s: float = clockskew.DEFAULT_S) -> list[dict[str, Any]]:
    """The held events a read of this boot could have kept: its stamp is its line's own (-1 for a line without one)
    and not from the future (a wall-stamped one: when that read took it). A kept state is a file anyone with the folder may write: an event stamped past the
    uptime, or whose stamp contradicts its line, would drain a healthy node on no line of its log."""
    def ok(e: dict[str, Any]) -> bool:
        stamp = mono(e["line"])
        if not (e["mono"] == stamp if stamp is not None else e["mono"] < 0):
            return False
        if stamp is None and (t := wall(e["line"])) is not None and e.get("read") is not None:
            # a wall-stamped event kept with when its read took it: from the future only against that read, by the
            # clock that read it. Against now, a clock stepped back since (NTP setting right a clock that ran fast)
            # made the Xid 79 the breaker held a line "from the future", and dropped it: the node passed (hunt102)
            return t <= float(e["read"]) + skew_s
        return not future(e["line"], clock, skew_s)
    return [e for e in held if ok(e)]


def _stale(line: str, clock: Clock, lookback_s: float | None, cursor: float = -1.0,
           read_words: frozenset[str] | None = None) -> bool:
    """A line stamped in wall time from before this boot or, on a first read of the boot (`lookback_s` given), before
    the lookback (after a kept cursor an unread line is evidence however old), or at or before the kernel-stamped
    `cursor` (boot time + it): read in the kernel's format already. Wall stamps and boot time are whole seconds, so a
    line stamped within a second either side of the cursor may be on either side of it: there, where the words of
    the last read's last lines are known (`read_words`: that read's tail, its oldest lines wrapped out of the log),
    a line is read only if its words are among them; an unread Xid logged just after the cursor was skipped by the
    second's margin (hunt105). Without them (a state kept before tails), the margin holds as before."""
    t = wall(line)
    if t is None:
        return False
    if cursor >= 0 and clock.booted is not None and t <= clock.booted + cursor + 1 and \
            (read_words is None or t <= clock.booted + cursor - 1 or said(line) in read_words):
        return True
    return (clock.booted is not None and t < clock.booted) or \
        (lookback_s is not None and clock.now is not None and t < clock.now - lookback_s)


def state_path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "kernlog", f"{node}.json")


@dataclass
class State:
    boot_id: str = ""
    mono: float = -1.0                                  # the last stamp read in boot_id
    at_mono: list[str] = field(default_factory=list)    # digests of the last lines read at that stamp, in order
    unstamped: list[str] = field(default_factory=list)  # digests of the last lines without a stamp read, in order
    held: list[dict[str, Any]] = field(default_factory=list)   # {"line", "mono"}: events not yet acted on
    at_count: int = -1                  # lines read at that stamp (-1: len(at_mono), as a state kept before it)
    unstamped_count: int = -1           # lines without a stamp read (-1: len(unstamped))
    wall: float = -1.0                  # the latest wall stamp of those lines (-1: none): a cursor in wall time
    deferred: list[str] = field(default_factory=list)   # the driver's wall-stamped lines read while from the future
    wall_up: float = -1.0               # the uptime after the last read in wall time (-1: none, or a state before it)
    tail: list[str] = field(default_factory=list)   # the words of a kernel-stamped read's last lines (kernformat)
    tail_at: int = 0                    # the lines that read gave, up to them: their place in its log
    tail_wall: bool = False             # that read was in wall time (its words place a kernel-stamped read's start)

    def __post_init__(self) -> None:
        self.at_count = len(self.at_mono) if self.at_count < 0 else self.at_count
        self.unstamped_count = len(self.unstamped) if self.unstamped_count < 0 else self.unstamped_count


def load(state_dir: str, node: str) -> tuple[State, str | None]:
    """The kept state, or a fresh one and why (none kept is not a problem; a garbled or refused file is)."""
    target = state_path(state_dir, node)
    try:
        raw = strictjson.loads(statefile.read_own(target, STATE_CAP).text, non_finite=True)
    except FileNotFoundError:
        return State(), None
    except OSError as exc:
        return State(), f"kernel-log state not read: {statefile.problem(exc, target)}"
    except (ValueError, RecursionError):
        raw = None
    if not kernshape.typed(raw):
        return State(), f"kernel-log state {target} is garbled: read again from the lookback"
    if why := statefile.not_ours(target):
        # held evidence drains a node on no line of this read: only where no job could have written it (a shared
        # state folder others write held a believable forged Xid 79, and a healthy node was drained)
        return State(), f"kernel-log state {why}: its held Xids are not believed; read again from the lookback"
    held = [{"line": e["line"], "mono": float(e["mono"]), **({"read": float(e["read"])} if e.get("read") is not None
                                                           else {})} for e in raw["held"]]
    return State(raw["boot_id"], float(raw["mono"]), raw["at_mono"], raw["unstamped"], held,
                 -1 if raw.get("at_count") is None else raw["at_count"],
                 -1 if raw.get("unstamped_count") is None else raw["unstamped_count"],
                 -1.0 if raw.get("wall") is None else float(raw["wall"]), _deferred(raw.get("deferred") or []),
                 -1.0 if raw.get("wall_up") is None else float(raw["wall_up"]),
                 (raw.get("tail") or [])[-kernformat.TAIL_MAX:], raw.get("tail_at") or 0,
                 raw.get("tail_wall", False)), None


def save(state_dir: str, node: str, state: State) -> str | None:
    target = state_path(state_dir, node)
    # what the next run's reader takes back (STATE_CAP), the cursor's digests aside: kernfit.py
    held, deferred = kernfit.bounded(_trim(state.held), _deferred(state.deferred), STATE_CAP * 7 // 8, _drains)
    data = {"schema": 1, "boot_id": state.boot_id, "mono": state.mono, "at_mono": state.at_mono[-HELD_MAX:],
            "at_count": state.at_count, "unstamped": state.unstamped[-HELD_MAX:],
            "unstamped_count": state.unstamped_count, "wall": state.wall, "held": held,
            "deferred": deferred, "wall_up": state.wall_up, "tail": state.tail,
            "tail_at": state.tail_at, "tail_wall": state.tail_wall}
    try:
        statefile.folder(os.path.dirname(target))
        statefile.replace(target, (json.dumps(data) + "\n").encode())
    except OSError as exc:
        return f"cannot keep the kernel log's state in {target}: {statefile.problem(exc, target)}"
    return None


def advance(state: State, lines: list[str], clock: Clock, lookback_s: float,
            skew_s: float = clockskew.DEFAULT_S) -> tuple[State, list[xid.Finding]]:
    """The state after reading `lines`, and the findings held now (earlier ones still held, then the new ones).
    Pure: a new boot drops what the last boot held; watched events older than the lookback, or any no read of this
    boot could have kept (`believable`), drop out; a line from the future (`future`) is no evidence."""
    state = _kept(state, clock, skew_s)
    floor = clock.uptime - lookback_s if clock.uptime is not None else None
    stamped = [(line, mono(line)) for line in lines]
    state, resolved = _in_kernel_format(state, stamped)
    at_count, unstamped_count = state.at_count, state.unstamped_count
    skip_at = consumed([x for x, t in stamped if t is not None and t == state.mono], at_count, state.at_mono) \
        if state.mono >= 0 else 0
    skip_un = consumed([x for x, t in stamped if t is None], unstamped_count, state.unstamped)
    # a first read of this boot (no line of it read before) goes back --lookback at most; after it, every unread line
    first = lookback_s if state.mono < 0 and state.unstamped_count == 0 else None
    before, found = _other_format(state, stamped)
    before = {i for i in before if _message(stamped[i][0]) not in resolved}     # a deferred line waited: unread
    # boot time + the kernel's cursor against a wall stamp only where the words could not place the switch
    cursor = state.mono if not state.tail or (not state.tail_wall and not found) else -1.0
    read_words = frozenset(state.tail) if cursor >= 0 and state.tail and not state.tail_wall else None
    new, deferred = _due(state, clock, skew_s)      # the lines deferred before whose time has come, the others
    last, at_last, unstamped, wall_last = state.mono, list(state.at_mono), list(state.unstamped), state.wall
    seen_at = seen_un = 0
    for i, (line, t) in enumerate(stamped):
        if t is None:
            seen_un += 1
            if seen_un > skip_un:
                unstamped.append(_digest(line))
                unstamped_count += 1
                if i in before:
                    continue                            # read with the kernel's stamps, whatever either clock says
                if not future(line, clock, skew_s):
                    # a line from the future moves no cursor (`ahead`): one stamped while the clock ran a day fast
                    # hid, from a reader giving the kernel's stamps next, every line of that day (an Xid 79 too)
                    wall_last = max(wall_last, wall(line) or -1.0)
                    if not _stale(line, clock, first, cursor, read_words):
                        new.append(line)
                elif _DRIVER.search(line):
                    deferred.append(_short(line))       # read once its time is no longer in the future (`_due`)
            continue
        if t == state.mono:
            seen_at += 1
            if seen_at <= skip_at:
                continue
        if t < state.mono or ahead(t, clock) or (i not in before and _passed(state, line, t, clock, floor, resolved)):
            continue
        if t > last:
            last, at_last, at_count = t, [], 0
        if t == last:
            at_last.append(_digest(line))
            at_count += 1
        if i not in before:                             # read in wall time: the cursor passes it, unread again
            new.append(line)
    held = _held(state.held, new, floor, clock, lookback_s, skew_s)
    walled = all(t is None for _, t in stamped)
    own = [x for x, t in stamped if (t is None) == walled]      # where this read ended, for one in the other format
    ended = (kernformat.tail(own), len(own), walled) if lines else (state.tail, state.tail_at, state.tail_wall)
    wall_up = clock.uptime if clock.uptime is not None and lines and walled else state.wall_up
    return State(state.boot_id, last, at_last[-HELD_MAX:], unstamped[-HELD_MAX:], held, at_count, unstamped_count,
                 wall_last, _deferred(deferred), wall_up, *ended), xid.parse([e["line"] for e in held])


def _other_format(state: State, stamped: list[tuple[str, float | None]]) -> tuple[set[int], bool]:
    """The indices of this read's lines the last read gave in the other format (the kernel's stamps, the wall
    clock's): its lines in this read's format up to where the words of the last read's last lines end
    (kernformat.read_before), and whether they were found. None after a read in this format or a state before them."""
    walled = all(t is None for _, t in stamped)
    if not state.tail or state.tail_wall == walled:
        return set(), False
    mine = [i for i, (_, t) in enumerate(stamped) if (t is None) == walled]
    known = kernformat.read_before([stamped[i][0] for i in mine], state.tail, state.tail_at)
    return set(mine[:known or 0]), known is not None


def _passed(state: State, line: str, t: float, clock: Clock, floor: float | None, resolved: set[str]) -> bool:
    """A kernel-stamped line at or after the cursor read before: a first read of this boot goes back --lookback at
    most (after a kept cursor every line is unread evidence however old); a cursor kept in wall time read it in the
    other format (not a line deferred there: `_in_kernel_format`). Before the cursor (not before the lines above it:
    two CPUs' local_clock stamps come out of order by microseconds), it was read by an earlier run (the caller)."""
    return _message(line) not in resolved and (
        (max(state.mono, state.wall) < 0 and floor is not None and t < floor) or _read_in_wall_time(state, t, clock))


def _read_in_wall_time(state: State, t: float, clock: Clock) -> bool:
    """A kernel-stamped line (stamp `t`) read before in wall time: at or before the wall cursor by boot time + stamp,
    and logged before that read (`t` at most the uptime after it: a clock fast by less than the skew allowance then,
    stepped back since, put the unread lines of those seconds at or before the cursor: an Xid 79 never read, hunt89)."""
    return state.mono < 0 and state.wall >= 0 and clock.booted is not None and clock.booted + t <= state.wall + 1 \
        and (state.wall_up < 0 or t <= state.wall_up)


def _kept(state: State, clock: Clock, skew_s: float) -> State:
    """The kept state as this read may use it: held events no read of this boot could keep dropped, nothing of another
    boot, and no cursor past the uptime or now."""
    state = dataclasses.replace(state, held=believable(state.held, clock, skew_s))
    if boot_key(clock.boot_id) != boot_key(state.boot_id):
        return State(clock.boot_id)           # another boot: what the last one held is not this one's evidence
    if impossible(state, clock):
        state = State(clock.boot_id, held=state.held)   # a cursor no read of this boot could leave: read it again
    if state.wall >= 0 and clock.now is not None and state.wall > clock.now + skew_s:
        # a wall cursor past now (kept while the clock ran fast, stepped back since) would hide every line up to it:
        # read again from the lookback, as for a kernel-stamped cursor past the uptime
        state = dataclasses.replace(state, wall=-1.0)
    return state


_DRIVER = re.compile(r"NVRM|nvidia-nvswitch")     # the lines xid.parse reads (as _Rescue keeps): the ones deferred


def _due(state: State, clock: Clock, skew_s: float) -> tuple[list[str], list[str]]:
    """The deferred lines whose time has come (not from the future, nor from before this boot), and those still to
    wait. A wall-stamped line from the future is no evidence yet, but its place in the log is read: kept aside, it is
    read once the clock has caught up with it (an Xid 79 journald stamped while the clock ran fast was lost for good)."""
    due = [line for line in state.deferred if not future(line, clock, skew_s)]
    return [x for x in due if not _stale(x, clock, None)], [x for x in state.deferred if future(x, clock, skew_s)]


def _in_kernel_format(state: State, stamped: list[tuple[str, float | None]]) -> tuple[State, set[str]]:
    """The state less the deferred lines this read gives with the kernel's stamp, and their words: the kernel's stamp
    (which no clock step moves) then says whether the record was read (before the cursor) or is read now (never
    skipped as read in wall time: it waited). One record read in both formats is one event, never two."""
    waiting = {_message(line) for line in state.deferred}
    resolved = {m for line, t in stamped if t is not None and (m := _message(line)) in waiting}
    return dataclasses.replace(state, deferred=[x for x in state.deferred if _message(x) not in resolved]), resolved


def _deferred(lines: list[str]) -> list[str]:
    """At most HELD_MAX deferred lines, the drain-worthy ones first (as `_trim`), each about LINE_MAX long."""
    return [e["line"] for e in _trim([{"line": _short(line), "mono": -1.0} for line in lines])]


def _held(before: list[dict[str, Any]], new: list[str], floor: float | None, clock: Clock,
          lookback_s: float, skew_s: float = clockskew.DEFAULT_S) -> list[dict[str, Any]]:
    """The events held after a read: those held before and the new lines' findings, less the watched ones older than
    the lookback ("3 on one device within the lookback"). A drain-worthy one is kept until acted on, however long no
    prolog ran (a node idle over a weekend, or held by a two-day job: the Xid 48 the breaker kept from draining on
    Friday was gone on Monday, the node back in service on a preflight that cannot see it)."""
    found = [f for f in xid.parse(new) if f.action == xid.DRAIN or (f.action == xid.WATCH and not _aged(
        {"line": f.line, "mono": -1.0 if (stamp := mono(f.line)) is None else stamp}, floor, clock, lookback_s, skew_s))]
    held = [e for e in before if _drains(e) or not _aged(e, floor, clock, lookback_s, skew_s)]
    # a held line is kept about LINE_MAX long (the kernel writes none longer): the state stays far under STATE_CAP,
    # which a hostile multi-MiB "Xid" line would pass, and a state read back garbled re-reads every line of the lookback;
    # a line without the kernel's stamp keeps when it was first read, which ages it as the stamp ages the others
    return _trim(held + [{"line": _short(f.line), "mono": stamp} if (stamp := mono(f.line)) is not None else
                         {"line": _short(f.line), "mono": -1.0, **({"read": clock.now} if clock.now else {})}
                         for f in found])


def _aged(event: dict[str, Any], floor: float | None, clock: Clock, lookback_s: float,
          skew_s: float = clockskew.DEFAULT_S) -> bool:
    """A held watched event older than the lookback (NVIDIA's "3 on one device" counts within it): by its kernel stamp
    against the uptime, else by its line's wall stamp or when it was first read (`read`) against now (three Xid 94 a
    week apart in a wall-stamped log were XID_REPEATED). A first read stamped in the future tells no age: aged."""
    if event["mono"] >= 0:
        return floor is not None and event["mono"] < floor
    seen = wall(event["line"])
    if seen is None and (seen := event.get("read")) is not None and clock.now is not None \
            and seen > clock.now + skew_s:
        return True
    return seen is not None and clock.now is not None and seen < clock.now - lookback_s


def _drains(event: dict[str, Any]) -> bool:
    """A held event whose line NVIDIA's catalog drains on (not one only watched)."""
    return any(f.action == xid.DRAIN for f in xid.parse([event["line"]]))


def _trim(held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most HELD_MAX events: the drain-worthy ones first (evidence is kept until acted on: a burst of watched
    Xids never pushes out an Xid 79 the breaker kept from draining), then the newest watched ones."""
    if len(held) <= HELD_MAX:
        return held
    drains = [i for i, e in enumerate(held) if _drains(e)]
    keep = set(drains[-HELD_MAX:])
    others = [i for i in range(len(held)) if i not in keep]
    keep |= set(others[len(others) - (HELD_MAX - len(keep)):]) if len(keep) < HELD_MAX else set()
    return [held[i] for i in sorted(keep)]


def _short(line: str) -> str:
    """A held line at most about LINE_MAX long: its stamp and LINE_MAX characters from the driver's own words on. The
    stamp in either format (kernformat.stamp): a wall-stamped line cut without its stamp was aged from when it was
    first read, not logged (a watched Xid from past the lookback counted towards "3 on one device"), and a deferred
    one from the future was read at once (hunt102)."""
    if len(line) <= LINE_MAX:
        return line
    stamp = kernformat.stamp(line)
    words = [i for i in (line.find("NVRM:"), line.find("nvidia-nvswitch")) if i >= 0]
    start = min(words) if words else 0
    return (stamp + " " if stamp and start else "") + line[start:start + LINE_MAX]


def ahead(stamp: float | None, clock: Clock) -> bool:
    """A line stamped past this boot's uptime (read after the log): from the future, no kernel wrote it in this boot;
    it is no evidence and never moves the cursor (one would hide every line before it, then read them all again)."""
    return stamp is not None and clock.uptime is not None and stamp > clock.uptime + 1


def impossible(state: State, clock: Clock) -> bool:
    """A cursor of this boot past its uptime (or not a number): kept by no read of it, so it would hide every line
    stamped before it (an Xid too); the lines are read again from the lookback."""
    return not math.isfinite(state.mono) or (clock.uptime is not None and state.mono > clock.uptime + 1)


def spent_before(state: State, repaired: float, clock: Clock, repaired_mono: float | None = None) -> State:
    """The state once a repair at wall time `repaired` (a GPU reset recorded since: verify/prolog/repair.py) acted on
    what it held: events logged before it are spent, as a reboot spends a boot's events; one without a stamp, or with
    no boot time known, stays. Before it by the kernel's stamp when the record has its monotonic one (a clock
    stepped back between the reset and a later Xid put that Xid's boot time + stamp before the reset: spent, never
    drained), else by boot time + stamp. An event that asks for a reboot stays (`reboot_only`)."""
    if repaired_mono is not None:
        return dataclasses.replace(state, held=[e for e in state.held if e["mono"] < 0 or e["mono"] >= repaired_mono
                                                or reboot_only(e)])
    if clock.booted is None:
        return state
    held = [e for e in state.held if e["mono"] < 0 or clock.booted + e["mono"] >= repaired or reboot_only(e)]
    return dataclasses.replace(state, held=held)


def reboot_only(event: dict[str, Any]) -> bool:
    """A held event that asks for the node's reboot (Xid 154: node reboot required): no GPU reset spends it, only the
    reboot, whose new boot drops what the last one held (hunt102)."""
    return any(f.reboot for f in xid.parse([event["line"]]))


def settle(state: State) -> State:
    """The state once a drain acted on what it held: nothing is held any more (the cursor stays)."""
    return dataclasses.replace(state, held=[])
