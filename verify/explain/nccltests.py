"""NVIDIA nccl-tests' output (`all_reduce_perf`, `all_gather_perf`, ...: src/util.cu's header, table and footer), with
or without NCCL's INFO lines, under a launcher's prefix (Open MPI's `[1,0]<stdout>:`, srun -l's `0: `), into the nccl
facts: the `#  Rank N Group G Pid P on <host> device D [bus] <GPU>` lines give the ranks, nodes and GPU; the table's
out-of-place figures the `sizes` (wrong elements: out-of-place plus in-place, where each was validated). The program
(`# Collective test starting: all_gather_perf`, a command line) is the `collective`, and its rows are `sizes` judged
by its own arithmetic (verify/checks/nccl/collective.py); a table that names none is an all-reduce's only where its
figures show it (busbw = algbw x 2(n-1)/n, a reduction to no root), and at two ranks a reduction to no root counting
the whole message is an all-reduce's or a sendrecv's, whose figures agree there (`collective` null); at any number of
ranks, such rows validated out of place and printed `N/A` in place are a sendrecv's (nccl-tests never validates its
in-place run: that `N/A` is "not checked", so a row's `wrong` is its out-of-place count, never a 0 for the side not
checked, and a row with no out-of-place count gives no `sizes`). Wrong elements
and a `# Out of bounds values : N FAILED` footer are wrong data all the same (NCCL_WRONG_RESULT). Tables of
nccl-tests before #wrong (an `error` column: the largest deviation, not a count) are read by that program's own
bound (DeltaMaxValue(type) x (ranks - 1)): every row within it is no wrong element, any beyond it no `sizes`. Rows pasted without
the column line are read where their arithmetic shows them (batch 143: an excerpt that starts mid-table), the last
row cut in its in-place half keeps its out-of-place figures, and rows of no reduction and no root are an all_gather's
or an alltoall's, whose share of the message (size = count x bytes x n) gives the ranks a cut device list does not."""
from __future__ import annotations

import re
from typing import Any

from ..checks.nccl.collective import ALL_REDUCE, PER_RANK, TYPE_BYTES, known
from . import nccl
from .said import printed

# the table's column line: `#       size         count      type   redop    root     time   algbw   busbw #wrong ...`
# (nccl-tests of 2018-2020 printed it without the `#`)
_HEAD = re.compile(r"(?:#|^|:)\s*size\s+count\s+type\b(.*)$", re.MULTILINE)
_OOB = re.compile(r"#?(?<!\s)\s*Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)")
# `# Collective test starting: all_gather_perf` (2.15+), or the program on a command line quoted with the output
_PROGRAM = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoallv?|sendrecv|broadcast|reduce|gather|scatter|"
                      r"hypercube)_perf\b")
# a launcher's prefix before a row: Open MPI's --tag-output `[1,0]<stdout>:`, srun -l's `0: `, a timestamp and host
_PREFIX = re.compile(r"^.*?(?:<std(?:out|err)>:|^\s*\d+:\s)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d*)?(?:e[+-]?\d+)?$|^N/A$", re.IGNORECASE)
_TYPE = re.compile(r"^(?:u?int\d+|half|float\d*|double|bfloat16|f8e\dm\d|fp8\w*|[a-z]\w*)$")


# what nccl-tests prints around its table (src/util.cu): the footer's `# Out of bounds values : 0 OK` and `# Avg bus
# bandwidth : 8.62`, 2.15+'s `# Collective test starting: <program>` / `concluded`
_FOOTER = re.compile(r"(?:Out of bounds values|Avg bus bandwidth)\s*:|# Collective test (?:starting|concluded):")
# a cheap look for a row before reading every line: size, count, a type nccl-tests names
_ROWISH = re.compile(r"\b\d+\s+\d+\s+(?:u?int\d+|char|half|float\d*|double|bfloat16|f8e\dm\d)\s+\S+\s+[-\d]")


def detect(text: str) -> bool:
    """nccl-tests' table: its column line, or the footer beside the device lines (a table cut before its head), or
    rows pasted without either (batch 143: an excerpt that starts mid-table): two rows that are nccl-tests' by their
    own arithmetic, or one beside its footer."""
    if _HEAD.search(text) or (nccl.DEVICE_LINE.search(text) and _OOB.search(text)):
        return True
    if not _ROWISH.search(text):
        return False
    rows = [r for r in _headless(_rows(text, _HEADLESS)) if _per_rank_world([r], least=1)]
    return len(rows) >= 2 or bool(rows and _FOOTER.search(text))


def _value(token: str) -> float | None:
    """A figure of the row; ValueError for one nccl-tests never prints (negative, or beyond a float: `1e400`)."""
    if token.upper() == "N/A":
        return None
    value = float(token)
    if not 0 <= value < float("inf"):
        raise ValueError(token)
    return value


def _rows(text: str, columns: str, unread: list[int] | None = None) -> list[dict[str, Any]]:
    """The table's rows: size, count, type, [redop], [root], then per side time, algbw, busbw, #wrong (and the
    per-iteration i_min, i_max, i_p99, i_cv% of -R), a timestamp after them ignored. A line that opens as a row (size,
    count, type) but whose figures cannot be read (`nan`, `inf`, a negative, one cut short before the last line) is
    named in `unread`: its wrong elements are unknown."""
    per_side = 8 if "i_min" in columns else 4
    redop = " redop" in f" {columns}"
    rows = []
    lines = text.rstrip().splitlines()
    for n, line in enumerate(lines):
        tokens = _PREFIX.sub("", line).split()
        # sizes and counts in ASCII digits a 64-bit count holds (int() refuses 4,300 digits; `²` is no digit of it)
        if len(tokens) < 3 + 2 * per_side or not all(t.isascii() and t.isdecimal() and len(t) <= 19 for t in tokens[:2]) \
                or not _TYPE.match(tokens[2]):
            continue
        rest, op = tokens[3:], None
        if redop and rest and not _NUMBER.match(rest[0]):
            op, rest = rest[0], rest[1:]
        figures = []
        for token in rest:
            if not _NUMBER.match(token):
                break
            figures.append(token)
        root, cut = None, False
        if len(figures) in (2 * per_side, 2 * per_side + 1):
            root = figures.pop(0) if len(figures) % 2 else None
        elif n == len(lines) - 1 and per_side <= len(figures) - (rooted := int(" root" in f" {columns}")) < 2 * per_side:
            # the excerpt broke off in the last row's in-place half: its out-of-place figures are whole (batch 143)
            root, cut = figures.pop(0) if rooted else None, True
            figures = figures[:per_side] + ["N/A"] * per_side
        else:
            if unread is not None:
                unread.append(n + 1)
            continue
        try:
            out, inp = [_value(t) for t in figures[:per_side]], [_value(t) for t in figures[per_side:]]
        except ValueError:
            if unread is not None:
                unread.append(n + 1)
            continue
        rows.append({"size": int(tokens[0]), "count": int(tokens[1]), "type": tokens[2], "redop": op,
                     "root": root, "out": out, "in": inp, "cut": cut})
    return rows


# the columns of a table whose column line the excerpt left out: an all-reduce's (2.13+: redop, root, #wrong)
_HEADLESS = " count type redop root time algbw busbw #wrong time algbw busbw #wrong"


def _whole(figure: float | None) -> bool:
    return figure is not None and float(figure).is_integer()


def _headless(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table without its column line: only rows that count their out-of-place wrong elements (a whole number; the
    in-place side counted too, or `N/A` where nccl-tests does not validate it: alltoall's, or the row cut there)."""
    return [r for r in rows if _whole(r["out"][3]) and (r["in"][3] is None or _whole(r["in"][3]))]


def _per_rank_world(rows: list[dict[str, Any]], least: int = 2) -> int | None:
    """The ranks one rank's share implies (size = count x the type's bytes x n: all_gather, alltoall, reduce_scatter,
    gather, scatter), the same whole n on every row; None where a row gives none (an unknown type, another n)."""
    worlds = set()
    for r in rows:
        if r["size"] == 0 and r["count"] == 0:
            continue                         # a 0-byte row (all_gather_perf -b 0) moves nothing and says no n
        share = r["count"] * TYPE_BYTES.get(r["type"], 0)
        if not share or r["size"] % share:
            return None
        worlds.add(r["size"] // share)
    world = worlds.pop() if len(worlds) == 1 else 0
    return world if least <= world <= 1 << 16 else None


def _gathered(rows: list[dict[str, Any]], world: int | None) -> str | None:
    """No program named: rows of no reduction and no root (redop `none`, root -1) whose size is n counts are an
    all_gather's or an alltoall's (reduce_scatter reduces, gather and scatter have a root, broadcast counts the whole
    message), and both have the same arithmetic (busbw = algbw x (n-1)/n). alltoall never validates its in-place run
    (src/alltoall.cu: `reportErrors = in_place ? 0 : 1`, printed `N/A`) where all_gather does: that names it."""
    n = _per_rank_world(rows)
    if not rows or n is None or (world and world != n) or any(r["redop"] != "none" or r["root"] not in (None, "-1")
                                                               for r in rows):
        return None
    whole = [r for r in rows if not r["cut"]]
    return "alltoall" if whole and all(r["in"][3] is None for r in whole) else "all_gather"


def _sendrecv(rows: list[dict[str, Any]]) -> bool:
    """No program named: rows of a reduction op printed (not `none`) and no root, whose count is the whole message and
    whose busbw is their algbw, validated out of place and printed `N/A` in place on every whole row, are a
    sendrecv_perf's: sendrecv never validates its in-place run (src/sendrecv.cu: `reportErrors = in_place ? 0 : 1`),
    where all_reduce and reduce_scatter do (a count in place), and alltoall, which does not either, prints no op
    (`none`: _gathered). The `# Collective test starting` line that names the program is 2.15+'s; a job's own banner
    (`>>> SendRecv bandwidth sweep`, batch 289) is none of nccl-tests'."""
    whole = [r for r in rows if not r["cut"] and r["size"]]
    return bool(whole) and all(
        r["redop"] not in (None, "none") and r["root"] in (None, "-1") and _whole(r["out"][3])
        and r["count"] * TYPE_BYTES.get(r["type"], 0) == r["size"] and r["out"][1] is not None
        and r["out"][2] is not None and abs(r["out"][2] - r["out"][1]) <= 0.011 + 0.01 * r["out"][1]
        for r in rows if r["size"]) and all(r["in"][3] is None for r in whole)


# the launch line above the table (`mpirun ... -np 2 ./all_reduce_perf -b 2M ... -g 1`): ranks x GPUs per rank
_LAUNCH = re.compile(r"\b(?:mpirun|mpiexec|orterun)\b[^\n]*?\s(?:-np|-n|--np|-c)\s+(\d{1,5})\b[^\n]*?\w+_perf\b([^\n]*)")
_GPUS = re.compile(r"\s(?:-g|--ngpus)\s+(\d{1,3})\b")


def _launched(text: str) -> int | None:
    """The world size the launch line gives (nccl-tests' `-g` GPUs per process, 1 unless given), or None."""
    found = printed(_LAUNCH, text)
    if not found:
        return None
    gpus = _GPUS.search(found.group(2))
    world = int(found.group(1)) * (int(gpus.group(1)) if gpus else 1)
    return world if 0 < world <= 1 << 16 else None


def _implied_world(rows: list[dict[str, Any]]) -> int | None:
    """The world size an all-reduce's figures imply (busbw = algbw x 2(n-1)/n: n = 2 / (2 - busbw/algbw)), where every
    row large enough to tell gives the same n; a ratio of 1 or less is another collective's (or one rank's)."""
    worlds = set()
    for r in rows:
        algbw, busbw = r["out"][1], r["out"][2]
        if not algbw or algbw < 1 or busbw is None or not 1.05 < busbw / algbw < 2:
            return None
        worlds.add(round(2 / (2 - busbw / algbw)))
    return worlds.pop() if len(worlds) == 1 else None


def _all_reduce(rows: list[dict[str, Any]], world: int | None) -> bool:
    """Whether rows of no program named are an all-reduce's: a reduction to no root whose busbw is algbw x 2(n-1)/n
    at every size large enough to tell (reduce_scatter's is (n-1)/n, reduce's has a root)."""
    if not world or world < 2 or any(r["redop"] in (None, "none") or r["root"] not in (None, "-1") for r in rows):
        return False
    factor = 2 * (world - 1) / world
    telling = [r for r in rows if (r["out"][1] or 0) >= 1]
    return bool(telling) and all(abs(r["out"][2] - r["out"][1] * factor) <= 0.1 * r["out"][1] * factor + 0.05
                                 for r in telling)


def _two_rank_pair(rows: list[dict[str, Any]], world: int | None) -> bool:
    """No program named, two ranks: a reduction to no root whose count is the whole message is an all-reduce's or a
    sendrecv's (reduce_scatter counts one rank's share, broadcast and reduce have a root, all_gather and alltoall no
    reduction), and at two ranks both give busbw = algbw: their figures are judged alike."""
    return world == 2 and bool(rows) and all(
        r["redop"] not in (None, "none") and r["root"] in (None, "-1")
        and r["count"] * TYPE_BYTES.get(r["type"], 0) == r["size"] for r in rows)


# nccl-tests before #wrong (src/common.cu, 2018-2021): a row's `error` is the largest deviation `%5.0le` and the test
# counts it out of bounds where it exceeds DeltaMaxValue(type) x (nranks - 1): below that bound the row is right
_DELTA_MAX = {"half": 1e-2, "bfloat16": 1e-2, "float": 1e-5, "double": 1e-12}


def _bounded(rows: list[dict[str, Any]], ranks: int | None) -> bool:
    """An `error` table's deviations as wrong elements: 0 where nccl-tests' own bound holds (the printed digit rounds
    up to half of it again, so 1.5 x the figure is held to it), with the ranks the text shows; True where every row's
    every validated side is within it. A deviation beyond it is no count (the footer says how many tests failed), so
    such a table stays unjudged, as without ranks or with a type nccl-tests bounds at 0 (the integers)."""
    if not rows or not ranks or ranks < 2:
        return False
    for r in rows:
        bound = _DELTA_MAX.get(r["type"], 0.0) * (ranks - 1)
        sides = [r["out"], r["in"]]
        if r["out"][3] is None or any(s[3] is not None and s[3] * 1.5 > bound for s in sides):
            return False
    for r in rows:
        for side in (r["out"], r["in"]):
            if side[3] is not None:
                side[3] = 0.0
    return True


def _sizes(rows: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """One row per size (a table of several types or ops (-d all, -o all) repeats sizes: their wrong elements add up,
    the first row's figures stand); a size of 0 moves nothing and is left out. None where a row's out-of-place wrong
    count is unknown (-c 0 prints N/A: no validation ran); an in-place N/A beside a count (sendrecv_perf of some
    releases) adds nothing."""
    by_size: dict[int, dict[str, Any]] = {}
    for r in rows:
        out, inp = r["out"], r["in"]
        if r["size"] == 0:
            continue
        if out[3] is None or None in out[:3]:
            return None
        wrong = int(out[3]) + int(inp[3] or 0)
        if r["size"] in by_size:
            by_size[r["size"]]["wrong"] += wrong
            continue
        by_size[r["size"]] = {"size": r["size"], "count": r["count"], "type": r["type"], "redop": r["redop"],
                              "time_us": out[0], "algbw": out[1], "busbw": out[2], "wrong": wrong}
    return list(by_size.values()) or None


def _returned_wrong(text: str, rows: list[dict[str, Any]], counted: bool, sizes: Any, program: str | None,
                    name: str) -> str | None:
    """The error of a table whose rows count wrong elements, or whose bounds check failed, where its sizes do not
    carry the count themselves; else None."""
    oob = _OOB.search(text)
    wrong_rows = sum(int((r["out"][3] or 0) + (r["in"][3] or 0)) for r in rows) if counted else 0
    failed = bool(oob and oob.group(2) == "FAILED")
    if (sizes and wrong_rows) or not (wrong_rows or failed):
        return None
    said = f"{wrong_rows} wrong element(s)" if wrong_rows else "results out of bounds"
    return f"{program or 'collective'}: {name} returned {said}" + (
        f" (# Out of bounds values : {oob.group(1)} FAILED)" if oob and failed else "")


def parse(text: str) -> dict[str, Any]:
    facts = nccl.parse(text)                 # NCCL's own lines, where the output has them: version, network, error
    world, nodes, gpu = nccl.ranks(text)
    programs = set(_PROGRAM.findall(text))
    program = programs.pop() if len(programs) == 1 else None
    head = _HEAD.search(text)
    columns = head.group(1) if head else _HEADLESS
    unread: list[int] = []
    rows = _rows(text, columns, unread)
    if not head:                             # a table pasted without its column line: only rows counting #wrong
        rows = _headless(rows)
    # before #wrong the column was `error`: a deviation, not a count; a page's markdown that took each line's `#` for a
    # heading mark printed it `wrong` (batch 272)
    counted = bool(re.search(r"(?:#|\s)wrong\b", columns))
    if head and counted:                     # a wrong-element count is whole: a row with a fraction is none of its rows
        rows = [r for r in rows if all(w is None or w.is_integer() for w in (r["out"][3], r["in"][3]))]
    if world is None and (launched := _launched(text)):
        world = launched                     # no device lines: the launch line's ranks (nodes unknown)
    if rows and not program and (implied := _implied_world(rows)) and implied > (world or 0):
        world, nodes = implied, None         # the device lines were trimmed: the figures say how many ranks
    elif rows and program == "all_reduce" and world is None and facts.get("world_size") is None \
            and (implied := _implied_world(rows)):
        world, nodes = implied, None         # all_reduce_perf's rows alone (batch 191): its busbw/algbw says n
    if head and not counted and re.search(r"\berror\b", columns):
        counted = _bounded(rows, world or facts.get("world_size"))
    gathered = None if program or not counted else _gathered(rows, world or facts.get("world_size"))
    # sendrecv's table, named by its in-place `N/A` (_sendrecv)
    paired = not program and not gathered and counted and _sendrecv(rows)
    if world is None and facts.get("world_size") is None and known(program or gathered) in PER_RANK \
            and (shares := _per_rank_world(rows)):
        world, nodes = shares, None          # no (whole) device list: one rank's share says how many ranks
    ranks = world or facts.get("world_size")
    collective = program or gathered or ("sendrecv" if paired else ALL_REDUCE if counted and _all_reduce(rows, ranks)
                                         else None)
    judged = counted and (collective is not None or _two_rank_pair(rows, ranks))
    sizes = _sizes(rows) if judged else None
    if sizes and not ranks:
        sizes = None                         # figures without ranks: no busbw is judged on an unknown world size
    if sizes and unread and head:
        # a row whose figures cannot be read hides its wrong elements: the rest of the table is no pass
        sizes = None
    name = f"{program}_perf" if program else "nccl-tests"
    if not facts.get("error") and (returned := _returned_wrong(text, rows, counted, sizes, program, name)):
        facts["error"] = returned
    shown = ("all_gather or alltoall (the same figures)" if gathered == "all_gather" else
             "sendrecv (its in-place #wrong N/A: not validated, no count)" if paired else
             collective or "an all-reduce or a sendrecv (two ranks)")
    what = (f"{shown}: judged" if sizes else
            f"row(s) at line(s) {', '.join(map(str, unread[:5]))} unreadable: not judged" if unread and head and rows
            and judged and ranks else "its ranks not shown: not judged" if rows and judged else
            "no program named, not an all-reduce's: not judged" if rows else "no table rows")
    facts.update(sizes=sizes, collective=collective, mode=f"{name} table ({what})"[:200])
    if world is not None:
        facts.update(world_size=world, nodes=nodes)
    if gpu:
        facts["device_name"] = gpu
    return facts
