"""The one result shape every check returns, and its JSON form."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, WARN, SKIP = "pass", "fail", "warn", "skip"
STATUSES = (PASS, FAIL, WARN, SKIP)


@dataclass
class Metric:
    value: float
    unit: str


@dataclass
class CheckResult:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    metrics: dict[str, Metric] = field(default_factory=dict)
    remedy: str | None = None
    code: str | None = None
    owner: str | None = None
    duration_s: float = 0.0
    output: str | None = None          # what the check printed, kept when it crashed or hung
    data: dict[str, Any] = field(default_factory=dict)   # structured extras (e.g. the NCCL size table)

    def metric(self, name: str, value: float, unit: str) -> None:
        self.metrics[name] = Metric(round(float(value), 6), unit)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CheckResult":
        metrics = {k: Metric(**v) for k, v in (data.get("metrics") or {}).items()}
        return cls(**{**data, "metrics": metrics})
