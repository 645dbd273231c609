"""What a health checker says of its own: a fault it found and names that no field of the facts holds (it sets the
verdict), and its own trouble (a check not installed, another machine's conf): said beside the verdict, and where
nothing else is read a skip with no owner (the tool's trouble is never the node's)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


def apply(name: str, shown: Callable[[str, Any], None] | None, trouble: Callable[[str], list[str]] | None,
          text: str, path: str, result: Any) -> None:
    if shown and result.code != "FACTS_INVALID":
        shown(text, result)
    said = trouble(text) if trouble else []
    result.details += [f"said in {path}: the tool's own trouble, not the node's: {one}" for one in said]
    if said and result.status == "skip" and result.code == "FACTS_INCOMPLETE":
        result.not_judged(f"{name}: the health check did not do its work, so nothing of the node is assessed "
                          f"(the tool's own trouble, never the node's): {'; '.join(said)[:300]}",
                          "Fix the health check's install or configuration (its dependencies, its conf file for "
                          "this VM size) and run it again; the node stays in service meanwhile.")
