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

# NCCL's ring check (src/graph/rings.cc, ncclBuildRings, every release from 2.4 to 2.30: `Error : ring %d does not
# loop back to start (%d != %d)`, `Error : ring %d does not contain rank %d`), which returns ncclInternalError: each
# rank follows the `next` of the ring every rank computed from its own view of the topology, and the ring does not
# close where the ranks' views differ: NCCL_* variables set on some ranks only (NCCL_IB_HCA, NCCL_HOSTID), different
# NCCL releases, different GPU sets per node. The launch's ranks disagree; no device's health is in it, never a drain.
RING_DISAGREES = re.compile(r"ring \d+ does not (?:loop back to start \(\d+ != \d+\)|contain rank \d+)")
RING_REMEDY = ("Start every rank alike: the same image (one NCCL release), the same NCCL_* variables (NCCL_IB_HCA, "
               "NCCL_HOSTID, NCCL_CUMEM_ENABLE, NCCL_CROSS_NIC) and the same GPUs per node; compare the ranks' "
               "NCCL_DEBUG=INFO topology lines. Where they are the same, a newer NCCL (2.20 fixed a topology read that "
               "gave ranks different rings).")
