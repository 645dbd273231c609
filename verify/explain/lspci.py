"""`lspci -vv` (pciutils' ls-caps.c) of NVIDIA GPUs: each `3D controller: NVIDIA Corporation ...` (or VGA/Display
controller) block's `LnkCap: ... Speed 32GT/s, Width x16` (what the GPU's port can do: its own maximum) and `LnkSta:
Speed 16GT/s (downgraded), Width x16 (ok)` (what the link trained to now), by PCI bus id, into the gpu facts' devices;
an NVSwitch (`Bridge: NVIDIA Corporation ...` beside the GPUs of an HGX board) says the GPUs sit behind switches. The
NVML index is not in lspci's output: null, never guessed from the order. Nothing else lspci prints is a gpu fact.

Link lines quoted without lspci's header line (`lspci -vv -s 01:00.0 | grep Lnk`, the lines pasted alone, or under
the command that asked for one device, whose `-s` gives the bus id) name no class: they are read as the GPU's only
where they are one device's. A port facing down (a root or downstream port: the bridge above the GPU) is told by
pciutils' own mark: from 3.7 lspci marks a LnkSta below its LnkCap `(downgraded)` on every device but those ports, so
where the text shows the mark, an unmarked link below its maximum is such a port, not the device."""
from __future__ import annotations

import re
from typing import Any

# (a script's label before lspci's header, `Card: 01:00.0 VGA compatible controller: ...`, batch 261, is read past)
_HEAD = re.compile(r"^(?:[A-Za-z][\w ]{0,20}:\s+)?(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7]) "
                   r"([^:]+): (.*)$")
# a kernel line's driver and device, at the line's start or after its timestamp (`[ 1.4] mlx5_core 0000:01:00.0: ...`),
# and the vendor the PCI core's enumeration line names (`pci 0000:01:00.0: [10de:2204] type 00 class 0x030000`)
_DRIVER = re.compile(r"^(?:\[[\d. ]+\]\s*)?([a-z][a-z0-9_]*) (?:[0-9a-fA-F]{4,8}:)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b"
                     r"(?:: \[([0-9a-fA-F]{4}):)?", re.MULTILINE)
# names a GPU's own lines carry: NVIDIA's driver, nouveau (the GPU all the same), and the PCI core (`pci`), which
# prints every device it enumerates and gives it to no driver: only the vendor it names tells another's (hunt86)
_GPU_SIDE = ("nvidia", "nouveau", "pci")
# an RDMA adapter listed (ibstat's `CA 'mlx5_0'`, ibv_devinfo's `hca_id:`): link lines that name no device may be its
_ADAPTER = re.compile(r"^[^\S\n]*(?:CA '|hca_id:)", re.MULTILINE)
_GPU_CLASS = ("3D controller", "VGA compatible controller", "Display controller")
_LINK = re.compile(r"^\s*(LnkCap|LnkSta):.*?Speed ([\d.]+)GT/s[^,]*, Width x(\d+)")
_NUMA = re.compile(r"^\s*NUMA node: (\d+)")
# PCIe generation by transfer rate (PCI-SIG: 2.5, 5, 8, 16, 32, 64 GT/s)
GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}


# a shell's command line that asked for one device (`# lspci -vvv -s 0000:01:00.0`, `$ sudo lspci -vv -s 01:00.0`)
_ASKED = re.compile(r"\blspci\b[^|\n]*?\s-s\s*(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\b")
_MARK = re.compile(r"^\s*LnkSta:.*\((?:ok|downgraded|strange|overdriven)\)")
Block = tuple[str | None, str, list[str]]


def _bus(m: re.Match[str]) -> str:
    return f"{int(m.group(1) or '0', 16):08X}:{m.group(2).upper()}:{m.group(3).upper()}.{m.group(4)}"


def _blocks(text: str) -> list[Block]:
    """(bus id, class and name, the block's lines) per device; a device lspci's header does not name has no class."""
    out: list[Block] = []
    for line in text.splitlines():
        if m := _HEAD.match(line):
            out.append((_bus(m), f"{m.group(5)}: {m.group(6)}", []))
        elif m := _ASKED.search(line):
            out.append((_bus(m), "", []))
        elif (link := _LINK.match(line)) and link.group(1) == "LnkCap" and (
                not out or any(_LINK.match(x) and "LnkCap:" in x for x in out[-1][2])):
            out.append((None, "", [line]))          # link lines of another device, its header not quoted
        elif out and (line[:1].isspace() or (not out[-1][1] and link)):
            out[-1][2].append(line)
    return out


def _nvidia_gpu(kind: str) -> bool:
    return kind.split(":")[0] in _GPU_CLASS and "NVIDIA" in kind


def _links(lines: list[str]) -> dict[str, tuple[int, int]]:
    """LnkCap and LnkSta as (generation, width)."""
    return {m.group(1): (GEN[m.group(2)], int(m.group(3))) for line in lines
            if (m := _LINK.match(line)) and m.group(2) in GEN}


def _unnamed(blocks: list[Block], text: str) -> list[Block]:
    """The one device whose link lines are quoted without lspci's header, where no header names any device; ports
    facing down (unmarked below their maximum, where the text shows pciutils' mark) and a device the kernel log gives
    to a driver not NVIDIA's (a NIC's `lspci -s 01:00.0` beside `mlx5_core 0000:01:00.0: ...`, batch 261) left out;
    lines naming no device at all are read only where the text shows no other device (a driver's kernel lines, an
    RDMA adapter's listing) they could be."""
    if any(kind for _, kind, _ in blocks):
        return []
    others = {m.group(2).lower() for m in _DRIVER.finditer(text)
              if m.group(1) not in _GPU_SIDE or (m.group(3) or "10de").lower() != "10de"}
    blocks = [b for b in blocks if not (b[0] and b[0][-7:].lower() in others)]
    if others or _ADAPTER.search(text):
        blocks = [b for b in blocks if b[0]]    # lines naming no device beside another's: whose is not shown (hunt86)
    linked = [b for b in blocks if len(_links(b[2])) == 2]
    marked = any(_MARK.match(line) for _, _, lines in linked for line in lines)
    devices = [b for b in linked if not (marked and not any(_MARK.match(x) for x in b[2])
                                         and _links(b[2])["LnkSta"] < _links(b[2])["LnkCap"])]
    return devices if len(devices) == 1 else []


def detect(text: str) -> bool:
    blocks = _blocks(text)
    return any(_nvidia_gpu(kind) and any(_LINK.match(line) for line in lines) for _, kind, lines in blocks) or bool(
        _unnamed(blocks, text))


def parse(text: str) -> dict[str, Any]:
    blocks = _blocks(text)
    switches = any(kind.startswith("Bridge:") and "NVIDIA" in kind for _, kind, _ in blocks)
    devices = []
    for bus, _, lines in [b for b in blocks if _nvidia_gpu(b[1])] or _unnamed(blocks, text):
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
