"""Issue 35, batch 192 (fix192), fixed for the class:
- a serving engine's own all-reduce over CUDA IPC (not NCCL's) refused peer access on GPUs without it, CUDA's `peer
  access is not supported between these two devices`, is never the host's: TensorRT-LLM's workspace of an engine
  built with `use_custom_all_reduce` is the job's, a runtime's kernel on by default (`custom_all_reduce.cuh`, vLLM's,
  SGLang's copy) the image's (verify/checks/nccl/customar.py); `verify explain` reads both lines
  (verify/explain/customar.py);
- kept: NCCL's `Cuda failure 2 'out of memory'` during an engine's init is GPU_OUT_OF_MEMORY, the job's (its
  memory budget), never the host's (a strict expected failure where translated NCCL_FAILED).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict

pytestmark = pytest.mark.unit

SGLANG = "sglang-bench-latency-llama3-8b-tp2-nccl-2.20.5-custom-all-reduce-cuh-307-peer-access-not-supported-no-p2p-image"
TRITON = ("triton-trtllm-backend-two-ranks-one-container-nccl-2.19.3-ibext-no-ib-device-socket-eth0-custom-allreduce-"
          "ipc-peer-access-not-supported-job")
B200 = ("b200-x8-vllm-0.9.1-deepseek-r1-engine-init-nccl-2.26.2-unhandled-cuda-error-cuda-failure-2-out-of-memory-"
        "rank-3-job")

KERNEL = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'"
ENGINE = ("[TensorRT-LLM][ERROR] CUDA runtime error in cudaIpcOpenMemHandle( reinterpret_cast<void**>(&foreignBuffer), "
          "handles[nodeId], cudaIpcMemLazyEnablePeerAccess): peer access is not supported between these two devices "
          "(/app/TensorRT-LLM/TensorRT-LLM/cpp/tensorrt_llm/runtime/ipcUtils.cpp:90)")


def test_a_runtimes_custom_all_reduce_without_peer_access_is_the_images_on_both_roads():
    assert KERNEL in raw(SGLANG)
    assert replayed(SGLANG) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert verdict(explained(raw(SGLANG))) == ("fail", "NCCL_FAILED", "image")


@pytest.mark.parametrize("line", [
    KERNEL,
    # the same kernel under vLLM's worker prefix, another line number (the class, not the example)
    "(VllmWorker rank=1 pid=812) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'peer access is not "
    "supported between these two devices'",
])
def test_the_kernels_refusal_is_the_serving_builds_whatever_its_prefix(line):
    assert nccl_verdict(error=f"all_reduce: {line}", nccl_version="2.20.5") == ("fail", "NCCL_FAILED", "image")
    assert verdict(explained(f"NCCL version 2.20.5+cuda12.4\n{line}\n")) == ("fail", "NCCL_FAILED", "image")


def test_an_engine_built_with_custom_all_reduce_without_peer_access_is_the_jobs_on_both_roads():
    assert ENGINE in raw(TRITON) and "createCustomAllReduceWorkspace" in raw(TRITON)
    assert replayed(TRITON) == {"nccl": ("fail", "NCCL_FAILED", "job")}
    # NCCL's sockets on eth0 in one container are no fall-back: the engine's refusal is the failure
    assert verdict(explained(raw(TRITON))) == ("fail", "NCCL_FAILED", "job")


def test_the_engines_refusal_is_the_jobs_with_no_nccl_line_beside_it():
    assert nccl_verdict(error=f"init: {ENGINE}") == ("fail", "NCCL_FAILED", "job")
    # the refusal's line alone, the frame naming the workspace on the next line
    text = (f"E0425 10:43:31.433970 841 model_repository_manager.cc:579] {ENGINE}\n"
            "4       0x7f6ad083d3a3 tensorrt_llm::batch_manager::RuntimeBuffers::createCustomAllReduceWorkspace(int, "
            "int, int, int, tensorrt_llm::runtime::WorldConfig const&) + 323\n")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")


def test_nccls_own_217_stays_the_images_the_engines_rule_does_not_take_it():
    # NVIDIA/nccl#1838 (vLLM's CI on 4x L4): NCCL's SHM transport on cuMem host memory, NCCL's path, not an engine's
    line = ("transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'")
    got = nccl_verdict(error=f"init: {line}")
    assert got == ("fail", "NCCL_FAILED", "image")


def test_nccls_out_of_memory_at_an_engines_init_is_the_jobs_memory_never_the_hosts():
    assert "Cuda failure 2 'out of memory'" in raw(B200)
    assert replayed(B200) == {"nccl": ("fail", "GPU_OUT_OF_MEMORY", "job")}
    assert verdict(explained(raw(B200))) == ("fail", "GPU_OUT_OF_MEMORY", "job")
