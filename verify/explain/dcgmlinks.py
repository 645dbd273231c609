"""`dcgmi nvlink --link-status` (`-s`; dcgmi/Nvlink.cpp): under `GPUs:`, each `gpuId N:` and a row of one letter per
link (`U` up, `D` down, `X` disabled, `_` not supported: the key DCGM prints below), into the gpu facts' devices (the
DCGM id as the index, as explain/dcgmdiag.py reads it; NVLink states: up true, down or disabled false, not supported
null, and none after the last link the GPU has); `NvSwitches:` with `No NvSwitches found.` says the GPUs sit behind
none, a switch listed that they do. The model is not in the listing: null, never guessed."""
from __future__ import annotations

import re
from typing import Any

from .topo import MAX_LINKS  # links 0 to 17: the most any GPU has

_TITLE = re.compile(r"^\|?\s*NvLink Link Status\s*\|?$")
_ENTITY = re.compile(r"^(?:gpuId|physicalId) (\d+):$")
_ROW = re.compile(r"^[UDX_](?: [UDX_])*$")
_STATE = {"U": True, "D": False, "X": False, "_": None}


def detect(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines()]
    return any(_TITLE.match(line) for line in lines) and "GPUs:" in lines


def parse(text: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    section, switches = "", None
    for line in (raw.strip() for raw in text.splitlines()):
        if line in ("GPUs:", "NvSwitches:"):
            section = line
        elif line == "No NvSwitches found." and section == "NvSwitches:":
            switches = False
        elif (m := _ENTITY.match(line)) and section == "NvSwitches:":
            switches = True
        elif m and section == "GPUs:":
            devices.append({"index": int(m.group(1))})
        elif _ROW.match(line) and section == "GPUs:" and devices and "nvlink" not in devices[-1]:
            states = [_STATE[s] for s in line.split()]
            while states and states[-1] is None:
                states.pop()                    # links past the last one the GPU has
            if len(states) > MAX_LINKS:
                return {"torch": None, "devices": None}   # more links than any GPU has: not DCGM's listing
            devices[-1]["nvlink"] = states
    for dev in devices:
        if switches is not None:
            dev["nvswitch"] = switches
    return {"torch": None, "devices": devices or None}
