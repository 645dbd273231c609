"""Issue 35, batches 135 to 137 (kernel logs with no Xid, CUDA errors whose owner is the question, multi-node NCCL).
The classes fixed:
- a kernel log (each line a record) whose NVIDIA lines are nvidia-peermem's `detected invalid context` at a job's
  teardown, and nothing reading as a failure, is a log read whole with no Xid, SXid or driver status (gpu pass, the
  devices not assessed); a kernel log in which the NVIDIA driver never speaks stays not recognised;
- FasterTransformer's and TurboMind's `CUDA runtime error: <cudaGetErrorString> <file>:<line>` is a running program's
  CUDA error, decoded by the one catalog;
- CUDA error 222 (`the provided PTX was compiled with an unsupported toolchain`) is a build whose PTX is newer than
  the driver's JIT: ARCH_NOT_IN_BUILD, the image's (rebuild with the GPU's SASS), a failure and never a drain; nvbandwidth's
  runtime-API assert (`[cudaErrorUnsupportedPtxVersion] ... in expression ...`) is read as its driver-API one is;
- torch's ProcessGroupNCCL teardown (`Some NCCL operations have failed or timed out. ...`) with no cause beside it is
  a bare class of error: NCCL_FAILED, owned by the job, never a drain.
Real lines are quoted with their slugs (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.checks.nccl import barefail
from verify.explain import kernel
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

K8S = "k8s-gpu-node-journal-calico-pod-churn-then-fourteen-nvidia-peermem-invalid-context-lines-no-xid"
A800 = "a800-node-jmsph-pro-kernel-journal-docker-veth-container-restart-no-xid"
LMDEPLOY = "h100-x8-lmdeploy-turbomind-own-debug-build-unified-attention-layer-cc-353-misaligned-address-nvcc-11.8"
NVBW = "h100-x8-nvbandwidth-v0.8-built-with-cuda-13.2-on-driver-580.126.09-cuda-13.0-unsupported-ptx-toolchain-222"
NANOGPT = "nanogpt-two-nodes-8-gpus-torchrun-some-nccl-operations-failed-or-timed-out-fixed-by-nccl-ib-disable-1"

HOST = "2025-01-17T17:10:43+0000 exp03-ft-896z-1-lan.exp03-ft-896z-job-svc kernel: "
PEERMEM = "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"
CALICO = "IPv6: ADDRCONF(NETDEV_CHANGE): cali1d5c6a0536f: link becomes ready"
XID = "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0)"



# ----------------------------------------------------- kernel logs with no Xid
def test_a_journal_whose_nvidia_lines_are_peermem_teardown_notices_is_a_log_with_no_gpu_event():
    """K8S: pod-network churn, then fourteen `nvidia-peermem ... detected invalid context` lines in one second."""
    r = explained(raw(K8S), "journal.txt")
    assert verdict(r) == ("pass", None, None), r.summary
    facts = kernel.parse(raw(K8S))
    assert (facts["xid_events"], facts["sxid_events"], facts["driver_errors"], facts["devices"]) == ([], [], [], None)


@pytest.mark.parametrize("prefix", [HOST, "[Thu Sep 19 02:29:46 2024] ", "[ 8821.335001] "])
def test_the_peermem_notice_under_any_kernel_prefix_is_no_failure(prefix):
    text = "\n".join(prefix + line for line in (CALICO, PEERMEM, PEERMEM, CALICO))
    assert verdict(explained(text, "dmesg.txt")) == ("pass", None, None)


def test_beside_an_xid_the_xid_decides_and_beside_another_error_the_log_is_not_read_as_clean():
    beside_xid = "\n".join("[Fri Aug 30 11:11:22 2024] " + line for line in (PEERMEM, XID, CALICO))
    assert explained(beside_xid, "dmesg.txt").code == "XID_ERROR"
    other = "\n".join(HOST + line for line in (PEERMEM, CALICO, "mlx5_core 0000:1a:00.0: mlx5_cmd_check:794: ERROR: "
                                               "DESTROY_MKEY(0x202) op_mod(0x0) failed, status bad resource state(0x9)"))
    assert not kernel._clean(other)         # another module's error: never passed on the peermem rule


def test_a_kernel_log_where_the_nvidia_driver_never_speaks_stays_not_recognised():
    """A800: docker0 swapping a container's veth, no NVIDIA line: whether the node has GPUs, or the window covers the
    driver's messages, the text cannot show (an OOM-kill excerpt reads alike)."""
    assert not kernel.detect(raw(A800))
    assert explained(raw(A800), "journal.txt").name == "explain"


def test_the_peermem_notice_in_prose_is_no_kernel_log():
    text = f"On our nodes we see `{PEERMEM}` whenever a job exits.\nIs this harmless?\nThanks"
    assert not kernel.detect(text)


# ----------------------------------------------------- a program's `CUDA runtime error: <string> <file>:<line>`
def test_turbomind_s_cuda_runtime_error_is_a_running_program_s_kernel_fault():
    """LMDEPLOY: `what():  [TM][ERROR] CUDA runtime error: misaligned address .../unified_attention_layer.cc:353`."""
    r = explained(raw(LMDEPLOY), "issue.txt")
    assert verdict(r) == ("warn", "CUDA_KERNEL_FAULT", "job"), r.summary
    assert replayed(LMDEPLOY)["gpu"] == ("warn", "CUDA_KERNEL_FAULT", "job")


def test_fastertransformer_s_wording_of_the_same_check_is_read_too():
    text = ("[FT][ERROR] CUDA runtime error: an illegal memory access was encountered "
            "/workspace/FasterTransformer/src/fastertransformer/models/llama/Llama.cc:1201")
    assert verdict(explained(text)) == ("warn", "CUDA_KERNEL_FAULT", "job")


# ----------------------------------------------------- 222: PTX newer than the driver's JIT
@pytest.mark.parametrize("line", [
    "[cudaErrorUnsupportedPtxVersion] the provided PTX was compiled with an unsupported toolchain. in expression "
    "cudaGetLastError() in CUresult memsetKernel(CUstream, CUdeviceptr, CUdeviceptr, long long unsigned int, unsigned "
    "int)() : /home/diag/nvbandwidth/kernels.cu:406",
    "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cuModuleLoadData returned 222"])
def test_error_222_is_the_build_s_ptx_newer_than_the_driver(line):
    decoded = cuda_errors.decode(line)
    assert decoded is cuda_errors.PTX_TOOLCHAIN and (decoded.code, decoded.owner) == ("ARCH_NOT_IN_BUILD", "image")
    assert not decoded.refusal              # CUDA initialised and enumerated: the first kernel failed


def test_nvbandwidth_s_222_fails_the_image_on_both_roads_and_never_drains():
    assert replayed(NVBW)["gpu"] == ("fail", "ARCH_NOT_IN_BUILD", "image")
    r = explained(raw(NVBW), "nvbandwidth.txt")
    assert verdict(r) == ("fail", "ARCH_NOT_IN_BUILD", "image"), r.summary


def test_nccl_failing_on_222_is_the_image_s():
    facts = {"backend": "nccl", "nodes": 1, "world_size": 8, "gpus": 8,
             "error": "init: NCCL WARN Cuda failure 'the provided PTX was compiled with an unsupported toolchain.'"}
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.owner) == ("fail", "image"), r.summary


# ----------------------------------------------------- torch's teardown with no cause
TEARDOWN = ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
            "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
            "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.")


@pytest.mark.parametrize("error", [
    "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU "
    "operations might run on corrupted/incomplete data. To avoid data inconsistency, we are taking the entire process down.",
    "all_reduce: [Rank 3] Some NCCL operations have failed or timed out.",
    "all_reduce: [rank0]:[E1205 10:00:00.000000000 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Some NCCL operations have "
    "failed or timed out."])
def test_torch_s_teardown_alone_is_a_bare_failure_of_the_job(error):
    assert barefail.bare(error)
    r = judge(CHECKS["nccl"], {"backend": "nccl", "nodes": 2, "world_size": 16, "gpus": 8, "error": error}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_the_teardown_beside_a_cause_keeps_the_cause():
    assert not barefail.bare("all_reduce: Some NCCL operations have failed or timed out. NCCL error: unhandled "
                             "system error, Last error: Call to ibv_create_cq failed with error Cannot allocate memory")


def test_nanogpt_s_teardown_is_read_by_explain_as_its_facts_read_it():
    assert replayed(NANOGPT)["nccl"] == ("fail", "NCCL_FAILED", "job")
    r = explained(raw(NANOGPT), "issue.txt")
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert verdict(explained(TEARDOWN)) == ("fail", "NCCL_FAILED", "job")


def test_the_teardown_beside_the_watchdog_s_cuda_error_names_that_error():
    text = TEARDOWN + ("\nterminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [Rank 0] "
                       "NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was "
                       "encountered")
    r = explained(text)
    assert (r.code, r.owner) == ("NCCL_FAILED", "job"), r.summary  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner
