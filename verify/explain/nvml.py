"""NVML refusing to start, as nvidia-smi, the container toolkit and DCGM print it (`Failed to initialize NVML: Driver/
library version mismatch`, `nvidia-container-cli: initialization error: nvml error: driver/library version mismatch`,
`NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`), with the kernel module's version
where `/proc/driver/nvidia/version` is quoted: into the gpu facts' `nvml_error` and `driver`. Judged by the gpu
check's rule for no usable GPU (verify/checks/gpu/node.py): a driver whose kernel module and library differ is a
fault whether GPUs were expected or not; no driver loaded is one only where GPUs are expected."""
from __future__ import annotations

import re
from typing import Any

from .said import said

_REFUSED = re.compile(r"Failed to initialize NVML: [^\n]+|nvml error: [^\n]+|NVIDIA-SMI has failed because it "
                      r"couldn't communicate with the NVIDIA driver[^\n]*", re.IGNORECASE)
_MODULE = re.compile(r"NVRM version: NVIDIA UNIX [\w-]+ Kernel Module\s+(\d+\.\d+(?:\.\d+)?)")


def _refused(text: str) -> re.Match[str] | None:
    """NVML's refusal where a tool says it, never where a how-to or a program's source mentions it (explain/said.py)."""
    for m in _REFUSED.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1          # the line's start: said() reads what is before the message
        if said(text[start:m.start()], m.start() - start):
            return m
    return None


def detect(text: str) -> bool:
    return _refused(text) is not None


def parse(text: str) -> dict[str, Any]:
    refused = _refused(text)
    module = _MODULE.search(text)
    return {"torch": None, "devices": None, "nvml_error": refused.group(0).strip()[:400] if refused else None,
            "driver": module.group(1) if module else None}
