"""Decode CUDA driver errors into causes a user can act on.

The numbers are cudaError_t values (CUDA Runtime API, "Data types"): 35 cudaErrorInsufficientDriver,
802 cudaErrorSystemNotReady, 803 cudaErrorSystemDriverMismatch, 804 cudaErrorCompatNotSupportedOnDevice.
"unsatisfied condition: cuda>=" is the NVIDIA Container Toolkit refusing to start a container whose image
sets NVIDIA_REQUIRE_CUDA above what the host driver supports.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...codes import Owner


@dataclass(frozen=True)
class Decoded:
    code: str
    owner: Owner
    cause: str
    fix: str


_RULES: list[tuple[re.Pattern[str], Decoded]] = [
    (re.compile(r"unsatisfied condition: cuda\s*>=", re.IGNORECASE),
     Decoded("DRIVER_TOO_OLD", "host", "the NVIDIA Container Toolkit refused the container: the image's "
             "NVIDIA_REQUIRE_CUDA asks for a newer CUDA than the host driver supports",
             "Update the host driver, or use an image built for an older CUDA (NVIDIA_DISABLE_REQUIRE=1 only "
             "where the image carries a forward-compatibility package that matches a data-centre GPU).")),
    (re.compile(r"\b(error|code)[ =:]*35\b|cudaErrorInsufficientDriver|driver version is insufficient|"
                r"NVIDIA driver on your system is too old", re.IGNORECASE),
     Decoded("DRIVER_TOO_OLD", "host", "CUDA error 35: the driver is older than the CUDA runtime this torch was built with",
             "Update the host driver to one that supports this CUDA version, or pick an image built for an older CUDA.")),
    (re.compile(r"\b(error|code)[ =:]*802\b|cudaErrorSystemNotReady|system not yet initialized", re.IGNORECASE),
     Decoded("DRIVER_ERROR", "host", "CUDA error 802 (system not ready): on NVSwitch systems (HGX/DGX) the fabric "
             "manager is not running or has not finished training the fabric",
             "Start it on the host: `systemctl enable --now nvidia-fabricmanager` (same version as the driver), "
             "then check `nvidia-smi -q | grep -i fabric`.")),
    (re.compile(r"\b(error|code)[ =:]*803\b|cudaErrorSystemDriverMismatch|"
                r"unsupported display driver / cuda driver combination", re.IGNORECASE),
     Decoded("DRIVER_ERROR", "image", "CUDA error 803: a forward-compatibility libcuda (cuda-compat package) in the "
             "image does not match the host's kernel driver",
             "Remove the cuda-compat libraries from the image's library path (or match them to the kernel driver).")),
    (re.compile(r"\b(error|code)[ =:]*804\b|cudaErrorCompatNotSupportedOnDevice|"
                r"forward compatibility was attempted on non supported HW", re.IGNORECASE),
     Decoded("DRIVER_ERROR", "image", "CUDA error 804: forward compatibility was used on a GPU that does not support "
             "it (it works on data-centre GPUs only)",
             "Drop the cuda-compat package from the image and use a CUDA version the host driver supports natively.")),
]


def decode(text: str | None) -> Decoded | None:
    """The known cause of a CUDA driver error message, or None."""
    if not text:
        return None
    for pattern, decoded in _RULES:
        if pattern.search(text):
            return decoded
    return None
