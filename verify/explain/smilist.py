"""`nvidia-smi -L` (`--list-gpus`): one line per GPU NVML enumerates, `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`,
and under it, with MIG mode on, one line per MIG device: `  MIG 1g.10gb     Device  0: (UUID: MIG-...)` (drivers
470 and later) or `  MIG 1g.5gb Device 0: (UUID: MIG-GPU-<parent uuid>/<gi>/<ci>)` (450 and 460). Into the gpu
facts' devices (index, name, uuid, MIG mode on where MIG devices are listed, and each MIG device's uuid, profile,
slices and index) and `nvml_error` "none" (nvidia-smi listed the GPUs through NVML). The listing holds no health
field: the judge says the GPUs are not assessed, never healthy. Only where no richer report of the same GPUs (`-q`,
the table, `--query-gpu`, `nvlink -s`, which print the same header lines) is in the text: those read the devices."""
from __future__ import annotations

import re
from typing import Any

from . import nvlinks, nvml, smi, smiquery, smitable, smixml

_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$")
_MIG = re.compile(r"^\s+MIG ((?:\d+c\.)?(\d+)g\.\d+gb(?:\+\w+)?)\s+Device\s+(\d+): "
                  r"\(UUID: (MIG-(?:GPU-)?[0-9a-fA-F-]+(?:/\d+/\d+)?)\)\s*$")
_RICHER = (smixml, smi, smitable, smiquery, nvlinks)


def _superseded(text: str) -> bool:
    """NVML refusing to start after the listing's last GPU line (a pod's `nvidia-smi -L` loop that then prints
    `Failed to initialize NVML: Unknown Error`): the GPUs listed were the state before; the refusal is the state now,
    judged by NVML's reader, so the listing is not read beside it."""
    lines = text.splitlines()
    last = max((n for n, line in enumerate(lines) if _GPU.match(line.strip())), default=None)
    return last is not None and nvml.error_of("\n".join(lines[last + 1:])) is not None


def detect(text: str) -> bool:
    return any(_GPU.match(line.strip()) for line in text.splitlines()) and not any(m.detect(text) for m in _RICHER) \
        and not _superseded(text)


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    for line in text.splitlines():
        if m := _GPU.match(line.strip()):
            devices.append({"index": int(m.group(1)), "name": m.group(2), "uuid": m.group(3)})
        elif (m := _MIG.match(line)) and devices:
            devices[-1]["mig"] = [True, None]           # MIG devices are listed only in MIG mode; pending not shown
            ids = re.search(r"/(\d+)/(\d+)$", m.group(4))      # 450/460 name the GPU and compute instances
            devices[-1].setdefault("mig_devices", []).append(
                {"uuid": m.group(4), "profile": m.group(1), "slices": int(m.group(2)), "mig_index": int(m.group(3)),
                 **({"gpu_instance": int(ids.group(1)), "compute_instance": int(ids.group(2))} if ids else {})})
    return {"torch": None, "nvml_error": "none" if devices else None, "devices": devices or None}
