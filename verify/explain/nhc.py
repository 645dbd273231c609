"""LBNL NHC's InfiniBand check (`check_hw_ib`, scripts/lbnl_hw.nhc of https://github.com/mej/nhc) as sites print it.
Run with `-d`, NHC says one line per port it reads under /sys/class/infiniband/*/ports/*, every port of the node:
`Found ACTIVE (LinkUp) IB Port mlx5_0:1 (400 Gb/sec)` (the word after the number in `state` and `phys_state`, the
first word of `rate`; a site's patched check may add ` with PCI-e link ...`). Those lines are the node's listing, read
into the fabric facts' `adapters` as an `ibstatus` would be: no width, speed, link layer, model or driver.
The check's own failure (`check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).`, or the OFED version mismatch it
reports when the user MAD driver is missing) names no port, and no field holds a health checker's finding: it is
said beside the verdict, so that it is never a pass nor "nothing to judge" (`unread`)."""
from __future__ import annotations

import re
from typing import Any

_FOUND = re.compile(r"\bFound (\w+) \((\w+)\) IB Port ([\w.-]+):(\d+) \((\d+(?:\.\d+)?) Gb/sec\)")
_FAILED = re.compile(r"\bcheck_hw_ib:\s+(No IB port(?: \S+)? is \w+ \(\w+(?: \d+(?:\.\d+)? Gb/sec)?\)\.?|"
                     r"Version mismatch between kernel OFED drivers and userspace OFED libraries\.?)")


def detect(text: str) -> bool:
    return bool(_FOUND.search(text) or _FAILED.search(text))


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


def unread(text: str) -> list[str]:
    """NHC's finding that no port meets the site's check: a fault the listing may not show (its lines cut, or none)."""
    return list(dict.fromkeys(f"NHC check_hw_ib: {m.group(1)}" for m in _FAILED.finditer(text)))
