"""A GPU that NVML answers with NVML_ERROR_RESET_REQUIRED (pynvml's `ResetRequired`, nvmlErrorString's "GPU requires
reset", nvidia-smi's `[GPU requires reset]`) in any field: the driver refuses to serve it until it is reset, a state
of the GPU, not of the caller, and one no job clears. The host's, as the driver's own NV_ERR_RESET_REQUIRED is
(verify/checks/gpu/driverlog.py). Pure."""
from __future__ import annotations

import re

from ...facts import NvmlDevice
from ...findings import Findings
from ...result import FAIL

# the error's name as verify's probe records it, nvmlErrorString's words, or nvidia-smi's bracketed text
RESET_REQUIRED = re.compile(r"reset[ _]?required|requires (?:a )?reset", re.IGNORECASE)


def said(dev: NvmlDevice) -> list[str]:
    """The device's NVML errors that ask for a reset, as `field: error`."""
    errors = dev.get("nvml_errors")
    if not isinstance(errors, dict):
        return []
    return [f"{k}: {v}" for k, v in sorted(errors.items(), key=lambda kv: str(kv[0]))
            if isinstance(v, str) and RESET_REQUIRED.search(v)]


def required(dev: NvmlDevice, found: Findings, where: str) -> bool:
    if not (errors := said(dev)):
        return False
    found.add(FAIL, "GPU_RESET_REQUIRED", f"{where}: NVML answers that the GPU requires a reset ({'; '.join(errors)}): "
              "the driver serves it no more until then", "Drain the node and reset the GPU (`nvidia-smi -r -i <bus "
              "id>`), or reboot the node where the GPU cannot be reset in place; read `dmesg` for the Xid that put it "
              "there; retire the GPU if it recurs.", "host", dev.get("index"))
    return True
