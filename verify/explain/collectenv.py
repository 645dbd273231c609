"""`python -m torch.utils.collect_env` (and vLLM's `collect_env.py`, which prints the same keys, aligned as
`Key<spaces>: value` under `===` section banners): what torch and nvidia-smi answered about the GPUs, read into the
gpu facts:
- `PyTorch version: 2.3.0+cu121`: `torch`; `CUDA used to build PyTorch: 12.1`: `torch_cuda` (`None`, what
  `torch.version.cuda` is in a CPU build, or `Could not collect`, the same None where a GPU answered and no ROCm
  build is named: `"none"`);
- `Is CUDA available: True`: `cuda_available`;
- `GPU models and configuration:` and the `GPU 0: NVIDIA H200` lines under it (or on it, for one GPU): nvidia-smi -L
  with the UUIDs stripped, the devices' index and name;
- `Nvidia driver version: 550.54.14`: `driver`.
`Could not collect`, `No CUDA`, `N/A` and (elsewhere) `None` are no answer (null). `CUDA runtime version` is the toolkit on the PATH, not what
torch runs with: not read. The report holds no health field: the judge says the GPUs are not assessed, never healthy.
Only the report's own `Is CUDA available` line with its `PyTorch version` line makes the text this kind."""
from __future__ import annotations

import re
from typing import Any

from ..facts import NONE

_NO_ANSWER = frozenset({"", "could not collect", "n/a", "none", "no cuda"})
_GPU = re.compile(r"^GPU (\d+): (.*\S)\s*$")


def _value(text: str, key: str) -> str | None:
    m = re.search(rf"^{re.escape(key)}\s*:[ \t]*(.*?)[ \t]*$", text, re.MULTILINE)
    return None if m is None or m.group(1).lower() in _NO_ANSWER else m.group(1)


def detect(text: str) -> bool:
    return _value(text, "Is CUDA available") in ("True", "False") and _value(text, "PyTorch version") is not None


def _devices(text: str) -> list[dict[str, Any]] | None:
    """The GPU lines of `GPU models and configuration`: on its line, then each line under it until one is none."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if re.match(r"^GPU models and configuration\s*:", line)), None)
    if start is None:
        return None
    found: list[dict[str, Any]] = []
    for n, line in enumerate(lines[start:]):
        line = line.split(":", 1)[1].strip() if n == 0 else line.strip()
        m = _GPU.match(line)
        if not m:
            if n == 0 and not line:
                continue
            break
        found.append({"index": int(m.group(1)), "name": m.group(2)})
    return found or None


def parse(text: str) -> dict[str, Any]:
    available = _value(text, "Is CUDA available")
    # `None` where the machine has no CUDA at all; `Could not collect` is the same None (collect_env's replace_nones)
    # where a driver or GPU answered, unless a ROCm build (torch.version.cuda is None there too) says so
    built = re.search(r"^CUDA used to build PyTorch\s*:[ \t]*(?:None|Could not collect)[ \t]*$", text, re.MULTILINE)
    built = built if built and _value(text, "ROCM used to build PyTorch") is None else None
    return {"torch": _value(text, "PyTorch version"),
            "torch_cuda": NONE if built else _value(text, "CUDA used to build PyTorch"),
            "cuda_available": {"True": True, "False": False}.get(available or ""),
            "driver": _value(text, "Nvidia driver version"), "devices": _devices(text)}
