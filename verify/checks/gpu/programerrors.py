"""CUDA errors a running program met (the gpu facts' `cuda_errors`: a training log's `CUDA error: ...`), judged by
the one catalog (verify/shared/cuda_errors.py): an error the GPU causes (an uncorrectable ECC or NVLink error) fails
the host; a build that cannot run on this GPU at all (no code for its architecture, the image's cuda-compat) fails the
image, as the same build's arch list does, and drains nothing; one the program's own use causes (out of memory, a
kernel's fault) is the job's, said as a warning and never the node's; CUDA's refusal of a context (46: busy or
unavailable) is the GPUs' compute mode or sharing (refusals.py); an error the catalog does not decode is said, not
judged. Each code is said once."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...facts import NvmlDevice
from ...findings import Findings
from ...result import FAIL, WARN, CheckResult
from ...shared.cuda_errors import FORWARD_COMPAT, NO_DEVICE, PTX_TOOLCHAIN, Decoded, decode, undecided
from .refusals import busy, hides_every_device

# torch's words where CUDA enumerates no device (its lazy init; CUDA's own words are error 100's, NO_DEVICE)
_NO_GPUS = re.compile(r"No CUDA GPUs are available", re.IGNORECASE)


def judge_errors(errors: Sequence[Any], found: Findings, result: CheckResult,
                 devices: Sequence[NvmlDevice] = (), visible: object = None) -> int:
    """Judge each decoded error; the number the catalog does not decode (said in the details)."""
    said: dict[str, int] = {}
    undecoded = 0
    for e in errors:
        text = e.get("text") if isinstance(e, dict) else None
        if not isinstance(text, str) or not text.strip():
            continue
        decoded = decode(text)
        if _hidden(text, decoded, devices, visible, found):
            continue
        if decoded is None and undecided(text):
            _refused(text, list(devices), found)
            continue
        if decoded is None:
            result.details.append(f"a CUDA error the catalog does not decode, not judged: {text.strip()[:200]}")
            undecoded += 1
            continue
        said[decoded.code] = said.get(decoded.code, 0) + 1
        if said[decoded.code] > 1:
            continue
        index = e.get("index") if isinstance(e.get("index"), int) else None
        where = f"torch device {index}" if index is not None else "a program on this node"
        found.add(FAIL if _fails(decoded) else WARN, decoded.code,
                  f"{where} met a CUDA error: {decoded.cause_in(text)} ({text.strip()[:200]})", decoded.fix, decoded.owner,
                  None)
    return undecoded


def _fails(decoded: Decoded) -> bool:
    """The GPU's fault (host), or the image's build refusing this GPU whatever the program does (a refusal): no run of
    that build can work here; or CUDA refusing the job any GPU. The job's other errors (out of memory, its kernels'
    faults) warn."""
    # CUDA refusing the process any GPU (error 100: no device) leaves the program nothing to run on, as the same
    # refusal at initialisation does (verify explain reads a library's call failing so as that refusal: batch 298)
    if decoded is NO_DEVICE:
        return True
    # 804's owner turns on the driver's facts (node.refusal), which this judge does not hold: it warns, as before
    # a build without code for the GPU (no kernel image, torch's own `too old`, PTX newer than the driver's JIT) fails
    # whether or not CUDA refused
    return decoded.owner == "host" or (decoded.owner == "image" and (decoded.refusal or decoded.code == "ARCH_NOT_IN_BUILD"
                                                                     or decoded is PTX_TOOLCHAIN)
                                       and decoded is not FORWARD_COMPAT)


def _refused(text: str, devices: list[NvmlDevice], found: Findings) -> None:
    """A program refused a context (46: busy or unavailable, at its first CUDA call, which creates the context): the
    GPU is not usable by it, judged as CUDA's refusal at initialisation is (verify/checks/gpu/refusals.py), once."""
    held = busy(devices, text)
    if held is None or found.on(None, "GPU_NOT_VISIBLE"):
        return
    found.add(FAIL, "GPU_NOT_VISIBLE", f"a program on this node was refused the GPU ({text.strip()[:200]}): {held[1]}",
              held[2], held[0])


def _hidden(text: str, decoded: Decoded | None, devices: Sequence[NvmlDevice], visible: object,
            found: Findings) -> bool:
    """A program that saw no GPU (torch's `No CUDA GPUs are available`, CUDA's error 100) under a
    CUDA_VISIBLE_DEVICES that can name none (`all`, empty, -1) while NVML lists the node's GPUs: the job's own
    setting hid them (compose's `CUDA_VISIBLE_DEVICES: all`), judged as CUDA refusing at initialisation is."""
    if not (devices and hides_every_device(visible) and (decoded is NO_DEVICE or _NO_GPUS.search(text))):
        return False
    if not found.on(None, "GPU_NOT_VISIBLE"):
        found.add(FAIL, "GPU_NOT_VISIBLE", f"a program on this node saw no GPU ({text.strip()[:200]}): "
                  f"CUDA_VISIBLE_DEVICES={visible!r} names no device, while NVML lists {len(devices)}",
                  "Leave CUDA_VISIBLE_DEVICES to the launcher (docker's --gpus, Slurm's --gres), or set it to "
                  "indices or GPU-<uuid>s of this node.", "job")
    return True
