"""The ranks an all-reduce's own figures imply where the record has no world size (issue 35, batch 143: a table posted
without its `#  Rank` lines or launch line, NVIDIA/nccl#1222's 2.19.3 baseline).

nccl-tests computes busbw from algbw by the all-reduce's factor 2(n-1)/n (src/all_reduce.cu, AllReduceGetBw) and
prints both to two decimals (src/util.cu, getFloatStr). Where exactly one n fits every row within that rounding, and
its neighbours n-1 and n+1 do not, the figures name the ranks as surely as a rank line would; where several n fit
(small or rounded figures, busbw near 2 x algbw at hundreds of ranks) or the rows disagree, they name none and the
rows stay not assessed (tests/test_judges_batch37.py). A factor of 1 is two ranks' all-reduce and also any world's
sendrecv: a record that does not name the all-reduce implies no world from it. Another collective implies none here
(its count names its ranks: verify/explain/nccltests.py reads them from the text)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .collective import ALL_REDUCE

ROUNDING = 0.005            # half the last printed digit of algbw and of busbw
TELLING = 1.0               # GB/s: below this the two printed decimals tell no factor


def _fits(rows: Sequence[Mapping[str, Any]], world: int) -> bool:
    factor = 2 * (world - 1) / world
    return all(abs(r["busbw"] - r["algbw"] * factor) <= ROUNDING * (1 + factor) + 1e-9 for r in rows)


def implied_world(rows: Sequence[Mapping[str, Any]], collective: Any, nodes: Any) -> int | None:
    """The one world size every all-reduce row's busbw / algbw gives, or None (not an all-reduce's, not telling, or
    not one n; not a whole number of ranks per node where `nodes` is recorded)."""
    if collective not in (None, ALL_REDUCE):
        return None
    telling = [r for r in rows if isinstance(r.get("algbw"), (int, float)) and isinstance(r.get("busbw"), (int, float))
               and r["algbw"] >= TELLING]
    if not telling or len(telling) != len([r for r in rows if (r.get("algbw") or 0) >= TELLING]):
        return None
    best = max(telling, key=lambda r: r["algbw"])
    ratio = best["busbw"] / best["algbw"]
    if not (1 if collective == ALL_REDUCE else 1.05) <= ratio < 2:
        return None
    n = round(2 / (2 - ratio))
    if n < 2 or [m for m in (n - 1, n, n + 1) if m >= 2 and _fits(telling, m)] != [n]:
        return None
    if isinstance(nodes, int) and nodes > 0 and (n % nodes or n < nodes):
        return None
    return n
