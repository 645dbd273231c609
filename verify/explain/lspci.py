"""`lspci -vv` (pciutils' ls-caps.c) of NVIDIA GPUs: each `3D controller: NVIDIA Corporation ...` (or VGA/Display
controller) block's `LnkCap: ... Speed 32GT/s, Width x16` (what the GPU's port can do: its own maximum) and `LnkSta:
Speed 16GT/s (downgraded), Width x16 (ok)` (what the link trained to now), by PCI bus id, into the gpu facts' devices;
an NVSwitch (`Bridge: NVIDIA Corporation ...` beside the GPUs of an HGX board) says the GPUs sit behind switches. The
NVML index is not in lspci's output: null, never guessed from the order. Nothing else lspci prints is a gpu fact."""
from __future__ import annotations

import re
from typing import Any

_HEAD = re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7]) ([^:]+): (.*)$")
_GPU_CLASS = ("3D controller", "VGA compatible controller", "Display controller")
_LINK = re.compile(r"^\s*(LnkCap|LnkSta):.*?Speed ([\d.]+)GT/s[^,]*, Width x(\d+)")
_NUMA = re.compile(r"^\s*NUMA node: (\d+)")
# PCIe generation by transfer rate (PCI-SIG: 2.5, 5, 8, 16, 32, 64 GT/s)
GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}


def _blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(bus id, class and name, the block's lines) per device."""
    out: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        if m := _HEAD.match(line):
            bus = f"{int(m.group(1) or '0', 16):08X}:{m.group(2).upper()}:{m.group(3).upper()}.{m.group(4)}"
            out.append((bus, f"{m.group(5)}: {m.group(6)}", []))
        elif out and line[:1].isspace():
            out[-1][2].append(line)
    return out


def _nvidia_gpu(kind: str) -> bool:
    return kind.split(":")[0] in _GPU_CLASS and "NVIDIA" in kind


def detect(text: str) -> bool:
    return any(_nvidia_gpu(kind) and any(_LINK.match(line) for line in lines) for _, kind, lines in _blocks(text))


def parse(text: str) -> dict[str, Any]:
    blocks = _blocks(text)
    switches = any(kind.startswith("Bridge:") and "NVIDIA" in kind for _, kind, _ in blocks)
    devices = []
    for bus, kind, lines in blocks:
        if not _nvidia_gpu(kind):
            continue
        dev: dict[str, Any] = {"index": None, "pci_bus_id": bus}
        for line in lines:
            if (m := _LINK.match(line)) and m.group(2) in GEN:
                gen, width = GEN[m.group(2)], int(m.group(3))
                if m.group(1) == "LnkCap":
                    dev.update(pcie_gen_gpu_max=gen, pcie_width_gpu_max=width)
                else:
                    dev.update(pcie_gen=gen, pcie_width=width)
            elif m := _NUMA.match(line):
                dev["numa_node"] = int(m.group(1))
        if switches:
            dev["nvswitch"] = True
        devices.append(dev)
    return {"torch": None, "devices": devices or None}
