"""node_exporter's InfiniBand collector (`node_infiniband_*` series, as a Prometheus scrape prints them, read from
/sys/class/infiniband by procfs's sysfs reader) into the fabric facts' `adapters`, by FACTS.md's mapping of the sysfs
files: `node_infiniband_state_id` is the number before the port's `state` word (4 -> `ACTIVE`),
`node_infiniband_physical_state_id` the number before `phys_state`'s (5 -> `LinkUp`), `node_infiniband_rate_bytes_per_second`
the `rate` in bytes per second (5e+09 is 40 Gb/s: sysfs's Gb/s over 8), `node_infiniband_info`'s `hca_type` label the
`hca_type` file. What the scrape does not carry stays null (the width, speed, link layer and driver); a number the
kernel's tables do not name is unknown, never guessed. A device with no port sample is not listed (its ports unread)."""
from __future__ import annotations

import re
from typing import Any

from ..checks.fabric.check import FIGURES
from ..figures import within

_SAMPLE = re.compile(r"^\s*node_infiniband_(state_id|physical_state_id|rate_bytes_per_second|info)\{([^{}]*)\}\s+(\S+)"
                     r"(?:\s+\d+)?\s*$", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')
# the kernel's names (include/rdma/ib_verbs.h, drivers/infiniband/core/sysfs.c) as sysfs prints them after the number
STATE = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery",
        7: "Phy Test"}


def detect(text: str) -> bool:
    return any(m.group(1) == "state_id" for m in _SAMPLE.finditer(text))


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def parse(text: str) -> dict[str, Any]:
    types: dict[str, str] = {}
    ports: dict[tuple[str, int], dict[str, Any]] = {}
    for m in _SAMPLE.finditer(text):
        labels = dict(_LABEL.findall(m.group(2)))
        device = labels.get("device")
        if not device:
            continue
        if m.group(1) == "info":
            if labels.get("hca_type"):
                types[device] = labels["hca_type"]
            continue
        port, value = labels.get("port", ""), _number(m.group(3))
        if not port.isdecimal() or len(port) > 3:
            continue
        read = ports.setdefault((device, int(port)), {"port": int(port), "state": None, "phys_state": None,
                                                      "rate_gbps": None, "width": None, "speed": None,
                                                      "link_layer": None})
        whole = int(value) if value is not None and value == int(value) else None
        if m.group(1) == "state_id":
            read["state"] = STATE.get(whole) if whole is not None else None
        elif m.group(1) == "physical_state_id":
            read["phys_state"] = PHYS.get(whole) if whole is not None else None
        elif value is not None:
            read["rate_gbps"] = within(FIGURES, "adapters[].ports[].rate_gbps", value * 8 / 1e9)
    adapters: dict[str, dict[str, Any]] = {}
    for (device, _), port in sorted(ports.items()):
        adapters.setdefault(device, {"name": device, "driver": None, "hca_type": types.get(device),
                                     "ports": []})["ports"].append(port)
    return {"adapters": list(adapters.values())}
