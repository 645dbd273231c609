"""NCCL refusing how it was called (ncclInvalidUsage / ncclInvalidArgument, nccl.h), as NCCL, torch and nccl-tests
name them: the program's use of NCCL (two ranks on one GPU: `Duplicate GPU detected`), never the node's.

Where the refused call is torch's own symmetric memory's (issue 35, batches 249 and 271: `NCCL error in:
.../c10d/symm_mem/nccl_devcomm_manager.hpp:73, invalid usage`, `.../symm_mem/NCCLSymmetricMemory.cu:174, invalid
argument`), the arguments were torch's, not the program's: torch's build does not use the image's NCCL as that NCCL
wants (the image's)."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

MISUSE = re.compile(r"ncclInvalidUsage|ncclInvalidArgument|Duplicate GPU detected[^|]*|\binvalid (?:usage|argument) "
                    r"\(run with NCCL_DEBUG")
# the raising site torch prints (`NCCL error in: <file>:<line>,`) inside its symmetric-memory sources
_TORCH_SYMM_MEM = re.compile(r"NCCL error in: \S*/c10d/symm_mem/\S+:\d+,")


def misuse_verdict(said: str, error: str, failed: str, result: CheckResult) -> CheckResult | None:
    if not (misuse := MISUSE.search(said)):
        return None
    if site := _TORCH_SYMM_MEM.search(said):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: {error}; NCCL refused torch's own symmetric-memory call "
                              f"({site.group(0).rstrip(',')}, {misuse.group(0).strip()}): torch's build and the image's "
                              "NCCL do not fit", "Use a torch build whose symmetric memory supports the image's NCCL "
                              "(or turn symmetric memory off in the program); NCCL_DEBUG=WARN names the call.", "image")
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: {error}; NCCL refused how the program used it "
                          f"({misuse.group(0).strip()}): the job's", "Give each rank its own GPU (set the device "
                          "from LOCAL_RANK before init_process_group; check CUDA_VISIBLE_DEVICES and the "
                          "launcher's GPU binding) and pass NCCL valid arguments; NCCL_DEBUG=WARN names the call.",
                          "job")
