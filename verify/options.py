"""Thresholds and sizes shared by the checks; passed to each check process as JSON."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

MiB = 1 << 20
GiB = 1 << 30


@dataclass
class Options:
    expect_gpus: int = 0                 # >0: a missing GPU is a failure, not a skip
    shm_min_bytes: int = 1 * GiB         # /dev/shm a DataLoader needs: allocated and touched by the shm check
    arrow_bytes: int = 64 * MiB          # data the arrow check writes and maps (a check, not a benchmark)
    arrow_min_ratio: float = 0.5         # zero-copy read throughput / memory read bandwidth below this warns
    nccl_min_bytes: int = 1 * MiB
    nccl_max_bytes: int = 64 * MiB       # on GPUs; the gloo fallback stops at 16 MiB
    nccl_timeout_s: float = 60.0         # init and per-operation timeout of the collective
    nccl_processes: int = 2              # processes of the gloo fallback when fewer than 2 GPUs

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Options":
        return cls(**json.loads(text))


def parse_size(text: str) -> int:
    """'64m', '1G', '1048576' → bytes (binary units, as docker's --shm-size)."""
    units = {"k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{int(n)} B"
