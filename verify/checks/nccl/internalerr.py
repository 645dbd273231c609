"""ncclInternalError (nccl.h: "internal check failed: either a bug in NCCL or due to memory corruption"), in every
wording its callers print: NCCL's own name and, from 2.12 on, ncclGetErrorString's `internal error - please report
this issue to the NCCL developers`; before that ncclGetErrorString said `internal error` alone, which nccl-tests
prints quoted after its file and line (`Test NCCL failure common.cu:775 'internal error'`, NVIDIA/nccl-tests#41) and
torch after its own (`NCCL error in: ProcessGroupNCCL.cpp:825, internal error, NCCL version 2.7.8`). The bare words
in a sentence are not read: other errors name an "internal error" of their own."""
from __future__ import annotations

import re

INTERNAL = re.compile(r"ncclInternalError|internal error - please report this issue to the NCCL developers|"
                      r"\bNCCL (?:failure|error) \S+:\d+ 'internal error'|"
                      r"\bNCCL error in: \S+:\d+, internal error(?:,|$)", re.MULTILINE)
