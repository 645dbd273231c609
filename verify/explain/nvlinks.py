"""`nvidia-smi nvlink -s` (`--status`): each GPU's header (`GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`) and its links,
`Link 3: 25 GB/s` (up, at that speed) or `Link 3: <inactive>`, into the gpu facts' devices (index, name, uuid, NVLink
states). A link the text does not show (a listing cut short) is null, never guessed; a GPU with no link line shown
has no NVLink field. NVML's `Unable to retrieve NVLink information as all links are inActive` under a GPU's header is
every link of it down: as many as its model has (verify/baselines.json `nvlink_links`), unknown for a model the table
does not know. A UUID the poster masked (`GPU-xxx`) is no UUID. A GPU's links followed by the poster's elision (`...`,
`…`, `[...]`) before the next GPU are cut short: which links it has and their states past those shown are unknown,
and a shorter list would claim a GPU with fewer links, so its NVLink field stays null; an inactive link among those
shown is a fault shown and stays (the list then padded with unknowns to the model's link count, where known)."""
from __future__ import annotations

import itertools
import re
from typing import Any

from .. import baselines
from .topo import MAX_LINKS  # links 0 to 17: the most any GPU has

_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[^)\s]+)\)\s*$")
_REAL_UUID = re.compile(r"^GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_ALL_INACTIVE = re.compile(r"Unable to retrieve NVLink information as all links are inactive", re.IGNORECASE)
_ELIDED = re.compile(r"^\s*(?:\.\.\.|\u2026|\[(?:\.\.\.|\u2026)\]|<snip(?:ped)?>|\[snip(?:ped)?\])\s*$", re.IGNORECASE)
_LINK = re.compile(r"^\s*Link (\d+): (?:([\d.]+) GB/s|<inactive>)\s*$")


def detect(text: str) -> bool:
    lines = text.splitlines()
    return any(_GPU.match(a) and (_LINK.match(b) or _ALL_INACTIVE.search(b)) for a, b in itertools.pairwise(lines))


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    links: dict[int, bool] = {}
    for line in text.splitlines():
        if m := _GPU.match(line.strip()):
            links = {}
            uuid = m.group(3) if _REAL_UUID.match(m.group(3)) else None
            devices.append({"index": int(m.group(1)), "name": m.group(2), "uuid": uuid, "_links": links})
        elif _ELIDED.match(line) and devices and links:
            devices[-1]["_cut"] = True          # the poster left this GPU's other links out
        elif _ALL_INACTIVE.search(line) and devices:
            model = baselines.load().model(devices[-1]["name"])
            count = model.constant("nvlink_links") if model else None
            if count:
                links.update({i: False for i in range(min(count, MAX_LINKS))})
        elif (m := _LINK.match(line)) and devices:
            if int(m.group(1)) >= MAX_LINKS:
                return {"torch": None, "devices": None}   # a link no GPU has: no listing nvidia-smi prints
            links[int(m.group(1))] = m.group(2) is not None
    for dev in devices:
        shown, cut = dev.pop("_links"), dev.pop("_cut", False)
        model = baselines.load().model(dev["name"]) if cut else None
        count = (model.constant("nvlink_links") or 0) if model else 0
        cut = cut and not (count and len(shown) >= count)     # every link of its model shown: what was elided is after
        if cut and all(shown.values()):
            continue                            # cut short with every shown link up: the field stays unknown
        if shown:
            dev["nvlink"] = [shown.get(i) for i in range(max(max(shown) + 1, count if cut else 0))]
    return {"torch": None, "devices": devices or None}
