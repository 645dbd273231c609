"""`amd-smi`'s NIC report (AMD AI NICs, the `ionic` driver; issue 35, batch 158: amd-ainic-ionic-fw-25.05.4-...):
an indented `KEY: value` tree whose `RDMA_DEVICES:` block lists each RDMA device (`RDMA_DEVICE_0:` with `NAME:
rocep229s0`, its `/sys/class/infiniband` name) and its ports (`PORT_0:` with `PORT_NUM: 1` and `STATE: DOWN`, the
verbs port state sysfs holds). Read into the fabric facts as the translation does (FACTS.md, fabric facts):
- `state` is `STATE` as printed (`DOWN`, `ACTIVE`); `phys_state` and `rate_gbps` stay null: amd-smi prints no
  physical state for the RDMA port, and `LINK_SPEED` / `CARRIER` are the netdev's, not the port's;
- `link_layer` is the `TYPE` (`Ethernet`, `InfiniBand`) of the NIC's `PORTS:` entry bound to the same `NETDEV`;
  else null;
- `driver` stays null: the NIC's `DRIVER: NAME: ionic` is its PCI function's driver, not the RDMA device's link.
FEC, auto-negotiation, firmware and NUMA fill no field."""
from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"^( *)([A-Z][A-Z0-9_]*):[ \t]*(.*?)[ \t]*$")


def _tree(text: str) -> list[dict[str, Any]]:
    """The `KEY: value` lines as nested blocks: each {key, value, children}, by indentation."""
    root: dict[str, Any] = {"key": "", "value": "", "children": []}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for line in text.splitlines():
        m = _LINE.match(line.expandtabs(4))
        if not m:
            continue
        depth = len(m.group(1))
        node: dict[str, Any] = {"key": m.group(2), "value": m.group(3), "children": []}
        while stack[-1][0] >= depth:
            stack.pop()
        stack[-1][1]["children"].append(node)
        stack.append((depth, node))
    return list(root["children"])


def _walk(nodes: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    found = []
    for n in nodes:
        if n["key"] == key:
            found.append(n)
        found += _walk(n["children"], key)
    return found


def _field(node: dict[str, Any], key: str) -> str | None:
    return next((c["value"] or None for c in node["children"] if c["key"] == key), None)


def _devices(text: str) -> list[dict[str, Any]]:
    return [d for block in _walk(_tree(text), "RDMA_DEVICES") for d in block["children"]
            if re.fullmatch(r"RDMA_DEVICE_\d+", d["key"]) and _field(d, "NAME")]


def detect(text: str) -> bool:
    return any(_field(p, "STATE") for d in _devices(text) for p in d["children"] if re.fullmatch(r"PORT_\d+", p["key"]))


def parse(text: str) -> dict[str, Any]:
    tree = _tree(text)
    # the NIC's own ports by netdev: their TYPE is the RDMA port's link layer
    layers = {_field(p, "NETDEV"): _field(p, "TYPE") for block in _walk(tree, "PORTS") for p in block["children"]
              if re.fullmatch(r"PORT_\d+", p["key"])}
    adapters = []
    for device in _devices(text):
        ports = []
        for p in device["children"]:
            if not re.fullmatch(r"PORT_\d+", p["key"]) or not (state := _field(p, "STATE")):
                continue
            number = _field(p, "PORT_NUM") or ""
            layer = layers.get(_field(p, "NETDEV"))
            ports.append({"port": int(number) if number.isdigit() else None, "state": state.upper(),
                          "phys_state": None, "rate_gbps": None, "width": None, "speed": None,
                          "link_layer": layer if layer in ("Ethernet", "InfiniBand") else None})
        adapters.append({"name": _field(device, "NAME"), "driver": None, "hca_type": None, "pci_device": None,
                         "ports": ports})
    return {"adapters": adapters}
