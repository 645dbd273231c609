"""NCCL's RAS reports (2.24+; issue 35, batch 230), as `ncclras` prints them (src/ras/client_support.cc): its text
report (`Job summary`, the `Communicators...` table, its `Errors` and `Warnings` sections), its JSON (`ncclras -f
json`: each communicator's ranks and `missing_ranks`), and its monitor mode's events (`[time] PEER_DEAD: Process N on
node H managing GPU G`). Read into the nccl facts as a translation records them: the communicator's size and nodes,
NCCL's version, and the error RAS reports, its own words (verify/checks/nccl/rasreport.py judges them).

RAS's `TIMEOUT` warning is its own collection's trouble (`Encountered N communication timeouts while gathering
communicator data`): no evidence about the job or a node, not read as an error; nor is a `MISMATCH` warning (ranks
at different operation counts: a snapshot of a running job catches them in flight). A report whose communicators all run
with no error is read with no error: nothing to judge, never a pass (no collective was measured). Pure."""
from __future__ import annotations

import functools
import json
import re
from typing import Any

from ..checks.nccl import opname
from ..checks.nccl.rasreport import OWN_CAUSE

_VERSION = re.compile(r"^NCCL version (\d+\.\d+\.\d+)", re.MULTILINE)
# (`[^\S\n]`, a space within the line: a `\s` run from each line start over a file of blank lines is quadratic, and a
# row is never read across a cut line's end)
_TABLE_HEAD = re.compile(r"^Group[^\S\n]+Comms[^\S\n]+Nodes[^\S\n]+Ranks[^\S\n]+Ranks[^\S\n]+Ranks[^\S\n]+Status[^\S\n]+"
                         r"Errors[ \t]*$", re.MULTILINE)
# a communicator group's row: #, comms in group, nodes per comm, ranks per node (`3-4`), ranks per comm, ranks in group,
# status, errors
_ROW = re.compile(r"^[^\S\n]*\d+[^\S\n]+\d+[^\S\n]+(\d+)[^\S\n]+[\d-]+[^\S\n]+(\d+)[^\S\n]+\d+[^\S\n]+([A-Z]+)[^\S\n]+([A-Z]+)"
                  r"[ \t]*$", re.MULTILINE)
# the monitor's event names the process (`PEER_DEAD: Process 1524345 on node ...`): the bare word in prose is no event
_MONITOR = re.compile(r"^[^\n]*\bPEER_(?:TIMEOUT_DEAD|DEAD|UNRESPONSIVE): Process \d+ [^\n]*", re.MULTILINE)
# where a report's section ends: the next report's parts
_SECTION_END = re.compile(r"^(?:Communicators\.\.\.|Job summary|NCCL version|Errors|Warnings|RAS Monitor Mode)")
# an error or warning block's heading: its kind, for one communicator after its ids (`#0-0 (1bdb83b038775869) DEAD`)
_BLOCK_HEAD = re.compile(r"(?:#\d+-\d+ \(\w+\) )?[A-Z][A-Z_]+")
_OWN_TROUBLE = "TIMEOUT"
# a warning that ranks are at different operation counts or states: a running job's snapshot catches ranks one
# operation apart (batch 158's 640 against 641), no failure on its own; a hang's own log says the hang
_IN_FLIGHT = re.compile(r"\bMISMATCH$")
# ncclResult_t as RAS's JSON gives a rank's init_state / async_error, in the words its text report uses
_RESULT = {1: "Unhandled CUDA error", 2: "System error", 3: "Internal error", 4: "Invalid argument",
           5: "Invalid usage", 6: "Remote process error"}
MOST_LINES = 40
# NCCL's warnings in the same text (the job's log the report or a monitor event was pasted into): one naming a cause of a
# node's own (a CUDA failure, a completion error) is read beside RAS's words, so the rule that names no cause gives way
# to it; left out, the log's own reading of it would lose the tie to this kind's, listed first (a withheld fault)
_WARN_LINE = re.compile(r"^[^\n]*NCCL WARN [^\n]*", re.MULTILINE)
MOST_CAUSES, LINE_CHARS = 3, 400


def detect(text: str) -> bool:
    return bool(_TABLE_HEAD.search(text) or _MONITOR.search(text) or _json(text) is not None)


def _blocks(text: str) -> list[str]:
    """The text report's error and warning blocks (a header line and its indented lines, joined), RAS's own TIMEOUT
    left out: one pass over the lines."""
    blocks: list[list[str]] = []
    inside = False
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line in ("Errors", "Warnings") and n + 1 < len(lines) and re.fullmatch(r"=+\s*", lines[n + 1]):
            inside = True
            blocks.append([])      # in place: a new list per header is quadratic
        elif _SECTION_END.match(line) or not inside:
            inside = False
        elif line.strip() and not line.startswith("="):
            if not line[0].isspace():
                if not _BLOCK_HEAD.fullmatch(line.rstrip()):
                    inside = False      # no RAS heading: the section ended (a prompt, the next command's output)
                    continue
                blocks.append([line.strip()])
            elif blocks[-1]:
                blocks[-1].append(line.strip())
    return [" ".join(b) for b in blocks if b and not b[0].startswith(_OWN_TROUBLE) and not _IN_FLIGHT.search(b[0])]


# where ncclras's JSON starts: its header's first key (src/ras/client_support.cc jsonWriteHeader), at most a few tried
# (a JSON decode error counts the lines before it, so each failed try costs the whole text)
_JSON_START = re.compile(r'^\{\s*"nccl_version"', re.MULTILINE)
MOST_TRIES = 8
MOST_RANKS = 1 << 22


@functools.lru_cache(maxsize=2)
def _json(text: str) -> dict[str, Any] | None:
    """ncclras's JSON report in the text: the first object holding `communicators` (decoded once for detect() and
    parse() of one text; read, never changed)."""
    if '"communicators"' not in text:
        return None
    decoder = json.JSONDecoder()
    for start in [m.start() for m in _JSON_START.finditer(text)][:MOST_TRIES]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue            # not JSON, or nested deeper than any report RAS writes
        if isinstance(value, dict) and isinstance(value.get("communicators"), list):
            return value
    return None


def _named(rank: Any) -> bool:
    return isinstance(rank, dict) and type(rank.get("rank")) is int and 0 <= rank["rank"] < MOST_RANKS


def _status(rank: dict[str, Any]) -> dict[str, Any]:
    status = rank.get("status")
    return status if isinstance(status, dict) else {}


def _from_json(report: dict[str, Any]) -> tuple[list[str], int | None, int | None, str | None]:
    """(error lines, the largest communicator's size, its nodes where every rank's host is given, the version)."""
    lines, size, nodes = [], None, None
    for comm in report["communicators"]:
        if not isinstance(comm, dict):
            continue
        # a rank RAS could name: an object with a rank number (not a bool, never negative); another is no report's
        ranks = [r for r in comm.get("ranks") or [] if _named(r)]
        missing = [r for r in comm.get("missing_ranks") or [] if _named(r)]
        for rank in missing:
            status = _status(rank)
            said = [w for w, key in (("considered dead", "considered_dead"), ("unresponsive", "unresponsive"))
                    if status.get(key) is True] or ["missing"]
            lines.append(f"Rank {rank.get('rank')} (process {rank.get('pid')} on node {rank.get('host')}, GPU "
                         f"{rank.get('cuda_dev')}): {', '.join(said)}")
        for rank in ranks:
            status = _status(rank)
            for key in ("init_state", "async_error"):
                code = status.get(key)
                if type(code) is int and code in _RESULT:       # a bool is no ncclResult_t
                    lines.append(f"Rank {rank.get('rank')} reported {_RESULT[code]} -- process {rank.get('pid')} "
                                 f"on node {rank.get('host')}")
        # a size RAS could write: an int (a bool is none), no more ranks than any job runs
        if type(comm.get("size")) is int and (size or 0) < comm["size"] <= MOST_RANKS:
            size = comm["size"]
            hosts = [r.get("host") for r in ranks + missing]
            whole = len(hosts) == comm["size"] and all(isinstance(h, str) and h for h in hosts)
            nodes = len(set(hosts)) if whole else None
    version = report.get("nccl_version")
    return lines, size, nodes, version if isinstance(version, str) else None


def parse(text: str) -> dict[str, Any]:
    rows = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in _ROW.finditer(text)]
    lines = _blocks(text)
    size = max((r[1] for r in rows), default=None)
    nodes = max((r[0] for r in rows if r[1] == size), default=None)
    version = _VERSION.search(text)
    report = _json(text)
    found_version = version.group(1) if version else None
    if report is not None:
        json_lines, json_size, json_nodes, json_version = _from_json(report)
        lines += json_lines
        if json_size is not None and json_size > (size or 0):
            size, nodes = json_size, json_nodes
        found_version = found_version or json_version
    lines += [" ".join(m.group(0).split()) for m in _MONITOR.finditer(text)]
    lines = list(dict.fromkeys(lines))[:MOST_LINES]
    if lines:
        causes = (" ".join(m.group(0)[:LINE_CHARS].split()) for m in _WARN_LINE.finditer(text))
        lines += [c for c in causes if OWN_CAUSE.search(c)][:MOST_CAUSES]
    # RAS reports ranks and counts, not the operation: named only where the log beside it shows one (opname.py)
    phase = "init" if any(r[2] == "INIT" for r in rows) else (opname.shown(text) or "collective")
    return {"backend": "nccl", "nccl_version": found_version, "world_size": size, "nodes": nodes, "sizes": None,
            "error": f"{phase}: {' | '.join(lines)}" if lines else None}
