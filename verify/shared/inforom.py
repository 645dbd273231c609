"""NVML's words for a corrupted InfoROM (NVML_ERROR_CORRUPTED_INFOROM, pynvml's `CorruptedInforom`, nvidia-smi's
`infoROM is corrupted`), read by the gpu check (verify/checks/gpu/inforom.py) and by the prolog's return to service
(a memory-error drain is not proven repaired by counts an InfoROM cannot keep: verify/prolog/revalidate.py)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# the error's name as verify's probe records it (pynvml's class less its prefix), nvmlErrorString's words, or a tool's
CORRUPTED = re.compile(r"corrupt\w*[ _]?inforom|inforom\w* (?:is )?corrupt", re.IGNORECASE)


def said(dev: Mapping[str, Any]) -> list[str]:
    """The device's NVML errors that say its InfoROM is corrupted, as `field: error`."""
    errors = dev.get("nvml_errors")
    if not isinstance(errors, Mapping):
        return []
    return [f"{k}: {v}" for k, v in sorted(errors.items(), key=lambda kv: str(kv[0]))
            if isinstance(v, str) and CORRUPTED.search(v)]
