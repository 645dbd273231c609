"""The one result shape every check returns, and its JSON form."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .codes import CODES, UNOWNED_SKIPS, Owner

Status = Literal["pass", "fail", "warn", "skip"]
PASS: Status = "pass"
FAIL: Status = "fail"
WARN: Status = "warn"
SKIP: Status = "skip"
STATUSES: tuple[Status, ...] = (PASS, FAIL, WARN, SKIP)


@dataclass
class Metric:
    value: float
    unit: str


@dataclass
class CheckResult:
    name: str
    status: Status
    summary: str
    details: list[str] = field(default_factory=list)
    metrics: dict[str, Metric] = field(default_factory=dict)
    remedy: str | None = None
    code: str | None = None            # a key of verify.codes.CODES on every non-pass and skip
    owner: Owner | None = None         # who must act: image, host or job
    duration_s: float = 0.0
    output: str | None = None          # what the check printed, kept when it crashed or hung
    data: dict[str, Any] = field(default_factory=dict)   # structured extras (e.g. the NCCL size table)

    def __post_init__(self) -> None:
        if self.code in CODES:          # a coded result without its own owner or remedy takes the code's
            if not (self.status == SKIP and self.code in UNOWNED_SKIPS):
                self.owner = self.owner or CODES[self.code].owner
            self.remedy = self.remedy if self.remedy is not None else CODES[self.code].fix

    def metric(self, name: str, value: float, unit: str) -> None:
        """A figure of the report, always a finite number: every reader of a report (the prolog, the fleet report,
        `make isolate`) refuses one that is not as no report of verify's, and with it every other check's fault."""
        number = float(value)
        if not math.isfinite(number):
            self.details.append(f"{name} was {number} {unit}: no figure, not recorded")
            return
        self.metrics[name] = Metric(round(number, 6), unit)

    def verdict(self, status: Status, code: str, summary: str, remedy: str | None = None,
                owner: Owner | None = None) -> CheckResult:
        """Set a non-pass verdict with its code; the owner defaults to the code's usual one."""
        self.status, self.code, self.summary = status, code, summary
        self.owner = owner or CODES[code].owner
        self.remedy = remedy if remedy is not None else CODES[code].fix
        return self

    def not_judged(self, summary: str, remedy: str | None = None) -> CheckResult:
        """A skip for want of evidence (FACTS_INCOMPLETE): no verdict, and no owner, since nothing shows whose it is."""
        self.verdict(SKIP, "FACTS_INCOMPLETE", summary, remedy)
        self.owner = None
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        metrics = {k: Metric(**v) for k, v in (data.get("metrics") or {}).items()}
        return cls(**{**data, "metrics": metrics})
