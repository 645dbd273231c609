# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35, fifth batch by class: a GPU out of memory (CUDA error 2, torch's `CUDA out of memory. Tried to allocate`,
NCCL's `Cuda failure 'out of memory'`) and a kernel's fault (illegal address 700, misaligned 716, assert 710, illegal
instruction 715, launch failure 719) are the job's through one catalog (verify/shared/cuda_errors.py) in the nccl,
gpu and train checks and `verify explain`, unless an Xid or ECC fact beside them shows the GPU's fault; an out of
memory line is CUDA refusing to initialise only where the line says initialisation; an Xid an NVML relay logged is
said by its source. Each with wordings the corpus lacks, and real excerpts (URLs beside them) where the host is healthy."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from tests.verify_handmade import gpu_facts
from verify import explain as ex
from verify.checks import gpu, nccl
from verify.checks.train import verdict as train_verdict
from verify.options import Options
from verify.result import CheckResult
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit


def explained(text: str):
    return ex.explain_text(text, "log.txt", Options())


OOM_WORDS = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB",
    "RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/THCCachingAllocator.cpp:510",
    "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "CUDA error 2", "Cuda failure 2 'out of memory'",
]
FAULT_WORDS = [
    "cudaErrorIllegalAddress", "CUDA_ERROR_LAUNCH_FAILED", "CUDA error: misaligned address",
    "RuntimeError: CUDA error: device-side assert triggered", "an illegal instruction was encountered",
    "CUDA error 719", "Cuda failure 'unspecified launch failure'",
]


@pytest.mark.parametrize("words", OOM_WORDS)
def test_every_wording_of_out_of_memory_is_the_jobs(words):
    decoded = cuda_errors.named(words)
    assert decoded is cuda_errors.OUT_OF_MEMORY and decoded.owner == "job" and not decoded.refusal
    assert "NCCL_BUFFSIZE" in decoded.fix and "PYTORCH_CUDA_ALLOC_CONF" in decoded.fix and "batch" in decoded.fix


@pytest.mark.parametrize("words", FAULT_WORDS)
def test_every_wording_of_a_kernel_fault_is_the_jobs_alone(words):
    decoded = cuda_errors.named(words)
    assert decoded is cuda_errors.KERNEL_FAULT and decoded.owner == "job" and not decoded.refusal


def test_numbers_of_other_tables_are_no_cuda_error():
    # ncclSystemError is 2, ENOENT is 2, ENOMEM's words are the memlock class's (FABRIC_MEMLOCK_LOW)
    for text in ("NCCL Error 2: unhandled system error", "Error 2: No such file or directory", "returned 2",
                 "Call to ibv_reg_mr failed with error Cannot allocate memory", "exit code 700"):
        assert cuda_errors.named(text) is None, text


# real NCCL logs of healthy hosts whose GPUs ran out of memory (no false drain)
OOM_LOGS = [
    # https://github.com/NVIDIA/nccl/issues/962 (NCCL 2.18.1, torch all_gather_object)
    "NCCL version 2.18.1+cuda12.0\n"
    "node:2134736:2285781 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
    "node:2134736:2285781 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n"
    "node:2134736:2285781 [0] proxy.cc:1518 NCCL WARN [Proxy Service 93] Failed to execute operation Setup from rank "
    "93, retcode 1\n",
    # https://github.com/NVIDIA/TensorRT-LLM/issues/1670 (8xV100)
    "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n\n"
    "VM-0-16-ubuntu:392:494 [2] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'\n",
    # https://github.com/PKU-YuanGroup/Open-Sora-Plan/issues/386
    "ins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'\n"
    "RuntimeError: NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n",
]


@pytest.mark.parametrize("text", OOM_LOGS)
def test_an_nccl_log_out_of_memory_is_the_jobs_never_a_drain(text):
    r = explained(text)
    assert r.name == "nccl" and verdict(r) == ("fail", "GPU_OUT_OF_MEMORY", "job"), r.summary
    assert "NCCL_BUFFSIZE" in (r.remedy or "")


def test_nccl_facts_out_of_memory_in_torchs_words_and_in_a_timeout_are_the_jobs():
    torch_oom = {"backend": "nccl", "error": "all_reduce: torch.OutOfMemoryError: CUDA out of memory. Tried to "
                 "allocate 512.00 MiB. GPU 0 has a total capacity of 39.38 GiB of which 96.00 MiB is free."}
    assert verdict(nccl.judge(torch_oom, Options())) == ("fail", "GPU_OUT_OF_MEMORY", "job")
    hung = {"backend": "nccl", "error": "all_reduce: Watchdog caught collective operation timeout",
            "nccl_log": {"proof": ["transport/p2p.cc:204 NCCL WARN Cuda failure 'out of memory'"]}}
    assert verdict(nccl.judge(hung, Options())) == ("fail", "GPU_OUT_OF_MEMORY", "job")


# real NCCL logs where a kernel faulted on a healthy host
FAULT_LOGS = [
    # https://github.com/vllm-project/vllm/issues/19890 (NCCL 2.30's CUCHECK prints the number)
    "gpu1:77:77 [0] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n",
    # https://github.com/NVIDIA/nccl/issues/629 (nccl-tests)
    "A03-R28-I49-2-6000166:104934:104934 [1] init.cc:204 NCCL WARN Cuda failure 'an illegal memory access was "
    "encountered'\nA03-R28-I49-2-6000166:104934:104934 [1] NCCL INFO init.cc:990 -> 1\n"
    "A03-R28-I49-2-6000166: Test NCCL failure common.cu:497 'unhandled cuda error'\n",
    # https://github.com/NVIDIA/TensorRT-LLM/issues/448
    "lzlpt:6859:6969 [0] misc/strongstream.cc:343 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n",
]


@pytest.mark.parametrize("text", FAULT_LOGS)
def test_a_kernel_fault_in_an_nccl_log_alone_is_the_jobs(text):
    r = explained(text)
    assert r.name == "nccl" and verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner
    assert "CUDA_LAUNCH_BLOCKING" in (r.remedy or "")


def test_the_gpu_checks_kernel_fault_is_the_jobs_alone_and_the_hosts_beside_an_xid():
    facts = gpu_facts(1)
    facts["kernels"][0]["error"] = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert verdict(gpu.judge(facts, Options())) == ("fail", "CUDA_KERNEL_FAULT", "job")
    # an application Xid (13) beside it changes nothing; a double-bit ECC (48) or off the bus (79) makes it the GPU's
    for xid, owner in ((13, "job"), (48, "host"), (79, "host")):
        r = gpu.judge({**facts, "xid_events": [{"index": 0, "xid": xid, "text": None}]}, Options())
        assert r.owner == owner and r.status == "fail", (xid, verdict(r))
    oom = gpu_facts(1)
    oom["kernels"][0]["error"] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
    assert verdict(gpu.judge(oom, Options())) == ("fail", "GPU_OUT_OF_MEMORY", "job")


def test_an_out_of_memory_line_is_no_refusal_to_initialise_unless_it_says_initialisation():
    # https://github.com/rwth-i6/returnn/issues/1466: torch's OOM on a healthy node
    oom = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 52.00 MiB. GPU 0 has a total capacty of 31.74 GiB "
           "of which 39.62 MiB is free. Process 101553 has 1.19 GiB memory in use.")
    for text in (oom, "RuntimeError: CUDA error: out of memory", "CUDA error: an illegal memory access was encountered"):
        assert ex.cuda.refusal(text) is None, text
        assert explained(text).owner != "host"
    init = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 2: out of memory")
    assert verdict(explained(init)) == ("fail", "GPU_OUT_OF_MEMORY", "job")
    # a refusal the catalog knows stays one on any line
    assert verdict(explained("CUDA error: system not yet initialized")) == ("fail", "DRIVER_ERROR", "host")


def test_the_train_checks_failure_goes_through_the_same_catalog():
    def judged(failure):
        result = CheckResult("train", "pass", "")
        return train_verdict._failure({"failures": [{"rank": 0, "node": "n1", **failure}]}, result)
    assert verdict(judged({"phase": "train", "type": "OutOfMemoryError", "message": "CUDA out of memory. Tried to "
                           "allocate 1.50 GiB"})) == ("fail", "GPU_OUT_OF_MEMORY", "job")
    assert verdict(judged({"phase": "train", "type": "AcceleratorError", "message": "CUDA error: an illegal memory "
                           "access was encountered"})) == ("fail", "TRAIN_FAILED", "job")  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner
    assert verdict(judged({"phase": "train", "type": "DistBackendError", "message": "NCCL error: unhandled system "
                           "error"})) == ("fail", "TRAIN_FAILED", "host")


# ------------------------------------------------------------------ a relayed Xid said by its source
UUID = "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8"


@pytest.mark.parametrize("text,relay", [
    (f"I0101 00:00:01.000000       1 health.go:185] XidCriticalError: Xid=79 on Device={UUID}; marking device as "
     "unhealthy.", "the k8s device plugin"),
    ("I0809 13:32:51.873532       1 health.go:159] Processing event {Device:{Handle:0x7e590d4986e8} EventType:8 "
     "EventData:48 GpuInstanceId:4294967295 ComputeInstanceId:4294967295}", "the k8s device plugin"),
    ("Detected XID 94 for GPU 2", "DCGM"),
])
def test_a_relayed_xid_is_said_by_its_relay_never_during_the_check(text, relay):
    r = explained(text)
    assert "during the check" not in r.summary and f"relayed by {relay}" in r.summary, r.summary


def test_verify_own_watch_is_during_the_check_and_an_unrecorded_source_is_said_so():
    live = gpu.judge({**gpu_facts(1), "xid_events": [{"index": 0, "xid": 48, "text": None, "source": "nvml"}]}, Options())
    assert "during the check" in live.summary
    unknown = gpu.judge({**gpu_facts(1), "xid_events": [{"index": 0, "xid": 48, "text": None}]}, Options())
    assert "during the check" not in unknown.summary and "not recorded" in unknown.summary
