"""What the judge tests share: a result as (status, code, owner), the nccl judge's verdict on a few facts, and
`verify explain` of a pasted text."""
from __future__ import annotations

from typing import Any

from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options


def verdict(r: Any) -> tuple[str, str | None, str | None]:
    return r.status, r.code, r.owner


def nccl_verdict(**facts: Any) -> tuple[str, str | None, str | None]:
    """The nccl judge's verdict on an NCCL record holding only these facts (no collective figures)."""
    return verdict(judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, **facts}, Options()))


def explained(text: str, name: str = "job.log") -> Any:
    return ex.explain_text(text, name, Options())
