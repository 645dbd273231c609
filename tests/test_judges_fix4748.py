# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's forty-seventh (Blackwell) and forty-eighth (NCCL failing mid-run) corpus batches, fixed by class:
- CUDA error 3 (`initialization error`, CUDA_ERROR_NOT_INITIALIZED) as the answer to CUDA's first call, beside a GPU
  NVML reads: the CUDA driver cannot bring the GPU up on this node: DRIVER_ERROR (host), through the facts and
  `verify explain` alike. A running program's bare `CUDA error: initialization error` (a process forked after CUDA
  started, the job's) is not decoded;
- NCCL that could not create its /dev/shm segment, quoted without an errno (NCCL before 2.12 prints none on that
  line; its cause is the posix_fallocate line above): SHM_TOO_SMALL (job), as with `No space left on device`; a
  refused permission, which says its errno, is not;
- a collective that failed mid-run because the peer closed its connection in order (ncclRemoteError, `Connection
  closed by remote peer`): the peer's process exited, the network delivered the close: NCCL_FAILED (job), never a
  drain of this node; a connection reset, and a close while the group was still forming, are not this rule;
- torch's `Detected mismatch between collectives on ranks` (the ranks called different collectives, shapes or
  dtypes): NCCL_FAILED (job), read by `verify explain` too;
- torch's `WorkNCCL(..., Timeout(ms)=600000)` names a collective's limit: on an async exception's line it is no
  timeout (the exception is read), while the watchdog's own timeout line still is one."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu, nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ CUDA error 3 at CUDA's first call
CLEAN_GPU = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:1B:00.0", "lost": False,
             "nvml_errors": {}, "ecc_volatile_uncorrectable": 0}


@pytest.mark.parametrize("error", [
    "cuInit -> 3 initialization error",
    "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 3: initialization error",
    "cuInit failed: CUDA_ERROR_NOT_INITIALIZED",
])
def test_cuda_error_3_beside_a_gpu_nvml_reads_is_the_node_s_driver(error):
    facts = {"nvml_error": "none", "driver": "570.133.20", "devices": [CLEAN_GPU], "cuda_init_error": error}
    assert verdict(gpu.judge(facts, Options())) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("text", [
    # torch's start-up warning as a program prints it, and cuda-samples' checkCudaErrors
    "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: Unexpected "
    "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
    "already set an error? Error 3: initialization error (Triggered internally at "
    "/opt/conda/conda-bld/pytorch/c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0",
    "CUDA error at deviceQuery.cpp:45 code=3(cudaErrorInitializationError) \"cudaGetDeviceCount(&deviceCount)\"",
])
def test_cuda_error_3_explained_is_the_node_s_driver(text):
    assert verdict(explained(text)) == ("fail", "DRIVER_ERROR", "host")


def test_a_running_program_s_bare_initialization_error_drains_nothing():
    # a process forked after CUDA started meets the same words: no number, no name, not decoded
    text = "RuntimeError: CUDA error: initialization error"
    assert gpu.judge({"cuda_errors": [{"index": None, "text": text}]}, Options()).owner != "host"
    assert explained("Traceback (most recent call last):\n" + text).owner != "host"


# ------------------------------------------------------------------ /dev/shm: a segment NCCL could not create
@pytest.mark.parametrize("line", [
    "Error while creating shared memory segment /dev/shm/nccl-Xq3v9a (size 9637888)",
    "node7:2211:2290 [1] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
    "nccl-shm-recv-4c1d9e2a07b3f6e1-0-2-1 (size 4194304)",
])
def test_a_segment_nccl_could_not_create_without_errno_is_dev_shm(line):
    r = nccl.judge({"backend": "nccl", "error": line}, Options())
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job"), r.summary
    assert verdict(explained(line)) == ("fail", "SHM_TOO_SMALL", "job")


def test_another_program_s_full_dev_shm_is_not_read_as_nccl_s():
    r = explained("OSError: [Errno 28] No space left on device: '/dev/shm/torch_4121_2287619102_0'")
    assert r.name != "nccl", r.summary


def test_a_segment_refused_for_another_errno_is_not_dev_shm_s_size():
    line = ("node7:2211:2290 [1] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment "
            "/dev/shm/nccl-Xq3v9a (size 9637888), error: Permission denied (13)")
    assert nccl.judge({"backend": "nccl", "error": line}, Options()).code != "SHM_TOO_SMALL"


# ------------------------------------------------------------------ a peer that closed its connection mid-run
REMOTE = ("[rank3]:[E1102 08:14:55.120931204 ProcessGroupNCCL.cpp:616] [Rank 3] Collective WorkNCCL(SeqNum=1207, "
          "OpType=ALLREDUCE, NumelIn=4194304, NumelOut=4194304, Timeout(ms)=1800000) raised the following async "
          "exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5\n"
          "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
          "Last error:\n"
          "{last}\n")


def test_a_peer_that_closed_its_connection_mid_run_is_the_job_s():
    last = "socketProgress: Connection closed by remote peer gpu-node-12<45811>"
    facts = {"backend": "nccl", "rank": 3, "error": "all_reduce: NCCL error: remote process exited or there was a "
             "network error, NCCL version 2.20.5 ncclRemoteError: A call failed possibly due to a network error or a "
             f"remote process exiting prematurely. Last error: {last}"}
    assert verdict(nccl.judge(facts, Options())) == ("fail", "NCCL_FAILED", "job")
    r = explained(REMOTE.format(last=last))
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_gloo_s_peer_closed_mid_run_is_the_job_s_as_well():
    error = ("all_reduce: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by "
             "peer [10.1.0.7]:22617")
    assert verdict(nccl.judge({"backend": "gloo", "error": error}, Options())) == ("fail", "NCCL_FAILED", "job")


def test_a_reset_or_a_close_while_the_group_forms_is_not_a_peer_that_exited():
    reset = "socketProgressOpt: Call to recv from 10.1.0.7<33759> failed : Connection reset by peer"
    assert explained(REMOTE.format(last=reset)).owner == "host"
    forming = ("init: misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.1.0.7<36138>; "
               "bootstrap.cc:701 -> 6")
    r = nccl.judge({"backend": "nccl", "error": forming}, Options())
    assert "closed its connection mid-run" not in r.summary, r.summary


def test_the_watchdog_s_own_timeout_line_is_still_a_timeout():
    line = ("[rank5]:[E1102 08:44:55.120931204 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=1207, OpType=ALLREDUCE, NumelIn=4194304, NumelOut=4194304, "
            "Timeout(ms)=1800000) ran for 1800011 milliseconds before timing out.")
    assert explained(line).code == "NCCL_TIMEOUT"


# ------------------------------------------------------------------ ranks that called different collectives
MISMATCH = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=12, OpType=BROADCAST, TensorShape=[1024], TensorDtypes=Float, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)), but Rank 1 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[1024], TensorDtypes=Float, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)).")


def test_a_mismatch_between_collectives_is_the_program_s():
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 1, "error": "broadcast: " + MISMATCH}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert verdict(explained(MISMATCH)) == ("fail", "NCCL_FAILED", "job")
