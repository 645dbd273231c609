"""Issue 35's hundred-and-sixth corpus batch (AWS EFA and Libfabric output), fixed by class:
- libfabric's EFA completion status REMOTE_ERROR_BAD_DEST_QPN, as aws-ofi-nccl prints it (`NET/OFI Request ...
  completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) ...`): the peer's device answered
  that no such queue pair exists, the peer's process gone (libfabric's prov/efa/src/efa_strerror.c: "typically
  caused by a crashed peer"; here the pods' OOM kill): a casualty, fail NCCL_FAILED owned by the job, never a drain
  (eks-nccl-tests-8gb-pod-memory-limit-oom-surfaces-as-ofi-invalid-receiver-qpn-send-ctrl-job-not-fabric), as the
  4126 `Unresponsive receiver (reachable by EFA device but handshake failed)` already was (tests/test_judges_fix94.py).
  What names this node or its network (the EFA device refusing its driver's command, an address vector insert that
  fails) still decides first, the host's.
The batch's other mismatches need what facts schema 3 cannot carry (Libfabric's per-provider answer, a verbs device
listed but not openable, a kernel module failing at probe, which libnccl a process loaded): strict expected failures
(tests/test_gpu_rules.py KNOWN_MISMATCHES, tests/test_explain.py EXPLAIN_MISMATCHES)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, verdict
from verify.checks.nccl import casualty

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ EFA BAD_DEST_QPN: the peer's process is gone
# eks-nccl-tests-8gb-pod-memory-limit-oom-surfaces-as-ofi-invalid-receiver-qpn-send-ctrl-job-not-fabric
QPN = ("NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) "
       "My EFA addr: fi_addr_efa://[fe80::30:43ff:fe60:456b]:0:657145598 My host id: i-00ee91ea93e985ee0 Peer EFA "
       "addr: fi_addr_efa://[fe80::ed:61ff:fe1d:a3b3]:0:229342137 Peer host id: i-08d8a345a75ab52a0. Completed "
       "length: 0, Request: { dev: 2, size: 0, state: CREATED, type: SEND_CTRL }")
# libfabric's newer wording of the same status (efa_strerror.c since the hint was added)
QPN_NEWER = ("NET/OFI Request 0x7f1 completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN). "
             "This error is typically caused by a crashed peer. Please verify the peer application has not "
             "terminated unexpectedly.")


@pytest.mark.parametrize("error", [QPN, QPN_NEWER], ids=["as-printed", "newer-wording"])
def test_efa_invalid_receiver_qpn_is_a_peer_gone_the_job_s_never_a_drain(error):
    assert nccl_verdict(error=error, efa=True) == ("fail", "NCCL_FAILED", "job")
    assert nccl_verdict(error=error) == ("fail", "NCCL_FAILED", "job")         # EFA not recorded: the line alone decides


def test_the_raw_line_under_mpirun_s_prefix_is_read_the_same():
    r = explained(f"[1,2]<stdout>:test-nccl-worker-0:199:263 [2] process_err_completion:1562 NCCL WARN {QPN}\n")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


def test_a_cuda_failure_beside_it_is_not_read_as_a_casualty():
    assert casualty.peer_casualty(QPN) is not None
    assert casualty.peer_casualty(QPN + " | Cuda failure 'an illegal memory access was encountered'") is None


def test_the_node_s_own_efa_fault_beside_it_still_decides():
    """An EFA device refusing its driver's command (efa_com.c's admin queue) names this node: the host's, first."""
    refused = "infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) comp_status 1 err -12"
    assert nccl_verdict(error=QPN, efa=True, nccl_log={"proof": [refused]}) == ("fail", "NCCL_FAILED", "host")


def test_other_efa_completion_statuses_are_not_read_as_a_peer_gone():
    """Only the status libfabric itself ties to a crashed peer: `Destination ENI is down or does not run EFA` and
    the like are not casualties."""
    for words in ("Invalid address", "Destination ENI is down or does not run EFA", "Receiver not ready"):
        assert casualty.peer_casualty(f"NET/OFI Request 0x1 completed with error. RC: 5. Error: {words}") is None


def test_the_line_under_torch_s_last_error_is_read_the_same():
    """torch's ncclRemoteError quoting it (`Last error:` then the plugin's line): the peer gone decides, the job's."""
    text = ("[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:2027, remote process "
            "exited or there was a network error, NCCL version 2.21.5\n[rank3]: ncclRemoteError: A call failed "
            "possibly due to a network error or a remote process exiting prematurely.\n[rank3]: Last error:\n"
            f"[rank3]: {QPN}\n")
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary
    assert "Invalid receiver queue pair number" in r.summary
