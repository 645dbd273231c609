# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's known gaps, fixed by class:
- nccl: a failure's words that say "failed or timed out" (torch's teardown), a watchdog thread ended by an exception,
  ETIMEDOUT's errno text of a call that returned, are no hang; the watchdog's own timeout and a wait that ran out are.
"""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify.checks import nccl
from verify.checks.nccl.hang import is_timeout
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------------- nccl: a timeout said, not guessed
# real lines: https://github.com/wenet-e2e/wenet/issues/959 (refused), https://github.com/Oneflow-Inc/oneflow/issues/3586
# (ETIMEDOUT's retry), https://github.com/huggingface/accelerate/issues/2183 (torch's teardown),
# https://github.com/NVIDIA/nccl-tests/issues/166 (a connect that failed)
REFUSED = "NCCL INFO Call to connect returned Connection refused, retrying"
ETIMEDOUT = "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying"
TEARDOWN = ("[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
            "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
ABORT = ("ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
         "Software caused connection abort")
# https://github.com/hiyouga/LlamaFactory/issues/2424 (the corpus's llama2-7b-lora-... entry), and torch's heartbeat
# monitor (the corpus's xdit-pipefusion-... entry), c10d's store (the corpus's init timeout)
WATCHDOG = ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800572 milliseconds before timing out.")
HEARTBEAT = ("[PG 5 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
             "workMetaList_.size()=3")
STORE = "TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391)."


@pytest.mark.parametrize("error", [f"init: {REFUSED} | {TEARDOWN}", f"init: {ETIMEDOUT} | {ABORT}", TEARDOWN,
                                   "NCCL watchdog thread terminated with exception: NCCL error: remote process exited "
                                   "or there was a network error",
                                   "Exception (either an error or timeout) detected by watchdog at work: 5",
                                   "all_reduce: NCCL error: unhandled system error, WorkNCCL(SeqNum=5, "
                                   "OpType=ALLREDUCE, Timeout(ms)=600000)"])
def test_a_failure_that_says_failed_or_timed_out_is_no_hang(error):
    assert not is_timeout(error)
    r = nccl.judge({"backend": "nccl", "error": error}, Options())
    assert r.status == "fail" and r.code != "NCCL_TIMEOUT", r.summary


@pytest.mark.parametrize("error", [f"all_reduce: {WATCHDOG}", f"[PG 5 Rank 0] {HEARTBEAT}", f"init: {STORE}",
                                   f"all_reduce: {WATCHDOG} | {TEARDOWN}",
                                   "init: DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients "
                                   "joined.", "all_reduce: hangs (never completes) whenever GPU 3 is in the group"])
def test_a_watchdog_timeout_or_a_wait_that_ran_out_is_a_hang(error):
    assert is_timeout(error)
    assert nccl.judge({"backend": "nccl", "error": error}, Options()).code == "NCCL_TIMEOUT"


def test_connection_refused_at_init_with_torch_s_teardown_was_a_hang_and_is_now_a_failure():
    r = nccl.judge({"backend": "nccl", "error": f"init: {REFUSED} | {TEARDOWN}"}, Options())
    assert verdict(r)[:2] == ("fail", "NCCL_FAILED") and "hung" not in r.summary
