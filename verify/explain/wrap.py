"""A terminal's hard wrap undone: a copy from a terminal W columns wide (screen, a serial console, a web log viewer)
breaks every longer line into rows of exactly W characters and a shorter rest. The rows are joined back only where
the excerpt shows the wrap, and a row goes on in the line after it only where that line cannot be a record of its
own; otherwise the lines are left as they are (a cut line is read for what it shows, never completed by a guess)."""
from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

from .launchers import prefixes

MIN_WIDTH = 60              # no terminal is narrower; shorter lines are a format's own
# a table's border or row (nvidia-smi's `+----+`, `|...|`, a dashed rule): its width is the table's, not a wrap
_TABLE = re.compile(r"^[-=+_ ]+$|^[|+].*[|+]$")


_KINDS = re.compile(r"([A-Za-z_]+)|(\d+)|(\s+)")


def _shape(line: str) -> tuple[int, str]:
    """How a line starts: its indent and its first tokens' kinds (`node12:345:` and `gpu1:2:` both start `a0:`)."""
    body = line.lstrip()
    kinds = _KINDS.sub(lambda m: "a" if m.group(1) else "0" if m.group(2) else " ", body[:16])
    return len(line) - len(body), kinds[:3]


def _inside(row: str, line: str) -> bool:
    """A cut that shows: inside a word (`...previous Xi` + `d 149`), or after a blank the terminal kept at the row's
    end (a tool ends no line with one)."""
    return bool(re.match(r"\w\w", row[-1:] + line[:1]) or row[-1:].isspace())


def _start(line: str) -> tuple[int, str]:
    """What a record's start is compared by: an indented line by its indent alone (`    Processes : None` after a
    W-long `Incorrect Configuration : N/A` is a record of an indented report), a flush one by its first tokens."""
    indent = len(line) - len(line.lstrip())
    return (indent, "") if indent else _shape(line)


def _goes_on(record: str, row: str, line: str, starts: set[tuple[int, str]]) -> bool:
    """Whether `line` is the rest of `row`, the W-long end of `record`: not a table's, and the line starts neither with
    a launcher's prefix, nor the way the record does, nor (unless the cut is inside a word) the way lines after a
    short one start (`    Serial Number : ...` after a `Pending : N/A` that is W long by chance)."""
    return not _TABLE.match(prefixes(record).rstrip()) and prefixes(line) == line and _shape(record) != _shape(line) and \
        not _same_columns(record, line) and not _padded(row, line) and not _same_mark(record, line) and \
        not _labels_a_row(record, line) and \
        (_inside(row, line) or _start(line) not in starts)


def _labels_a_row(record: str, line: str) -> bool:
    """A matrix's header and its first row (`nvidia-smi topo -m`: `        GPU0    GPU1 ... GPU NUMA ID` then `GPU0
    X  NV18 ...`, batch 181's b200-x8-570.124.06-torch-2.7.1-...): the line opens with a name the record holds as a
    column of its own, which a cut's rest (the end of a word, of a sentence) is not."""
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    return len(first) >= 3 and not line[:1].isspace() and re.search(r"\d", first) is not None \
        and first in record.split()


def _padded(row: str, line: str) -> bool:
    """A table padded to one width (nccl-tests' header: every line W long, blanks after its last column): a row that
    ends in a run of blanks with a W-long line after it, where a cut's rest would be shorter."""
    return row.endswith("  ") and len(line) == len(row)


def _same_mark(record: str, line: str) -> bool:
    """A line that starts with the mark the record starts with (nccl-tests' `#` header lines, a `|` table): another
    line of that format, not the rest of a cut one."""
    return bool(line[:1]) and line[:1] == record[:1] and not (line[:1].isalnum() or line[:1].isspace())


def _same_columns(record: str, line: str) -> bool:
    """A CSV header and its row (`nvidia-smi --query-gpu ... --format=csv`: the header is the longest line), or two
    rows of a table of figures (nccl-tests' right-aligned columns, padded to one width): as many fields each, of the
    same kinds, which a line cut in two never has."""
    if record.count(",") >= 2 and record.count(",") == line.count(","):
        return True
    a, b = record.split(), line.split()
    if len(a) >= 4 and len(a) == len(b) and [_figure(x) for x in a] == [_figure(x) for x in b] and any(map(_figure, a)):
        return True
    # a table's column line and its first row (nccl-tests' `bytes count type ... errors` above `4294967296 ... 0`, a
    # report's copy: batch 191): a line of names, then as many fields, most of them figures
    return len(a) >= 6 and len(a) == len(b) and not any(map(_figure, a)) and 2 * sum(map(_figure, b)) > len(b)


def _figure(token: str) -> bool:
    return bool(_FIGURE.match(token))


_FIGURE = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?$|^N/A$", re.IGNORECASE)


def _cuts(lines: list[str], rows: list[int], width: int) -> list[tuple[int, int]]:
    """(row, rest) index pairs: each W-long row and the line that goes on with its record."""
    if not any(len(lines[a]) == width and b == a + 1 for a, b in pairwise(rows)):
        return []
    starts = {_start(lines[rows[0]])} | {_start(lines[b]) for a, b in pairwise(rows)
                                         if len(lines[a]) < width or b != a + 1}
    cuts, record = [], lines[rows[0]]
    for a, b in pairwise(rows):
        if b == a + 1 and len(lines[a]) == width and _goes_on(record, lines[a], lines[b], starts):
            cuts.append((a, b))
        else:
            record = lines[b]
    return cuts


def _foreign(lines: list[str], rows: list[int], cut: tuple[int, int], shapes: Counter[tuple[int, str]]) -> bool:
    """A rest that starts like no other line, after which the excerpt goes on at an indent it had before the cut
    (`...-5291dd461` + `278` + `        Health`), not a second excerpt's first line (`Fabric` + `    State`)."""
    row, rest = cut
    if shapes[_shape(lines[rest])] != 1:
        return False
    after = rows.index(rest) + 1
    return after == len(rows) or _shape(lines[rows[after]])[0] in {_shape(lines[n])[0] for n in rows if n <= row}


def _shown(lines: list[str], rows: list[int], cuts: list[tuple[int, int]]) -> bool:
    """Whether the cuts show a terminal's wrap. Lines of one format that are merely the longest end alike and where a
    token ends (`: Requested functionality has been deprecated`); rows a terminal cut end anywhere: two that end
    differently, two different ones cut inside a word, a lone line cut into rows and a rest, or one cut inside a word
    whose rest is foreign (_foreign)."""
    inside = [(a, b) for a, b in cuts if _inside(lines[a], lines[b])]
    if len({lines[a][-8:] for a, _ in cuts}) >= 2 or len({lines[a] for a, _ in inside}) >= 2:
        return True
    if len(cuts) == len(rows) - 1 and (inside or lines[cuts[-1][1]][:1].isspace()):
        return True
    shapes = Counter(_shape(lines[n]) for n in rows)
    return any(_foreign(lines, rows, cut, shapes) for cut in inside[:4])


def unwrap(lines: list[str]) -> list[str]:
    """The lines with each terminal-cut record joined back into one line."""
    rows = [n for n, line in enumerate(lines) if prefixes(line).strip()]     # a launcher's prefix alone is blank
    width = max((len(lines[n]) for n in rows), default=0)
    if width < MIN_WIDTH or all(len(lines[n]) == width for n in rows):
        return lines        # every line one length (`nvidia-smi -L`'s UUIDs): records of a fixed width, no rest cut off
    cuts = _cuts(lines, rows, width)
    if not cuts or not _shown(lines, rows, cuts):
        return lines
    rests = {b for _, b in cuts}
    out: list[str] = []
    for n, line in enumerate(lines):
        if n in rests:
            out[-1] += line
        else:
            out.append(line)
    return out
