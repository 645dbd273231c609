"""Which code in a torch build can run on a GPU, by CUDA's compatibility rules (pure logic).

- SASS `sm_XY` runs on compute capability X.Z when the major X is the same and Z >= Y (binary compatibility
  across minor revisions: CUDA C++ Programming Guide, "Binary Compatibility").
- PTX `compute_XY` is JIT-compiled by the driver for any capability >= X.Y, later majors included; the first
  launch of each kernel pays for the compilation (minutes for torch, cached in ~/.nv/ComputeCache).
- Arch-specific targets `sm_XYa` / `compute_XYa` run only on exactly X.Y (e.g. sm_90a: wgmma on Hopper).
- Family targets `sm_XYf` / `compute_XYf` (CUDA 12.9+) run on the same major with a minor >= Y (sm_100f runs
  on 10.0 and 10.3, not on 11.x or 12.x).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_ARCH = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


@dataclass(frozen=True)
class Arch:
    kind: Literal["sm", "compute"]
    major: int
    minor: int
    suffix: str            # "", "a" (arch-specific) or "f" (family)

    @property
    def name(self) -> str:
        return f"{self.kind}_{self.major}{self.minor}{self.suffix}"

    def runs_on(self, major: int, minor: int) -> bool:
        if self.suffix == "a":
            return (major, minor) == (self.major, self.minor)
        if self.kind == "sm" or self.suffix == "f":
            return major == self.major and minor >= self.minor
        return (major, minor) >= (self.major, self.minor)          # plain PTX: any later architecture


def parse_arch(text: str) -> Arch | None:
    """`sm_90`, `sm_90a`, `sm_100f`, `compute_120` → Arch; None for anything else."""
    m = _ARCH.match(text.strip())
    if not m:
        return None
    kind: Literal["sm", "compute"] = "sm" if m.group(1) == "sm" else "compute"
    return Arch(kind, int(m.group(2)), int(m.group(3)), m.group(4))


def parse_capability(cc: str) -> tuple[int, int] | None:
    """'8.9' → (8, 9); None when it is not a capability."""
    parts = str(cc).split(".")
    if len(parts) != 2 or not all(p.isdecimal() and len(p) <= 3 for p in parts):
        return None
    return int(parts[0]), int(parts[1])


@dataclass(frozen=True)
class Fit:
    """How a build runs on one capability: native SASS, PTX JIT, or not at all."""
    how: Literal["sass", "ptx", "none"]
    arch: str | None       # the arch-list entry that runs (the closest one), None when none does


def fit(capability: tuple[int, int], arch_list: list[str]) -> Fit:
    major, minor = capability
    archs = [a for a in (parse_arch(x) for x in arch_list) if a is not None]
    sass = [a for a in archs if a.kind == "sm" and a.runs_on(major, minor)]
    if sass:                   # the closest SASS is the one the CUDA runtime picks
        return Fit("sass", max(sass, key=lambda a: (a.minor, a.suffix != "")).name)
    ptx = [a for a in archs if a.kind == "compute" and a.runs_on(major, minor)]
    if ptx:
        return Fit("ptx", max(ptx, key=lambda a: (a.major, a.minor)).name)
    return Fit("none", None)
