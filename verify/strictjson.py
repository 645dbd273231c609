"""JSON as a record must be: no NaN or Infinity literals, no duplicate keys (the one reader for facts and baselines)."""
from __future__ import annotations

import json
from typing import Any


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def loads(text: str) -> Any:
    """json.loads, strict: ValueError (json.JSONDecodeError for syntax) or RecursionError on what a record cannot be."""
    return json.loads(text, parse_constant=_refuse, object_pairs_hook=_unique)
