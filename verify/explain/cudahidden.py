"""torch finding no GPU (`RuntimeError: No CUDA GPUs are available`) under a CUDA_VISIBLE_DEVICES that can name none
(a compose file's `CUDA_VISIBLE_DEVICES: all`, a shell's `CUDA_VISIBLE_DEVICES=` or `-1`), beside an `nvidia-smi`
table that lists the GPUs: into the gpu facts' `cuda_visible_devices`, `cuda_errors` (torch's line) and `devices`
(the table's rows, one cut after its first cell read as far as it goes: index, name, persistence). Judged by the gpu
check's rule (verify/checks/gpu/programerrors.py): the job's setting hid the GPUs NVML lists (fail GPU_NOT_VISIBLE,
job). A setting that names a GPU is not this kind: the one CUDA_VISIBLE_DEVICES of the text decides, several are
unknown."""
from __future__ import annotations

import re
from typing import Any

from ..checks.gpu.refusals import hides_every_device
from . import smitable
from .said import printed

_NO_GPUS = re.compile(r"RuntimeError: No CUDA GPUs are available")
# a compose file's `CUDA_VISIBLE_DEVICES: all` (its environment map), `- CUDA_VISIBLE_DEVICES=all` (its list) or a
# shell's `CUDA_VISIBLE_DEVICES=all` / `-e CUDA_VISIBLE_DEVICES=all`
_VISIBLE = re.compile(r"^[\s>-]*(?:export\s+|-e\s+)?CUDA_VISIBLE_DEVICES\s*[:=]\s*[\"']?([^\"'\s]*)[\"']?\s*$",
                      re.MULTILINE)
# a table row cut after its first cell (`|   0  NVIDIA GeForce RTX 4060 Ti     Off |   00000000:`): index, name and
# persistence are printed whole; the bus id and the rest are not read
_CUT_ROW = re.compile(r"^[^\S\n]*\|\s+(\d+)\s+(.+?)\s+(On|Off)\s*\|", re.MULTILINE)


def _visible(text: str) -> str | None:
    values = {m.group(1) for m in _VISIBLE.finditer(text)}
    return values.pop() if len(values) == 1 else None


def _devices(text: str) -> list[dict[str, Any]] | None:
    table = smitable.parse(text) if smitable.detect(text) else {}
    if table.get("devices"):
        return list(table["devices"])
    rows = [{"index": int(m.group(1)), "name": m.group(2), "persistence": m.group(3) == "On"}
            for m in _CUT_ROW.finditer(text) if not m.group(2).endswith("...")]
    return rows or None


def detect(text: str) -> bool:
    return "No CUDA GPUs" in text and printed(_NO_GPUS, text) is not None and \
        hides_every_device(_visible(text)) and _devices(text) is not None


def parse(text: str) -> dict[str, Any]:
    table = smitable.parse(text) if smitable.detect(text) else {}
    line = printed(_NO_GPUS, text)
    start = text.rfind("\n", 0, line.start()) + 1 if line else 0
    end = text.find("\n", start)
    return {"torch": None, "devices": _devices(text), "cuda_visible_devices": _visible(text),
            "cuda_errors": [{"index": None, "text": text[start:end if end >= 0 else None].strip()[:400]}],
            "driver": table.get("driver"), "cuda_driver": table.get("cuda_driver")}
