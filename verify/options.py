"""Thresholds and sizes shared by the checks; passed to each check process as JSON."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, fields

MiB = 1 << 20
GiB = 1 << 30


@dataclass
class Options:
    expect_gpus: int = 0                 # >0: a missing GPU is a failure, not a skip
    shm_min_bytes: int = 1 * GiB         # /dev/shm a DataLoader needs: allocated and touched by the shm check
    arrow_bytes: int = 64 * MiB          # data the arrow check writes and maps (a check, not a benchmark)
    arrow_min_ratio: float = 0.5         # zero-copy read throughput / memory read bandwidth below this warns
    nccl_min_bytes: int = 1 * MiB
    nccl_max_bytes: int = 8 * GiB        # on GPUs (capped at 1/8 of GPU memory): the peak needs 4-8 GiB; gloo stops at 16 MiB
    nccl_timeout_s: float = 60.0         # init and per-operation timeout of the collective
    nccl_processes: int = 2              # processes of the gloo fallback when fewer than 2 GPUs
    gpu_perf: bool = True                # copy bandwidth, matmul TFLOP/s and the SDC canary on each GPU
    gpu_copy_bytes: int = 1 * GiB        # device-to-device copy size
    gpu_h2d_bytes: int = 256 * MiB       # pinned host<->device copy size
    matmul_n: int = 8192                 # n of the n x n x n bf16 matmul
    sdc_repeats: int = 4                 # the canary matmul is repeated this often per device
    gpu_canary: bool = True              # the SDC canary even when gpu_perf is off (--preflight)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Options:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in json.loads(text).items() if k in known})


def parse_size(text: str) -> int:
    """'64m', '1G', '1048576' → bytes (binary units, as docker's --shm-size). ValueError when not a size."""
    units = {"k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    scale = 1
    if t and t[-1] in units:
        t, scale = t[:-1], units[t[-1]]
    # ASCII digits only: float() also reads '١' (Arabic-Indic), '１' (full width) and '1_0', which no size is written in
    if not re.fullmatch(r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]{1,4})?", t, re.ASCII):
        raise ValueError(f"{text!r} is not a size (ASCII digits, then k, m, g or t)")
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"{text!r} is not a size") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite size")
    return int(value * scale)


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{int(n)} B"
