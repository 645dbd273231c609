"""`nvidia-smi nvlink -e` (`--errorcounters`): each GPU's header (`GPU 2: Tesla V100-SXM2-32GB-LS (UUID: GPU-...)`)
and its links' counters (`Link 0: Replay Errors: 2`, `Recovery Errors`, `CRC Errors`), summed per GPU into the gpu
facts' `nvlink_errors` (FACTS.md NvlinkErrors: crc, replay, recovery), with the device's index, name and uuid.

The counters count since the driver loaded (or since `nvidia-smi nvlink -r`), so they hold whatever ran since: a
count above 0 is errors that happened, a fault shown, even where the paste shows only some links (the device's
total is at least that). Zeros are a clean read only where every link of the GPU is shown (as many as its model has,
verify/baselines.json `nvlink_links`): one link's zeros of an 18-link GPU say nothing of the other 17, so the field
stays null. Counters under no GPU header (a block pasted without it) name no GPU and are not read. Link state is not
printed here: `nvlink` stays null."""
from __future__ import annotations

import re
from typing import Any

from .. import baselines

_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: (GPU-[^)\s]+)\))?\s*$")
_REAL_UUID = re.compile(r"^GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_COUNTER = re.compile(r"^Link (\d+): (Replay|Recovery|CRC) Errors: (\d+)$")
_KEY = {"Replay": "replay", "Recovery": "recovery", "CRC": "crc"}


def _devices(text: str) -> list[dict[str, Any]]:
    """The GPUs with at least one counter line under their header, each with its counters summed and links shown."""
    devices: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if m := _GPU.match(line):
            uuid = m.group(3) if m.group(3) and _REAL_UUID.match(m.group(3)) else None
            current = {"index": int(m.group(1)), "name": m.group(2), "uuid": uuid, "errors": {}, "links": set()}
            devices.append(current)
        elif (m := _COUNTER.match(line)) and current is not None:
            key = _KEY[m.group(2)]
            current["errors"][key] = current["errors"].get(key, 0) + int(m.group(3))
            current["links"].add(int(m.group(1)))
        elif line:
            current = None                  # anything else ends the GPU's block: later counters name no GPU
    return [d for d in devices if d["errors"]]


def detect(text: str) -> bool:
    return bool(_devices(text))


def parse(text: str) -> dict[str, Any]:
    out = []
    table = baselines.load()
    for dev in _devices(text):
        errors, shown = dev.pop("errors"), dev.pop("links")
        model = table.model(dev["name"])
        links = model.constant("nvlink_links") if model else None
        every_link = bool(links) and len(shown) >= (links or 0)
        # a count above 0 stands (the device's total is at least that); a zero only where every link is shown
        read = {k: errors.get(k) if every_link or errors.get(k) else None for k in ("crc", "replay", "recovery")}
        dev["nvlink_errors"] = read if any(v is not None for v in read.values()) else None
        out.append(dev)
    return {"torch": None, "devices": out or None}
