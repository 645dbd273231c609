"""A container engine refusing a GPU request because it has no NVIDIA runtime: docker's `could not select device
driver "" with capabilities: [[gpu]]` (`--gpus`, compose's GPU devices: no device driver for the capability is
registered, the NVIDIA Container Toolkit absent or the daemon not restarted after it), docker's `unknown or invalid
runtime name: nvidia` (`--runtime=nvidia`, compose's `runtime: nvidia`) and containerd's `no runtime for "nvidia" is
configured` (a pod's runtimeClassName). No container started: the process would have had neither the GPU devices nor
the driver's libraries, so into the gpu facts as `device_nodes` and `nvml_library` false, with nvidia-smi's `Driver
Version` where the host's is quoted beside it. Judged by the gpu check's rule for a process without the NVIDIA runtime
(verify/checks/gpu/node.py): the job's (its runtime, or the node's container set-up it was sent to), never a drain:
a node whose toolkit is missing has no broken GPU. A failure whatever was expected only where the driver's answer
shows the node's GPUs; the refusal alone is "no GPU visible"."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_REFUSED = re.compile(r"could not select device driver \"[^\"\n]*\" with capabilities: \[\[[^\]\n]*\bgpu\b|"
                      r"unknown or invalid runtime name: nvidia\b|no runtime for \"nvidia\" is configured",
                      re.IGNORECASE)
# nvidia-smi's own `Driver Version` (the -q header `Driver Version : 451.67`, the table's `Driver Version: 550.120`)
# quoted beside the refusal from the host
_DRIVER = re.compile(r"\bDriver Version\s*:\s*(\d+\.\d+(?:\.\d+)?)")


def detect(text: str) -> bool:
    return printed(_REFUSED, text) is not None


def parse(text: str) -> dict[str, Any]:
    driver = _DRIVER.search(text)
    return {"torch": None, "devices": None, "device_nodes": False, "nvml_library": False,
            "driver": driver.group(1) if driver else None}
