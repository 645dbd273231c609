"""infiniband-diags' `iblinkinfo` (rdma-core infiniband-diags/iblinkinfo.c, print_node_header and print_port): the
fabric's nodes, each under its header (`CA: <node description>:`, `Switch: 0x<guid> <node description>:`; the Perl
script before it printed `Switch 0x<guid> <description>:`), one line per port: a CA's `0x<port guid> <lid> <port>[ ]
==( 4X 25.78125 Gbps Active/  LinkUp)==> <peer lid> <peer port>[ ] "<peer description>" ( <Could be ...>)`, a switch's
the same without the GUID; a port that is down prints no width or speed (`(              Down/ Polling)`).
Read by FACTS.md's "Translating iblinkinfo": a CA's lines are its host's ports; a switch's are no host's (said, never
judged). The folder's host is the listed one the paste's one shell prompt names (`[root@n01 ~]# iblinkinfo`: where
the fabric-wide command ran), else the first whose CA shows a fault, else the first (FACTS.md, one host per folder). A CA
is an adapter only where its node description names its device by the letter (rdma-ndd's `<host> mlx5_0`); OFED's
default `<host> HCA-1` names none: its ports are said, never recorded under a guessed name, never a pass."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .hosts import ran_on

# libibmad dump.c: mad_dump_linkwidth, mad_dump_portstate, mad_dump_physportstate; the lane speeds of
# mad_dump_linkspeed, ibnd_dump_agg_linkspeedext and `10.0 Gbps (FDR10)` (iblinkinfo.c)
_LANE = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "14.0625": "FDR", "25.78125": "EDR", "53.125": "HDR",
         "106.25": "NDR", "212.5": "XDR"}
# the rate a port's sysfs `rate` and ibstat count per lane of each speed (the kernel's rate_show: 4X FDR 56, 4X EDR
# 100, 4X HDR 200), as FACTS.md records ibstat's Rate; never the signalling figure iblinkinfo prints
SYSFS_LANE = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0,
              "NDR": 100.0, "XDR": 200.0}
STATE = {"Active": "ACTIVE", "Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED"}
PHYS = ("Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest")
WIDTHS = (1, 2, 4, 8, 12)
# what to do about a port the fabric's tools show slow, down or with link errors (iblinkinfo, ibcounters, ibdiagnet)
REMEDY = ("Read the host's ports on the host (`ibstat`, `mlxlink -d <dev>`, `perfquery -x`), reseat or replace the "
          "cable of a port with link errors or a slow link, and check its switch port, before the node takes jobs.")

_HEADER = re.compile(r"^\s*(CA|Switch|Router):? (?:(0x[0-9a-fA-F]+) )?(.*):\s*$")
_LINK = re.compile(r"==\((?P<link>.{0,80}?)\)(?: \(HOQ:\d+ VL_Stall:\d+\))?==>(?P<peer>.*)$")
_SPOT = re.compile(r"^\s*(?:0x(?P<guid>[0-9a-fA-F]{1,16})\s+)?(?P<lid>\d{1,5})\s+(?P<port>\d{1,3})\[\s*\d*\]\s*$")
_STATES = re.compile(r"^\s*(?:(?P<width>\d{1,2})X\s+(?P<speed>.+?)\s+|undefined \(\d+\)\s+.+?\s+)?"
                     r"(?P<state>[\w?()]+)/\s*(?P<phys>[\w?()]+)\s*$")
_SPEED = re.compile(r"(\d+(?:\.\d+)?) Gbps( \(FDR10\))?")
_COULD = re.compile(r"Could be [^()]*?(?=\s*(?:Could be|\)\s*$))")
# the sysfs names of RDMA devices (the kernel drivers' and rdma-core's udev naming): `mlx5_0`, `mthca0`, `ibp3s0`
DEVICE = re.compile(r"(?:mlx[45]_\d+|mthca\d+|ipath\d+|qib\d+|hfi1_\d+|efa_\d+|bnxt_re\d+|irdma\d+|rxe\d+|siw\d+|"
                    r"hns_\d+|qedr\d+|vmw_pvrdma\d+|erdma_\d+|mana_\d+|ionic_\d+|ib[ps][0-9a-f]+s\d+(?:f\d+)?)")


@dataclass
class CaPort:
    port: dict[str, Any]
    line: str                                   # as printed, for what is said
    could: str | None = None                    # iblinkinfo's own `Could be 4X`: the link trained below both ends


@dataclass
class Ca:
    desc: str
    host: str
    name: str | None
    ports: list[CaPort] = field(default_factory=list)


def link(line: str) -> dict[str, Any] | None:
    """A port line's `==( ... )==>` as a Port of the facts (no port number), None where it holds none."""
    m = _LINK.search(line) if "==(" in line else None
    s = _STATES.match(m.group("link")) if m else None
    if not s:
        return None
    width = int(s.group("width")) if s.group("width") else None
    width = width if width in WIDTHS else None
    lane = _SPEED.fullmatch(s.group("speed") or "")
    speed = ("FDR10" if lane.group(2) else _LANE.get(lane.group(1))) if lane else None
    per_lane = SYSFS_LANE[speed] if speed else float(lane.group(1)) if lane else None
    return {"port": None, "state": STATE.get(s.group("state")),
            "phys_state": s.group("phys") if s.group("phys") in PHYS else None,
            "rate_gbps": width * per_lane if width and per_lane else None, "width": width, "speed": speed,
            "link_layer": "InfiniBand"}          # found by iblinkinfo's SMPs: an InfiniBand port


def spot(line: str) -> tuple[int, int] | None:
    """(lid, port number) before a port line's link, None where the line is no port's."""
    m = _LINK.search(line) if "==(" in line else None
    s = _SPOT.match(line[:m.start()]) if m else None
    return (int(s.group("lid")), int(s.group("port"))) if s else None


def named(desc: str) -> tuple[str, str | None]:
    """(host, device) from a CA's node description: the device only where one word of it is a device's sysfs name,
    and only one (`gpu01 mlx5_0`); the host is the first other word where the description is `<host> <device>` or
    OFED's `<host> HCA-1` (which names no device), else the whole description (`MT25408 ConnectX Mellanox ...`)."""
    words = desc.split()
    devices = list(dict.fromkeys(w for w in words if DEVICE.fullmatch(w)))
    name = devices[0] if len(devices) == 1 else None
    rest = [w for w in words if w != name]
    paired = len(rest) == 1 if name else len(rest) == 2 and re.fullmatch(r"HCA-\d+", rest[1]) is not None
    return (rest[0] if paired else desc), name


def detect(text: str) -> bool:
    header = False
    for line in text.splitlines():
        if len(line) < 400 and _HEADER.match(line):
            header = True
        elif header and spot(line) is not None:
            return True
    return False


def read(text: str) -> tuple[list[Ca], list[str]]:
    """The CA blocks in order, and the switch ports (as printed) each header names."""
    cas: list[Ca] = []
    switches: list[str] = []
    node: str | None = None
    for line in text.splitlines():
        if len(line) >= 400:
            continue
        if h := _HEADER.match(line):
            node = h.group(1)
            if node == "CA":
                cas.append(Ca(h.group(3).strip(), *named(h.group(3).strip())))
            continue
        where = spot(line)
        port = link(line) if where else None
        if port is None or where is None or node is None:
            continue
        if node != "CA":
            switches.append(line.strip())
            continue
        port["port"] = where[1] if where[1] <= 255 else None
        could = _COULD.findall(line.rsplit('"', 1)[-1]) if "Could be" in line else []
        cas[-1].ports.append(CaPort(port, line.strip(), "; ".join(c.strip() for c in could) or None))
    return cas, switches


def faulty(ca: Ca) -> bool:
    return any(p.could or p.port["state"] != "ACTIVE" or p.port["phys_state"] != "LinkUp" for p in ca.ports)


def local(hosts: list[str], text: str) -> str | None:
    """The listed host the paste's one shell prompt names (`[root@n01 ~]# iblinkinfo`): the host that ran the
    fabric-wide command, whose folder this is, however the others' ports read."""
    ran = ran_on(text)
    return next((h for h in hosts if h.split(".")[0].lower() in ran), None) if len(ran) == 1 else None


def _host(cas: list[Ca], text: str) -> str | None:
    hosts = [c.host for c in cas if c.ports]
    return local(hosts, text) or next((c.host for c in cas if c.ports and faulty(c)), hosts[0] if hosts else None)


def parse(text: str) -> dict[str, Any]:
    """The host's adapters its CAs name; none named (or only switches read): the adapters are unknown (null)."""
    cas, _ = read(text)
    host = _host(cas, text)
    adapters: dict[str, dict[str, Any]] = {}
    for ca in cas:
        if ca.host != host or ca.name is None:
            continue
        a = adapters.setdefault(ca.name, {"name": ca.name, "driver": None, "hca_type": None, "pci_device": None,
                                          "ports": []})
        a["ports"] += [p.port for p in ca.ports if p.port["port"] not in {q["port"] for q in a["ports"]}]
    return {"adapters": list(adapters.values()) or None}


def unread(text: str) -> list[str]:
    """The host's ports no field holds that show a fault: a CA whose description names no device, and iblinkinfo's
    own `Could be ...` (the link trained below what both ends support, which no field of a port holds)."""
    cas, _ = read(text)
    host = _host(cas, text)
    out = []
    for ca in cas:
        if ca.host != host:
            continue
        for p in ca.ports:
            if p.could:
                out.append(f'iblinkinfo: "{ca.desc}" port {p.port["port"]} says {p.could}: {p.line}')
            elif ca.name is None and faulty(Ca(ca.desc, ca.host, None, [p])):
                out.append(f'iblinkinfo: "{ca.desc}" (no device named) port {p.port["port"]}: {p.line}')
    return out[:8]


def said(text: str) -> list[str]:
    """What is read and judged nowhere: the host's ports under a description that names no device, the other hosts'
    faults, and the switches' ports (which name no host)."""
    cas, switches = read(text)
    host = _host(cas, text)
    judged = [c.desc for c in cas if c.host == host and c.name is not None]
    why = "the paste's prompt ran the command there" if host and host == local([host], text) else \
        "the first whose CA shows a fault, else the first"
    out = [f"iblinkinfo: the host judged is {host} ({why}), its CA(s) "
           + ", ".join(f'"{d}"' for d in dict.fromkeys(judged))] if judged else []
    out += [f'iblinkinfo: "{c.desc}" names no device (`<host> mlx5_0`), so its port(s) are not recorded: '
           + "; ".join(p.line for p in c.ports[:2]) for c in cas if c.host == host and c.name is None
           and not faulty(c)]
    others = [c for c in cas if c.host != host and faulty(c)]
    out += [f'iblinkinfo: another host\'s CA "{c.desc}" shows a fault, judged only in its own folder: '
            f"{next(p.line for p in c.ports if faulty(Ca(c.desc, c.host, None, [p])))}" for c in others[:4]]
    healthy = list(dict.fromkeys(c.host for c in cas if c.host != host and not faulty(c)))
    if healthy:
        out.append(f"iblinkinfo: {len(healthy)} other host(s) listed with every port Active/LinkUp ("
                   f"{', '.join(healthy[:4])}{', ...' if len(healthy) > 4 else ''}), judged only in their own folders")
    if switches:
        down = sum(1 for s in switches if "Active/" not in s)
        out.append(f"iblinkinfo: {len(switches)} switch port(s), {down} not Active: a switch's ports name no host")
    return out
