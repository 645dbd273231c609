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

# aws-ofi-nccl's RDMA protocol (nccl_ofi_rdma.c, 1.7 on: `Unexpected number of remote rails for dev %d. Expected %d but
# got %d`), which it hands NCCL as an internal error: the two ends of a connection see a different number of EFA
# devices per GPU (pods of one job given different shares of the instance's devices: aws-ofi-nccl's rail asymmetry),
# the same class as the ring: the ranks' views differ, no device's health is shown
RAILS_DISAGREE = re.compile(r"Unexpected number of remote rails for dev \d+\. Expected \d+ but got \d+")
RAILS_REMEDY = ("Give every rank the same network devices: request all of the instance's EFA devices in each pod "
                "(vpc.amazonaws.com/efa equal to the instance's count) or the same share on every node, and compare "
                "`fi_info -p efa` per node; a node that lists fewer than its peers is the one to check.")


def disagreement(said: str) -> tuple[str, str] | None:
    """The ranks' views of the job differ (NCCL's ring check, aws-ofi-nccl's rail count): what shows it and the fix."""
    if ring := RING_DISAGREES.search(said):
        return (f"NCCL's ring check failed ({ring.group(0)}): the ranks built different rings from their own views "
                "of the topology, a launch whose ranks differ, not the node's", RING_REMEDY)
    if rails := RAILS_DISAGREE.search(said):
        return (f"aws-ofi-nccl's peers disagree on their rails ({rails.group(0)}): the two ends were given different "
                "numbers of EFA devices, a launch whose ranks differ, not the node's", RAILS_REMEDY)
    return None
