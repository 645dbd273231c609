"""Issue 35's thirty-first corpus batch (NCCL 2.21-2.29 logs as jobs print them, translated blind): the readers and
rules it called for, by class (the entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- `Connection timed out` (ETIMEDOUT, errno 110) of a library call NCCL made (`Call to ibv_modify_qp failed with 110
  Connection timed out`) is a call that failed and returned: NCCL_FAILED, never a hang (NCCL_TIMEOUT).
- torch's ProcessGroupNCCL heartbeat monitor (`Heartbeat monitor timed out!`: the watchdog itself stopped) is read like
  its watchdog: in a job's own log, with nothing recorded against the node, the job's; in this verify's own run the
  hang stays the node's to examine.
- libibverbs' own words for a queue pair's error events (`local access violation work queue error`, `invalid request
  local work queue error`, `local work queue catastrophic error`) are adapter errors under the job, as NCCL prints
  them (ibv_event_type_str): the mirror of a local protection error (GPUDirect RDMA refused on the PCIe path).
- `verify explain`: a WARN of a call that failed (`NCCL WARN Call to ibv_reg_mr_iova2 failed ...`) after which NCCL
  logged nothing (the excerpt ends, or the program's traceback follows) is the failure; a verbs plugin's own name
  for its transport (`NET/IBP:Got completion ...`) is read; nccl-tests' header padded to the table's width is no
  terminal's wrap.
"""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def _nccl(**facts):
    base = {"backend": "nccl", "distributed": True, "nccl_available": True, "sizes": None, "world_size": 2}
    return judge(CHECKS["nccl"], {**base, **facts}, Options())


MODIFY_QP = ("h-01:4940:4951 [0] ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on "
             "dev mlx5_3:1, curr state INIT, next state RTR, local GID index 3")


def test_a_call_that_returned_etimedout_is_a_failure_not_a_hang_handmade():
    r = _nccl(error=f"all_reduce: {MODIFY_QP}", nccl_log={"ib_error": MODIFY_QP.split("NCCL WARN ")[1], "proof": [MODIFY_QP]})
    assert (r.status, r.code) == ("fail", "NCCL_FAILED"), r.summary
    hung = _nccl(error="all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) "
                       "ran for 600000 milliseconds before timing out")
    assert hung.code == "NCCL_TIMEOUT"


HEARTBEAT = "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 5 Rank 0] Heartbeat monitor timed out! Process will be " \
            "terminated after dumping debug info. workMetaList_.size()=3"


@pytest.mark.parametrize("mode, owner", [
    ("a job's pipeline-parallel inference (launcher not shown)", "job"),
    (None, "job"),
    ("8 local process(es), one per GPU", "host"),
    (" 8 Local processes, one per GPU", "host"),          # respelt: grouplayout's one reading of verify's local ranks
    ("torchrun group: rank 1 of 8 (local rank 1), 10.0.0.1:29500", "host"),
], ids=["job-log", "no-mode", "verify-local", "verify-local-respelt", "verify-torchrun"])
def test_torch_s_heartbeat_monitor_in_a_job_s_log_is_the_job_s_handmade(mode, owner):
    r = _nccl(error=f"all_reduce: {HEARTBEAT}", mode=mode, world_size=8)
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_TIMEOUT", owner), r.summary


@pytest.mark.parametrize("event", ["local access violation work queue error", "invalid request local work queue error",
                                   "local work queue catastrophic error", "SRQ catastrophic error"])
def test_libibverbs_own_words_for_a_queue_pair_s_error_are_an_adapter_error_handmade(event):
    line = f"node201:1:2 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : {event}"
    r = _nccl(error=f"all_reduce: {line}", nccl_log={"proof": [line]})
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "host"), r.summary
    assert "adapter reported an error" in r.summary
    benign = _nccl(error="all_reduce: node201:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : GID table change")
    assert "adapter reported an error" not in benign.summary


TRACEBACK = """[rank3]:   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2624
[rank3]:     work = group.allgather_into_tensor_coalesced(outputs, inputs)
"""


@pytest.mark.parametrize("text", [
    "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument \n" + TRACEBACK,
    "[2026-03-13 22:26:02] host-01:XXXXXX [5] " + MODIFY_QP.split("] ", 1)[1] + "\n",
    "h:1:2 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE ; OOB eth0:10.0.0.1<0>\n" + MODIFY_QP + "\n",
], ids=["then-traceback", "timestamped-alone", "after-info"])
def test_a_failed_call_nccl_logged_nothing_after_is_the_failure(text):
    r = ex.explain_text(text, "nccl.log", Options())
    assert (r.name, r.status, r.code) == ("nccl", "fail", "NCCL_FAILED"), r.summary


def test_a_failed_call_nccl_went_on_after_is_no_failure():
    text = MODIFY_QP + "\nh:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n" \
        "h:1:2 [0] NCCL INFO Using network IB\n"
    r = ex.explain_text(text, "nccl.log", Options())
    assert r.status != "fail", r.summary


def test_a_verbs_plugin_s_own_transport_name_is_read():
    line = "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)"
    r = ex.explain_text(line + "\n", "nccl.log", Options())
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "host"), r.summary


def test_explain_reads_torch_s_heartbeat_monitor_as_a_job_s_hang():
    r = ex.explain_text(HEARTBEAT + "\n", "train.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_TIMEOUT", "job"), r.summary


def _padded(line: str, width: int) -> str:
    return line.ljust(width)


def test_an_nccl_tests_header_padded_to_the_table_s_width_is_no_terminal_wrap():
    head = ["#  Rank  0 Group  0 Pid  14840 on gb-171 device  3 [0x01] NVIDIA Graphics Device", "#",
            "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong",
            "#        (B)    (elements)" + " " * 31 + "(us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"]
    rows = ["   536870912     134217728     float     sum      -1   1806.7  297.16  586.06      0   1835.9  292.43  "
            "576.74      0",
            "  1073741824     268435456     float     sum      -1   3108.8  345.38  681.17      0   2924.7  367.13  "
            "724.06      0"]
    width = max(len(line) for line in head + rows)
    text = "\n".join([head[0], head[1], *(_padded(line, width) for line in head[2:] + rows)]) + "\n# Avg bus bandwidth : 1\n"
    r = ex.explain_text(text, "nccl-tests.log", Options())
    assert (r.name, r.status) == ("nccl", "pass"), r.summary
    assert "2 sizes" in r.summary
