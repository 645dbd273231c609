"""NCCL sizing its kernels for more shared memory than the GPU gives, and CUDA refusing the launch: the NCCL
release does not know this GPU. Pure.

NCCL prints at init, per rank, `ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856` (src/enqueue.cc, 2.25)
where the shared memory its kernels were built for exceeds what the device allows a kernel; its first collective
then fails on the launch, `enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'` (cudaErrorInvalidValue;
NVIDIA/nccl#1637: RTX 5090, sm_120, NCCL 2.25.1, fixed in 2.26). The GPU works; the library's build does not fit it.
"""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

MAX_SHARED_MEM = re.compile(r"ncclMaxSharedMem \d+ exceeds device/fn maxSharedMem \d+")
# the launch CUDA refused for it: an invalid launch configuration, or more resources than the GPU has
_REFUSED = re.compile(r"Cuda failure (?:\d+ )?'(?:invalid argument|too many resources requested for launch)'|"
                      r"cudaErrorInvalidValue|cudaErrorLaunchOutOfResources", re.IGNORECASE)


def launch_verdict(said: str, failed: str, result: CheckResult) -> CheckResult | None:
    """The failure's verdict where NCCL said its kernels need more shared memory than the GPU gives and CUDA then
    refused a launch: the image's NCCL, never the node's."""
    limit = MAX_SHARED_MEM.search(said)
    if limit is None or not _REFUSED.search(said):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}; NCCL sized its kernels for more shared memory than this "
                          f"GPU gives a kernel ({limit.group(0)}) and CUDA refused the launch: the image's NCCL release "
                          "does not support this GPU", "Run an NCCL release that knows this GPU (for sm_120, RTX 50xx "
                          "and RTX PRO Blackwell: 2.26 or newer; a pip-installed torch brings its own NCCL, "
                          "nvidia-nccl-cu12); the node is not at fault.", "image")


def build_verdict(said: str, error: str | None, over: str, result: CheckResult) -> CheckResult | None:
    """NCCL's own line that its kernels need more shared memory than this GPU gives one, with or without the launch
    CUDA then refuses shown: every collective launches those kernels, so the line alone says the image's NCCL build
    does not fit the GPU (NVIDIA/nccl#1637: a failure the poster only describes, its lines cut away). Asked only
    where no failure is named (a named one, an IB completion error, decides: verdict.py), never the node's: what else
    the log shows (IB absent on a workstation, the socket fallback) is not the cause."""
    limit = MAX_SHARED_MEM.search(said)
    if limit is None:
        return None
    if error and (refused := launch_verdict(said, f"{over} failed: {error}", result)):
        return refused
    what = (f"NCCL failed: {error}; " if error else
            "no collective shown, but NCCL's first collective cannot launch: ")
    return result.verdict(FAIL, "NCCL_FAILED", f"{what}NCCL sized its kernels for more shared memory than this GPU "
                          f"gives a kernel ({limit.group(0)}): the image's NCCL release does not support this GPU",
                          "Run an NCCL release that knows this GPU (for sm_120, RTX 50xx and RTX PRO Blackwell: 2.26 "
                          "or newer; a pip-installed torch brings its own NCCL, nvidia-nccl-cu12); the node is not at "
                          "fault.", "image")
