"""LBNL NHC's InfiniBand check (`check_hw_ib`, scripts/lbnl_hw.nhc of https://github.com/mej/nhc) as sites print it.
Run with `-d`, NHC says one line per port it reads under /sys/class/infiniband/*/ports/*, every port of the node:
`Found ACTIVE (LinkUp) IB Port mlx5_0:1 (400 Gb/sec)` (the word after the number in `state` and `phys_state`, the
first word of `rate`; a site's patched check may add ` with PCI-e link ...`). Those lines are the node's listing, read
into the fabric facts' `adapters` as an `ibstatus` would be: no width, speed, link layer, model or driver.
The check's own failure (`check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).`, or the OFED version mismatch it
reports when the user MAD driver is missing) has no field of the facts. That no port is ACTIVE at the rate the site's
check asks for is the site's own health check failing the node's fabric: a port down, or up at another rate, both the
host's (FABRIC_PORT_DOWN, `shown`), unless a finding listed stands on its own (a port read at a lower rate). NHC run
with another machine's configuration (more RAM than its maximum: a node grows no memory) proves nothing of this node:
its port finding is the tool's own trouble, never a drain. The OFED version mismatch is said (`unread`)."""
from __future__ import annotations

import re
from typing import Any

from .aznhc import HOST as _HOST  # distributed NHC's `{hostname} | {result}`
from .said import printed, printed_lines

_FOUND = re.compile(r"\bFound (\w+) \((\w+)\) IB Port ([\w.-]+):(\d+) \((\d+(?:\.\d+)?) Gb/sec\)")
_NO_PORT = re.compile(r"\bcheck_hw_ib:\s+No IB port(?: (\S+))? is ACTIVE \((\w+)(?: (\d+(?:\.\d+)?) Gb/sec)?\)")
# LBNL's check_hw_physmem: a node's RAM above the conf's maximum is the conf written for a bigger machine's peer
_FOREIGN_CONF = re.compile(r"\bcheck_hw_physmem:\s+Actual RAM size \(\d+ kB\) greater than maximum allowed \(\d+ kB\)")
REMEDY = ("Read the node's ports (`ibstat`, or NHC with `-d`): a port Down or Polling wants its cable, transceiver and "
          "switch port checked, one Active at another rate its link retrained; if this node's rate is right, fix the "
          "site's NHC conf. Keep the node out of multi-node jobs until NHC passes.")
_FAILED = re.compile(r"\bcheck_hw_ib:\s+(No IB port(?: \S+)? is \w+ \(\w+(?: \d+(?:\.\d+)? Gb/sec)?\)\.?|"
                     r"Version mismatch between kernel OFED drivers and userspace OFED libraries\.?)")


def detect(text: str) -> bool:
    return bool(_FOUND.search(text) or printed(_FAILED, text))


def _printed(text: str) -> str:
    """The text without the lines that only mention the check's failure in prose (a runbook's "If NHC reports
    `check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).` check the cable"): no node printed those (hunt97: a
    runbook read as FABRIC_PORT_DOWN, owner host)."""
    return "\n".join(printed_lines(text, _FAILED)) if "check_hw_ib" in text else text


def _ports(text: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Each port NHC read, by adapter and number; a port said twice (two runs pasted) keeps its last reading."""
    ports: dict[tuple[str, int], dict[str, Any]] = {}
    for m in _FOUND.finditer(text):
        ports[(m.group(3), int(m.group(4)))] = {
            "port": int(m.group(4)), "state": m.group(1), "phys_state": m.group(2), "rate_gbps": float(m.group(5)),
            "width": None, "speed": None, "link_layer": None}
    return ports


def parse(text: str) -> dict[str, Any]:
    """The ports NHC listed; none listed (only the check's failure): the adapters are unknown (null), not absent."""
    ports = _ports(text)
    if not ports:
        return {"adapters": None}
    adapters: dict[str, dict[str, Any]] = {}
    for (name, _), port in sorted(ports.items()):
        adapters.setdefault(name, {"name": name, "driver": None, "hca_type": None, "pci_device": None,
                                   "ports": []})["ports"].append(port)
    return {"adapters": list(adapters.values())}


def _this_host(text: str) -> str:
    """The lines of the host the file is about: distributed NHC's health.log names many (`host | result`), and the
    first whose line is a failure is the one judged (aznhc.py, FACTS.md: a folder holds one host)."""
    lines = [(m.group(1), line[m.end():]) if (m := _HOST.match(line)) else (None, line) for line in text.splitlines()]
    failing = [host for host, line in lines if host and "ERROR" in line][:1]
    return "\n".join(line for host, line in lines if host is None or [host] == failing)


def unread(text: str) -> list[str]:
    """NHC's findings no field holds (the OFED version mismatch, another host's port), said beside the verdict; this
    host's port finding is `shown`."""
    if _FOREIGN_CONF.search(text):
        return []
    text = _printed(text)
    own = {m.group(0) for m in _NO_PORT.finditer(_this_host(text))}
    return list(dict.fromkeys(f"NHC check_hw_ib: {m.group(1)}" for m in _FAILED.finditer(text)
                              if not ((p := _NO_PORT.match(m.group(0))) and p.group(0) in own)))


def trouble(text: str) -> list[str]:
    """NHC run with another machine's conf: its findings are the tool's trouble, not this node's."""
    return [f"NHC's configuration is another machine's ({m.group(0)}): its check_hw_ib finding is not judged"
            for m in _FOREIGN_CONF.finditer(text)][:1]


def shown(text: str, result: Any) -> None:
    """NHC failing the node because no port is ACTIVE at the site's rate: the host's fabric, a fail, where the facts
    read judged no fault of their own. A port NHC listed ACTIVE (`-d`) tells which: below the rate asked for, the
    link trained down (FABRIC_RATE_DEGRADED); above it, the conf is another machine's, and nothing is judged of it."""
    own = _this_host(_printed(text))
    m = _NO_PORT.search(own)
    if not m or _FOREIGN_CONF.search(text) or (result.status in ("fail", "warn")
                                                and result.code != "HEALTH_NOT_ASSESSED"):
        return
    port, asked = m.group(1) or "of the node", float(m.group(3)) if m.group(3) else None
    up = [p for (name, number), p in _ports(own).items() if p["state"] == "ACTIVE"
          and (m.group(1) is None or m.group(1) == f"{name}:{number}")]
    rates = sorted(p["rate_gbps"] for p in up)
    if asked is not None and rates and rates[-1] > asked:
        result.details.append(f"NHC's check_hw_ib asks for {asked:g} Gb/sec of port {port}, listed ACTIVE at "
                              f"{rates[-1]:g}: its conf is another machine's, so its finding is not judged")
        return
    if asked is not None and rates:
        result.verdict("warn", "FABRIC_RATE_DEGRADED", f"NHC's check_hw_ib fails the node: port {port} is ACTIVE at "
                       f"{rates[-1]:g} Gb/sec where the site's check asks for {asked:g}", REMEDY, "host")
        return
    rate = f" at {m.group(3)} Gb/sec" if m.group(3) else ""
    result.verdict("fail", "FABRIC_PORT_DOWN", f"NHC's check_hw_ib fails the node: no IB port {port} is ACTIVE "
                   f"({m.group(2)}{rate}), the rate the site's check asks for: the port is down, or up at another "
                   "rate", REMEDY, "host")
