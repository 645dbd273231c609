"""The fastest half-precision tensor rate of GPUs verify/baselines.json names without a BF16 peak (Turing, Volta,
Pascal, Ampere's PCIe cards): no model FLOP rate on them passes it, bf16 autocast or not (Turing and older have no
BF16 units at all). Without this a T4 was held to the fastest GPU's peak (2,500 TFLOP/s): 40x its own.

Figures are dense FP16 tensor peaks from NVIDIA's datasheets (with FP32 accumulate where the sheet says, else the
larger), rounded up: a ceiling, never a floor.
"""
from __future__ import annotations

import re

# (NVML/torch name pattern, TFLOP/s, source)
CEILINGS: tuple[tuple[re.Pattern[str], float, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), tflops, source) for pattern, tflops, source in (
        (r"^Tesla T4\b|^NVIDIA T4\b", 65.0, "https://www.nvidia.com/en-us/data-center/tesla-t4/"),
        (r"^Tesla V100|^NVIDIA V100|^Tesla PG50|^Tesla PG503", 130.0,
         "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
        (r"^Tesla P100|^Tesla P40|^Tesla P4\b|^Tesla P6\b", 22.0,
         "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf"),
        (r"^Tesla K\d+", 9.0, "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-product-literature/Tesla-K80-BoardShip-Product-Brief.pdf"),
        (r"^NVIDIA A10G?$", 130.0, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"),
        (r"^NVIDIA A30\b", 170.0, "https://www.nvidia.com/en-us/data-center/products/a30-gpu/"),
        (r"^NVIDIA A40\b", 150.0, "https://www.nvidia.com/en-us/data-center/a40/"),
        (r"^NVIDIA A2\b|^NVIDIA A16\b", 40.0, "https://www.nvidia.com/en-us/data-center/products/a2/"),
    ))


def ceiling(device_name: object) -> tuple[float, str] | None:
    """The ceiling of a GPU this table names, and its source; None for any other name."""
    if not isinstance(device_name, str):
        return None
    base = re.sub(r"\s+MIG\s+\S+$", "", device_name.strip())
    return next(((tflops, source) for pattern, tflops, source in CEILINGS if pattern.search(base)), None)
