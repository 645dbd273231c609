"""`ibstat`, `ibstatus`, `ibv_devinfo` and iproute2's `rdma link show`: the host's adapters as the fabric facts'
`adapters`, by the mapping verify/FACTS.md gives ("Translating ibstat"): ibstat's words to the sysfs strings,
ibstatus's sysfs strings verbatim, ibv_devinfo's `PORT_ACTIVE (4)`, rdma's `state DOWN physical_state DISABLED`
(and `rdma dev`'s `protocol roce`/`ib` as the link layer). What the listing does not show stays null."""
from __future__ import annotations

import re
from typing import Any

from ..checks.fabric.check import FIGURES
from ..figures import within
from ..shared import rdma
from .notknown import known

_IBSTAT_CA = re.compile(r"^CA '([^']+)'", re.MULTILINE)
_IBSTATUS_CA = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:", re.MULTILINE)
_DEVINFO_CA = re.compile(r"^hca_id:\s*(\S+)", re.MULTILINE)
# the three tools print `name: value`, the name against its colon; nvidia-smi's `State      : Completed` pasted
# below the listing pads it, and is not the port's
_FIELD = re.compile(r"^\s*([A-Za-z_](?:[A-Za-z_ ]*[A-Za-z_])?):\s*((?:.*\S)?)\s*$")
STATE = {"active": "ACTIVE", "down": "DOWN", "initializing": "INIT", "init": "INIT", "armed": "ARMED"}
PHYS = {"linkup": "LinkUp", "link_up": "LinkUp", "polling": "Polling", "disabled": "Disabled", "sleep": "Sleep"}


# iproute2 rdma/link.c: `link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0`; rdma/dev.c: `0: mlx5_0:
# node_type ca ... protocol roce` (2023 on; ib, roce, iw)
# an InfiniBand port prints its subnet prefix, LIDs and LMC before its state (`link mlx5_7/1 subnet_prefix fe80:... lid
# 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING`)
_RDMA_LINK = re.compile(r"^\s*(?:\d+/\d+: )?link (\S+?)/(\d+)(?: subnet_prefix \S+| lid \d+| sm_lid \d+| lmc \d+)* "
                        r"state (\w+)(?: physical_state (\w+))?", re.MULTILINE)
_RDMA_DEV = re.compile(r"^[^\S\n]*\d+: (\S+?): node_type \w+.*?\bprotocol (\w+)", re.MULTILINE)
PROTOCOL = {"roce": "Ethernet", "ib": "InfiniBand", "iw": "Ethernet"}


def detect(text: str) -> bool:
    return bool(_IBSTAT_CA.search(text) or _IBSTATUS_CA.search(text) or _DEVINFO_CA.search(text)
                or _RDMA_LINK.search(text) or _NO_SYSFS.search(text))


def _word(value: str) -> str:
    """`4: ACTIVE` -> ACTIVE, `PORT_ACTIVE (4)` -> ACTIVE, `Active` -> ACTIVE (sysfs spelling)."""
    v = re.sub(r"^\d+:\s*|^PORT_|\s*\(\d+\)$", "", value.strip())
    return STATE.get(v.lower(), PHYS.get(v.lower(), v))


# ibv_devinfo -v (rdma-core libibverbs/examples/devinfo.c): `active_width: 4X (2)` and `active_speed: 25.0 Gbps (32)`,
# the lane's rate and, in brackets, enum ibv_port_speed (verbs.h), which names the generation where the Gb/s do not
# (FDR10 and QDR both print 10.0). The port's rate is lanes x lane rate, named as sysfs names it (`100 Gb/sec (4X EDR)`).
SPEED = {1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR", 128: "NDR", 256: "XDR"}
_WIDTH = re.compile(r"^(\d{1,4})X\b", re.ASCII)          # no width or enum of 4,300 digits, which int() refuses
_LANE = re.compile(r"^(\d+(?:\.\d+)?) Gbps(?: \((\d{1,9})\))?", re.ASCII)


def _devinfo_rate(fields: dict[str, str]) -> str | None:
    width, lane = _WIDTH.match(fields.get("active_width", "")), _LANE.match(fields.get("active_speed", ""))
    if not (width and lane):
        return None                     # one of the two unknown (or a speed devinfo could not name): no rate
    lanes, gbps = int(width.group(1)), float(lane.group(1))
    name = SPEED.get(int(lane.group(2))) if lane.group(2) else None
    return f"{lanes * gbps:g} Gb/sec ({lanes}X{' ' + name if name else ''})"


def _port(fields: dict[str, str]) -> dict[str, Any]:
    rate = fields.get("rate") or _devinfo_rate(fields)
    # ibstat names the generation where the figure is ambiguous (`Rate: 40 (FDR10)`, QDR also 40): the figure is the
    # port's rate; width and speed stay null, as for ibstat's bare `Rate: 40` (FACTS.md)
    bare = re.fullmatch(r"(\d+(?:\.\d+)?)(?: \([A-Z]+\d*\))?", rate or "")
    gbps, width, speed = rdma.rate(rate) if rate and "Gb" in rate else (
        float(bare.group(1)), None, None) if bare else (None, None, None)
    state = fields.get("state")
    phys = fields.get("physical state") or fields.get("phys_state") or fields.get("phys state")
    # a rate past the facts' range (`Rate: 9223372036854775807`) is unknown, never a figure the contract refuses
    return {"state": _word(state) if state else None, "phys_state": _word(phys) if phys else None,
            "rate_gbps": within(FIGURES, "adapters[].ports[].rate_gbps", gbps), "width": width, "speed": speed,
            "link_layer": fields.get("link layer") or fields.get("link_layer")}


def _number(digits: str) -> int:
    """A port's number as printed; -1 (no port's, left null) past 9 digits, which int() may refuse."""
    return int(digits) if len(digits) <= 9 else -1


def _plausible(port: int) -> int | None:
    return within(FIGURES, "adapters[].ports[].port", port)


def _blocks(text: str) -> list[tuple[str, int, dict[str, str]]]:
    """(adapter, port, its fields) per port, across the three formats."""
    out: list[tuple[str, int, dict[str, str]]] = []
    ca: str | None = None
    port: int | None = None
    fields: dict[str, str] = {}
    hca: dict[str, str] = {}
    for line in text.splitlines():
        if m := (_IBSTAT_CA.match(line) or _DEVINFO_CA.match(line)):
            if ca and port is not None:
                out.append((ca, port, fields))
            elif ca and "state" in hca and hca.get("phys_port_cnt", "1") == "1":
                out.append((ca, 1, hca))
            ca, port, fields, hca = m.group(1), None, {}, {}
        elif m := _IBSTATUS_CA.match(line):
            if ca and port is not None:
                out.append((ca, port, fields))
            ca, port, fields = m.group(1), _number(m.group(2)), {}
        elif m := re.match(r"^\s*(?:Port|port:)\s*(\d+):?\s*$", line):
            if ca and port is not None:
                out.append((ca, port, fields))
            port, fields = _number(m.group(1)), dict(hca)
        elif (m := _FIELD.match(line)) and ca:
            key = m.group(1).strip().lower()
            # `N/A`/`Unknown` is no value (null), except a link layer's `Unknown`: EFA's sysfs word (FACTS.md)
            value = m.group(2) if key in ("link layer", "link_layer") else known(m.group(2))
            if value is not None:
                (fields if port is not None else hca)[key] = value
    if ca and port is not None:
        out.append((ca, port, fields))
    elif ca and "state" in hca and hca.get("phys_port_cnt", "1") == "1":
        out.append((ca, 1, hca))        # `ibv_devinfo | grep` drops the `port:` line; one port: it is port 1
    return out


def _rdma_links(text: str, adapters: dict[str, dict[str, Any]]) -> None:
    """`rdma link show`'s ports, where another listing did not give them (and what it left null)."""
    layers = {m.group(1): PROTOCOL.get(m.group(2).lower()) for m in _RDMA_DEV.finditer(text)}
    for m in _RDMA_LINK.finditer(text):
        a = adapters.setdefault(m.group(1), {"name": m.group(1), "driver": None, "hca_type": None, "ports": []})
        number = _plausible(_number(m.group(2)))      # a number no port has: a port of its own, never merged
        port = next((p for p in a["ports"] if number is not None and p["port"] == number), None)
        if port is None:
            port = {"port": number, "state": None, "phys_state": None, "rate_gbps": None, "width": None,
                    "speed": None, "link_layer": None}
            a["ports"].append(port)
        seen = {"state": _word(m.group(3)), "phys_state": _word(m.group(4)) if m.group(4) else None,
                "link_layer": layers.get(m.group(1))}
        port.update({k: v for k, v in seen.items() if port.get(k) is None and v is not None})


# libibverbs refusing a device (verbs/init.c): `libibverbs: Warning: Driver bnxt_re does not support the kernel ABI of 6
# (supports 1 to 1) for device /sys/class/infiniband/bnxt_re2`: the image's provider is there and built for another
# ABI; ibv_devinfo's `No IB devices found` (perftest's `Did not detect devices`): ibv_get_device_list() listed none
_ABI = re.compile(r"libibverbs: Warning: Driver (\w+) does not support the kernel ABI of \d+ \(supports \d+ to \d+\)[^\n]*")
_NO_DEVICES = re.compile(r"^[^\S\n]*(?:No IB devices found|Did not detect devices)\s*$", re.MULTILINE)
# ibstatus (infiniband-diags) with no device named globs /sys/class/infiniband/*: where the glob matches nothing it
# says so and stops; the folder holds no adapter (FACTS.md: `adapters` []). A device it was asked for by name and
# did not find says nothing of the others, so only the glob's `*` is read.
_NO_SYSFS = re.compile(r"^[^\S\n]*Fatal error:\s+device '\*': sys files not found", re.MULTILINE)


def _verbs(text: str) -> dict[str, Any]:
    """What the verbs library said of the devices, where the text shows it."""
    abi = [m for m in _ABI.finditer(text)]
    out: dict[str, Any] = {}
    if abi:
        out["providers"] = sorted({m.group(1) for m in abi})
        out["verbs_error"] = abi[0].group(0).strip()
    if _NO_DEVICES.search(text):
        out["verbs_devices"] = []
    return out


def parse(text: str) -> dict[str, Any]:
    adapters: dict[str, dict[str, Any]] = {}
    for ca, port, fields in _blocks(text):
        a = adapters.setdefault(ca, {"name": ca, "driver": None, "hca_type": None, "ports": []})
        hca_type = fields.get("ca type") or (f"MT{fields['vendor_part_id']}" if fields.get("vendor_part_id") else None)
        a["hca_type"] = a["hca_type"] or hca_type
        read = {"port": _plausible(port), **_port(fields)}
        # `ibv_devinfo -d X -i N -v` after the list; a port of no plausible number is never merged
        kept = next((p for p in a["ports"] if read["port"] is not None and p["port"] == read["port"]), None)
        if kept is None:
            a["ports"].append(read)
        else:                       # one port listed twice is one port (counted twice, its rate was too)
            kept.update({k: v for k, v in read.items() if kept.get(k) is None and v is not None})
    _rdma_links(text, adapters)
    listed = list(adapters.values())
    if not listed and (_IBSTAT_CA.search(text) or _DEVINFO_CA.search(text)):
        # an adapter named (`hca_id: mlx5_0`) whose port section the excerpt cut: an adapter is there, its ports
        # unknown; never the empty folder `[]` says (batch 134: `ibv_devinfo -d mlx5_0` cut after `hw_ver`)
        return {"adapters": None, **_verbs(text)}
    if _CUT.search(text) and _ELIDED.search(text) and all(p.get("state") == "ACTIVE" and p.get("phys_state") in ("LinkUp", None)
                                    for a in listed for p in a["ports"]):
        return {"adapters": None, **_verbs(text)}      # adapters cut from the excerpt: unknown, so no pass
    return {"adapters": listed, **_verbs(text)}


# ibstat aborting mid-listing (infiniband-diags' ibpanic(): `ibpanic: [pid] main: stat of IB device 'mlx5_8' failed:
# No such file or directory`, exit 255) in an excerpt whose earlier adapters were cut (a lone `...` before a `CA '...'`
# block): neither the tool nor the excerpt shows the whole listing, so what is shown is no pass; a port shown down is
# judged all the same (ibstat-partial-listing-mlx5-7-...-ibpanic-...). Either alone is not this: a whole listing then
# the abort on a device that vanished (a100-azure-ibstat-eight-mt4124-...-ibpanic-...) and a poster's `...` before
# a complete ibstat (nvlink-8gpu-cx7-mt4129-ibstat-mlx5-5-...) pass.
_CUT = re.compile(r"^[^\S\n]*ibpanic: ", re.MULTILINE)
_ELIDED = re.compile(r"^[ \t]*(?:\.\.\.|\u2026)[ \t]*\n(?:[ \t]*\n)*(?:CA '|Infiniband device ')", re.MULTILINE)


# The kernel's side of an empty listing: the adapter's core or Ethernet driver on a PCI function (`mlx4_en
# 0000:0d:00.0: ...`) and its InfiniBand driver loaded (`mlx4_ib_add: mlx4_ib: Mellanox ConnectX InfiniBand driver`).
# An adapter that is there with its IB driver and registers no device is a fault (firmware, driver), not a node
# without fabric; no field holds an adapter on PCI, so it is said, never "nothing to judge". mlx5_core alone is not
# read: an Ethernet-only ConnectX without mlx5_ib has no RDMA device by design.
_IB_DRIVER = re.compile(r"\bmlx[45]_ib\b[^\n]*\bInfiniBand driver\b", re.IGNORECASE)
_ON_PCI = re.compile(r"\b(mlx[45]_(?:core|en)) ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b", re.IGNORECASE)
REMEDY = ("The adapter is on PCI with its InfiniBand driver but registered no RDMA device: read its firmware and "
          "driver messages (`dmesg | grep -i mlx`, `mstflint -d <PCI address> query`), update the HCA's firmware where "
          "the driver asks for it, then `ibstat` again.")


def unread(text: str) -> list[str]:
    """An empty listing beside kernel lines that show an InfiniBand adapter on PCI with its IB driver loaded."""
    pci, driver = _ON_PCI.search(text), _IB_DRIVER.search(text)
    if parse(text)["adapters"] or not (pci and driver):
        return []
    return [f"the kernel log shows {pci.group(1)} on PCI {pci.group(2)} and its InfiniBand driver loaded, yet the "
            "listing holds no RDMA device"]
