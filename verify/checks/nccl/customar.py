"""A serving engine's own CUDA-IPC custom all-reduce failing on GPUs without peer access (issue 35, batch 192). Pure.

vLLM, SGLang and TensorRT-LLM run small all-reduces over CUDA IPC peer mappings of their own, not NCCL's: NCCL
itself came up. On GPUs without peer access (PCIe GPUs without P2P, by design) the mapping fails with CUDA's 217,
`peer access is not supported between these two devices`; no drain. Who acts is where the path was switched on:
- TensorRT-LLM's (`createCustomAllReduceWorkspace`, `IpcMemory`, `ipcUtils.cpp`): the engine was built with
  `use_custom_all_reduce`, the job's build of its engine (NVIDIA/TensorRT-LLM#1498: "disable the
  use_custom_all_reduce during building engine"): owner job;
- a serving runtime's kernel (`custom_all_reduce.cuh`, vLLM's, copied into SGLang): on by default, and the runtime
  is meant to check peer access before it (sgl-project/sglang#1509): the serving build's, owner image."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

NO_PEER = re.compile(r"peer access is not supported between these two devices|\bCuda failure 217\b")
# TensorRT-LLM's engine-built workspace (its runtime's IPC buffers for the custom all-reduce plugin)
ENGINE_BUILT = re.compile(r"createCustomAllReduceWorkspace|tensorrt_llm::runtime::IpcMemory|runtime/ipcUtils\.cpp"
                          r"|use_custom_all_reduce|\[TensorRT-LLM\]\[ERROR\] CUDA runtime error in cudaIpcOpenMemHandle")
# the serving runtime's own kernel (vLLM's csrc/custom_all_reduce.cuh and its Python wrapper, SGLang's copy)
RUNTIME_KERNEL = re.compile(r"custom_all_reduce\.cuh|custom_all_reduce\.py|\bCustomAllreduce\b")


def custom_allreduce_verdict(said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """The job's (an engine built with it) or the image's (the runtime's default) custom all-reduce over CUDA IPC on
    GPUs without peer access; None where the failure is not such a path's."""
    text = " | ".join(said)
    hit = NO_PEER.search(text)
    if hit is None:
        return None
    what = (f"{over} failed: the serving engine's own custom all-reduce (CUDA IPC, not "
            f"NCCL) asked for peer access these GPUs cannot give ({hit.group(0)}; CUDA error 217)")
    if ENGINE_BUILT.search(text):
        return result.verdict(FAIL, "NCCL_FAILED", f"{what}: the TensorRT-LLM engine was built with its custom "
                              "all-reduce for a topology without P2P: the job's engine, not the node",
                              "Rebuild the engine without the custom all-reduce (trtllm-build --use_custom_all_reduce "
                              "disable); it needs peer access between the GPUs (nvidia-smi topo -p2p r).", "job")
    if RUNTIME_KERNEL.search(text):
        return result.verdict(FAIL, "NCCL_FAILED", f"{what}: the serving build turned its custom all-reduce on "
                              "without checking peer access: the image's serving software, not the node",
                              "Start the server with --disable-custom-all-reduce, or ship a release that checks peer "
                              "access before it enables the custom all-reduce.", "image")
    return None
