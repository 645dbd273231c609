# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Wording defects blind translators found (out-mend3), fixed by class; no verdict changes:
- a CUDA error decoded by its words is said with the number the program printed for it (CUDA 10.0's 39 for today's
  214: CUDA 10.1 renumbered the runtime's errors), or with none where it printed none: never a number it did not print;
- a hang under the job's own NCCL_* variable that NCCL's maintainers say can hang (NCCL_P2P_USE_CUDA_MEMCPY=1)
  names it in the summary and leads the remedy with unsetting it; ranks of one node are not told to set
  NCCL_SOCKET_IFNAME;
- a DataLoader's bus error read by `verify explain` says no rank and no exception type its text does not show; the
  train judge says no "rank None" where the record names no rank."""
from __future__ import annotations

from typing import Any

import pytest

from tests.judging import CORPUS, explained, raw, replayed_report, verdict
from verify.checks import CHECKS
from verify.explain import loaderbus
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

PADDLE = "paddle-v1-lstm-inference-hl-stream-synchronize-check-failed-cuda-error-39-uncorrectable-ecc-host"
MEMCPY = ("resnet-ddp-two-gpus-one-numa-nccl-2.21.5-p2p-use-cuda-memcpy-1-set-by-job-allreduce-seqnum-7-watchdog-600s-"
          "job")
SHM = "mdtvsfa-vqa-training-docker-container-default-64m-dev-shm-unexpected-bus-error-in-dataloader-worker-job"


# ------------------------------------------------------------------ the number a program printed for its CUDA error
@pytest.mark.parametrize("text, said", [
    ("Check failed: cudaSuccess == cudaStat (0 vs. 39) Cuda Error: uncorrectable ECC error encountered", "CUDA error 39 "),
    ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at x.cpp:265", "CUDA error 39 "),
    ("cuCtxCreate returned error 214 (CUDA_ERROR_ECC_UNCORRECTABLE)", "CUDA error 214 "),
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "CUDA error ("),
    ("cuda runtime error (80) : uncorrectable NVLink error detected during the execution", "CUDA error 80 "),
    ("RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution", "CUDA error ("),
    ("RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at x.cpp:51", "CUDA error 38 "),
    ("RuntimeError: cuda runtime error (10) : invalid device ordinal at x.cpp:37", "CUDA error 10 "),
    ("CUDA error: invalid device ordinal", "CUDA error ("),
    ("THCudaCheck FAIL file=x.cpp line=1 error=30 : unknown error", "CUDA error 30 "),
    ("cudaErrorSystemNotReady", "CUDA error ("),
    ("CUDA error 802: system not yet initialized", "CUDA error 802 "),
])
def test_a_decoded_cuda_error_is_said_with_the_number_printed_or_none(text, said):
    decoded = cuda_errors.decode(text)
    assert decoded is not None
    cause = decoded.cause_in(text)
    assert cause.startswith(said), cause


def test_a_cause_that_names_no_number_is_left_as_it_is():
    text = "CUDA error: an illegal memory access was encountered"
    decoded = cuda_errors.decode(text)
    assert decoded is not None and decoded.cause_in(text) == decoded.cause


def test_paddles_error_39_is_said_as_39_on_both_roads():
    report = replayed_report(CORPUS / PADDLE / "facts")
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    r = explained(raw(PADDLE))
    for summary in (gpu["summary"], r.summary):
        assert "CUDA error 39 (uncorrectable ECC error encountered)" in summary and "214" not in summary, summary
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host")


# ------------------------------------------------------------------ the job's own NCCL setting that hangs
WATCHDOG = ("all_reduce: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
            "NumelIn=42516042, NumelOut=42516042, Timeout(ms)=600000) ran for 600089 milliseconds before timing out.")


def _nccl(**facts: Any) -> Any:
    return judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, "error": WATCHDOG, "rank": 1, "world_size": 2,
                                  "nodes": 1, **facts}, Options())


def test_a_hang_under_the_jobs_memcpy_setting_names_it_first():
    r = _nccl(nccl_env={"NCCL_P2P_USE_CUDA_MEMCPY": "1"})
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "job")
    assert "the job set NCCL_P2P_USE_CUDA_MEMCPY=1" in r.summary
    assert (r.remedy or "").startswith("Unset NCCL_P2P_USE_CUDA_MEMCPY in the job"), r.remedy
    assert "NCCL_SOCKET_IFNAME" not in (r.remedy or "")        # one node: no interface between ranks


def test_a_hang_without_it_or_with_it_off_says_nothing_of_it():
    for env in ({}, {"NCCL_P2P_USE_CUDA_MEMCPY": "0"}):
        r = _nccl(nccl_env=env)
        assert verdict(r) == ("fail", "NCCL_TIMEOUT", "job")
        assert "NCCL_P2P_USE_CUDA_MEMCPY" not in r.summary + (r.remedy or ""), r.remedy


def test_ranks_across_nodes_are_still_told_the_interface():
    r = _nccl(nodes=2, nccl_env={})
    assert "NCCL_SOCKET_IFNAME" in (r.remedy or "")


def test_explain_names_the_setting_where_nccls_log_shows_it():
    text = "node1:100:100 [1] NCCL INFO NCCL_P2P_USE_CUDA_MEMCPY set by environment to 1\n" + raw(MEMCPY)
    r = explained(text)
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "job")
    assert (r.remedy or "").startswith("Unset NCCL_P2P_USE_CUDA_MEMCPY"), r.remedy
    # the corpus's excerpt shows no variable: explain names none it did not read
    assert "NCCL_P2P_USE_CUDA_MEMCPY" not in (explained(raw(MEMCPY)).remedy or "")


# ------------------------------------------------------------------ no rank or exception type the text does not show
def test_a_bus_error_without_rank_or_exception_says_neither():
    r = explained(raw(SHM))
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job")
    assert "rank" not in r.summary and "RuntimeError" not in r.summary, r.summary
    failure = loaderbus.parse(raw(SHM))["failures"][0]
    assert failure["rank"] is None and failure["node"] is None and failure["type"] == "Bus error"


def test_a_printed_exception_and_signal_are_kept():
    text = "RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error.\n"
    assert loaderbus.parse(text)["failures"][0]["type"] == "RuntimeError"
    killed = "DataLoader worker (pid 9) is killed by signal: Killed.\n"
    assert loaderbus.parse(killed)["failures"][0]["type"] == "Killed"


def test_the_train_judge_says_no_rank_none():
    r = judge(CHECKS["train"], {"failures": [{"rank": None, "node": None, "phase": "data", "type": "Bus error",
                                              "message": "x", "shm_error": "x"}]}, Options())
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job") and "rank None" not in r.summary + " ".join(r.details)
