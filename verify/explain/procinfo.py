"""The driver's own per-GPU file, `/proc/driver/nvidia/gpus/<bus id>/information` (`cat` of it, or nvidia-bug-report's
copy): `Model:`, `GPU UUID:`, `Bus Location:` ... one block per GPU, tab-aligned (open-gpu-kernel-modules,
kernel-open/nvidia/nv-procfs.c). Into the gpu facts' devices: name, UUID and PCI bus id (NVML's 8-digit domain form).
The file holds no health field: the GPU is on the bus and bound by the driver, not assessed (warn), never healthy.
Its index is the device minor (`/dev/nvidiaN`), not NVML's: left null. Only where no richer report of the GPUs
(nvidia-smi's, which name the same GPUs) is in the text."""
from __future__ import annotations

import re
from typing import Any

from . import smi, smilist, smiquery, smitable, smixml

# each field at a line's start, its value after the colon and tabs/spaces, as nv-procfs.c prints it
_FIELD = re.compile(r"^(Model|GPU UUID|Bus Location):[ \t]+(\S[^\n]{0,199}?)[ \t]*$", re.MULTILINE)
_BUS = re.compile(r"([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])")
_RICHER = (smixml, smi, smitable, smiquery, smilist)


def _blocks(text: str) -> list[dict[str, str]]:
    """One dict per `Model:` line and the UUID and bus lines after it (the file's order)."""
    blocks: list[dict[str, str]] = []
    for m in _FIELD.finditer(text):
        if m.group(1) == "Model":
            blocks.append({})
        if blocks and m.group(1) not in blocks[-1]:
            blocks[-1][m.group(1)] = m.group(2)
    return [b for b in blocks if "GPU UUID" in b and "Bus Location" in b]


def detect(text: str) -> bool:
    return bool(_blocks(text)) and not any(m.detect(text) for m in _RICHER)


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    for block in _blocks(text):
        uuid = block["GPU UUID"] if re.fullmatch(r"GPU-[0-9a-fA-F-]{8,64}", block["GPU UUID"]) else None
        bus = _BUS.fullmatch(block["Bus Location"])
        devices.append({"index": None, "name": block["Model"], "uuid": uuid,
                        "pci_bus_id": f"{int(bus.group(1), 16):08X}:{bus.group(2)}:{bus.group(3)}.{bus.group(4)}"
                        .upper() if bus else None})
    return {"torch": None, "devices": devices or None}
