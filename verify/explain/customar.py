"""A serving engine's custom all-reduce over CUDA IPC failing on GPUs without peer access, as its log prints it
(issue 35, batch 192): vLLM's/SGLang's `Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is
not supported between these two devices'`, TensorRT-LLM's `[TensorRT-LLM][ERROR] CUDA runtime error in
cudaIpcOpenMemHandle(...): peer access is not supported between these two devices (.../runtime/ipcUtils.cpp:90)`
under `createCustomAllReduceWorkspace`. The nccl facts' `error` (the line, with the frame that names the engine's
workspace where the line does not), judged by verify/checks/nccl/customar.py."""
from __future__ import annotations

import re

from ..checks.nccl.customar import ENGINE_BUILT, RUNTIME_KERNEL
from .said import printed

# the refusal's words (the line around them is cut out by hand: a pattern that starts with `[^\n]*` rescans each line
# from every position)
_REFUSED = re.compile(r"peer access is not supported between these two devices")
_FRAME = re.compile(r"createCustomAllReduceWorkspace|tensorrt_llm::runtime::IpcMemory")


def failed(text: str) -> str | None:
    """The engine's custom all-reduce refused peer access: `init: <line>` for an engine's workspace set up at load,
    `all_reduce: <line>` for the runtime's kernel; None where the refusal is no such engine's (NCCL's own 217)."""
    hit = printed(_REFUSED, text)
    if hit is None:
        return None
    start, end = text.rfind("\n", 0, hit.start()) + 1, text.find("\n", hit.end())
    # the line, from at most 200 characters before the words (a Triton model-load line runs long)
    said = text[max(start, hit.start() - 200):end if end >= 0 else len(text)].strip()[:400]
    frame = _FRAME.search(text)
    if ENGINE_BUILT.search(said) or (frame and "cudaIpc" in said):
        return f"init: {said}" + (f" ({frame.group(0)})" if frame and frame.group(0) not in said else "")
    if RUNTIME_KERNEL.search(said):
        return f"all_reduce: {said}"
    return None
