"""The contract every check fulfils: one declared row, read by the runner, the child and replay alike."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .figures import Spec
from .options import Options
from .result import CheckResult


@dataclass(frozen=True)
class Check:
    """One check: what it finds out, its default timeout, probe() (measures, reads) and judge() (pure verdict).

    `figures` is the plausibility gate's spec for its facts (verify/figures.py): every figure is checked before
    judge() sees the facts, live and on replay. `facts_type`, where given, refuses keys it does not declare.
    """
    name: str
    what: str
    timeout_s: float
    probe: Callable[[Options], Any]
    judge: Callable[[Any, Options], CheckResult]
    figures: Spec = ()
    facts_type: Any = None          # the TypedDict of its facts (verify/facts/): a key it lacks is refused
