"""infiniband-diags' error counter reports, fabric-wide: `ibqueryerrors` (rdma-core infiniband-diags/ibqueryerrors.c:
`Errors for "<CA's node description>"`, a switch's `Errors for 0x<guid> "<description>"`, under it `   GUID 0x<port
guid> port N: [SymbolErrorCounter == 65535] ...`, with `-r` a `Link info:` line as iblinkinfo prints a port; `##
Summary: N nodes checked, M bad nodes found`) and the deprecated `ibcheckerrors` script (scripts/ibcheckerrs.in:
`#warn: counter SymbolErrors = 36905 (threshold 10) lid 193 port 14`, then `Error check on lid 193 (<description>)
port 14:  FAILED`; older releases close a node with `# Checked Switch: nodeguid 0x... with failure`).
Read by FACTS.md's "Translating the fabric's error counters": no field holds a counter. A link-error counter over the
tool's threshold on a CA's own port is its host's cable or HCA evidence, said so that it is never a pass nor "nothing
to judge"; a switch port's counters, and a CA's congestion counters (PortXmitWait, VL15Dropped), name no host's fault
and are said beside the verdict; a summary of "0 bad nodes" proves no port. Only `-r`'s `Link info:` of a CA whose
description names its device (iblinkinfo.named) is an adapter's port."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .iblinkinfo import link, local, named

# the counters that count a link's own damage (IBTA PortCounters; ibcheckerrs' short names beside perfquery's)
LINK_ERRORS = frozenset({
    "SymbolErrorCounter", "SymbolErrors", "LinkErrorRecoveryCounter", "LinkRecovers", "LinkDownedCounter",
    "LinkDowned", "PortRcvErrors", "RcvErrors", "PortRcvRemotePhysicalErrors", "RcvRemotePhysErrors",
    "LocalLinkIntegrityErrors", "LinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "ExcBufOverrunErrors"})

_QUERY_NODE = re.compile(r'^\s*Errors for (?:(0x[0-9a-fA-F]+) )?"(.*)"\s*$')
_QUERY_PORT = re.compile(r"^\s*GUID 0x[0-9a-fA-F]+ port (\d{1,3}|ALL):((?: \[\w+ == \d+\])*)")
_COUNTER = re.compile(r"\[(\w+) == (\d{1,20})\]")
_WARN = re.compile(r"^\s*#warn: counter (\w+) = (\d{1,20})\s+\(threshold (\d+)\)")
_CHECK = re.compile(r"^\s*Error check on lid (\d+) \((.*)\) port\s*(all|\d{1,3})?:?\s*(?:FAILED)?\s*$")
_CHECKED = re.compile(r"^\s*# (?:Checked )?(Ca|Switch|Rt): nodeguid 0x[0-9a-fA-F]+ (?:with failure|failed)")
_SUMMARY = re.compile(r"^\s*##\s+(?:Summary: )?(\d+ (?:nodes checked, \d+ bad nodes found|ports checked, \d+ ports have "
                      r"errors beyond threshold))")

_JOINED = re.compile(r"(?<=\S)(?=#warn: counter |Error check on lid \d)")


@dataclass
class Node:
    desc: str
    ca: bool | None                      # the tool's word: a CA, a switch; None where it does not say
    ports: list[tuple[str, list[tuple[str, int]], dict[str, Any] | None]] = field(default_factory=list)

    @property
    def own(self) -> bool:
        """A CA's, by the tool's word or, where it says none, by a CA's description (`<host> HCA-1`, `<host> mlx5_0`)."""
        return self.ca if self.ca is not None else named(self.desc)[0] != self.desc


def detect(text: str) -> bool:
    """ibcheckerrors' `Error check on lid N (...) port`, or ibqueryerrors' `Errors for` header with a port under it."""
    header = False
    for line in text.splitlines():
        if len(line) >= 2000 or not ("Errors for" in line or "Error check" in line or "GUID" in line):
            continue
        if _CHECK.match(line) or (header and _QUERY_PORT.match(line)):
            return True
        header = header or bool(_QUERY_NODE.match(line))
    return False


def _ibcheck(line: str, nodes: list[Node], warned: list[tuple[str, int]], pending: list[Node]) -> None:
    """ibcheckerrors' lines: its counters wait for the `Error check` line that names their node and port; the node's
    kind comes after, on the `# Checked` line of older releases."""
    if m := _WARN.match(line):
        warned.append((m.group(1), int(m.group(2))))
    elif m := _CHECK.match(line):
        desc = m.group(2).strip()
        node = next((n for n in pending if n.desc == desc), None)
        if node is None:
            node = Node(desc, None)
            nodes.append(node)
            pending.append(node)
        node.ports.append((m.group(3) or "?", list(warned), None))
        warned.clear()
    elif (m := _CHECKED.match(line)) and pending:
        # the line closes one node, the last checked: a node before it whose own `# Checked` line is not in the paste
        # keeps no kind (its description's form decides), never this one's (a CA's errors called a switch's)
        pending[-1].ca = m.group(1) == "Ca"
        pending.clear()


def read(text: str) -> tuple[list[Node], list[str]]:
    """The nodes with counters over threshold, in order, and the summary lines."""
    nodes: list[Node] = []
    summary: list[str] = []
    warned: list[tuple[str, int]] = []
    pending: list[Node] = []
    # ibcheckerrs ends its counter lines with a tab's padding: at 8-column stops some are 80 wide, and a terminal's
    # wrap read back (explain/wrap.py) joins the next line to them; each record starts a line of its own again
    text = _JOINED.sub("\n", text)
    for line in text.splitlines():
        if len(line) >= 2000:
            continue
        if m := _QUERY_NODE.match(line):
            nodes.append(Node(m.group(2).strip(), m.group(1) is None))
            pending.clear()
        elif (m := _QUERY_PORT.match(line)) and nodes:
            counters = [(c.group(1), int(c.group(2))) for c in _COUNTER.finditer(m.group(2))]
            nodes[-1].ports.append((m.group(1), counters, None))
        elif "Link info:" in line and nodes and nodes[-1].ports and (port := link(line)):
            number, counters, _ = nodes[-1].ports[-1]
            nodes[-1].ports[-1] = (number, counters, port)
        elif m := _SUMMARY.match(line):
            summary.append(m.group(1))
        else:
            _ibcheck(line, nodes, warned, pending)
    return nodes, summary


def _damaged(counters: list[tuple[str, int]]) -> list[str]:
    return [f"{name} == {value}" for name, value in counters if name in LINK_ERRORS and value > 0]


def _faulty(node: Node) -> bool:
    return node.own and any(_damaged(c) or (p and (p["state"] != "ACTIVE" or p["phys_state"] != "LinkUp"))
                            for _, c, p in node.ports)


def _host(nodes: list[Node], text: str) -> str | None:
    cas = [n for n in nodes if n.own]
    chosen = next((n for n in cas if _faulty(n)), cas[0] if cas else None)
    return local([named(n.desc)[0] for n in cas], text) or (named(chosen.desc)[0] if chosen else None)


def parse(text: str) -> dict[str, Any]:
    """The ports `-r` printed for the host's CAs that name their device; else the adapters are unknown (null)."""
    nodes, _ = read(text)
    host = _host(nodes, text)
    adapters: dict[str, dict[str, Any]] = {}
    for node in nodes:
        where, name = named(node.desc)
        if not node.own or where != host or name is None:
            continue
        for number, _, port in node.ports:
            if port is not None and number.isdecimal() and int(number) <= 255:
                a = adapters.setdefault(name, {"name": name, "driver": None, "hca_type": None, "pci_device": None,
                                               "ports": []})
                if int(number) not in {p["port"] for p in a["ports"]}:
                    a["ports"].append({**port, "port": int(number)})
    return {"adapters": list(adapters.values()) or None}


def unread(text: str) -> list[str]:
    """The host's CA ports whose link-error counters are over the tool's threshold: its cable or HCA, in no field."""
    nodes, _ = read(text)
    host = _host(nodes, text)
    out = []
    for node in nodes:
        if node.own and named(node.desc)[0] == host:
            out += [f'"{node.desc}" port {number}: {", ".join(_damaged(c))} over the tool\'s threshold (the link\'s '
                    "own errors: its cable or HCA port)" for number, c, _ in node.ports if _damaged(c)]
    return out[:8]


def said(text: str) -> list[str]:
    """What names no host's fault, or another host's: switch ports, congestion counters, the summary."""
    nodes, summary = read(text)
    host = _host(nodes, text)
    out = []
    for node in nodes:
        # the ports with most of a link's own errors first (a switch's `port ALL` sums them: last)
        ranked = sorted(node.ports, key=lambda p: (p[0] == "ALL", -sum(v for k, v in p[1] if k in LINK_ERRORS)))
        counters = "; ".join(f"port {number}: {', '.join(f'{k} == {v}' for k, v in c) or 'over threshold'}"
                             for number, c, _ in ranked[:4])
        if not node.own:
            out.append(f'a switch\'s (or a node the tool does not call a CA) "{node.desc}", whose counters name no '
                       f"host: {counters}")
        elif named(node.desc)[0] != host:
            out.append(f'another host\'s CA "{node.desc}", judged only in its own folder: {counters}')
        elif not any(_damaged(c) for _, c, _ in node.ports):
            out.append(f'"{node.desc}": no link-error counter, only congestion or subnet-management ones: {counters}')
    out += [f"the tool's summary: {s} (a count, no port's state: never a pass)" for s in summary]
    return out[:12]
