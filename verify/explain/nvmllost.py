"""A program's NVML query answered `GPU is lost` (NVML_ERROR_GPU_IS_LOST, 15), in the program's own words: the
monitoring loops of miners and GPU dashboards print NVML's error by its name or its number beside what they asked
(NiceHash Miner: `NVML power get failed with status: GPUIsLost`; PhoenixMiner: `GPU2: unable to get fan speed - GPU
is lost (15)`; T-Rex: `NVML: can't get fan speed for GPU #0, error code 15`). NVML itself initialised (the program
goes on reading its other GPUs); the GPU it names stopped answering: recorded lost (FACTS.md `lost`, `nvml_errors`),
judged GPU_LOST, owner host. The program's own GPU number is not NVML's index (miners count their own), so the GPU is
kept apart by that number and recorded without an index. Only NVML's own forms are read: its enum names
(`GPUIsLost`, `NVML_ERROR_GPU_IS_LOST`), its error string with its code (`GPU is lost (15)`), or code 15 on a line
that names NVML; the words `GPU is lost` alone are a sentence's (a forum post), and prose quoting a form is not read
(explain/said.py). nvidia-smi's and the NVML bindings' own forms are explain/nvml.py's."""
from __future__ import annotations

import re
from typing import Any

from .said import mentioned

_LOST = re.compile(r"\bGPUIsLost\b|\bNVML_ERROR_GPU_IS_LOST\b|\bGPU is lost \(15\)|"
                   r"\bNVML\b[^\n]*?\b(?:error|status|code|returned|return)(?: code)?[ :=]*15\b(?![.\d]|:\d)", re.IGNORECASE)
# the program's own number of the GPU, on the same line (`GPU #0`, `GPU2:`, `GPU 1`), never a UUID (`GPU-...`)
_LABEL = re.compile(r"\bGPU ?#? ?(\d{1,2})\b")
# what the program asked NVML, in its words, as the facts' field
_FIELDS = (("fan", "fan_speed"), ("power", "power_w"), ("temp", "temperature_c"), ("load", "utilization"),
           ("util", "utilization"), ("clock", "sm_clock_mhz"))


def _lines(text: str) -> list[tuple[str, re.Match[str]]]:
    out = []
    for line in text.splitlines():
        m = _LOST.search(line)
        if m and not mentioned(line, m.start()):
            out.append((line, m))
    return out


def detect(text: str) -> bool:
    return bool(_lines(text))


def _field(line: str) -> str:
    lower = line.lower()
    return next((field for word, field in _FIELDS if word in lower), "handle")


def parse(text: str) -> dict[str, Any]:
    lost: dict[str | None, dict[str, Any]] = {}
    for line, m in _lines(text):
        label = _LABEL.search(line[:m.start()]) or _LABEL.search(line)
        device = lost.setdefault(label.group(1) if label else None,
                                 {"index": None, "lost": True, "nvml_errors": {}})
        device["nvml_errors"][_field(line)] = "GPU_IS_LOST"
    if len(lost) > 1:
        lost.pop(None, None)        # a line naming no GPU is one of those the others name: never one more GPU
    return {"torch": None, "nvml_error": "none", "devices": list(lost.values())}
