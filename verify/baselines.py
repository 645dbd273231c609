"""Per-GPU-model baselines (verify/baselines.yaml) and the ratio rule that judges figures against them.

The file is read with a small reader for the subset it uses (block mappings, plain scalars, full-line
comments), so that it loads in any image, with or without PyYAML; a test compares it with yaml.safe_load.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

PATH = Path(__file__).with_name("baselines.yaml")


def _scalar(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse(text: str) -> dict[str, Any]:
    """Block mappings of `key: value` / `key:` lines by indentation; `#` lines are comments."""
    root: dict[Any, Any] = {}
    stack: list[tuple[int, dict[Any, Any]]] = [(-1, root)]
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        key, sep, value = stripped.partition(": ") if ": " in stripped else stripped.partition(":")
        if not sep:
            raise ValueError(f"baselines line {number}: expected `key: value`")
        while stack and indent <= stack[-1][0]:
            stack.pop()
        parent = stack[-1][1]
        if value.strip():
            parent[_scalar(key)] = _scalar(value)
        else:
            child: dict[Any, Any] = {}
            parent[_scalar(key)] = child
            stack.append((indent, child))
    return root


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    return parse(PATH.read_text(encoding="utf-8"))


def rule() -> tuple[float, float]:
    r = load().get("rule", {})
    return float(r.get("warn_below", 0.9)), float(r.get("fail_below", 0.75))


def for_model(name: str | None) -> dict[str, Any] | None:
    return load().get("models", {}).get(name) if name else None


def judge_ratio(measured: float, baseline: float) -> tuple[str, float]:
    """('pass'|'warn'|'fail', ratio) by the rule: warn below 0.9x, fail below 0.75x."""
    warn, fail = rule()
    ratio = measured / baseline if baseline > 0 else float("inf")
    return ("fail" if ratio < fail else "warn" if ratio < warn else "pass"), ratio
