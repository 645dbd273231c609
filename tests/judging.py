"""What the judge tests share: a result as (status, code, owner), and `verify explain` of a pasted text."""
from __future__ import annotations

from typing import Any

from verify import explain as ex
from verify.options import Options


def verdict(r: Any) -> tuple[str, str | None, str | None]:
    return r.status, r.code, r.owner


def explained(text: str, name: str = "job.log") -> Any:
    return ex.explain_text(text, name, Options())
