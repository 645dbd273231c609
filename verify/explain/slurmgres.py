"""slurmd's list of the GPUs its gpu/nvml plugin detected (AutoDetect=nvml), as it logs it: `GRES[gpu]
Type:nvidia_h100_80gb_hbm3 Count:1 Cores(224):0-55  Links:(null) Flags:HAS_FILE,HAS_TYPE,ENV_NVML File:/dev/nvidia0
UniqueId:GPU-...` (under `The following autodetected GPUs are being ignored:` or `slurmd -G`'s list; `UniqueId` from
Slurm 23.02). Each line flagged ENV_NVML is a GPU NVML answered for: into the gpu facts' `devices` (its UUID where
printed; the `/dev/nvidiaN` minor is no NVML index and Slurm's type string no product name, so neither is kept) and
`nvml_error` "none". Lines a gres.conf configured (no ENV_NVML) were read by no one. No health field: the GPUs are not
assessed (warn), never healthy; whether Slurm then used or ignored them is its configuration, in no field."""
from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"\bGRES\[gpu\] [^\n]*?\bFlags:(\S*)[^\n]*?\bFile:(/dev/nvidia\d+)(?:[^\n]*?\bUniqueId:(\S+))?")
_UUID = re.compile(r"GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _detected(text: str) -> dict[str, str | None]:
    """Per device file, the UUID NVML gave (None where not printed): each GPU once, however often the list is logged."""
    found: dict[str, str | None] = {}
    for m in _LINE.finditer(text):
        if "ENV_NVML" in m.group(1).split(","):
            uuid = m.group(3) if m.group(3) and _UUID.fullmatch(m.group(3)) else None
            found[m.group(2)] = found.get(m.group(2)) or uuid
    return found


def detect(text: str) -> bool:
    return bool(_detected(text))


def parse(text: str) -> dict[str, Any]:
    return {"torch": None, "nvml_error": "none",
            "devices": [{"index": None, "uuid": uuid} for uuid in _detected(text).values()]}
