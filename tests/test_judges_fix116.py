"""Issue 35, batches 116 (AWS EFA/libfabric/TCPX) and 120 (NCCL failures from frameworks): a net plugin's set-up call
refused as an invalid argument with nothing against the node is the job's to read, never a drain; NCCL meeting CUDA's
217 (no peer access between the GPUs) is the image's NCCL, never the node's. Both on both roads, with lines quoted from
the batches' real excerpts (slugs named)."""
from __future__ import annotations

import copy
import json

import pytest

from tests.helpers import ROOT
from verify import explain as ex
from verify.checks import CHECKS
from verify.checks.nccl import ofiinval, peeraccess
from verify.judging import judge
from verify.options import Options
from verify.result import CheckResult

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"

# v100-horovod-32-ranks-four-hosts-efa-ring-via-aws-libfabric-then-ofi-couldnt-open-av-einval-on-one-host-hang
HOROVOD = "v100-horovod-32-ranks-four-hosts-efa-ring-via-aws-libfabric-then-ofi-couldnt-open-av-einval-on-one-host-hang"
AV_EINVAL = """\
[1,7]<stdout>:ip-172-32-38-1:21471:22316 [7] NCCL INFO Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0
[1,31]<stdout>:ip-172-32-36-209:8800:9549 [7] NCCL INFO NET/OFI No NIC info for dev 0
[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument
"""
# efa-0-dmesg-alloc-pd-comp-status-1-err-12-ofi-couldnt-open-av-einval-two-node-message-transfer-hang-efa-1.5
ADMIN_REFUSED = "[ 1632.420956] infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) comp_status 1 err -12\n"

# l4-x4-vllm-ci-image-dp2-nccl-2.27.3-cumem-host-shm-cuda-217-peer-access-not-supported-cumem-host-enable-0-passes
L4 = "l4-x4-vllm-ci-image-dp2-nccl-2.27.3-cumem-host-shm-cuda-217-peer-access-not-supported-cumem-host-enable-0-passes"
PEER_217 = ("[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access "
            "is not supported between these two devices'\n")


def _facts(slug: str) -> dict:
    return json.loads((CORPUS / slug / "facts" / "nccl.json").read_text())["facts"]


def _verdict(r: CheckResult) -> tuple:
    return r.status, r.code, r.owner


def test_a_plugin_call_refused_as_invalid_with_nothing_against_the_node_is_the_jobs():
    """Class: aws-ofi-nccl's `Couldn't open AV. RC: -22, ERROR: Invalid argument` (libfabric refusing what the plugin
    handed it) after rings formed over NET/AWS Libfabric, no EFA driver line: fail, the job's, on both roads."""
    r = judge(CHECKS["nccl"], _facts(HOROVOD), Options())
    assert _verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "Couldn't open AV" in r.summary
    e = ex.explain_text(AV_EINVAL, "horovod.log", Options())
    assert (e.name, *_verdict(e)) == ("nccl", "fail", "NCCL_FAILED", "job"), e.summary


def test_the_same_refusal_beside_the_efa_drivers_own_refusal_stays_the_hosts():
    """No weaker verdict where the node is shown: the EFA kernel driver refusing ALLOC_PD decides first (efa.py)."""
    e = ex.explain_text(AV_EINVAL + ADMIN_REFUSED, "horovod.log", Options())
    assert _verdict(e) == ("fail", "NCCL_FAILED", "host"), e.summary
    facts = copy.deepcopy(_facts(HOROVOD))
    facts["error"] += " | " + ADMIN_REFUSED.strip()
    assert _verdict(judge(CHECKS["nccl"], facts, Options())) == ("fail", "NCCL_FAILED", "host")


def test_a_timeout_after_the_refusal_is_the_jobs_timeout():
    facts = copy.deepcopy(_facts(HOROVOD))
    facts["error"] = ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, "
                      "Timeout(ms)=600000) ran for 600012 milliseconds before timing out. | " + AV_EINVAL.splitlines()[-1])
    assert _verdict(judge(CHECKS["nccl"], facts, Options())) == ("fail", "NCCL_TIMEOUT", "job")


@pytest.mark.parametrize("line", [
    # a registration refused so is the image's (plugreg.py): efa-nccl-2.19-plus-libfabric-before-efa-installer-1.29.1-...
    "NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22, Error: Invalid argument",
    # a request that completed with an error is the transport's: libfabric-ofi-nccl-2.28.8-...-undeliverable-rc-113
    "NCCL WARN NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
    # an error code that is not EINVAL names no refused argument
    "NCCL WARN NET/OFI Couldn't open AV. RC: -12, ERROR: Cannot allocate memory",
])
def test_the_rule_takes_only_a_set_up_call_refused_as_invalid(line):
    assert ofiinval.refused(line) is None


def test_nccl_meeting_cuda_217_on_gpus_without_peer_access_is_the_images():
    """Class: NCCL's own path (2.27's cuMem host buffers for SHM) asking for peer access PCIe GPUs do not give, CUDA
    error 217, passing with NCCL_CUMEM_HOST_ENABLE=0: fail, the image's, never a drain, on both roads."""
    r = judge(CHECKS["nccl"], _facts(L4), Options())
    assert _verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary
    assert "NCCL_CUMEM_HOST_ENABLE=0" in (r.remedy or "")
    e = ex.explain_text(PEER_217, "vllm.log", Options())
    assert (e.name, *_verdict(e)) == ("nccl", "fail", "NCCL_FAILED", "image"), e.summary


def test_cuda_217_by_its_words_alone_in_nccls_warn_is_read_as_well():
    facts = copy.deepcopy(_facts(L4))
    facts["error"] = "init: transport/shm.cc:590 NCCL WARN Cuda failure 'peer access is not supported between these two devices'"
    assert _verdict(judge(CHECKS["nccl"], facts, Options())) == ("fail", "NCCL_FAILED", "image")


def test_peer_access_refused_to_a_program_that_is_not_nccl_is_not_this_rule():
    result = CheckResult("nccl", "pass", "")
    assert peeraccess.peer_access_verdict(["RuntimeError: CUDA error: peer access is not supported between these two devices"],
                              "nccl", result) is None



def test_the_same_217_under_torchs_last_error_is_read_on_the_explain_road():
    """torch's wrapper around the l4-x4-vllm-ci-... line (ncclUnhandledCudaError's `Last error:`), no WARN tag."""
    text = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
            "3353, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
            "Cuda failure 217 'peer access is not supported between these two devices'\n")
    e = ex.explain_text(text, "vllm.log", Options())
    assert (e.name, *_verdict(e)) == ("nccl", "fail", "NCCL_FAILED", "image"), e.summary
