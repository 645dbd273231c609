"""torch's warning that a GPU's architecture is not in its build, as `torch.cuda` prints it at start-up (torch 1.6 and
later, torch/cuda/__init__.py `_check_capability`/`_check_cubins`):

    NVIDIA GeForce RTX 5080 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
    The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.

and its older warning of a GPU below every architecture of the build (0.3.1 on, `_check_capability`):

    Found GPU0 Tesla K80 which is of cuda capability 3.7.
    PyTorch no longer supports this GPU because it is too old.
    The minimum cuda capability supported by this library is 5.0.

Into the gpu facts' `devices` (each GPU it names, with its capability), `capabilities` and `arch_list` (the build's
list as torch printed it): the judge decides by CUDA's compatibility rules (verify/checks/gpu/gpuarch.py) whether
any code of that list runs on the GPU, as it does for a live run. The warning's own words are not the verdict: only
with both lines is anything read. The older warning prints no list: its `too old` line is recorded as the program's
error (`cuda_errors`, torch's index), which verify/shared/cuda_errors.py decodes (a GPU below every architecture of
the build runs none of its code). A line that quotes either warning in prose (verify/explain/said.py) is none."""
from __future__ import annotations

import re
from typing import Any

from .said import mentioned

# the GPU's name: what precedes the words on the line, after a path's or `UserWarning:`'s colon, a quote or a backtick
_WARNING = re.compile(r"(?P<name>[^\s`'\":][^`'\":\n]{0,120}?) with CUDA capability sm_(?P<cap>\d{2,3}) is not compatible "
                      r"with the current PyTorch installation")
_SUPPORTS = re.compile(r"The current PyTorch install supports CUDA capabilities (?P<archs>(?:(?:sm|compute)_\d+[af]?"
                       r"\s*)+)")
_ARCH = re.compile(r"(?:sm|compute)_\d+[af]?")
_NEAR = 4        # the list follows its warning on the next line (a wrapped or blank line between at most)


def _warnings(text: str) -> list[tuple[str, str, list[str]]]:
    """(GPU name, capability `12.0`, the build's arch list) for each warning printed with its list."""
    lines = text.splitlines()
    found: list[tuple[str, str, list[str]]] = []
    for n, line in enumerate(lines):
        at = line.find(" with CUDA capability sm_")     # the name within reach before it (a hostile line is long)
        m = _WARNING.search(line, max(0, at - 122)) if at >= 0 else None
        if not m or mentioned(line, m.start("name")):
            continue
        listed = next((s for s in (_SUPPORTS.search(x) for x in [line[m.end():], *lines[n + 1:n + 1 + _NEAR]]) if s),
                      None)
        if listed is None:
            continue
        cap = int(m.group("cap"))
        found.append((m.group("name").strip(), f"{cap // 10}.{cap % 10}", _ARCH.findall(listed.group("archs"))))
    return found


_FOUND = re.compile(r"Found GPU(?P<index>\d+) (?P<name>[^\n]{1,120}?) which is of cuda capability (?P<cc>\d+\.\d+)",
                    re.IGNORECASE)
_TOO_OLD = re.compile(r"PyTorch no longer supports this GPU because it is too old", re.IGNORECASE)


def _too_old(text: str) -> list[tuple[int, str, str, str]]:
    """(torch index, GPU name, capability, the `too old` line) for each older warning printed whole."""
    lines = text.splitlines()
    found: list[tuple[int, str, str, str]] = []
    for n, line in enumerate(lines):
        m = _FOUND.search(line)
        if not m or mentioned(line, m.start()):
            continue
        old = next((x for x in lines[n:n + 1 + _NEAR] if _TOO_OLD.search(x)), None)
        if old is not None:
            found.append((int(m.group("index")), m.group("name").strip(), m.group("cc"), old.strip()[:300]))
    return found


def gpu_named(text: str) -> str | None:
    """The one GPU model torch's start-up warnings name in a job's log (`Found GPU0 NVIDIA GB10 which is of cuda
    capability 12.1.`, printed for a GPU outside the build's range whatever follows), or None: none, or several. Read
    by the NCCL log's reader for its `device_name` (batch 110: a GPU without GPUDirect RDMA by design)."""
    names = set()
    for line in text.splitlines():
        # either warning names the GPU on its own line (the build's list that follows is not needed for the name)
        for m in (_FOUND.search(line), _WARNING.search(line) if " with CUDA capability sm_" in line else None):
            if m and not mentioned(line, m.start("name")):
                names.add(m.group("name").strip())
    return names.pop() if len(names) == 1 else None


def detect(text: str) -> bool:
    return ("with the current PyTorch installation" in text and bool(_warnings(text))) or \
        ("because it is too old" in text and bool(_too_old(text)))


def parse(text: str) -> dict[str, Any]:
    warned = list(dict.fromkeys((name, cc) for name, cc, _ in _warnings(text)))
    arch_list = _warnings(text)[0][2] if warned else None
    old = _too_old(text)
    warned += [(name, cc) for _, name, cc, _ in old if (name, cc) not in warned]
    # torch warns once per GPU model (Python's warnings repeat no message): one device per model it names
    return {"torch": None, "devices": [{"index": None, "name": name, "cc": cc} for name, cc in warned] or None,
            "capabilities": [cc for _, cc in warned] or None, "arch_list": arch_list,
            **({"cuda_errors": [{"index": index, "text": line} for index, _, _, line in old]} if old else {})}
