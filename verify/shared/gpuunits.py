"""The GPUs Slurm schedules on a node, counted from NVML's devices (pure).

Slurm's MIG support (gres.conf AutoDetect=nvml, or MultipleFiles per MIG device) makes each MIG device one `gpu`
gres, typed by its profile (`gpu:1g.10gb:7`, `gpu:a100_1g.5gb:7`), and the GPU holding them none: a node with one
A100 in MIG mode and seven 1g.10gb devices has Gres=gpu:1g.10gb:7 and SLURM_GPUS_ON_NODE up to 7, while NVML lists
one physical GPU. Counted as physical GPUs, such a node "lost" six. Here a whole GPU counts one, a GPU in MIG mode as
many as the MIG devices NVML lists on it; a GPU in MIG mode whose MIG devices were not read, or a MIG device listed
twice (one UUID, on one GPU or two, in any case), cannot be counted (None), never counted as one.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# a MIG profile as Slurm types its gres (`1g.10gb`, `a100_1g.5gb`, `nvidia_a100_3g.39gb`, `1g.10gb+me`)
MIG_TYPE = re.compile(r"(?<![0-9])[0-9]{1,2}g\.[0-9]{1,4}gb", re.ASCII | re.IGNORECASE)


def in_mig_mode(dev: Any) -> bool:
    """NVML's current MIG mode (`mig`: [current, pending]) is on."""
    mode = dev.get("mig") if isinstance(dev, dict) else None
    return isinstance(mode, list) and bool(mode) and mode[0] is True


def mig_pending(dev: Any) -> str | None:
    """The MIG mode change NVML holds pending until the GPU's next reset (`mig`: [current, pending] differ):
    "enable", "disable", or None."""
    mode = dev.get("mig") if isinstance(dev, dict) else None
    if not isinstance(mode, list) or len(mode) != 2 or None in mode or mode[0] == mode[1]:
        return None
    return "enable" if mode[1] else "disable"


def any_mig(devices: Sequence[Any]) -> bool:
    return any(in_mig_mode(d) for d in devices)


def units(devices: Sequence[Any], skip_lost: bool = False) -> int | None:
    """The GPUs Slurm schedules among `devices` (NVML's list): whole GPUs plus the MIG devices of GPUs in MIG mode;
    None when a device is no record or a GPU in MIG mode lists no MIG devices (not read: cannot be counted)."""
    total = 0
    seen: set[str] = set()        # MIG UUIDs of every GPU: NVML gives each MIG device one, on one GPU
    for d in devices:
        if not isinstance(d, dict):
            return None
        if skip_lost and d.get("lost"):
            continue
        if in_mig_mode(d):
            slices = d.get("mig_devices")
            if not isinstance(slices, list) or not all(isinstance(s, dict) for s in slices):
                return None
            uuids = [str(s["uuid"]).strip().lower() for s in slices if s.get("uuid")]
            if len(set(uuids)) != len(uuids) or seen & set(uuids):
                return None           # one MIG device listed twice (on one GPU or two): a record no NVML gives
            seen |= set(uuids)
            total += len(slices)
        else:
            total += 1
    return total


def mig_typed(gres: str) -> bool:
    """Slurm's Gres names MIG devices (a `gpu` gres typed by a MIG profile)."""
    return any(MIG_TYPE.search(":".join(item.split(":")[1:-1])) for item in re.sub(r"\([^)]*\)", "", gres).split(",")
               if item.strip().startswith("gpu:"))
