"""What a program's run shows of the GPUs, and no more. CUDA that initialised (`cuda_init_error` "none"), torch saying
CUDA is available (`is_available()` is its device count above 0) and torch's count itself each prove a GPU the
driver enumerated, and read none of its health and no NVML device: alone they are nothing to judge (FACTS.md, "How
unknown is judged": a device NVML read without a health field warns HEALTH_NOT_ASSESSED; a program's run is no device
read and no health read). One rule for the three, so CUDA initialising alone and `is_available()` alone are judged
alike. (A schema-1/2 record's null `cuda_init_error` reads as "none", FACTS.md "Older records": were CUDA initialising
alone a GPU's evidence, every old record would carry it.)"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ...facts import NONE, GpuFacts
from . import aer, fabricmanager
from .refusals import torch_misses_cuda

# what a program that ran on the GPU records of it: CUDA's init, torch's availability and count, its (absent) errors
RAN = ("cuda_init_error", "cuda_available", "torch_devices", "cuda_errors")


def program_saw_a_gpu(facts: Mapping[str, Any]) -> str | None:
    """The words for what a program showed of the GPUs (None: no program's run shows one)."""
    count = facts.get("torch_devices")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return f"torch sees {count} GPU(s)"
    if facts.get("cuda_available") is True:
        return "torch says CUDA is available"
    if facts.get("cuda_init_error") == NONE:
        return "CUDA initialised"
    return None


def without_the_run(facts: GpuFacts) -> GpuFacts:
    """The facts less what a program's clean run says (a refusal, an error, a count of 0 stay: they are faults)."""
    rest: dict[str, Any] = dict(facts)
    if program_saw_a_gpu(facts) is not None:
        rest.update(cuda_available=None if facts.get("cuda_available") is True else facts.get("cuda_available"),
                    cuda_init_error=None if facts.get("cuda_init_error") == NONE else facts.get("cuda_init_error"),
                    cuda_errors=None if facts.get("cuda_errors") == [] else facts.get("cuda_errors"),
                    torch_devices=None if (facts.get("torch_devices") or 0) > 0 else facts.get("torch_devices"))
    return cast("GpuFacts", rest)


def no_gpu_shown(facts: GpuFacts) -> bool:
    """The record itself shows that no GPU is usable (a CPU build, no device nodes, no NVML, NVML's refusal)."""
    return (facts.get("torch_cuda") == NONE or facts.get("device_nodes") is False or facts.get("nvml_library") is False
            or facts.get("nvml_error") not in (None, NONE))


def driver_read(facts: GpuFacts) -> str | None:
    """The words for a driver version the node's own tools read (NVML, nvidia-smi, /proc/driver/nvidia/version): the
    NVIDIA kernel module loaded, which it does only with a GPU it supports, so the node's GPUs are there (None: no
    driver read)."""
    driver = facts.get("driver")
    return f"the node's driver {driver} answered" if isinstance(driver, str) and driver not in ("", NONE) else None


def bears_on_a_fault(facts: GpuFacts) -> bool:
    """Whether any field a rule of the partial judgement reads is recorded (a driver read among them: beside it the
    GPUs' unread health warns, FACTS.md "How unknown is judged")."""
    return driver_read(facts) is not None or any(facts.get(k) not in (None, NONE) for k in ("xid_events", "sxid_events", "driver_errors", "cuda_init_error",
                                                         "kernels", "cuda_errors")) or bool(
        facts.get("cuda_available") is not None or (facts.get("capabilities") and facts.get("arch_list") is not None)
        or (facts.get("driver") and facts.get("torch_cuda")) or torch_misses_cuda(facts)
        or aer.judgeable(facts.get("pcie_aer_events")) or fabricmanager.shows_fault(facts, []))
