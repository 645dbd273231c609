"""A bare NCCL failure: torch's or NCCL's class of error and nothing else (issue 35, batch 88).

`unhandled system error` / `ncclSystemError` and `remote process exited or there was a network error` /
`ncclRemoteError` are the classes NCCL returns for any failed system, library or peer call; the call itself is in
NCCL's `Last error:` or its WARN lines. torch's ProcessGroupNCCL teardown (`Some NCCL operations have failed or timed
out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.`
/ `To avoid data inconsistency, we are taking the entire process down.`) is such a class too: it says a collective
failed, and the failure itself is on the lines before it (batch 137, nanoGPT's two nodes). An error that holds the class's words alone (torch's `NCCL error in:
<file>:<line>, ...`, NCCL's own sentence, an empty `Last error:`, a message cut short) shows no cause: judged (fail),
owned by the job (its owner reads the other ranks' logs), never a drain (FACTS.md: drain only on evidence that the host is at fault; every failure names an owner). Anything more (a call, an
errno, a peer's address, a CUDA error) is a cause the other rules read, and keeps their owner. NCCL's internal error
keeps its own rule (its words name NCCL itself: the image's).

`unhandled cuda error` / `ncclUnhandledCudaError` is such a class as well (batch 143, nccl-tests issue 322): NCCL says
a CUDA call failed and names it on its `Cuda failure 'X'` WARN line; without that line nothing shows which call, nor a
GPU at fault. nccl-tests words the same failure `<host>: Test NCCL failure common.cu:1204 '<class> (run with
NCCL_DEBUG=INFO for details) / <last error>'`: its host, file and quotes are no cause either."""
from __future__ import annotations

import re

# the words of the error classes (torch 1.x to 2.x, NCCL 2.x), each removable without losing a cause
_WORDS = re.compile(
    r"^\s*(?!nccl\w*Error)\w+:\s(?=\S)|"                                        # the record's phase prefix (`init: `, `barrier: `)
    r"(?:torch\.distributed\.)?(?:DistBackendError|RuntimeError):|"
    r"NCCL error in: \S+:\d+,|NCCL [Ee]rror ?\d*:?|"
    # torch 2.4+'s wrapper names its own source line (`NCCL error: /pytorch/.../NCCLUtils.hpp:268, NCCL version`)
    r"(?<=NCCL error: )\S+\.(?:hpp|cpp|h|cc|cu):\d+,|"
    r"unhandled (?:system|cuda) error|ncclUnhandledCudaError|remote process exited(?: or there was a network error)?|"
    r"\(run with NCCL_DEBUG=INFO for details\)|,? ?NCCL version \d+(?:\.\d+)*\S*?(?=\s|$|nccl)|"
    r"ncclSystemError: System call \(e\.g\. socket, malloc\) or external library call failed or device error\.|"
    r"ncclSystemError: System call \(socket, malloc, munmap, etc\) failed\.?|"
    r"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely\.|"
    r"Last error:\s*$|\bnccl\w*$|"
    # nccl-tests' wording (src/common.h NCCLCHECK): `<host>: Test NCCL failure <file>:<line> '<class> / <last>'`
    r"(?:[\w.-]+: )?Test NCCL failure \S+:\d+|\s/\s*(?='|$)|'|"
    # torch's teardown, under its log prefix (`[E ProcessGroupNCCL.cpp:455]`, `[rank0]:[E1205 ...]`, `[PG 0 Rank 3]`)
    r"\[rank\d+\]:|\[[^\]\n]*ProcessGroupNCCL\.cpp:\d+\]|\[(?:PG [^\]\n]*)?Rank \d+\]|"
    r"Some NCCL operations have failed or timed out\.?|"
    r"Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete "
    r"data\.?|To avoid data inconsistency, we are taking the entire process down\.?")
# what must have been said for the error to be one of these classes at all
_CLASS = re.compile(r"unhandled (?:system|cuda) error|ncclSystemError|ncclUnhandledCudaError|remote process exited|"
                    r"ncclRemoteError|Some NCCL operations have failed or timed out")


def bare(error: str) -> bool:
    """The error names its class and nothing that could be a cause."""
    if not _CLASS.search(error):
        return False
    rest = error
    for _ in range(12):                       # each pass removes what the last one exposed (a trailing `nccl...`)
        stripped = _WORDS.sub(" ", rest).strip(" \t\n.,;:|()")   # a quote's parentheses hold no cause
        if stripped == rest:
            break
        rest = stripped
    return not rest


_CUDA_CLASS = re.compile(r"unhandled cuda error|ncclUnhandledCudaError")


def cuda_class(error: str) -> bool:
    """NCCL's class for a failed CUDA call: a job's program may cause one, this verify's own all-reduce does not."""
    return bool(_CUDA_CLASS.search(error))
