"""JSON as verify writes a record, read on the host side (standard library only: the host side never imports verify,
whose verify/strictjson.py the prolog reads its preflight report with; tests/test_cluster_hunt70.py holds the two to
one answer). verify's json.dumps never writes a key twice: an object that names one twice ("status": "fail", then
"status": "pass") says two things, and Python's json.loads kept the last, so the fleet report and make isolate counted
as a pass a report the prolog refuses. An integer past a float's range is no figure either (a float() of it crashes).
NaN and Infinity are taken (json.dumps writes them for a float that is not finite): the figure's own rule refuses them.
"""
from __future__ import annotations

import json
from typing import Any


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r}")
        out[key] = value
    return out


def _int(text: str) -> int:
    value = int(text)              # Python's own limit (4,300 digits) holds first
    try:
        float(value)
    except OverflowError:
        raise ValueError(f"an integer of {len(text)} digits is beyond any measurement") from None
    return value


def loads(text: str | bytes) -> Any:
    """json.loads, refusing a key given twice in one object and an integer past a float's range: ValueError
    (json.JSONDecodeError for syntax) or RecursionError."""
    return json.loads(text, parse_int=_int, object_pairs_hook=_unique)
