"""Mellanox's `ibdiagnet` (ibutils, 1.x: `Loading IBDIAGNET from: ...`, its `-I---...` banners over each check, the
`-I- Stages Status Report:` table of errors and warnings per stage; ibdiagnet2's `-I- Stage  Warnings  Errors
Comment` summary): the fabric's health seen from one local port, which it names by number only (`-I- Using port 1 as
the local port`), never by device. Read by FACTS.md's "Translating the fabric's error counters": no field holds a
stage, so nothing is recorded (`adapters` unknown) and a clean report is never a pass; what it found is said. A
CA port it names below its IPoIB group's rate (`-W- Port <node>/P1 lid=0x00e2 guid=0x... dev=25218 can not join due
to rate:2.5Gbps < group:10Gbps`) is its host's link, said so that it is never "nothing to judge"; the group's own
rate below its members' (`-W- Suboptimal rate for group`) is the subnet manager's setting, no host's."""
from __future__ import annotations

import re
from typing import Any

from .hosts import ran_on

_BANNER = re.compile(r"^-I-{20,}\s*$")
_TITLE = re.compile(r"^-I- [A-Z][^\n]{0,120}$")
_MARK = re.compile(r"^\s*(?:Loading IBDIAGNET from:|-I- Stages Status Report:|-I- Stage\s+Warnings\s+Errors\b)")
_STAGE = re.compile(r"^\s*(?:-I-\s+)?([A-Z][\w /&.-]{2,60}?)\s+(\d{1,9})\s+(\d{1,9})(?:\s+\S.*?)?\s*$")
_DISCOVERED = re.compile(r"^-I- Discovering \.\.\. (\d+ nodes \(\d+ Switches & \d+ CA-s\)) discovered")
_CANNOT_JOIN = re.compile(r"^-W- Port (\S+) lid=(0x[0-9a-fA-F]+) guid=(0x[0-9a-fA-F]+)\b.*?can not join\s*(?:due to "
                          r"rate:\s*(\S+) < group:\s*(\S+))?")
_FINDING = re.compile(r"^-[EW]- .{1,200}$")


def detect(text: str) -> bool:
    banner = False
    for line in text.splitlines():
        if len(line) >= 400:
            continue
        if _MARK.match(line) or (banner and _TITLE.match(line)):
            return True
        banner = bool(_BANNER.match(line))
    return False


def parse(text: str) -> dict[str, Any]:
    """Nothing the facts hold: ibdiagnet names no device of its host."""
    return {"adapters": None}


def _joined(text: str) -> str:
    """Its warnings wrapped onto an indented next line (`can not join` / `    due to rate:...`) joined back."""
    return re.sub(r"\n[ \t]+(?=due to rate:)", " ", text)


def _slow(text: str) -> list[tuple[bool, str]]:
    """(another host's, what is said) for each CA port ibdiagnet says runs below its IPoIB group's rate. ibdiagnet
    sees the whole fabric: a port whose node is not the host the paste's one shell prompt names (`[root@n01 ~]#
    ibdiagnet`) is another host's, judged in its own folder (iblinkinfo.local, hunt 91)."""
    ran = ran_on(text)
    out = []
    for line in _joined(text).splitlines():
        if len(line) < 400 and (m := _CANNOT_JOIN.match(line)) and m.group(4):
            node = m.group(1).rsplit("/", 1)[0].split(".")[0].lower()
            other = len(ran) == 1 and node not in ran and node != "localhost"
            out.append((other, f"ibdiagnet: port {m.group(1)} (lid {m.group(2)}, guid {m.group(3)}) runs at "
                               f"{m.group(4)}, below its IPoIB group's {m.group(5)}, and cannot join it (a link trained "
                               "below the fabric's rate)"))
    return out


def unread(text: str) -> list[str]:
    """The CA ports ibdiagnet says run below their IPoIB group's rate: a link of the host it names, trained slow."""
    return [said for other, said in _slow(text) if not other][:8]


def _stages(lines: list[str]) -> list[str]:
    """The stages that report errors or warnings, from the status table (columns as its header orders them)."""
    out, order = [], None
    for line in lines:
        if "Stages Status Report" in line or re.match(r"^\s*STAGE\s+Errors\s+Warnings", line):
            order = ("errors", "warnings")
        elif re.match(r"^\s*-I- Stage\s+Warnings\s+Errors", line):
            order = ("warnings", "errors")
        elif order and (m := _STAGE.match(line)) and "Stage" not in m.group(1):
            counts = dict(zip(order, (int(m.group(2)), int(m.group(3))), strict=True))
            if counts["errors"] or counts["warnings"]:
                out.append(f"{m.group(1).strip()}: {counts['errors']} error(s), {counts['warnings']} warning(s)")
    return out


def said(text: str) -> list[str]:
    """What ibdiagnet found of the fabric, which no field holds and which names no host's port (or another's)."""
    lines = [line for line in _joined(text).splitlines() if len(line) < 400]
    out = [f"ibdiagnet discovered {m.group(1)}: a fabric's count, no port's state" for line in lines
           if (m := _DISCOVERED.match(line))]
    stages = _stages(lines)
    out += [f"ibdiagnet's stage {s}" for s in stages]
    found = [line.strip() for line in lines if _FINDING.match(line) and not line.startswith("-W- Topology file")
             and not _CANNOT_JOIN.match(line)]
    out += [f"ibdiagnet: {f}" for f in found[:6]]
    out += [f"another host's, judged only in its own folder: {said}" for other, said in _slow(text) if other][:4]
    if any("Stages Status Report" in line or re.match(r"^\s*-I- Stage\s+Warnings", line) for line in lines) \
            and not stages:
        out.append("ibdiagnet's every stage reports 0 errors: a fabric's summary, which names no port of this host, "
                   "never a pass")
    return out[:12]
