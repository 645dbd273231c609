"""What a judge found, ranked by root cause: every check that collects several findings (gpu, nccl, fabric) names the
most fundamental one as its code, and the CLI and the Slurm prolog order failed checks by the same rank."""
from __future__ import annotations

from dataclasses import dataclass

from .codes import Owner
from .result import FAIL, WARN, CheckResult, Status

# Root-cause rank: lower is more fundamental. The check's code is the lowest rank among the worst severity.
RANK = {"GPU_LOST": 0, "ROW_REMAP_FAILED": 1, "ECC_UNCORRECTABLE": 1, "GPU_RESET_REQUIRED": 2, "XID_ERROR": 3,
        "RETIREMENT_PENDING": 1, "SDC_MISMATCH": 4, "KERNEL_FAILED": 4, "MEASUREMENT_INVALID": 4,
        "DRIVER_TOO_OLD": 5, "DRIVER_ERROR": 5, "ARCH_NOT_IN_BUILD": 5, "GPU_NOT_VISIBLE": 5,
        "DEVICE_COUNT_MISMATCH": 6,
        # a fault or out of memory in a kernel: the program's unless an Xid/ECC finding (ranked above) shows the GPU's
        "CUDA_KERNEL_FAULT": 6, "GPU_OUT_OF_MEMORY": 6,
        "THROTTLED": 7, "NVLINK_DOWN": 7, "NVLINK_ERRORS": 7, "PCIE_DOWNGRADED": 7,
        "ARCH_PTX_JIT": 8, "BANDWIDTH_LOW": 9, "COMPUTE_LOW": 9, "HEALTH_NOT_ASSESSED": 11}
HANDLED = 10                  # the rank of a finding that needs watching, not action (a remapped lifetime ECC count)

@dataclass
class Finding:
    severity: Status
    code: str
    text: str
    remedy: str
    owner: Owner
    device: int | None = None          # NVML index
    rank: int | None = None            # overrides the code's rank (RANK) where this finding needs no action now


class Findings:
    """Every problem found, per device; the result names the most severe root cause and lists them all."""

    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, severity: Status, code: str, text: str, remedy: str, owner: Owner, device: int | None = None,
            rank: int | None = None) -> None:
        self.items.append(Finding(severity, code, text, remedy, owner, device, rank))

    def on(self, device: int | None, *codes: str) -> list[Finding]:
        return [f for f in self.items if f.device == device and (not codes or f.code in codes)]

    def apply(self, result: CheckResult, ok_summary: str) -> CheckResult:
        result.data["findings"] = [vars(f) for f in self.items]
        for severity in (FAIL, WARN):
            hits = sorted((f for f in self.items if f.severity == severity),
                          key=lambda f: f.rank if f.rank is not None else RANK.get(f.code, 10))
            if hits:
                first = hits[0]
                result.details += [f"{f.severity}: [{f.code}, {f.owner}] {f.text}" for f in self.items]
                remedies = list(dict.fromkeys(f.remedy for f in hits if f.code == first.code))
                others = [f for f in hits if f.code != first.code]
                summary = "; ".join(f.text for f in hits if f.code == first.code)
                if others:
                    summary += f"; also {len(others)} other finding(s): " + ", ".join(
                        dict.fromkeys(f.code for f in others))
                return result.verdict(severity, first.code, summary, " ".join(remedies), first.owner)
        result.summary = ok_summary
        return result


