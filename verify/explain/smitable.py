"""`nvidia-smi` (no flags): the default table. Its banner names the driver as `Driver Version: 580.65.06   CUDA
Version: 13.0` to driver 5xx and `KMD Version: 610.43.02   CUDA UMD Version: 13.3` from driver 610 (nvidia-smi's
release notes: Driver/CUDA Version deprecated for KMD/CUDA UMD Version). Each GPU is two or three table rows:
`|   0  NVIDIA B200   On  |   00000000:63:00.0 Off |   0 |` (index, name, persistence | bus id, display | volatile
uncorrectable ECC) and `| N/A   26C    P0   139W / 1000W |   0MiB / 183359MiB |   0%   Default |` (a GeForce's
`N/A` in the GPU-Util column, drivers 3xx, before its compute mode). A name nvidia-smi
cut (`NVIDIA RTX PRO 6000 Blac...`) is not a name: left null, never completed by a guess; `N/A` is not read;
`ERR!` (NVML could not read the field) is the device's `nvml_errors` entry for it, as FACTS.md says. Rows pasted
without the banner (a user's excerpt of one GPU) are read too: the two rows together are nvidia-smi's alone."""
from __future__ import annotations

import itertools
import re
from typing import Any

from . import inforom
from .notknown import known
from .smiquery import compute_mode

_BANNER = re.compile(r"NVIDIA-SMI\s+\S+\s+(?:KMD|Driver) Version:\s*(\S+)(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?")
# a row may be indented as a whole (a table quoted as an indented block under its `bash-5.2# nvidia-smi` prompt,
# rtx-pro-4500-blackwell-bottlerocket-...): the indentation is the quote's, the row is the same
# the third column is Persistence-M (On/Off) on Linux and the driver model (TCC/WDDM) on Windows, which has no
# persistence mode: null there
_ROW1 = re.compile(r"^\s*\|\s+(\d+)\s+(.+?)\s+(On|Off|TCC|WDDM)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])"
                   r"\s+\S+\s*\|\s*(\S+)\s*\|")
_ROW2 = re.compile(r"^\s*\|\s*(\S+)\s+(\d+|N/A|ERR!)C?\s+(\S+)\s+(\d+|N/A|ERR!)W?\s*/\s*(\d+|N/A|ERR!)W?\s*\|"
                   r"\s*(?:(\d+)MiB\s*/\s*(\d+)MiB|Not Supported)\s*\|(?:\s*(\S+%|N/A|ERR!)\s+(Default|E\. Process|E\. Thread|Prohibited)\b)?")
# (unified-memory GB10 and Thor print `Not Supported` in the memory cell: the row's other cells are read, no memory)
# the same row cut short by the paste after its power cell (issue 35, batch 207: `| 30%  25C  P8  1W / 125W |  1MiB /`,
# fewer than its four bars): the cells printed before the cut are read, the memory cell is not
_ROW2_CUT = re.compile(r"^\s*\|\s*(\S+)\s+(\d+|N/A|ERR!)C?\s+(\S+)\s+(\d+|N/A|ERR!)W?\s*/\s*(\d+|N/A|ERR!)W?\s*\|")
# the third row of a GPU (drivers 450 on): blank cells, then its MIG mode (`Disabled`, `N/A`, or `ERR!` unread)
_ROW3 = re.compile(r"^\s*\|\s*\|\s*\|\s*(\S+)\s*\|\s*$")
ERR = "ERR!"


def _rows(text: str) -> bool:
    """A GPU's first two table rows, one after the other: what a pasted excerpt keeps of the table."""
    lines = text.splitlines()
    return any(_ROW1.match(a) and _ROW2.match(b) for a, b in itertools.pairwise(lines))


def detect(text: str) -> bool:
    # the banner alone (a table cut below it, GPUd's `gpud accelerator` paste) is nvidia-smi reading the driver
    return bool(_BANNER.search(text)) or _rows(text)


def _int(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def parse(text: str) -> dict[str, Any]:
    banner = _BANNER.search(text)
    devices: list[dict[str, Any]] = []
    for line in text.splitlines():
        if m := _ROW1.match(line):
            name = m.group(2).strip()
            errors = {key: ERR for key, value in (("name", name), ("ecc_volatile_uncorrectable", m.group(5)))
                      if value == ERR}
            devices.append({"index": int(m.group(1)), "name": None if name.endswith("...") or name == ERR else name,
                            "persistence": {"On": True, "Off": False}.get(m.group(3)), "pci_bus_id": m.group(4),
                            "ecc_volatile_uncorrectable": _int(m.group(5)), "nvml_errors": errors,
                            # the cell says `Off` where ECC mode is disabled (N/A where the GPU has none)
                            **({"ecc": [False, None]} if m.group(5) == "Off" else {})})
        elif (m := _ROW2.match(line)) and devices and "temperature_c" not in devices[-1]:
            temp, power, cap = _int(m.group(2)), _int(m.group(4)), _int(m.group(5))
            errors = {key: ERR for key, value in (("fan_speed", m.group(1)), ("temperature_c", m.group(2)),
                                                 ("performance_state", m.group(3)), ("power_w", m.group(4)),
                                                 ("power_limit_w", m.group(5)), ("utilization", m.group(8)))
                      if value == ERR}
            devices[-1].update(temperature_c=float(temp) if temp is not None else None,
                               power_w=float(power) if power is not None else None,
                               power_limit_w=float(cap) if cap is not None else None,
                               memory_bytes=int(m.group(7)) << 20 if m.group(7) else None,
                               nvml_errors={**devices[-1].get("nvml_errors", {}), **errors},
                               compute_mode=compute_mode(m.group(9) or ""))
        elif ((m := _ROW2_CUT.match(line)) and line.count("|") < 4 and devices
              and "temperature_c" not in devices[-1]):
            temp, power, cap = _int(m.group(2)), _int(m.group(4)), _int(m.group(5))
            devices[-1].update(temperature_c=float(temp) if temp is not None else None,
                               power_w=float(power) if power is not None else None,
                               power_limit_w=float(cap) if cap is not None else None,
                               nvml_errors={**devices[-1].get("nvml_errors", {}),
                                            **{k: ERR for k, v in (("temperature_c", m.group(2)), ("power_w", m.group(4)),
                                                                   ("power_limit_w", m.group(5))) if v == ERR}})
        elif (m := _ROW3.match(line)) and devices and "memory_bytes" in devices[-1] and m.group(1) == ERR:
            devices[-1]["nvml_errors"] = {**devices[-1].get("nvml_errors", {}), "mig": ERR}
    inforom.mark(text, devices)           # nvidia-smi's warning under its table
    return {"torch": None, "driver": known(banner.group(1)) if banner else None,
            "cuda_driver": known(banner.group(2)) if banner else None,
            "devices": [{k: v for k, v in d.items() if v is not None and v != {}} for d in devices] or None}
