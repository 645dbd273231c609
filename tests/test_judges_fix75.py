# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventy-fifth and seventy-ninth corpus batches (NCCL logs, nccl-tests), fixed by class:
- libfabric's EFA provider finding no device (`fi_getinfo: provider efa output empty list`) above an aws-ofi-nccl
  failure: the process was given no EFA device (a container or task's launch, an instance without EFA): the job's,
  never a drain; NCCL's reader keeps the libfabric line as proof, and `verify explain` reads the plugin's failed call
  (`NET/OFI Creating new endpoint ... failed: Invalid argument`) with nothing after it as the failure;
- NCCL's kernels sized for more shared memory than the GPU gives (`ncclMaxSharedMem 82240 exceeds device/fn
  maxSharedMem 79856`) and CUDA then refusing the launch (`Cuda failure 1 'invalid argument'`): the image's NCCL
  release does not know the GPU;
- an init failure on a send or receive of NCCL's socket layer (`socketProgressOpt: Call to send to ... failed :
  Connection reset by peer`) is the bootstrap's, as `misc/socket.cc` quoted with it is: the job's setting where
  NCCL_SOCKET_IFNAME is unset; a connect that failed (`socketStartConnect`) is not read so;
- torch's heartbeat monitor in its other wording (`ProcessGroupNCCL's watchdog got stuck for 480 seconds`), and
  nccl-tests' `Test CUDA failure`, are failures `verify explain` reads, as their facts are."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.checks.nccl import ncclog
from verify.options import Options

pytestmark = pytest.mark.unit

# aws-container-ip-10-36-29-253-cloudwatch-prefixed-nccl-2.21.5-libfabric-efa-provider-empty-list-ofi-endpoint-invalid-argument
_EMPTY = ("libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa output empty list")
_ENDPOINT = ("nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for domain 0x7f9befa99380 failed: "
             "Invalid argument")
_CLOUDWATCH = (
    "  | 2025-05-16T16:39:51.208-07:00 | ip-10-36-29-253:79:79 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    "  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0> | "
    "ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0>\n"
    "  | 2025-05-16T16:39:51.208-07:00 | NCCL version 2.21.5+cuda12.8\n"
    f"  | 2025-05-16T16:39:51.208-07:00{_EMPTY} | {_EMPTY}\n{_ENDPOINT}\n")


def _nccl(error: str, text: str, **more) -> dict:
    return {"backend": "nccl", "nccl_version": "2.21.5", "error": error, "nccl_log": ncclog.parse(text), **more}


def test_an_ofi_failure_under_libfabric_s_empty_efa_provider_is_the_job_s():
    facts = _nccl(f"init: {_ENDPOINT}", _CLOUDWATCH)
    assert "fi_getinfo: provider efa output empty list" in facts["nccl_log"]["proof"]
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "EFA devices" in (r.remedy or "")


def test_the_cloudwatch_log_explained_gives_the_same_verdict():
    r = explained(_CLOUDWATCH)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


def test_an_ofi_failure_without_the_empty_provider_drains_nothing():
    """The endpoint refused as an invalid argument, with no empty provider beside it: still a failure, and nothing
    shows the node at fault (the plugin's EINVAL refusal, verify/checks/nccl/ofiinval.py): never a drain."""
    r = nccl.judge(_nccl(f"init: {_ENDPOINT}", _CLOUDWATCH.replace(_EMPTY, "libfabric: nothing")), Options())
    assert r.status == "fail" and r.owner == "job", (r.owner, r.summary)


def test_the_efa_device_s_own_refusal_still_wins_over_an_empty_provider():
    text = _CLOUDWATCH + ("infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) comp_status 1 err -12\n")
    r = nccl.judge(_nccl(f"init: {_ENDPOINT}", text), Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary


# rtx5090-x2-nccl-2.25.1-all-reduce-cuda-invalid-argument-maxsharedmem-82240-exceeds-79856-fixed-in-2.26
_SHARED = ("GENOA-06:4766:4766 [0] NCCL INFO NCCL version 2.25.1+cuda12.8\n"
           "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
           "GENOA-06:4766:4781 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
           "GENOA-06:4766:4780 [0] NCCL INFO Using network Socket\n"
           "GENOA-06:4766:4766 [1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n"
           "GENOA-06:4766:4766 [1] NCCL INFO group.cc:242 -> 1\n")


def test_a_launch_refused_after_nccl_asked_more_shared_memory_than_the_gpu_gives_is_the_image_s():
    facts = _nccl("all_reduce: enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'", _SHARED,
                  world_size=2, nodes=1)
    assert facts["nccl_log"]["proof"].count("ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856") == 1
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary
    r = explained(_SHARED)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "image"), r.summary


def test_the_shared_memory_line_without_a_refused_launch_decides_nothing():
    facts = _nccl("all_reduce: NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with status=12 opcode=0 len=0 "
                  "vendor err 129 (Recv)", _SHARED.replace("Cuda failure 1 'invalid argument'", "nothing"))
    assert nccl.judge(facts, Options()).owner == "host"


# gpu-server320-runtime-and-nccl-timestamped-bootstrap-send-connection-reset-by-peer-intranode-no-magic-warning
def test_an_init_send_of_nccl_s_socket_layer_reset_by_its_peer_is_the_bootstrap_s():
    facts = {"backend": "nccl", "error": "init: socketProgressOpt: Call to send to 10.44.137.149<52905> failed : "
             "Connection reset by peer"}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "NCCL_SOCKET_IFNAME" in (r.remedy or "")


def test_a_connect_that_failed_is_not_read_as_the_bootstrap_s():
    # h100-2x8-sglang-0.4.4-ibext-v8-gdrdma-channels-then-socketstartconnect-10.0.0.82-software-caused-connection-abort:
    # the network transport's connect (transport/net.cc) between two nodes, the host's
    facts = {"backend": "nccl", "error": "init: socket.c:485 NCCL WARN socketStartConnect: Connect to "
             "10.0.0.82<38455> failed : Software caused connection abort"}
    assert nccl.judge(facts, Options()).owner != "job"


# vlm-r1-grpo-rank6-heartbeat-monitor-watchdog-stuck-480s-terminating-process-no-cause-in-log
def test_torch_s_watchdog_stuck_is_a_hang_verify_explain_reads():
    text = ("[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
            "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
            "collectives.\n[rank6]:[F429 14:03:49.385461578 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID "
            "0(default_pg) Rank 6] Terminating the process after attempting to dump debug info\n")
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_TIMEOUT", "job"), r.summary


# h800-2x8-nccl-2.28.7-alltoall-device-api-nvl-kernel-across-two-nodes-illegal-memory-access
def test_nccl_tests_cuda_failure_is_read_as_its_facts_are():
    text = ("# Collective test starting: alltoall_perf\n#       size         count      type   redop    root     "
            "time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
            "     2097152         32768     float    none      -1 node0: Test CUDA failure common.cu:389 'an illegal "
            "memory access was encountered'\n .. node0 pid 62767: Test failure common.cu:519\n")
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner
