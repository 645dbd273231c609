"""gpu: the driver, the devices, their health (NVML), whether this torch build can run on them, and how fast.

The room: probe.py reads and measures (NVML through gpuprobe.py, identity through gpuidentity.py); judge.py decides
from those facts alone (node.py the facts seen whole, gpuarch.py CUDA's architecture rules, gpuhealth.py one device's
health, perf.py the figures and the canary, contradictions.py facts no machine produces, cuda_errors.py CUDA's
error codes)."""
from __future__ import annotations

from .judge import FIGURES, judge
from .probe import probe

__all__ = ["FIGURES", "judge", "probe"]
