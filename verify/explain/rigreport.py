"""A GPU rig report's hardware section (the club-3090 benchmarking club's `rig report` script, markdown): one line
per GPU, `- **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.58.03 | VBIOS ... | persistence=Enabled`,
and under it nvidia-smi's readings as the script words them:
`  - **Power:** limit=300.00 W (default=420.00 W, max=450.00 W) | current_draw=26.61 W` and
`  - **PCIe:** x4 lanes negotiated (GPU max x16, Gen up to 3) | bus 00000000:08:00.0`.
Into the gpu facts' devices: FACTS.md's `power_limit_w` (the limit in force), `power_default_limit_w`, `power_w`,
`pcie_width`, `pcie_width_gpu_max`, `pcie_gen_gpu_max`, `pci_bus_id`. The script's own `⚠` remarks (`user-capped
below default`, `slot is narrower than GPU capability`) are its inferences, not reads: not read (a limit the owner
asked for is never assumed). No health field is printed: the judge says the GPUs are not assessed, never healthy.
Only where no nvidia-smi report of the same GPUs is in the text: that reads the devices."""
from __future__ import annotations

import re
from typing import Any

from . import smi, smiquery, smitable, smixml

_GPU = re.compile(r"^\s*-\s+\*\*GPU (\d+):\*\*\s+(.+?)\s+\|\s+(\d+)\s+MiB\s+\|\s+driver\s+(\d+(?:\.\d+)+)\b",
                  re.MULTILINE)
_PERSISTENCE = re.compile(r"\|\s+persistence=(Enabled|Disabled)\b")
_POWER = re.compile(r"^\s+-\s+\*\*Power:\*\*\s+limit=(\d+(?:\.\d+)?) W \(default=(\d+(?:\.\d+)?) W"
                    r"(?:, max=\d+(?:\.\d+)? W)?\)(?:\s+\|\s+current_draw=(\d+(?:\.\d+)?) W)?")
_PCIE = re.compile(r"^\s+-\s+\*\*PCIe:\*\*\s+x(\d+) lanes negotiated \(GPU max x(\d+), Gen up to (\d)\)"
                   r"(?:\s+\|\s+bus ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d))?")
_RICHER = (smixml, smi, smitable, smiquery)


def detect(text: str) -> bool:
    return bool(_GPU.search(text)) and not any(m.detect(text) for m in _RICHER)


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    drivers: set[str] = set()
    for line in text.splitlines():
        if m := _GPU.match(line):
            drivers.add(m.group(4))
            device: dict[str, Any] = {"index": int(m.group(1)), "name": m.group(2),
                                      "memory_bytes": int(m.group(3)) * 1024 * 1024}
            if p := _PERSISTENCE.search(line):
                device["persistence"] = p.group(1) == "Enabled"
            devices.append(device)
        elif devices and (m := _POWER.match(line)):
            devices[-1].update({"power_limit_w": float(m.group(1)), "power_default_limit_w": float(m.group(2)),
                                **({"power_w": float(m.group(3))} if m.group(3) else {})})
        elif devices and (m := _PCIE.match(line)):
            devices[-1].update({"pcie_width": int(m.group(1)), "pcie_width_gpu_max": int(m.group(2)),
                                "pcie_gen_gpu_max": int(m.group(3)),
                                **({"pci_bus_id": m.group(4)} if m.group(4) else {})})
    return {"torch": None, "nvml_error": "none" if devices else None, "devices": devices or None,
            "driver": drivers.pop() if len(drivers) == 1 else None}
