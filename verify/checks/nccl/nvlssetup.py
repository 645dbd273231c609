"""NCCL's NVLS set-up failing on a CUDA call (issue 35, batch 174): `transport/nvls.cc:246 NCCL WARN Cuda failure 3
'initialization error'`, `nvls.cc:244 ... Cuda failure 1 'invalid argument'`, `nvls.cc:223 ... 999 'unknown error'`.
NCCL reaches nvls.cc only on GPUs that report NVSwitch multicast, after the same process's own CUDA work succeeded
(its device chosen, its buffers allocated, the communicator's bootstrap done); a multicast call failing there, by
whatever name, is the NVSwitch fabric's state: NVIDIA answers it (NVIDIA/nccl#976, #1338, #1488) with the Fabric
Manager restarted without a GPU reset, fixed by the FM/GPU reset sequence or a reboot. One rule for the class, before
the job-side reading of `initialization error` (midrun.py), which holds for NCCL's other CUDA calls. Pure."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

NVLS_CUDA = re.compile(r"transport/nvls\.cc:\d+ NCCL WARN Cuda failure (?:\d+ )?'[^']+'")


def nvls_setup_verdict(said: str, over: str, error: str, result: CheckResult) -> CheckResult | None:
    """The host's failure where NCCL's NVLS set-up met a CUDA error, else None."""
    if not (m := NVLS_CUDA.search(said)):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; NCCL's NVLS "
                          f"set-up (NVSwitch multicast) failed on a CUDA call ({m.group(0)}) after the process's own "
                          "CUDA work succeeded: the NVSwitch fabric's state, not the job's", "Drain the node and reset "
                          "its GPUs and Fabric Manager together (stop FM, `nvidia-smi -r`, start FM) or reboot it; "
                          "NCCL_NVLS_ENABLE=0 only hides it.", "host")


# NVLS's multicast bind or create returning CUDA error 2 (issue 35, batch 205): `Failed to bind NVLink SHARP (NVLS)
# Multicast memory of size 2097152 : CUDA error 2 'out of memory'` is the NVSwitches' multicast objects (128 slots) spent
# by the library's own communicators (NVIDIA/nccl#2077: 2.29.7 makes a group per sub-communicator and aborts where 2.28
# fell back), not the GPU's memory and not a fault of the fabric: NCCL's hint at the Fabric Manager is generic
NVLS_SLOTS = re.compile(r"(?:NVLS|NVLink SHARP|[Mm]ulticast)[^|\n]{0,200}?(?:CUDA error|Cuda failure|error) 2 "
                        r"'out of memory'|cuMulticast(?:BindMem|BindAddr|Create)\(\)[^|\n]{0,40}?(?:CUDA )?error 2\b")


def nvls_slots_verdict(said: str, over: str, error: str, result: CheckResult) -> CheckResult | None:
    """The image's failure where NVLS's multicast set-up ran out of the switches' multicast objects, else None."""
    if not (m := NVLS_SLOTS.search(said)):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; NCCL's NVLS "
                          f"multicast set-up ran out of multicast objects ({m.group(0)[-120:]}): the NVSwitches' "
                          "multicast slots spent by the library's communicators, not the GPU's memory nor a fabric "
                          "fault", "Pin an NCCL release that falls back when NVLS resources run out, or set "
                          "NCCL_NVLS_ENABLE=0 (or create fewer communicators); no drain.", "image")
