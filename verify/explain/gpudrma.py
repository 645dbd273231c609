"""A GPU health tool saying a GPU has no row remapping, as leptonai GPUd's RMA check logs it when nvidia-smi's
`Remapping Failure Occurred` came back empty: `nvidia-smi GPU GPU 00000000:E1:00.0 failed to determine if it
qualifies for RMA: invalid remapping failure occurred value: "", GPU product name "NVIDIA GeForce RTX 4090" does not
support row remapping`. The tool's own parse error is its trouble, not the GPU's; what the line proves of the GPU is
its bus id, its name and that row remapping is not supported (FACTS.md `unsupported`), and that nvidia-smi answered
(`nvml_error` "none"). Nothing else is read: the judge says what that leaves unassessed. The bus id and the name
are a line's length apart at most (GPUd's message puts 90 characters between them), so a long line of bus ids is
searched once, not once per bus id."""
from __future__ import annotations

import re
from typing import Any

_NO_REMAP = re.compile(r"\bGPU (?:GPU )?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b[^\n]{0,300}?"
                       r"GPU product name \"([^\"\n]+)\" does not support row remapping")


def detect(text: str) -> bool:
    return bool(_NO_REMAP.search(text))


def parse(text: str) -> dict[str, Any]:
    devices: dict[str, dict[str, Any]] = {}
    for m in _NO_REMAP.finditer(text):
        domain, rest = m.group(1).split(":", 1)
        bus = f"{int(domain, 16):08X}:{rest.upper()}"
        devices[bus] = {"index": None, "uuid": None, "pci_bus_id": bus, "name": m.group(2),
                        "unsupported": {"row_remap": "NotSupported"}}
    return {"torch": None, "nvml_error": "none", "devices": list(devices.values())}
