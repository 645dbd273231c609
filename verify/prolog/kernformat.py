"""The kernel log's two stamp formats, and a line's place in the log whatever its stamp.

The kernel stamps each line with seconds since boot (`[ 1234.567890] ...`: journalctl -o short-monotonic, dmesg),
which no clock step moves; a site's reader may give wall-clock stamps instead (`2026-12-01T10:00:00+00:00 ...`:
journalctl -o short-iso, dmesg --time-format iso), the clock's when the line was logged. A line's words (its message
without the stamp) are the same in both, and so is its place: the log is one sequence whichever format prints it.
kernlog's cursor counts lines by position within a format (`consumed`), and across a switch from the kernel's stamps
to the wall clock's by where the words of the last lines read end (`read_before`): boot time + stamp against a wall
stamp was off by any clock step between the line's logging and the read (a line read twice, or one skipped).
"""
from __future__ import annotations

import hashlib
import re
from datetime import datetime

MONO = re.compile(r"^\[\s*(\d+(?:\.\d+)?)\]", re.ASCII)     # ASCII: as the kernel stamps (xid._XID)
_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.]\d+)?([+-]\d\d:?\d\d|Z)?", re.ASCII)
# journalctl -o short-monotonic puts the host and `kernel:` between the stamp and the message, dmesg does not
_JOURNAL_HOST = re.compile(r"^(\[\s*\d+(?:\.\d+)?\]\s)\S+ kernel: ")
_PREFIX = re.compile(r"^(?:\[\s*\d+(?:\.\d+)?\]|\d{4}-\d\d-\d\dT\S+)\s+(?:\S+ kernel: )?", re.ASCII)
# the words of a kernel-stamped read's last lines kept: found again in order, they place its end in a wall-stamped
# read (64 lines in a row alike before another place are a flood, where the place nearest the read's own count wins)
TAIL_MAX = 64


def mono(line: str) -> float | None:
    """Seconds since boot of a `[ 1234.567890] ...` line; None when it has no such stamp."""
    m = MONO.match(line)
    return float(m.group(1)) if m else None


def stamp(line: str) -> str:
    """A line's leading stamp as written (the kernel's `[ 1234.567890]` or the wall clock's ISO one), "" for none:
    what a line cut short keeps ahead of the driver's words (kernlog._short), so its time is still read."""
    m = MONO.match(line) or _ISO.match(line)
    return m.group(0) if m else ""


def wall(line: str) -> float | None:
    """Epoch seconds of a line stamped in wall time (`dmesg --time-format iso`, `journalctl -o short-iso`)."""
    m = _ISO.match(line)
    if not m:
        return None
    try:
        return datetime.fromisoformat(m.group(1) + (m.group(2) or "+00:00").replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def digest(line: str) -> str:
    """The digest of a line's stamp and message: one event read by journalctl on one run and by dmesg on the next
    (journalctl timed out) is one line, never read twice."""
    text = _JOURNAL_HOST.sub(r"\1", line.strip())
    return hashlib.sha256(text.encode(errors="replace")).hexdigest()[:16]


def message(line: str) -> str:
    """A line's words without its stamp (the kernel's or the wall clock's) and journalctl's `<host> kernel: `."""
    return _PREFIX.sub("", line.strip(), count=1)


def said(line: str) -> str:
    """The digest of a line's words alone: one record, whichever format stamped it."""
    return hashlib.sha256(message(line).encode(errors="replace")).hexdigest()[:16]


def consumed(group: list[str], count: int, tail: list[str]) -> int:
    """How many of `group` (this read's lines at the cursor's stamp, or its unstamped lines, in order) were read
    before: `count` were, the last of them with the digests `tail`; fewer when the log's start is gone (ring buffer
    wrapped, output cut): the most, at most `count`, whose digests end in the tail's. Positions, not a set of
    digests: a burst past the digests kept, or two identical lines, is each read once."""
    digests = [digest(line) for line in group]
    for p in range(min(count, len(digests)), 0, -1):
        k = min(p, len(tail))
        if digests[p - k:p] == tail[len(tail) - k:]:
            return p
    return 0


def tail(lines: list[str]) -> list[str]:
    """What a kernel-stamped read keeps of where it ended: the words of its last TAIL_MAX lines, in order."""
    return [said(line) for line in lines[-TAIL_MAX:]]


def read_before(group: list[str], words: list[str], at: int) -> int | None:
    """How many of `group` (a wall-stamped read's lines, in order) a kernel-stamped read gave: those up to where the
    words of its last lines (`words`, ending at its `at`-th line) end in order. Where they end in several places (a
    flood of one line), the last at or before `at` (lines lost at the log's start since move it back, never
    forward), else the first after it; None where they end nowhere (the log's start is gone past them)."""
    if not words:
        return None
    said_ = [said(line) for line in group]
    k = len(words)
    ends = [p for p in range(k, len(said_) + 1) if said_[p - 1] == words[-1] and said_[p - k:p] == words]
    if not ends:
        return None
    before = [p for p in ends if p <= at]
    return before[-1] if before else ends[0]
