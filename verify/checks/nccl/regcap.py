"""An RDMA registration (or queue) that failed for want of what the job asks of the adapter, not for the node's fault
or its memlock limit; and a DMA-BUF registration the node's verbs stack does not offer. Pure.

- `infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12` (the kernel's EFA driver,
  drivers/infiniband/hw/efa/efa_com.c; comp_status 1 is EFA_ADMIN_RESOURCE_ALLOCATION_FAILURE): the pages were
  pinned (a memlock refusal stops in ib_umem_get, before any command reaches the device) and the device had no room
  for one more registration: filled by what the job registers (an all-to-all's buffers per peer,
  NVIDIA/nccl#563), where the failure is that registration's ENOMEM. Another command refused (ALLOC_PD, a process's
  first resource), or a REG_MR refused beside another failure, stays the device's (efa.py).
- a call that pins memory failing with ENOMEM (verify/shared/rdma.py's PINNING_ENOMEM) where the limit is read as
  unlimited: not the limit; the adapter's or kernel's per-process resources (CQs, QPs, MRs) that grow with the
  job's peers ran out (`Call to ibv_create_cq failed with error Cannot allocate memory` at 700 nodes all-to-all,
  all-reduce fine, under `ulimit -l unlimited`: NVIDIA/nccl#1191).
- `Call to ibv_reg_dmabuf_mr failed with error Operation not supported` (misc/ibvwrap.cc, EOPNOTSUPP): the node's
  verbs stack has no DMA-BUF registration, which NCCL is to fall back from (to nvidia-peermem); an NCCL that fails on
  it instead needs what the node does not offer: the image's NCCL (NVIDIA/nccl#778: 2.13 fails, 2.11 runs;
  NCCL_DMABUF_ENABLE=0 works around it).
"""
from __future__ import annotations

import re

from ...facts import UNLIMITED, NcclFacts
from ...result import FAIL, CheckResult
from ...shared import rdma

EFA_MR_FULL = re.compile(r"infiniband [\w.-]+: Failed to process command REG_MR \(opcode \d+\) comp_status 1 err -?\d+")
DMABUF_UNSUPPORTED = re.compile(r"ibv_reg_dmabuf_mr\w* failed with (?:error |95 )?(?:Operation not supported|EOPNOTSUPP)")


def capacity_verdict(facts: NcclFacts, said: str, failed: str, timed_out: bool, result: CheckResult) -> CheckResult | None:
    """The failure's verdict where the registration ran out of what the job asks (the job's) or the image's NCCL
    needs DMA-BUF the node lacks (the image's); None otherwise."""
    text = " | ".join([said, str((facts.get("nccl_log") or {}).get("ofi_error") or "")])
    code = "NCCL_TIMEOUT" if timed_out else "NCCL_FAILED"
    pinned = rdma.pinning_failed(said.replace(" | ", "\n"))
    if pinned and (full := EFA_MR_FULL.search(text)):     # the registration that failed is the one the device refused
        return result.verdict(FAIL, code, f"{failed}; the EFA device had no room for one more memory registration "
                              f"({full.group(0)}: a resource allocation failure after the pages were pinned, not the "
                              "memlock limit): what the job registers (buffers per peer) filled it",
                              "Register less per rank: fewer channels or smaller buffers per peer (NCCL_BUFFSIZE, "
                              "NCCL_NCHANNELS_PER_NET_PEER), or an aws-ofi-nccl that shares registrations; the node "
                              "is not at fault.", "job")
    if pinned and facts.get("memlock_bytes") == UNLIMITED:
        return result.verdict(FAIL, code, f"{failed}; the RDMA call ran out of memory ({pinned}) with the memlock "
                              "limit unlimited: not the limit, the adapter's per-process resources (queues, "
                              "registrations) that grow with the job's peers",
                              "Lower what each rank opens per peer (NCCL_NCHANNELS_PER_NET_PEER, PXN: "
                              "NCCL_PXN_DISABLE=0, a newer NCCL that shares resources) or the job's fan-out; the node "
                              "is not at fault.", "job")
    if unsupported := DMABUF_UNSUPPORTED.search(text):
        return result.verdict(FAIL, code, f"{failed}; NCCL registered GPU memory through DMA-BUF and the node's verbs "
                              f"stack does not offer it ({unsupported.group(0)}): NCCL is to fall back to "
                              "nvidia-peermem, and this NCCL did not", "Run an NCCL whose DMA-BUF fall-back works (or "
                              "the one that ran before it), or set NCCL_DMABUF_ENABLE=0 in the job.", "image")
    return None
