"""JSON as a record must be: no NaN or Infinity literals, no number beyond a float's range (`1e400` would read as
infinity, a 400-digit integer crashes every float() that judges it), no duplicate keys (the one reader for facts,
baselines and the prolog's preflight report)."""
from __future__ import annotations

import json
import math
from typing import Any


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is beyond any measurement (not a finite float)")
    return value


def _int(text: str) -> int:
    value = int(text)             # Python's own limit (4,300 digits) holds first
    try:
        float(value)
    except OverflowError:
        raise ValueError(f"an integer of {len(text)} digits is beyond any measurement") from None
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def loads(text: str, non_finite: bool = False) -> Any:
    """json.loads, strict: ValueError (json.JSONDecodeError for syntax) or RecursionError on what a record cannot be.
    non_finite: NaN and Infinity are taken (Python's json.dumps writes them for a float that is not finite, as a
    verify report may hold), an integer past a float's range still is not."""
    if non_finite:
        return json.loads(text, parse_int=_int, object_pairs_hook=_unique)
    return json.loads(text, parse_constant=_refuse, parse_float=_float, parse_int=_int, object_pairs_hook=_unique)
