"""Issue 35's ninth and tenth corpus batches (translated blind from real output), fixed by class.

- An RDMA adapter's error event under the job (NCCL's `NET/IB : Got async event : port error`, a local catastrophic
  error, a QP or CQ error) is the host's: the adapter or its link failed. A LID or GID change, a port coming up, are
  events, not errors. Corpus: `ib-async-port-error-on-all-eight-ranks-of-one-node`.
- NCCL refusing the program's use of it (ncclInvalidUsage, ncclInvalidArgument: two ranks on one GPU, `Duplicate GPU
  detected`) is the job's, never the node's. Corpus: `slurm-label-prefix-duplicate-gpu-rank-3-and-0-invalid-usage`.
- NVML's driver/library version mismatch (tests/test_verify_logic.py) and a kernel that ran without a figure
  (tests/test_figures_properties.py) are tested where their rules live.
"""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def failed(error: str, proof: list[str] | None = None):
    facts = {"backend": "nccl", "error": error, "world_size": 16, "nodes": 2,
             "nccl_log": {"proof": proof or []} if proof is not None else None}
    return judge(CHECKS["nccl"], facts, Options())


@pytest.mark.parametrize("event", ["port error", "local catastrophic error", "QP fatal error", "CQ error"])
def test_an_adapter_s_error_event_under_the_job_is_the_host_s(event):
    r = failed(f"all_reduce: NET/IB : Got async event : {event}")
    assert verdict(r) == ("fail", "NCCL_FAILED", "host") and "ibstat" in r.remedy


@pytest.mark.parametrize("event", ["GID table change", "LID change", "port active", "client reregistration"])
def test_an_adapter_s_ordinary_event_names_no_adapter_fault(event):
    r = failed("all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9) ran for 600000 ms",
               [f"NET/IB : Got async event : {event}"])
    assert "reported an error" not in r.summary


@pytest.mark.parametrize("error", [
    "init: ncclInvalidUsage: This usually reflects invalid usage of NCCL library. Last error: Duplicate GPU detected : "
    "rank 3 and rank 0 both on CUDA device 3000",
    "all_reduce: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, invalid usage (run with "
    "NCCL_DEBUG=WARN for details), NCCL version 2.21.5",
    "init: NCCL error: ncclInvalidArgument: invalid argument"])
def test_nccl_refusing_the_program_s_use_of_it_is_the_job_s(error):
    r = failed(error)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "LOCAL_RANK" in r.remedy


def test_an_adapter_s_error_event_in_a_pasted_log_is_read():
    log = ("...-48:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n"
           "...-48:34052:34141 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n")
    assert verdict(ex.explain_text(log, "log.txt", Options())) == ("fail", "NCCL_FAILED", "host")
    benign = "n1:1:2 [0] NCCL INFO NET/IB : Got async event : GID table change\n"
    assert ex.explain_text(benign, "log.txt", Options()).status != "fail"


def gpu(errors):
    facts = {"torch": None, "devices": None, "cuda_errors": [{"index": None, "text": t} for t in errors]}
    return judge(CHECKS["gpu"], facts, Options())


def test_a_program_s_cuda_errors_are_judged_by_the_one_catalog_the_gpu_s_for_the_host_the_program_s_for_the_job():
    """tests/data/real-world/jz-training-cuda-uncorrectable-ecc-then-oom-on-same-node: the GPU's uncorrectable ECC
    (CUDA 214) fails the host, the next job's out of memory on that GPU is its consequence; a healthy host whose
    program ran out of memory or faulted a kernel is never drained (the job's, a warning)."""
    r = gpu(["RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable ECC error "
             "encountered", "RuntimeError: CUDA error: out of memory"])
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host") and "reset the GPU" in r.remedy
    assert verdict(gpu(["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"])) == (
        "warn", "GPU_OUT_OF_MEMORY", "job")
    assert verdict(gpu(["RuntimeError: CUDA error: an illegal memory access was encountered"])) == (
        "warn", "CUDA_KERNEL_FAULT", "job")
    assert verdict(gpu(["CUDA error: uncorrectable NVLink error was detected during the execution"])) == (
        "fail", "NVLINK_ERRORS", "host")
    assert verdict(gpu(["RuntimeError: CUDA error: operation not supported"])) == ("skip", "FACTS_INCOMPLETE", None)


def test_a_program_s_cuda_error_in_a_pasted_traceback_is_read_and_a_refusal_stays_a_refusal():
    trace = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
             "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    assert verdict(ex.explain_text(trace, "log.txt", Options())) == ("fail", "ECC_UNCORRECTABLE", "host")
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79 GiB\n"
    assert verdict(ex.explain_text(oom, "log.txt", Options())) == ("warn", "GPU_OUT_OF_MEMORY", "job")
    refusal = "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n"
    r = ex.explain_text(refusal, "log.txt", Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host") and "CUDA initialisation error" in r.details[0]


def test_nvml_refusing_to_start_is_read_and_only_a_broken_driver_fails_without_an_expectation():
    """NVML_ERROR_LIB_RM_VERSION_MISMATCH (tests/data/real-world/nvml-driver-library-mismatch-kmod-520-userspace-525,
    and the container toolkit's own words for it) proves a driver installed and broken; nvidia-smi failing to reach
    a driver is no GPU, a failure only where GPUs are expected (--expect-gpus, the prolog)."""
    toolkit = ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: ... stderr: "
               "Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver/library "
               "version mismatch: unknown.\n")
    assert verdict(ex.explain_text(toolkit, "log.txt", Options())) == ("fail", "DRIVER_ERROR", "host")
    absent = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
              "NVIDIA driver is installed and running.\n")
    assert verdict(ex.explain_text(absent, "log.txt", Options())) == ("skip", "GPU_NOT_VISIBLE", "host")
    assert verdict(ex.explain_text(absent, "log.txt", Options(expect_gpus=8))) == ("fail", "GPU_NOT_VISIBLE", "host")


def test_cuda_s_unknown_error_is_the_driver_s_state_and_nvml_s_unknown_error_is_not_it():
    """CUDA 999 (tests/data/real-world/torch-1.13-cuda-unknown-error-after-suspend-nvidia-module-reload-fixes: torch's
    init warning after a suspend; h200-nvls-cuda-999-fabric-manager-restarted-without-gpu-reset: NCCL's NVLS set-up
    with its quote cut by the paste) is the host's driver state; NVML's `Unknown Error` on a device is another fact
    (a GPU NVML lost: nvidia-smi -q's reader), never CUDA's 999."""
    from verify.shared.cuda_errors import decode
    init = ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n")
    assert verdict(ex.explain_text(init, "log.txt", Options())) == ("fail", "DRIVER_ERROR", "host")
    nvls = "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error\n"
    assert verdict(ex.explain_text(nvls, "log.txt", Options())) == ("fail", "NCCL_FAILED", "host")
    assert decode("Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error") is None
