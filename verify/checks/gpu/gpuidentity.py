"""Which NVML device (and MIG slice) each torch device is (pure logic).

torch numbers the devices CUDA_VISIBLE_DEVICES leaves, in that order; NVML numbers every GPU of the node.
So a torch index is matched to an NVML device by UUID first (torch's device properties carry it; a MIG
slice's UUID is one of its parent's `mig_devices`), then by PCI bus id, then by reading
CUDA_VISIBLE_DEVICES (indices, `GPU-<uuid>` or `MIG-<uuid>`, prefixes allowed as CUDA allows them), and
by index only when nothing hides devices and the counts agree. Anything else is unmatched, and said so.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...facts import UNSET, NvmlDevice, TorchMapEntry

_MIG_PROFILE = re.compile(r"(?<!\d)(\d+)g\.(\d+)gb", re.IGNORECASE)


@dataclass(frozen=True)
class Match:
    torch_index: int
    nvml_index: int | None           # None: not matched to any NVML device
    mig_uuid: str | None             # set when the torch device is a MIG slice
    matched_by: str                  # uuid | pci_bus_id | cuda_visible_devices | index | none


def norm_uuid(text: Any) -> str:
    """'GPU-5e9c...' / 'MIG-...' / bare hex with or without dashes -> lower-case hex only."""
    t = str(text or "").strip().lower()
    for prefix in ("gpu-", "mig-"):
        t = t.removeprefix(prefix)
    return t.replace("-", "")


def norm_bus(text: Any) -> str:
    """'00000000:18:00.0' / '0000:18:00.0' / '18:00.0' -> '18:00.0' (domain dropped when zero)."""
    t = str(text or "").strip().lower()
    parts = t.split(":")
    if len(parts) == 3:
        domain = parts[0].lstrip("0")
        t = (domain + ":" if domain else "") + parts[1] + ":" + parts[2]
    return t


def mig_profile(name: Any) -> tuple[int, int] | None:
    """'NVIDIA A100-SXM4-40GB MIG 1g.5gb' or '1g.10gb' -> (compute slices, memory GB)."""
    m = _MIG_PROFILE.search(str(name or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _by_uuid(uuid: str, devices: Sequence[NvmlDevice]) -> tuple[int, str | None] | None:
    """(nvml index, MIG uuid or None) of a full or prefix UUID."""
    if not uuid:
        return None
    for d in devices:
        if norm_uuid(d.get("uuid")).startswith(uuid):
            return int(d.get("index") or 0), None
        for mig in d.get("mig_devices") or []:
            if isinstance(mig, dict) and norm_uuid(mig.get("uuid")).startswith(uuid):
                return int(d.get("index") or 0), str(mig.get("uuid"))
    return None


def _visible(cvd: str | None, devices: Sequence[NvmlDevice]) -> list[tuple[int, str | None]] | None:
    """NVML (index, MIG uuid) per torch index from CUDA_VISIBLE_DEVICES; None when it is unset or unknown."""
    if cvd is None or cvd == UNSET:
        return None
    out: list[tuple[int, str | None]] = []
    by_index = {int(d.get("index") or 0) for d in devices}
    for entry in (e.strip() for e in cvd.split(",")):
        if entry.isdecimal() and int(entry) in by_index:
            out.append((int(entry), None))
        elif entry.lower().startswith(("gpu-", "mig-")) and (hit := _by_uuid(norm_uuid(entry), devices)):
            out.append(hit)
        else:
            break                     # CUDA stops at the first entry it cannot use
    return out


def visible_count(cvd: str | None, devices: Sequence[NvmlDevice]) -> int | None:
    """How many of this node's devices CUDA_VISIBLE_DEVICES names (CUDA stops at the first it cannot use)."""
    found = _visible(cvd, [d for d in devices if isinstance(d.get("index"), int)])
    return None if found is None else len(found)


def match(torch_map: Sequence[TorchMapEntry] | None, torch_count: int, devices: Sequence[NvmlDevice],
          cvd: str | None) -> list[Match]:
    """One Match per torch index."""
    devices = [d for d in devices if isinstance(d.get("index"), int)]
    entries = {int(e.get("torch_index") or 0): e for e in torch_map or [] if isinstance(e.get("torch_index"), int)}
    visible = _visible(cvd, devices)
    out = []
    for t in range(torch_count):
        entry = entries.get(t, {})
        hit = _by_uuid(norm_uuid(entry.get("mig_uuid") or entry.get("uuid")), devices)
        if hit:
            out.append(Match(t, hit[0], hit[1], "uuid"))
            continue
        bus = norm_bus(entry.get("pci_bus_id")) if entry.get("pci_bus_id") else ""
        on_bus = [d for d in devices if bus and norm_bus(d.get("pci_bus_id")) == bus]
        if len(on_bus) == 1 and not entry.get("mig_uuid"):
            out.append(Match(t, int(on_bus[0].get("index") or 0), None, "pci_bus_id"))
        elif visible is not None and t < len(visible):
            out.append(Match(t, visible[t][0], visible[t][1], "cuda_visible_devices"))
        elif cvd in (None, UNSET) and torch_count == len(devices):
            out.append(Match(t, int(devices[t].get("index") or 0), None, "index"))
        else:
            out.append(Match(t, None, None, "none"))
    return out
