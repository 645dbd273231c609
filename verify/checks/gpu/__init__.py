"""gpu: the driver, the devices, their health (NVML), whether this torch build can run on them, and how fast.

The room: probing.py reads and measures (NVML through gpuprobe.py, identity through gpuidentity.py); verdict.py decides
from those facts alone (node.py the facts seen whole, gpuarch.py CUDA's architecture rules, gpuhealth.py one device's
health, perf.py the figures and the canary, contradictions.py facts no machine produces; figures_table.py says what a
record may hold; CUDA's error codes are verify/shared/cuda_errors.py's, the one catalog the nccl check and `verify
explain` read too)."""
from __future__ import annotations

from .figures_table import FIGURES
from .probing import probe
from .verdict import judge

__all__ = ["FIGURES", "judge", "probe"]
