"""nvtop's device lines (github.com/Syllo/nvtop, src/interface.c): one per GPU, `Device 0 [GeForce GTX 1080 Ti] PCIe
GEN 3@16x RX: ... TX: ...` (1.x; 2.x and 3.x start with `GPU 0`): the GPU's index and name and the link's current
generation and width, as NVML reads them, into the gpu facts' devices (issue 35, batch 133: Syllo/nvtop#6, pasted
with Markdown emphasis around one device's figures). nvtop shows the current link only, never the maximum (its
author, in that thread): `pcie_gen_max` and `pcie_width_max` stay unknown, and no health field is read."""
from __future__ import annotations

import re
from typing import Any

# the index, the name in brackets, then (past a paste's `_**` emphasis) the link: `PCIe GEN %u@%2ux`
_DEVICE = re.compile(r"^[^\S\n]*(?:Device|GPU) (\d{1,3}) \[([^\]\n]+)\][ \t_*]*PCIe GEN (\d{1,2})@ ?(\d{1,2})x", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_DEVICE.search(text))


def parse(text: str) -> dict[str, Any]:
    devices: dict[int, dict[str, Any]] = {}
    for m in _DEVICE.finditer(text):
        devices[int(m.group(1))] = {"index": int(m.group(1)), "name": m.group(2).strip(),
                                    "pcie_gen": int(m.group(3)), "pcie_width": int(m.group(4))}
    return {"torch": None, "devices": list(devices.values()) or None}
