"""nv-hostengine's own log of what its cache manager stored (`DEBUG [pid:tid] Appended entity i64 eg 1, eid 7, fieldId
409, ts 1716390313213008, value1 9223372036854775794, ...`, dcgmlib/src/DcgmCacheManager.cpp): entity group 1 is a
GPU (DCGM_FE_GPU), `eid` its DCGM id, listed as a device by that index. A value that is one of DCGM's blanks
(dcgm_structs.h: DCGM_INT64_BLANK 0x7ffffffffffffff0, DCGM_INT32_BLANK 0x7ffffff0, DCGM_FP64_BLANK 2^47, each with
NOT_FOUND, NOT_SUPPORTED and NOT_PERMISSIONED at +1, +2 and +3) is no reading: the monitor could not read that field
(DCGM 3.3.0's NVLink CRC totals, fields 409/419, on Hopper: github.com/NVIDIA/DCGM/issues/173). That is the tool's
gap, not the GPU's fault and not a healthy counter: said beside the verdict, not assessed, never a pass and never
"nothing to judge". A stored value that is a number is a field id the facts have no mapping for, and is not read."""
from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"Appended entity (\w+) eg (\d+), eid (\d+), fieldId (\d+), ts \d+, value1 (-?[\d.]+(?:e[+-]?\d+)?)")
_GPU_GROUP = 1                          # DCGM_FE_GPU
_BLANKS = {"i64": 0x7FFFFFFFFFFFFFF0, "i32": 0x7FFFFFF0, "double": 140737488355328.0}
_MEANING = ("blank", "not found", "not supported", "not permissioned")


def _blank(kind: str, value: str) -> str | None:
    """DCGM's word for a blank value of the kind (None: a reading)."""
    base = _BLANKS.get(kind)
    if base is None:
        return None
    try:
        # the integer kinds exactly (a float cannot tell 2^63-14 from 2^63-16)
        offset = int(value) - int(base) if isinstance(base, int) else float(value) - base
    except ValueError:
        return None
    return _MEANING[int(offset)] if 0 <= offset < len(_MEANING) and offset == int(offset) else None


def detect(text: str) -> bool:
    return any(int(m.group(2)) == _GPU_GROUP for m in _LINE.finditer(text))


def parse(text: str) -> dict[str, Any]:
    gpus = sorted({int(m.group(3)) for m in _LINE.finditer(text) if int(m.group(2)) == _GPU_GROUP})
    return {"torch": None, "devices": [{"index": i} for i in gpus] or None}


def unread(text: str) -> list[str]:
    said = []
    for m in _LINE.finditer(text):
        if int(m.group(2)) == _GPU_GROUP and (meaning := _blank(m.group(1), m.group(5))):
            said.append(f"DCGM's host engine stored field {m.group(4)} of GPU {m.group(3)} as its '{meaning}' value "
                        f"({m.group(5)}): the monitor could not read it, no reading of the GPU")
    return list(dict.fromkeys(said))


REMEDY = ("Read the counters another way (`nvidia-smi nvlink -e`, `nvidia-smi -q`, or DCGM's per-link fields) before "
          "judging the GPU; a field DCGM's release does not support on this GPU is the monitor's gap, not the node's.")
