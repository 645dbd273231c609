"""A CUDA runtime's refusal to initialise as programs print it (torch's `CUDA initialization: ... Error 802: system
not yet initialized`, cuda-samples' `code=802(cudaErrorSystemNotReady)`, gpu-burn's `Couldn't init CUDA` and
`Error (gpu_burn-drv.cpp:298): system not yet initialized`, nccl-tests' `Test CUDA failure common.cu:941 'system not
yet initialized'`): a line that names a refusal verify/shared/cuda_errors.py knows (its name or string, in any wording), or
gives its number where the line is about CUDA, with
`nvidia-smi -L`'s device lines where they are quoted: into the gpu facts' `cuda_init_error` (decoded by
verify/shared/cuda_errors.py) and `devices`. A line that mentions a refusal in prose (`If CUDA initialization fails
with Error 802: ...`, a code span in a sentence: verify/explain/said.py) is none."""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Any

from ..shared import cuda_errors
from ..shared.cuda_errors import undecided
from ..shared.fastre import fast, guarded
from . import nvml, smitable
from .said import mentioned, printed, said

# torch's `CUDA error: <cudaGetErrorString>` (dorado, vLLM ...) and THC's `THCudaCheck FAIL ... error=802` count only
# where verify/shared/cuda_errors.py decodes the rest: `CUDA error: an illegal memory access` is a job's kernel, no refusal.
_REFUSAL = guarded(re.compile(r"cudaGetDeviceCount|CUDA initialization|cuInit|init CUDA|cudaErrorSystemNotReady|"
                      r"cuda runtime error \(\d+\)|CUDA error at|CUDA error: |THCudaCheck FAIL|returned \d{2,3}\b|"
                      # gpu_burn's `Error (gpu_burn-drv.cpp:298): <message>`, nccl-tests' `Test CUDA failure common.cu:941`
                      r"\bError \([\w.-]+:\d+\): |CUDA failure [\w.-]+:\d+",
                      re.IGNORECASE))
_SMI_L = re.compile(r"^[^\S\n]*GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)", re.MULTILINE)


_CUDA = re.compile(r"\bcuda", re.IGNORECASE)
# where CUDA itself is being brought up: an error a running program meets (out of memory, a kernel's fault) is a
# refusal to initialise only on such a line (torch's `Unexpected error from cudaGetDeviceCount() ... Error 2: out of
# memory`); elsewhere it is the program's (`CUDA out of memory. Tried to allocate ...`), never the node refusing CUDA
_INIT = guarded(re.compile(r"cudaGetDeviceCount|CUDA initiali[sz]ation|\bcuInit\b|init CUDA|cudaSetDevice|"
                   r"cuDevicePrimaryCtxRetain|cuCtxCreate", re.IGNORECASE))


# each line is decoded once for the refusal and the running program's kinds (a long line is read in seconds)
named = functools.lru_cache(maxsize=256)(cuda_errors.named)
decode = functools.lru_cache(maxsize=256)(cuda_errors.decode)


# torch's traceback of its CUDA start-up (`torch._C._cuda_init()`, `in _lazy_init`): the error it ends in is CUDA
# refusing to initialise, whatever the error's own line says (`cuda runtime error (30) : unknown error at
# .../THCGeneral.cpp:51`)
_INIT_TRACE = guarded(re.compile(r"\btorch\._C\._cuda_init\(\)|, in _lazy_init\b"))


# CUDA's first call answering with error 3's words and no number (a node test's `Failed during cudaGetDeviceCount:
# initialization error`): CUDA refusing to start, recorded as printed; the catalog leaves it undecoded (a process
# forked after CUDA started meets the same words), so the judge says so and names no cause
_FIRST_CALL_BARE = re.compile(r"\b(?:cudaGetDeviceCount|cuInit)\b[^\n]{0,80}?\binitiali[sz]ation error\b", re.IGNORECASE)


def _is_refusal(line: str, starting: bool = False) -> bool:
    decoded = named(line) or ((_REFUSAL.search(line) or _CUDA.search(line)) and decode(line))
    if decoded:
        return decoded.refusal or bool(_INIT.search(line)) or (starting and bool(_REFUSAL.search(line)))
    return bool((_REFUSAL.search(line) or _CUDA.search(line)) and undecided(line)) or bool(_FIRST_CALL_BARE.search(line))


def _mentioned(line: str) -> bool:
    """Whether the line's first CUDA words (the call, `CUDA`, the error's words or number) are mentioned in prose."""
    starts = [m.start() for m in (_REFUSAL.search(line), _CUDA.search(line), cuda_errors.MESSAGE.search(line)) if m]
    return bool(starts) and mentioned(line, min(starts))


# one text is scanned by the kernel log's parser, detect and parse: each line's CUDA words once (seconds on a large log)
# a driver-API error whose name the program prints on the next, indented line (NVHPC's OpenACC runtime: `call to
# cuCtxCreate returned error 214` / `  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered`, batch
# 142): one message, joined back so its number and its name are read together
_CONTINUED = re.compile(r"(\berror -?\d+)[ \t]*\n[ \t]+(\((?:CUDA_ERROR_[A-Z_]+|cudaError\w+)\))")


def _joined(text: str) -> str:
    return _CONTINUED.sub(r"\1 \2", text)


def _touched(text: str, patterns: tuple[re.Pattern[str], ...]) -> Iterator[str]:
    """The lines (as splitlines gives them, in order) that a match of one of `patterns` touches: a few scans of the
    whole text instead of each pattern on each line (a 10 MB training log is 100,000s of lines none of them names)."""
    spans = sorted((m.start(), max(m.end(), m.start() + 1)) for p in patterns for m in fast(p).finditer(text))
    pos = k = 0
    for raw in text.splitlines(keepends=True):
        end = pos + len(raw)
        while k < len(spans) and spans[k][1] <= pos:
            k += 1
        if k < len(spans) and spans[k][0] < end:      # a match starts before this line ends and ends inside or after
            yield raw.splitlines()[0]
        pos = end


@functools.lru_cache(maxsize=2)
def refusal(text: str) -> str | None:
    starting = printed_trace(text)
    # _is_refusal holds only on a line one of these matches (named() needs the catalog's words)
    lines = _touched(_joined(text), (cuda_errors.ANY_WORDS, _REFUSAL, _CUDA, _FIRST_CALL_BARE))
    return next((line.strip()[:400] for line in lines if _is_refusal(line, starting) and not _mentioned(line)), None)


def printed_trace(text: str) -> bool:
    """Whether the text holds torch's CUDA start-up traceback as a program printed it (not a sentence about it)."""
    return printed(_INIT_TRACE, text) is not None


def detect(text: str) -> bool:
    return refusal(text) is not None


def parse(text: str) -> dict[str, Any]:
    listed = [{"index": int(m.group(1)), "name": m.group(2), "uuid": m.group(3)} for m in _SMI_L.finditer(text)]
    devices = listed or _table(text)
    # NVML's own refusal quoted beside (nvidia-smi on the node): both roads to the GPU refused, judged together
    nvml_error = nvml.error_of(text) if devices is None else None
    return {"torch": None, "devices": devices, "cuda_init_error": refusal(text), "cuda_available": False,
            **({"nvml_error": nvml_error} if nvml_error else {})}


def _table(text: str) -> list[dict[str, Any]] | None:
    """The GPUs of an `nvidia-smi` table quoted beside the refusal (what NVML saw, their compute modes)."""
    return smitable.parse(text)["devices"] if smitable.detect(text) else None


# a running program's CUDA error as torch and the runtime print it (`RuntimeError: CUDA error: uncorrectable ECC error
# encountered`, `cudaErrorECCUncorrectable: ...`, `torch.OutOfMemoryError: CUDA out of memory`): into `cuda_errors`,
# judged by the one catalog (the GPU's ECC is the host's; out of memory or a kernel's fault the job's); a refusal to
# initialise is the refusal's kind above, never one of these
# THC's forms of torch before 1.0 (`THCudaCheck FAIL file=... line=36 error=59 : device-side assert triggered`,
# `RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at ...`): decoded by the error's words,
# never its number (CUDA renumbered its errors in 10.1: 39 and 59 were ECC and the device-side assert)
# NVSHMEM's CUDA check prints `[<file>:<line>] cuda failed with <cudaGetErrorString>` (its CUDA_RUNTIME_CHECK);
# nccl-tests' CUDACHECK `<host>: Test CUDA failure common.cu:1045 'unknown error'` (pyxis#81: 999 at its first calls);
# FasterTransformer's and TurboMind's check_cuda_error `[FT][ERROR] CUDA runtime error: <cudaGetErrorString> <file>:<line>`
# (lmdeploy's `[TM][ERROR] ...`, under a C++ `what():`)
_RUNTIME = guarded(re.compile(r"CUDA error:|\bcudaError[A-Z]\w*|\bCUDA_ERROR_[A-Z_]+|CUDA out of memory|THCudaCheck FAIL|"
                      r"cuda runtime error \(\d+\)|(?<=\] )cuda failed with |\bTest CUDA failure [\w./-]+:\d+ '|"
                      r"\bCUDA runtime error: ", re.IGNORECASE))


# cudaGetErrorString's words alone as the whole line (Torch7's and many programs' `fprintf(stderr, "%s\n",
# cudaGetErrorString(err))`, a log quoted without its prefix): only the strings of a running program's errors no other
# tool prints (a bare `out of memory` or `unknown error` is as often the kernel's or any program's)
_STRINGS = "|".join(map(re.escape, cuda_errors.RUNNING_STRINGS))
_BARE = re.compile(rf"^\W*(?:{_STRINGS})\W*$", re.IGNORECASE)
# a CUDA call that failed with one of those texts, in a program's own words and no `CUDA error:` (ds4's `ds4: CUDA
# synchronize failed: an illegal memory access was encountered`, `cudaMemcpy failed with error 'misaligned address'`):
# from the call's name (CUDA or a cuda*/cu* function) to `failed` within one clause, then the text; said by the
# program only where the call's words start its message (said.py: a sentence quoting it is none). `out of memory`
# too, after a CUDA call's failure (alone it is as often the kernel's or any program's)
_CALL_FAILED = re.compile(r"(?:\b[Cc][Uu][Dd][Aa]\b|\bcu(?:da)?[A-Z]\w*)[^\n.;!?:]{0,60}?\b[Ff]ailed"
                          r"(?: with(?: error)?)?\s*[:=-]?\s*['\"(]?" rf"(?i:{_STRINGS}|out of memory)")


@functools.lru_cache(maxsize=2)
def _runtime_lines(text: str) -> tuple[str, ...]:
    rows: dict[str, None] = {}
    for line in _joined(text).splitlines():
        # a line that merely mentions the error (a README, a commit, a program's source) is no program's error
        # (its first few: a line holds one error, a hostile one thousands)
        printed_error = _BARE.match(line) or any(said(line, m.start())
                                                 for m in itertools.islice(_RUNTIME.finditer(line), 8)) \
            or ("ailed" in line and any(said(line, m.start()) for m in itertools.islice(_CALL_FAILED.finditer(line), 8)))
        if not printed_error or _is_refusal(line):
            continue
        decoded = named(line) or decode(line)
        if decoded is not None and not decoded.refusal:
            rows.setdefault(line.strip()[:400])
    return tuple(rows)


def runtime_errors(text: str) -> list[dict[str, Any]]:
    return [{"index": None, "text": line} for line in _runtime_lines(text)]


def detect_runtime(text: str) -> bool:
    return bool(runtime_errors(text))


def parse_runtime(text: str) -> dict[str, Any]:
    # the program's output shows its errors; the GPUs, their health and the kernel log are not in it
    return {"torch": None, "devices": None, "cuda_errors": runtime_errors(text)}
