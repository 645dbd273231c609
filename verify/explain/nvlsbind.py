"""NCCL's refusal to bind NVLink SHARP multicast memory (src/transport/nvls.cc, 2.19+), as a rank prints it, with or
without NCCL's WARN tag and prefix, often on its own in an issue:
`Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be
performed in the present state'.` then `This is usually caused by a system or configuration error in the Fabric
Manager or NVSwitches.` (a quote shortened to `... Multicast memory: CUDA error 401`, no size and no CUDA text, is
the same refusal). The communicator's set-up fails (init); NVLS is only tried on an NVSwitch system, so the
facts say `nvswitch` true. Read into the nccl facts as a translation records it: the error, with NCCL's own hint."""
from __future__ import annotations

import re
from typing import Any

# (a paste may break the line before `of size`, indented: batch 143's re-reading of p5en-48xlarge-h200-...)
_BIND = re.compile(r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory(?:\s+of size \d+)? ?:\s*"
                   r"CUDA error \d+(?: '[^'\n]*')?\.?")
_HINT = re.compile(r"This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches\.")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")


def detect(text: str) -> bool:
    return bool(_BIND.search(text))


def parse(text: str) -> dict[str, Any]:
    bind = _BIND.search(text)
    assert bind is not None        # detect() chose this parser
    hint = _HINT.search(text, bind.end())
    said = " ".join(" ".join(m.group(0).split()) for m in (bind, hint) if m)
    version = _VERSION.search(text)
    return {"backend": "nccl", "nccl_version": version.group(1) if version else None, "sizes": None,
            "error": f"init: {said}", "nvswitch": True}
